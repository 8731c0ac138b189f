import TVHome

/// How `tv status` and `tv diag` show several sessions live on one data folder (a `tv run` and
/// `tv exec`s, or several `tv exec`s): a sentence that says how many and how to see one, what
/// adds up across them, then each session as it would be shown alone. One session is shown
/// exactly as before; these are only for two or more.
///
/// In `--json`, the object is the first session's as before (`tv run`'s, else the oldest
/// `tv exec`'s), so a script reading one session's fields reads the same ones, with
/// `sessionCount`, `sessions` (each session's object, the first included, in order) and, for
/// `tv status`, `totals` (`LiveSessionTotals.json`) beside them.
public enum LiveSessionsPresentation {
    /// The screens that show live sessions.
    public enum Screen: String, Sendable {
        case status, diag, top
    }

    /// "2 tv sessions are running for FOLDER; each is shown below (`tv status --session PID`
    /// shows one)."
    public static func header(count: Int, folder: String, screen: Screen) -> String {
        let each: String
        switch screen {
        case .status: each = "each is shown below (`tv status --session PID` shows one)"
        case .diag: each = "each is diagnosed below (`tv diag --session PID` diagnoses one)"
        case .top: each = "their figures are added up here (`tv top --session PID` shows one)"
        }
        return "\(count) tv sessions are running for \(TerminalText.line(folder)); \(each)."
    }

    /// `tv status`'s text for two or more sessions: the header, the audit strip (the data
    /// folder's, said once), what they add up to, then each session's lines
    /// (`SessionStatusPresentation.lines`), a blank line before each.
    public static func statusLines(_ sessions: [LiveSession], folder: String, auditStrip: String? = nil) -> [String] {
        var out = [header(count: sessions.count, folder: folder, screen: .status)]
        if let auditStrip { out.append("  " + auditStrip) }
        out.append("  together          " + LiveSessionTotals.line(sessions.map(\.values)))
        for session in sessions {
            out.append("")
            out += SessionStatusPresentation.lines(session.values)
        }
        return out
    }

    /// `tv status --json` for two or more sessions: the first's object with `sessionCount`,
    /// `sessions` and `totals`.
    public static func statusJSON(_ sessions: [LiveSession]) -> JSONValue {
        with(SessionStatusPresentation.json(sessions.first?.values ?? [:]), [
            ("sessionCount", .int(Int64(sessions.count))),
            ("sessions", .array(sessions.map { SessionStatusPresentation.json($0.values) })),
            ("totals", LiveSessionTotals.json(sessions.map(\.values))),
        ])
    }

    /// `tv diag`'s text for two or more sessions: the header, then each session under its title
    /// ("Session pid 4242: …"), diagnosed alone (`DiagnosticsPresentation.lines`).
    public static func diagLines(_ sessions: [LiveSession], folder: String) -> [String] {
        var out = [header(count: sessions.count, folder: folder, screen: .diag)]
        for session in sessions {
            out.append("")
            out.append("Session " + session.title)
            out += DiagnosticsPresentation.lines(session.values)
        }
        return out
    }

    /// `tv diag --json` for two or more sessions: the first's object with `sessionCount` and
    /// `sessions` (each one's `tv diag --json`).
    public static func diagJSON(_ sessions: [LiveSession]) -> JSONValue {
        with(DiagnosticsPresentation.json(sessions.first?.values), [
            ("sessionCount", .int(Int64(sessions.count))),
            ("sessions", .array(sessions.map { DiagnosticsPresentation.json($0.values) })),
        ], sorted: false)
    }

    /// `object` with `fields` added: all keys in order when `sorted` (as `tv status --json`
    /// sorts them), else after its own.
    static func with(_ object: JSONValue, _ fields: [(String, JSONValue)], sorted: Bool = true) -> JSONValue {
        guard case .object(let existing) = object else { return object }
        return .object(sorted ? (existing + fields).sorted { $0.0 < $1.0 } : existing + fields)
    }
}
