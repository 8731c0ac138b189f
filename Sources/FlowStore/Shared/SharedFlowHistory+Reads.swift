import FlowTerms

/// The shared store's reads beyond the flow list: request rows (`tv requests --store`,
/// `tv request ID --store`), the activity axis (`tv activity --store`), whether `--host` has its
/// trigram index, and a query's plan. Narrowed by `instance` like every read.
extension SharedFlowHistory {
    /// One newest-first page of the shared request rows matching `query` (its flow id is the
    /// instance's own: narrow with `--instance` to mean one flow), each row's instance in
    /// `ExchangePage.instances`.
    /// - Throws: `FlowStoreError` (`.badCursor` for a cursor the store did not give out).
    public func exchanges(_ query: ExchangeQuery) throws -> ExchangePage {
        let narrowing = instanceCondition
        let plan = try query.plan(narrowing: narrowing.0, narrowing.1, selectList: SharedExchangeRows.selectList)
        let rows = try connection.withLock { try $0.query(plan.sql, plan.bindings) }
        var page = ExchangePage(exchanges: [], nextCursor: nil)
        for values in rows.prefix(plan.limit) {
            do throws(DamagedRow) {
                let record = try ExchangeColumns.record(Array(values.dropLast(2)))
                page.exchanges.append(record)
                page.instances[record.id] = SharedFlowHistory.identity(values)
            } catch {
                page.damaged.append(error)
            }
        }
        if rows.count > plan.limit, let last = page.exchanges.last {
            page.nextCursor = FlowCursor(startTime: last.requestTime, id: last.id).string
        }
        return page
    }

    /// The flows of `page`'s rows (a page of `exchanges`) whose connections had requests read and
    /// counted without rows (`FlowRecord.requestsLeftOut`), with how many, each with its
    /// instance (flow ids are each instance's own), ordered by instance id then flow id.
    /// - Throws: `FlowStoreError`.
    public func requestsLeftOut(shownIn page: ExchangePage) throws -> [(instance: InstanceIdentity, flow: Int64, count: Int64)] {
        var asked: [String: (instance: InstanceIdentity, flows: Set<Int64>)] = [:]
        for e in page.exchanges {
            guard let instance = page.instances[e.id] else { continue }
            asked[instance.id, default: (instance, [])].flows.insert(e.flowID)
        }
        var found: [(instance: InstanceIdentity, flow: Int64, count: Int64)] = []
        for key in asked.keys.sorted() {
            guard let (instance, flows) = asked[key] else { continue }
            let ids = flows.sorted()
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = ids[start..<min(start + 500, ids.count)]
                let sql = "SELECT id, requests_left_out FROM flows WHERE instance_id = ? AND id IN ("
                    + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ") AND requests_left_out > 0 ORDER BY id"
                let rows = try connection.withLock { try $0.query(sql, [.text(instance.id)] + chunk.map { .integer($0) }) }
                for row in rows {
                    guard row.count == 2, case .integer(let id) = row[0], case .integer(let count) = row[1] else { continue }
                    found.append((instance, id, count))
                }
            }
        }
        return found
    }

    /// The shared request row `id` (the shared store's id, as `tv requests --store` prints it)
    /// and its instance, or nil.
    /// - Throws: `FlowStoreError`.
    public func exchange(id: Int64) throws -> (ExchangeRecord, InstanceIdentity)? {
        let narrowing = instanceCondition
        let sql = "SELECT \(SharedExchangeRows.selectList) FROM exchanges WHERE " + (["id = ?"] + narrowing.0).joined(separator: " AND ")
        guard let values = try connection.withLock({ try $0.query(sql, [.integer(id)] + narrowing.1) }).first else { return nil }
        do throws(DamagedRow) {
            return (try ExchangeColumns.record(Array(values.dropLast(2))), SharedFlowHistory.identity(values))
        } catch {
            throw FlowStoreError.damagedRow(path: target.server, error)
        }
    }

    /// Flow `id` of `instance` (a shared request row's flow: flow ids are each instance's own),
    /// or nil.
    /// - Throws: `FlowStoreError`.
    public func flow(id: Int64, of instance: InstanceIdentity) throws -> FlowRecord? {
        let sql = "SELECT \(PostgresDialect.selectList) FROM flows WHERE instance_id = ? AND id = ?"
        guard let values = try connection.withLock({ try $0.query(sql, [.text(instance.id), .integer(id)]) }).first else { return nil }
        do throws(DamagedRow) {
            return try SharedFlowHistory.flowRecord(values)
        } catch {
            throw FlowStoreError.damagedRow(path: target.server, error)
        }
    }

    /// The request rows of flow `id` of the instance that saw `flow`, in order.
    /// - Throws: `FlowStoreError`.
    public func exchanges(of flow: FlowRecord) throws -> (exchanges: [ExchangeRecord], damaged: [DamagedRow]) {
        guard let instance = flow.instance else { return ([], []) }
        let rows = try connection.withLock {
            try $0.query("SELECT \(ExchangeColumns.selectList) FROM exchanges WHERE instance_id = ? AND flow_id = ? ORDER BY seq",
                         [.text(instance.id), .integer(flow.id)])
        }
        var out: ([ExchangeRecord], [DamagedRow]) = ([], [])
        for values in rows {
            do throws(DamagedRow) { out.0.append(try ExchangeColumns.record(values)) } catch { out.1.append(error) }
        }
        return out
    }

    /// Flows started per interval of `widthMicros` from `from` (inclusive) to `to` (exclusive),
    /// by interval index, as `FlowStore.activity` (intervals with none absent). One aggregate
    /// over `flows_by_start_time` (the shared store keeps no rollup).
    /// - Throws: `FlowStoreError`.
    public func activity(from: Int64, to: Int64, widthMicros: Int64) throws -> [Int64: Int64] {
        precondition(widthMicros > 0, "an interval has a width")
        let narrowing = instanceCondition
        let sql = "SELECT (start_time - ?) / ?, count(*) FROM flows WHERE "
            + (["start_time >= ?", "start_time < ?"] + narrowing.0).joined(separator: " AND ") + " GROUP BY 1"
        let rows = try connection.withLock {
            try $0.query(sql, [.integer(from), .integer(widthMicros), .integer(from), .integer(to)] + narrowing.1)
        }
        var counts: [Int64: Int64] = [:]
        for row in rows { if case let .integer(bar) = row[0], case let .integer(n) = row[1] { counts[bar] = n } }
        return counts
    }

    /// The start time (µs) of the oldest and of the newest shared flow; nil when there is none.
    /// - Throws: `FlowStoreError`.
    public func startTimeBounds() throws -> (oldest: Int64, newest: Int64)? {
        let narrowing = instanceCondition
        let rows = try connection.withLock {
            try $0.query("SELECT min(start_time), max(start_time) FROM flows" + FlowQuery.whereClause(narrowing.0), narrowing.1)
        }
        guard let row = rows.first, case let .integer(oldest) = row[0], case let .integer(newest) = row[1] else { return nil }
        return (oldest, newest)
    }

    /// The audit markers every instance (or the narrowed one) set from `from` (inclusive) to
    /// `to` (exclusive), oldest first (`tv activity --store`'s ▲).
    /// - Throws: `FlowStoreError`.
    public func markers(from: Int64, to: Int64) throws -> [AuditMarker] {
        let narrowing = instanceCondition
        let rows = try connection.withLock {
            try $0.query("SELECT id, session_id, time, text FROM audit_markers WHERE "
                         + (["time >= ?", "time < ?"] + narrowing.0).joined(separator: " AND ") + " ORDER BY time, instance_id, id",
                         [.integer(from), .integer(to)] + narrowing.1)
        }
        return rows.compactMap { row in
            guard case let .integer(id) = row[0], case let .integer(session) = row[1], case let .integer(time) = row[2],
                  case let .text(text) = row[3] else { return nil }
            return AuditMarker(id: id, sessionID: session, time: time, text: text)
        }
    }

    /// The names DNS answers gave for `address` on any instance (or the narrowed one), most
    /// recently seen first.
    /// - Throws: `FlowStoreError`.
    public func names(forAddress address: String) throws -> [String] {
        let narrowing = instanceCondition
        let rows = try connection.withLock {
            try $0.query("SELECT name, max(last_seen) FROM host_names WHERE " + (["address = ?"] + narrowing.0).joined(separator: " AND ")
                         + " GROUP BY name ORDER BY 2 DESC, name", [.text(address)] + narrowing.1)
        }
        return rows.compactMap { if case let .text(name) = $0[0] { return name } else { return nil } }
    }

    /// Whether `--host` reads a trigram index here (`PostgresSchema.hostIndexName`); without it
    /// every row is read.
    /// - Throws: `FlowStoreError`.
    public func hasHostIndex() throws -> Bool {
        try connection.withLock { try PostgresSchema.hasHostIndex($0) }
    }

    /// The server's plan of `sql` (`EXPLAIN`, its lines joined by newlines).
    func plan(_ sql: String, _ bindings: [SQLiteValue]) throws -> String {
        let rows = try connection.withLock { try $0.query("EXPLAIN " + sql, bindings) }
        return rows.compactMap { if case let .text(line) = $0.first ?? .null { return line } else { return nil } }.joined(separator: "\n")
    }

    /// The indexes the server's plan of `query`'s page reads (`Index Scan using X`, `Bitmap
    /// Index Scan on X`), in plan order; "full scan" for a sequential one. For the benchmark.
    /// - Throws: `FlowStoreError`.
    public func indexesChosen(_ query: FlowQuery) throws -> [String] {
        try explain(query).split(separator: "\n").compactMap { line -> String? in
            if let range = line.range(of: " using ") ?? line.range(of: "Bitmap Index Scan on ") {
                return String(line[range.upperBound...].split(separator: " ").first ?? "")
            }
            return line.contains("Seq Scan") ? "full scan" : nil
        }
    }
}
