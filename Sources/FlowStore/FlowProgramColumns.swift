import FlowTerms

/// The `program_*` columns of `flows` (migration 10, issue 18): written only by
/// `FlowEvent.program` through `programUpdateSQL`, read with every record.
enum FlowProgramColumns {
    /// In reading and binding order, after `FlowRecordColumns.names` in the select list.
    static let names = ["program_pid", "program_command", "program_executable", "program_uid", "program_user", "program_unknown"]

    /// `UPDATE flows SET program_pid = ?, … WHERE id = ?`.
    static let updateSQL = "UPDATE flows SET " + names.map { "\($0) = ?" }.joined(separator: ", ") + " WHERE id = ?"

    /// `program`'s values in `names` order: a known program fills the first five and leaves
    /// `program_unknown` NULL; a program not known fills only `program_unknown`.
    static func bindings(_ program: FlowProgram) -> [SQLiteValue] {
        switch program {
        case .known(let p):
            return [.integer(Int64(p.pid)), .text(p.command), .textOrNull(p.executable), .integer(Int64(p.uid)), .textOrNull(p.user), .null]
        case .notKnown(let reason):
            return [.null, .null, .null, .null, .null, .text(reason.rawValue)]
        }
    }

    /// The program a row's `program_*` values hold: nil when all are NULL (not looked up yet, or
    /// a row from before the lookup).
    /// - Throws: `DamagedRow` for a value no writer writes (a pid or uid out of range, an unknown
    ///   reason, a known program without its command).
    static func program(_ r: CheckedRow) throws(DamagedRow) -> FlowProgram? {
        if try r.optionalText("program_unknown") != nil {
            return .notKnown(try r.known(ProgramUnknown.self, "program_unknown"))
        }
        guard let pid = try r.optionalInteger("program_pid", in: 1...Int64(Int32.max)) else { return nil }
        return .known(ProgramIdentity(pid: Int32(pid), command: try r.text("program_command"),
                                      executable: try r.optionalText("program_executable"),
                                      uid: UInt32(try r.integer("program_uid", in: 0...Int64(UInt32.max))),
                                      user: try r.optionalText("program_user")))
    }
}
