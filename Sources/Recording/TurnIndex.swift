import FlowStore

/// The SQL of the turns index (`content_turns`, FlowSchema migration 2) over one connection.
/// Same threading rule as `SQLiteDatabase`: one thread at a time.
struct TurnIndex {
    let database: SQLiteDatabase

    static let columns = "flow_id, turn, direction, start_offset, kept_bytes, seen_bytes, truncated, cut_by, incomplete, segment, segment_offset, recorded_at"

    /// Rows one INSERT statement carries at most (12 parameters each, far below SQLite's limit).
    static let rowsPerInsert = 64

    /// How many of `remaining` rows the next INSERT carries: the largest power of two up to
    /// `rowsPerInsert`, so a writer compiles at most 7 statements (1, 2, 4 … 64 rows).
    static func rowsInNextInsert(remaining: Int) -> Int {
        guard remaining < rowsPerInsert else { return rowsPerInsert }
        var count = 1
        while count * 2 <= remaining { count *= 2 }
        return count
    }

    /// `INSERT OR REPLACE` of `rows` rows (1…`rowsPerInsert`): one statement for many rows, so
    /// SQLite's per-statement work (VM start, halt, statement journal) is paid once per 64 rows.
    static func insertSQL(rows: Int) -> String {
        "INSERT OR REPLACE INTO content_turns (\(TurnIndex.columns)) VALUES "
            + repeatElement("(?,?,?,?,?,?,?,?,?,?,?,?)", count: rows).joined(separator: ",")
    }

    /// Inserts (or replaces) rows; the caller wraps them in a transaction.
    /// - Parameter statements: compiled inserts by row count, kept by a writer that inserts batch
    ///   after batch (missing ones are compiled and added).
    func insert(_ rows: [IndexedTurn], statements: inout [Int: SQLiteStatement]) throws {
        var next = 0
        while next < rows.count {
            let count = TurnIndex.rowsInNextInsert(remaining: rows.count - next)
            let statement: SQLiteStatement
            if let cached = statements[count] {
                statement = cached
            } else {
                statement = try database.prepare(TurnIndex.insertSQL(rows: count))
                statements[count] = statement
            }
            // Every parameter is bound again below, so the bindings need no clearing.
            statement.rewind()
            defer { statement.rewind() }
            for (i, row) in rows[next..<(next + count)].enumerated() {
                let base = Int32(12 * i)
                try statement.bind(integer: row.flowID, at: base + 1)
                try statement.bind(integer: Int64(row.turn.number), at: base + 2)
                try statement.bind(constant: TurnIndex.text(row.turn.direction), at: base + 3)
                try statement.bind(integer: row.turn.startOffset, at: base + 4)
                try statement.bind(integer: Int64(row.turn.keptBytes), at: base + 5)
                try statement.bind(integer: Int64(row.turn.seenBytes), at: base + 6)
                try statement.bind(integer: row.turn.truncated ? 1 : 0, at: base + 7)
                try statement.bind(constant: row.turn.cutBy.map(TurnIndex.text), at: base + 8)
                try statement.bind(integer: row.turn.incomplete ? 1 : 0, at: base + 9)
                try statement.bind(integer: Int64(row.segment), at: base + 10)
                try statement.bind(integer: row.segmentOffset, at: base + 11)
                try statement.bind(integer: row.recordedAt, at: base + 12)
            }
            try statement.step()
            next += count
        }
    }

    /// `direction`'s raw value as constant text (bound without a copy).
    static func text(_ direction: Direction) -> StaticString {
        switch direction {
        case .clientToServer: return "client_to_server"
        case .serverToClient: return "server_to_client"
        }
    }

    /// `limit`'s raw value as constant text (bound without a copy).
    static func text(_ limit: BudgetLimit) -> StaticString {
        switch limit {
        case .turnLimit: return "turn_limit"
        case .flowBudget: return "flow_budget"
        }
    }

    /// Inserts (or replaces) rows with statements compiled for this call.
    func insert(_ rows: [IndexedTurn]) throws {
        var statements: [Int: SQLiteStatement] = [:]
        try insert(rows, statements: &statements)
    }

    /// The turns of `flow`, by number.
    func turns(flow: Int64) throws -> [IndexedTurn] {
        let statement = try database.prepare("SELECT \(TurnIndex.columns) FROM content_turns WHERE flow_id = ? ORDER BY turn")
        try statement.bind([.integer(flow)])
        var rows: [IndexedTurn] = []
        try statement.forEachRow { rows.append(TurnIndex.row($0)) }
        return rows
    }

    /// Counts and sums for `flow`.
    func summary(flow: Int64) throws -> ContentSummary {
        let statement = try database.prepare(
            "SELECT count(*), total(kept_bytes), total(seen_bytes), max(truncated), max(incomplete) FROM content_turns WHERE flow_id = ?")
        try statement.bind([.integer(flow)])
        guard try statement.step() else { return ContentSummary() }
        return ContentSummary(turns: Int(statement.int64(at: 0)), keptBytes: Int64(statement.double(at: 1)),
                              seenBytes: Int64(statement.double(at: 2)), truncated: statement.int64(at: 3) == 1,
                              incomplete: statement.int64(at: 4) == 1)
    }

    /// Rows, distinct flows and kept bytes over the whole index.
    func totals() throws -> (turns: Int, flows: Int, keptBytes: Int64) {
        let statement = try database.prepare("SELECT count(*), count(DISTINCT flow_id), total(kept_bytes) FROM content_turns")
        guard try statement.step() else { return (0, 0, 0) }
        return (Int(statement.int64(at: 0)), Int(statement.int64(at: 1)), Int64(statement.double(at: 2)))
    }

    /// Per segment: rows, and rows recorded before `cutoff` (µs since the epoch).
    func segmentRows(expiredBefore cutoff: Int64) throws -> [Int: (rows: Int, expired: Int)] {
        let statement = try database.prepare(
            "SELECT segment, count(*), total(recorded_at < ?) FROM content_turns GROUP BY segment")
        try statement.bind([.integer(cutoff)])
        var facts: [Int: (rows: Int, expired: Int)] = [:]
        try statement.forEachRow { row in
            facts[Int(row.int64(at: 0))] = (Int(row.int64(at: 1)), Int(row.double(at: 2)))
        }
        return facts
    }

    /// Deletes rows recorded before `cutoff`. - Returns: how many.
    func deleteRecorded(before cutoff: Int64) throws -> Int {
        let statement = try database.prepare("DELETE FROM content_turns WHERE recorded_at < ?")
        try statement.bind([.integer(cutoff)])
        try statement.step()
        return database.changes
    }

    /// Deletes the rows of `segment`. - Returns: how many.
    func deleteRows(inSegment segment: Int) throws -> Int {
        let statement = try database.prepare("DELETE FROM content_turns WHERE segment = ?")
        try statement.bind([.integer(Int64(segment))])
        try statement.step()
        return database.changes
    }

    /// Deletes every row. - Returns: how many.
    func deleteAll() throws -> Int {
        try database.execute("DELETE FROM content_turns")
        return database.changes
    }

    /// Deletes the rows of `flow`. - Returns: how many.
    func deleteRows(flow: Int64) throws -> Int {
        let statement = try database.prepare("DELETE FROM content_turns WHERE flow_id = ?")
        try statement.bind([.integer(flow)])
        try statement.step()
        return database.changes
    }

    static func row(_ r: SQLiteStatement) -> IndexedTurn {
        let turn = Turn(number: Int(r.int64(at: 1)),
                        direction: Direction(rawValue: r.string(at: 2) ?? "") ?? .clientToServer,
                        startOffset: r.int64(at: 3), keptBytes: Int(r.int64(at: 4)), seenBytes: Int(r.int64(at: 5)),
                        cutBy: r.int64(at: 6) == 1 ? (r.string(at: 7).flatMap(BudgetLimit.init(rawValue:)) ?? .turnLimit) : nil,
                        incomplete: r.int64(at: 8) == 1)
        return IndexedTurn(flowID: r.int64(at: 0), turn: turn, segment: Int(r.int64(at: 9)),
                           segmentOffset: r.int64(at: 10), recordedAt: r.int64(at: 11))
    }
}
