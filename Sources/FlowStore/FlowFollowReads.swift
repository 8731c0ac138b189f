/// The reads `tv flows --follow` polls with: flows started since a moment (a keyset on start
/// time, not on id, so rows of other writers with ids reserved out of order are seen too), and
/// the current rows of flows it saw open.
extension FlowStore {
    /// Flows matching `query`'s filters (its cursor and limit ignored) that started at or after
    /// `since` (µs), oldest first, at most `limit`: a range scan of the start-time index.
    /// Damaged rows are skipped.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func flows(matching query: FlowQuery, startedSince since: Int64, limit: Int) throws -> [FlowRecord] {
        var (conditions, bindings) = query.filterConditions()
        conditions.append("start_time >= ?")
        bindings += [.integer(since), .integer(Int64(max(1, limit)))]
        let sql = "SELECT \(FlowRecordColumns.selectList) FROM flows" + FlowQuery.whereClause(conditions)
            + " ORDER BY start_time, id LIMIT ?"
        return try read(sql, bindings)
    }

    /// The rows of the flows with these ids (any order; missing ids are absent, damaged rows skipped).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func flows(ids: [Int64]) throws -> [FlowRecord] {
        var out: [FlowRecord] = []
        var rest = ids[...]
        while !rest.isEmpty {
            let chunk = rest.prefix(500)
            rest = rest.dropFirst(chunk.count)
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            out += try read("SELECT \(FlowRecordColumns.selectList) FROM flows WHERE id IN (\(marks))", chunk.map { .integer($0) })
        }
        return out
    }

    private func read(_ sql: String, _ bindings: [SQLiteValue]) throws -> [FlowRecord] {
        try connection.withDatabase { database in
            let statement = try database.prepare(sql)
            try statement.bind(bindings)
            var rows: [FlowRecord] = []
            try statement.forEachRow { row in
                if let record = try? FlowRecordColumns.record(from: row) { rows.append(record) }
            }
            return rows
        }
    }
}
