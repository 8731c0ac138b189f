import FlowStore
import FlowTerms

/// The SQL of the turns index (`content_turn_runs`, FlowSchema migration 19: one row per flow
/// per batch, its turns packed by `TurnRunText`) over one connection. Counts it returns are
/// turns, not rows. Same threading rule as `SQLiteDatabase`: one thread at a time.
struct TurnIndex {
    let database: SQLiteDatabase

    /// The columns of the old per-turn rows, the fields `TurnIndex.row` checks (each packed turn
    /// is read back into them).
    static let columns = "flow_id, turn, direction, start_offset, kept_bytes, seen_bytes, truncated, cut_by, incomplete, segment, segment_offset, recorded_at"

    /// The columns of a run row, in the order `insert` binds them.
    static let runColumns = "flow_id, first_turn, segment, recorded_at, turn_count, kept_bytes, turns"

    /// Rows one INSERT statement carries at most (7 parameters each, far below SQLite's limit).
    static let rowsPerInsert = 64

    /// How many of `remaining` rows the next INSERT carries: the largest power of two up to
    /// `rowsPerInsert`, so a writer compiles at most 7 statements (1, 2, 4 … 64 rows).
    static func rowsInNextInsert(remaining: Int) -> Int {
        guard remaining < rowsPerInsert else { return rowsPerInsert }
        var count = 1
        while count * 2 <= remaining { count *= 2 }
        return count
    }

    /// `INSERT OR REPLACE` of `rows` run rows (1…`rowsPerInsert`): one statement for many rows,
    /// so SQLite's per-statement work (VM start, halt, statement journal) is paid once per 64.
    static func insertSQL(rows: Int) -> String {
        "INSERT OR REPLACE INTO content_turn_runs (\(TurnIndex.runColumns)) VALUES "
            + repeatElement("(?,?,?,?,?,?,?)", count: rows).joined(separator: ",")
    }

    /// Inserts `rows` as runs (`TurnRun.runs`: one row per flow, segment and write time); the
    /// caller wraps them in a transaction. A run replaces one of the same flow and first turn.
    /// - Parameter statements: compiled inserts by row count, kept by a writer that inserts batch
    ///   after batch (missing ones are compiled and added).
    func insert(_ rows: [IndexedTurn], statements: inout [Int: SQLiteStatement]) throws {
        let runs = TurnRun.runs(rows)
        var next = 0
        while next < runs.count {
            let count = TurnIndex.rowsInNextInsert(remaining: runs.count - next)
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
            for (i, run) in runs[next..<(next + count)].enumerated() {
                let base = Int32(7 * i)
                try statement.bind(integer: run.flowID, at: base + 1)
                try statement.bind(integer: Int64(run.firstTurn), at: base + 2)
                try statement.bind(integer: Int64(run.segment), at: base + 3)
                try statement.bind(integer: run.recordedAt, at: base + 4)
                try statement.bind(integer: Int64(run.turnCount), at: base + 5)
                try statement.bind(integer: run.keptBytes, at: base + 6)
                try run.turns.withUnsafeBytes { try statement.bind(utf8: $0, at: base + 7) }
            }
            try statement.step()
            next += count
        }
    }

    /// Inserts (or replaces) rows with statements compiled for this call.
    func insert(_ rows: [IndexedTurn]) throws {
        var statements: [Int: SQLiteStatement] = [:]
        try insert(rows, statements: &statements)
    }

    /// The turns of `flow`, by number, and the turns left out as damaged. A turn found in two
    /// runs (written again) is read from the later one.
    func turns(flow: Int64) throws -> (turns: [IndexedTurn], damaged: [DamagedRow]) {
        let statement = try database.prepare(
            "SELECT segment, recorded_at, turns FROM content_turn_runs WHERE flow_id = ? ORDER BY recorded_at, first_turn")
        try statement.bind([.integer(flow)])
        var byNumber: [Int: IndexedTurn] = [:]
        var damaged: [DamagedRow] = []
        try statement.forEachRow { row in
            let text: String
            if case let .text(packed) = row.value(at: 2) { text = packed } else { text = "" }
            for result in TurnRunText.turns(flow: flow, segment: row.value(at: 0), recordedAt: row.value(at: 1), text: text) {
                switch result {
                case let .success(turn): byNumber[turn.turn.number] = turn
                case let .failure(damage): damaged.append(damage)
                }
            }
        }
        return (byNumber.values.sorted { $0.turn.number < $1.turn.number }, damaged)
    }

    /// Kept bytes the rows of each segment reference, summed (no `turns` text is read).
    func keptBytesBySegment() throws -> [Int: Int64] {
        let statement = try database.prepare("SELECT segment, total(kept_bytes) FROM content_turn_runs GROUP BY segment")
        var sums: [Int: Int64] = [:]
        try statement.forEachRow { row in
            if case let .integer(segment) = row.value(at: 0), case let .real(sum) = row.value(at: 1) { sums[Int(segment)] = Int64(sum) }
        }
        return sums
    }

    /// The byte ranges of segment `segment` its rows reference (each turn's `segmentOffset` and
    /// kept bytes); nil when a row there cannot be read (damaged: what it references is unknown,
    /// so nothing may be cleared).
    func referencedRanges(inSegment segment: Int) throws -> [Range<Int64>]? {
        let statement = try database.prepare("SELECT flow_id, segment, recorded_at, turns FROM content_turn_runs WHERE segment = ?")
        try statement.bind([.integer(Int64(segment))])
        var ranges: [Range<Int64>] = []
        var readable = true
        try statement.forEachRow { row in
            guard readable else { return }
            guard case let .integer(flow) = row.value(at: 0), case let .text(text) = row.value(at: 3) else { readable = false; return }
            for result in TurnRunText.turns(flow: flow, segment: row.value(at: 1), recordedAt: row.value(at: 2), text: text) {
                guard case let .success(turn) = result else { readable = false; return }
                ranges.append(turn.segmentOffset..<(turn.segmentOffset + Int64(turn.turn.keptBytes)))
            }
        }
        return readable ? ranges : nil
    }

    /// Counts and sums for `flow`, over its turns that are not damaged.
    func summary(flow: Int64) throws -> ContentSummary {
        Self.summary(of: try self.turns(flow: flow).turns)
    }

    /// What `turns` (one flow's) hold together.
    static func summary(of turns: [IndexedTurn]) -> ContentSummary {
        ContentSummary(turns: turns.count, keptBytes: turns.reduce(0) { $0 + Int64($1.turn.keptBytes) },
                              seenBytes: turns.reduce(0) { $0 + Int64($1.turn.seenBytes) },
                              truncated: turns.contains { $0.turn.truncated }, incomplete: turns.contains { $0.turn.incomplete })
    }

    /// Turns, distinct flows and kept bytes over the whole index, from the runs' counts (no
    /// `turns` text is read). Kept bytes count only where a run's sum is one a writer writes (an
    /// integer from 0 to its turns times the most a turn keeps), so one damaged row cannot make the
    /// total say gigabytes.
    func totals() throws -> (turns: Int, flows: Int, keptBytes: Int64) {
        let statement = try database.prepare("""
            SELECT total(turn_count), count(DISTINCT flow_id),
                   total(CASE WHEN typeof(kept_bytes) = 'integer' AND typeof(turn_count) = 'integer'
                                   AND kept_bytes BETWEEN 0 AND turn_count * \(RecordingBudget.mostKeptByATurn)
                              THEN kept_bytes ELSE 0 END)
            FROM content_turn_runs
            """)
        guard try statement.step() else { return (0, 0, 0) }
        return (Int(statement.double(at: 0)), Int(statement.int64(at: 1)), Int64(statement.double(at: 2)))
    }

    /// Per segment: turns, and turns recorded before `cutoff` (µs since the epoch). Reads the
    /// (segment, recorded_at, turn_count) index only.
    func segmentRows(expiredBefore cutoff: Int64) throws -> [Int: (rows: Int, expired: Int)] {
        let statement = try database.prepare(
            "SELECT segment, total(turn_count), total(CASE WHEN recorded_at < ? THEN turn_count ELSE 0 END) FROM content_turn_runs GROUP BY segment")
        try statement.bind([.integer(cutoff)])
        var facts: [Int: (rows: Int, expired: Int)] = [:]
        try statement.forEachRow { row in
            facts[Int(row.int64(at: 0))] = (Int(row.double(at: 1)), Int(row.double(at: 2)))
        }
        return facts
    }

    /// Which of `flows` have turns in each segment (for the retention planner's audit evidence);
    /// segments holding none of them are absent.
    func segmentFlows(of flows: Set<Int64>) throws -> [Int: Set<Int64>] {
        guard !flows.isEmpty else { return [:] }
        let list = flows.sorted().map(String.init).joined(separator: ",")
        let statement = try database.prepare("SELECT DISTINCT segment, flow_id FROM content_turn_runs WHERE flow_id IN (\(list))")
        var held: [Int: Set<Int64>] = [:]
        try statement.forEachRow { row in held[Int(row.int64(at: 0)), default: []].insert(row.int64(at: 1)) }
        return held
    }

    /// Segments that rows point into.
    func referencedSegments() throws -> Set<Int> {
        var segments: Set<Int> = []
        let statement = try database.prepare("SELECT DISTINCT segment FROM content_turn_runs")
        try statement.forEachRow { segments.insert(Int($0.int64(at: 0))) }
        return segments
    }

    /// The lowest segment a row points into, nil when the index is empty.
    func lowestSegment() throws -> Int? {
        if case let .integer(value) = try database.scalar("SELECT min(segment) FROM content_turn_runs") { return Int(value) }
        return nil
    }

    /// Runs `DELETE FROM content_turn_runs WHERE condition` with `values` bound.
    /// - Returns: how many turns the deleted rows held.
    func delete(where condition: String, _ values: [SQLiteValue] = []) throws -> Int {
        let statement = try database.prepare("DELETE FROM content_turn_runs WHERE \(condition) RETURNING turn_count")
        try statement.bind(values)
        var turns = 0
        try statement.forEachRow { turns += Int($0.int64(at: 0)) }
        return turns
    }

    /// Deletes every row but those of `flows`. - Returns: how many turns.
    func deleteAll(except flows: Set<Int64>) throws -> Int {
        guard !flows.isEmpty else { return try deleteAll() }
        return try delete(where: "flow_id NOT IN (\(flows.sorted().map(String.init).joined(separator: ",")))")
    }

    /// Deletes the rows of `segments` recorded before `cutoff` (µs since the epoch), one segment
    /// at a time through the (segment, recorded_at) index: name the segments `segmentRows` found
    /// expired rows in, so a sweep with nothing expired reads nothing.
    /// - Returns: how many turns.
    /// - Parameter sparing: flows whose rows stay (audit evidence sharing those segments).
    func deleteRecorded(before cutoff: Int64, inSegments segments: [Int], sparing: Set<Int64> = []) throws -> Int {
        var deleted = 0
        let spared = sparing.isEmpty ? "" : " AND flow_id NOT IN (\(sparing.sorted().map(String.init).joined(separator: ",")))"
        for segment in segments {
            deleted += try delete(where: "segment = ? AND recorded_at < ?" + spared, [.integer(Int64(segment)), .integer(cutoff)])
        }
        return deleted
    }

    /// Deletes the rows of `segment`. - Returns: how many turns.
    /// The latest `recorded_at` (µs) of the rows in `segments`; nil when they have none.
    func latestRecorded(inSegments segments: [Int]) throws -> Int64? {
        guard !segments.isEmpty else { return nil }
        let list = segments.map(String.init).joined(separator: ",")
        guard case let .integer(latest) = try database.scalar("SELECT max(recorded_at) FROM content_turn_runs WHERE segment IN (\(list))") else { return nil }
        return latest
    }

    func deleteRows(inSegment segment: Int) throws -> Int {
        try delete(where: "segment = ?", [.integer(Int64(segment))])
    }

    /// Deletes every row. - Returns: how many turns.
    func deleteAll() throws -> Int {
        try delete(where: "1")
    }

    /// Deletes the rows of `flow`. - Returns: how many turns.
    func deleteRows(flow: Int64) throws -> Int {
        try delete(where: "flow_id = ?", [.integer(flow)])
    }

    /// Deletes the rows of the flows `selection` (a `SELECT` of flow ids) names.
    /// - Returns: how many turns.
    func deleteRows(ofFlowsIn selection: String) throws -> Int {
        try delete(where: "flow_id IN (\(selection))")
    }

    /// The column names of `columns`, in order.
    static let names: [String] = columns.components(separatedBy: ", ")
    /// `names`' positions, for reading a row by column name (`CheckedRow`).
    static let columnIndex = ColumnIndex(names)

    /// The indexed turn `values` (in `names` order) hold, each value checked against what the
    /// content writer writes (a turn never keeps more than `RecordingBudget.mostKeptByATurn`
    /// bytes, nor more than it saw). Pure.
    /// - Throws: `DamagedRow` naming the first column no writer would have written.
    static func row(_ values: [SQLiteValue]) throws(DamagedRow) -> IndexedTurn {
        func number(_ index: Int) -> Int64 { if case let .integer(n) = values[index] { return n } else { return 0 } }
        let r = CheckedRow(.turn(number(1), flow: number(0)), columns: columnIndex, values: values)
        let nonNegative: ClosedRange<Int64> = 0...Int64.max
        let kept = try r.integer("kept_bytes", in: 0...Int64(RecordingBudget.mostKeptByATurn))
        let seen = try r.integer("seen_bytes", in: kept...Int64.max)
        let cutBy: BudgetLimit? = try r.flag("truncated") ? try r.known(BudgetLimit.self, "cut_by") : nil
        // Bit 0: bytes lost while recording; bit 1: the start deleted while it went on (`TurnRunText`).
        let losses = try r.integer("incomplete", in: 0...3)
        let turn = Turn(number: Int(try r.integer("turn", in: 1...Int64(Int32.max))),
                        direction: try r.known(Direction.self, "direction"),
                        startOffset: try r.integer("start_offset", in: nonNegative),
                        keptBytes: Int(kept), seenBytes: Int(seen), cutBy: cutBy,
                        incomplete: losses & 1 != 0, startDeleted: losses & 2 != 0)
        return IndexedTurn(flowID: try r.integer("flow_id"), turn: turn,
                           segment: Int(try r.integer("segment", in: nonNegative)),
                           segmentOffset: try r.integer("segment_offset", in: nonNegative),
                           recordedAt: try r.integer("recorded_at"))
    }
}
