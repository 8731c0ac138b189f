import FlowStore
import FlowTerms

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

    /// The turns of `flow`, by number, and the rows left out as damaged.
    func turns(flow: Int64) throws -> (turns: [IndexedTurn], damaged: [DamagedRow]) {
        let statement = try database.prepare("SELECT \(TurnIndex.columns) FROM content_turns WHERE flow_id = ? ORDER BY turn")
        try statement.bind([.integer(flow)])
        var rows: [IndexedTurn] = []
        var damaged: [DamagedRow] = []
        try statement.forEachRow { row in
            do throws(DamagedRow) {
                rows.append(try TurnIndex.row(TurnIndex.names.indices.map { row.value(at: Int32($0)) }))
            } catch {
                damaged.append(error)
            }
        }
        return (rows, damaged)
    }

    /// Counts and sums for `flow`, over its rows that are not damaged.
    func summary(flow: Int64) throws -> ContentSummary {
        let turns = try self.turns(flow: flow).turns
        return ContentSummary(turns: turns.count, keptBytes: turns.reduce(0) { $0 + Int64($1.turn.keptBytes) },
                              seenBytes: turns.reduce(0) { $0 + Int64($1.turn.seenBytes) },
                              truncated: turns.contains { $0.turn.truncated }, incomplete: turns.contains { $0.turn.incomplete })
    }

    /// Rows, distinct flows and kept bytes over the whole index.
    /// Kept bytes count only where the row's figure is one a writer writes (`row(_:)`'s check of
    /// `kept_bytes`: an integer from 0 to the turn limit), so one damaged row cannot make the
    /// total say gigabytes.
    func totals() throws -> (turns: Int, flows: Int, keptBytes: Int64) {
        let statement = try database.prepare("""
            SELECT count(*), count(DISTINCT flow_id),
                   total(CASE WHEN typeof(kept_bytes) = 'integer' AND kept_bytes BETWEEN 0 AND \(RecordingBudget.fixedTurnLimit)
                              THEN kept_bytes ELSE 0 END)
            FROM content_turns
            """)
        guard try statement.step() else { return (0, 0, 0) }
        return (Int(statement.int64(at: 0)), Int(statement.int64(at: 1)), Int64(statement.double(at: 2)))
    }

    /// Per segment: rows, and rows recorded before `cutoff` (µs since the epoch). Reads the
    /// (segment, recorded_at) index only.
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

    /// Which of `flows` have turns in each segment (for the retention planner's audit evidence);
    /// segments holding none of them are absent.
    func segmentFlows(of flows: Set<Int64>) throws -> [Int: Set<Int64>] {
        guard !flows.isEmpty else { return [:] }
        let list = flows.sorted().map(String.init).joined(separator: ",")
        let statement = try database.prepare("SELECT DISTINCT segment, flow_id FROM content_turns WHERE flow_id IN (\(list))")
        var held: [Int: Set<Int64>] = [:]
        try statement.forEachRow { row in held[Int(row.int64(at: 0)), default: []].insert(row.int64(at: 1)) }
        return held
    }

    /// Segments that rows point into.
    func referencedSegments() throws -> Set<Int> {
        var segments: Set<Int> = []
        let statement = try database.prepare("SELECT DISTINCT segment FROM content_turns")
        try statement.forEachRow { segments.insert(Int($0.int64(at: 0))) }
        return segments
    }

    /// Deletes every row but those of `flows`. - Returns: how many.
    func deleteAll(except flows: Set<Int64>) throws -> Int {
        guard !flows.isEmpty else { return try deleteAll() }
        let list = flows.sorted().map(String.init).joined(separator: ",")
        try database.execute("DELETE FROM content_turns WHERE flow_id NOT IN (\(list))")
        return database.changes
    }

    /// Deletes the rows of `segments` recorded before `cutoff` (µs since the epoch), one segment
    /// at a time through the (segment, recorded_at) index: name the segments `segmentRows` found
    /// expired rows in, so a sweep with nothing expired reads nothing.
    /// - Returns: how many rows.
    func deleteRecorded(before cutoff: Int64, inSegments segments: [Int]) throws -> Int {
        var deleted = 0
        for segment in segments {
            let statement = try database.prepare("DELETE FROM content_turns WHERE segment = ? AND recorded_at < ?")
            try statement.bind([.integer(Int64(segment)), .integer(cutoff)])
            try statement.step()
            deleted += database.changes
        }
        return deleted
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

    /// The column names of `columns`, in order.
    static let names: [String] = columns.components(separatedBy: ", ")

    /// The indexed turn `values` (in `names` order) hold, each value checked against what the
    /// content writer writes (`TurnRecorder` never keeps more than `RecordingBudget.fixedTurnLimit`
    /// bytes of a turn, nor more than it saw). Pure.
    /// - Throws: `DamagedRow` naming the first column no writer would have written.
    static func row(_ values: [SQLiteValue]) throws(DamagedRow) -> IndexedTurn {
        func number(_ index: Int) -> Int64 { if case let .integer(n) = values[index] { return n } else { return 0 } }
        let r = CheckedRow(row: "turn \(number(1)) of flow \(number(0))", names: names, values: values)
        let nonNegative: ClosedRange<Int64> = 0...Int64.max
        let kept = try r.integer("kept_bytes", in: 0...Int64(RecordingBudget.fixedTurnLimit))
        let seen = try r.integer("seen_bytes", in: kept...Int64.max)
        let cutBy: BudgetLimit? = try r.flag("truncated") ? try r.known(BudgetLimit.self, "cut_by") : nil
        let turn = Turn(number: Int(try r.integer("turn", in: 1...Int64(Int32.max))),
                        direction: try r.known(Direction.self, "direction"),
                        startOffset: try r.integer("start_offset", in: nonNegative),
                        keptBytes: Int(kept), seenBytes: Int(seen), cutBy: cutBy,
                        incomplete: try r.flag("incomplete"))
        return IndexedTurn(flowID: try r.integer("flow_id"), turn: turn,
                           segment: Int(try r.integer("segment", in: nonNegative)),
                           segmentOffset: try r.integer("segment_offset", in: nonNegative),
                           recordedAt: try r.integer("recorded_at"))
    }
}
