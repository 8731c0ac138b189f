import FlowStore

/// A hand edit of the turns index, as a damaged page or a person with sqlite3 can make one: one
/// field of packed turns (`content_turn_runs.turns`, FlowSchema migration 19: each turn
/// `turn,direction,start_offset,kept_bytes,seen_bytes,truncated,cut_by,incomplete,segment_offset`,
/// turns separated by `;`) set to other text. Shared by CLITests, TVCoreTests and RecordingTests
/// (linked from their Support folders).
enum TurnRunDamage {
    /// The fields of a packed turn, in order.
    static let fields = ["turn", "direction", "start_offset", "kept_bytes", "seen_bytes", "truncated", "cut_by", "incomplete", "segment_offset"]

    /// Sets `column` of turn `turn` of `flow` (every turn of it when nil) to `value`, as stored.
    static func set(_ column: String, to value: String, flow: Int64, turn: Int? = nil, in database: SQLiteDatabase) throws {
        guard let field = fields.firstIndex(of: column) else { preconditionFailure("no packed field \(column)") }
        let select = try database.prepare("SELECT first_turn, turns FROM content_turn_runs WHERE flow_id = ?")
        try select.bind([.integer(flow)])
        var edits: [(firstTurn: Int64, turns: String)] = []
        try select.forEachRow { row in
            let records = (row.string(at: 1) ?? "").split(separator: ";", omittingEmptySubsequences: false).map { record in
                var parts = record.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                if turn == nil || parts.first == turn.map(String.init) { parts[field] = value }
                return parts.joined(separator: ",")
            }
            edits.append((row.int64(at: 0), records.joined(separator: ";")))
        }
        let update = try database.prepare("UPDATE content_turn_runs SET turns = ? WHERE flow_id = ? AND first_turn = ?")
        for edit in edits {
            try update.bind([.text(edit.turns), .integer(flow), .integer(edit.firstTurn)])
            try update.step()
        }
    }
}
