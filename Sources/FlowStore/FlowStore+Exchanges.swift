import FlowTerms

/// Reading the `exchanges` table (rows the flow writer wrote from `FlowEvent.exchange`).
extension FlowStore {
    /// One page of exchanges matching `query`, newest first (request time, then id, descending).
    /// - Returns: at most `query.effectiveLimit` exchanges and the next page's cursor (nil at the end).
    /// - Throws: `FlowStoreError.badCursor` for a cursor tv did not give out, or a read failure.
    public func exchanges(_ query: ExchangeQuery) throws -> ExchangePage {
        let plan = try query.plan()
        return try connection.withDatabase { database in
            let statement = try database.prepare(plan.sql)
            try statement.bind(plan.bindings)
            var rows: [(key: FlowCursor, exchange: Result<ExchangeRecord, DamagedRow>)] = []
            try statement.forEachRow { row in
                let key = FlowCursor(startTime: row.int64(at: 18), id: row.int64(at: 0))
                do throws(DamagedRow) {
                    rows.append((key, .success(try ExchangeColumns.record(from: row))))
                } catch {
                    rows.append((key, .failure(error)))
                }
            }
            let more = rows.count > plan.limit
            if more { rows.removeLast(rows.count - plan.limit) }
            var page = ExchangePage(exchanges: [], nextCursor: more ? rows.last.map { $0.key.string } : nil)
            for row in rows {
                switch row.exchange {
                case let .success(exchange): page.exchanges.append(exchange)
                case let .failure(damage): page.damaged.append(damage)
                }
            }
            return page
        }
    }

    /// The exchange with `id`, or nil when there is none.
    /// - Throws: `FlowStoreError` when the database cannot be read, `.damagedRow` for a damaged row.
    public func exchange(id: Int64) throws -> ExchangeRecord? {
        try connection.withDatabase { database in
            let statement = try database.prepare("SELECT \(ExchangeColumns.selectList) FROM exchanges WHERE id = ?")
            try statement.bind([.integer(id)])
            guard try statement.step() else { return nil }
            do throws(DamagedRow) {
                return try ExchangeColumns.record(from: statement)
            } catch {
                throw FlowStoreError.damagedRow(path: database.path, error)
            }
        }
    }

    /// Every exchange of flow `flowID` in request order (`seq`), damaged rows left out and
    /// returned beside them.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func exchanges(ofFlow flowID: Int64) throws -> (exchanges: [ExchangeRecord], damaged: [DamagedRow]) {
        try connection.withDatabase { database in
            let statement = try database.prepare("SELECT \(ExchangeColumns.selectList) FROM exchanges WHERE flow_id = ? ORDER BY seq")
            try statement.bind([.integer(flowID)])
            var found: [ExchangeRecord] = []
            var damaged: [DamagedRow] = []
            try statement.forEachRow { row in
                do throws(DamagedRow) {
                    found.append(try ExchangeColumns.record(from: row))
                } catch {
                    damaged.append(error)
                }
            }
            return (found, damaged)
        }
    }
}
