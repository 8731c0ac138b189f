import FlowTerms

/// The reads `tv flows --follow` polls with: rows started since a moment (a keyset on start time,
/// not on id, so rows of other writers with ids reserved out of order are seen too), and the
/// current rows of those it saw open. Flows, or with `--requests` exchanges.
extension FlowStore {
    /// Flows matching `query`'s filters (its cursor and limit ignored) that started at or after
    /// `since` (µs), oldest first, at most `limit`: a range scan of the start-time index.
    /// Damaged rows are skipped.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func flows(matching query: FlowQuery, startedSince since: Int64, limit: Int) throws -> [FlowRecord] {
        // The moment as a `since` filter, so a `--host` condition reads the days from it on.
        var bounded = query
        bounded.since = max(query.since ?? since, since)
        var (conditions, bindings) = bounded.filterConditions()
        bindings.append(.integer(Int64(max(1, limit))))
        let sql = "SELECT \(FlowRecordColumns.selectList) FROM flows" + FlowQuery.whereClause(conditions)
            + " ORDER BY start_time, id LIMIT ?"
        return try readRows(sql, bindings, FlowStore.flowRow)
    }

    /// The rows of the flows with these ids (any order; missing ids are absent, damaged rows skipped).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func flows(ids: [Int64]) throws -> [FlowRecord] {
        try FlowStore.idChunks(ids).flatMap { marks, bindings in
            try readRows("SELECT \(FlowRecordColumns.selectList) FROM flows WHERE id IN (\(marks))", bindings, FlowStore.flowRow)
        }
    }

    /// Exchanges of flows matching `query`'s filters that were requested at or after `since`
    /// (µs), oldest first, at most `limit` (over the request-time index). Damaged rows are skipped.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func exchanges(matching query: FlowQuery, requestedSince since: Int64, limit: Int) throws -> [ExchangeRecord] {
        let (conditions, filterBindings) = query.filterConditions()
        return try connection.withDatabase { database in
            try StoredExchanges.requested(since: since, flowCondition: conditions.isEmpty ? nil : conditions.joined(separator: " AND "),
                                          filterBindings, limit: max(1, limit), in: database)
        }
    }

    /// The rows of the exchanges with these ids (any order; missing ids absent, damaged skipped).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func exchanges(ids: [Int64]) throws -> [ExchangeRecord] {
        try connection.withDatabase { try StoredExchanges.withIDs(ids, in: $0) }
    }

    private static func flowRow(_ row: SQLiteStatement) -> FlowRecord? { try? FlowRecordColumns.record(from: row) }

    /// `?, ?, …` and the bindings for `ids`, 500 at a time.
    private static func idChunks(_ ids: [Int64]) -> [(String, [SQLiteValue])] {
        stride(from: 0, to: ids.count, by: 500).map { start in
            let chunk = ids[start..<min(start + 500, ids.count)]
            return (Array(repeating: "?", count: chunk.count).joined(separator: ", "), chunk.map { .integer($0) })
        }
    }

    private func readRows<Row: Sendable>(_ sql: String, _ bindings: [SQLiteValue], _ decode: (SQLiteStatement) -> Row?) throws -> [Row] {
        try connection.withDatabase { database in
            let statement = try database.prepare(sql)
            try statement.bind(bindings)
            var rows: [Row] = []
            try statement.forEachRow { row in if let record = decode(row) { rows.append(record) } }
            return rows
        }
    }
}
