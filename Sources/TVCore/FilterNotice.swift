import FlowFilter
import TVHome

/// The one sentence a filtered command adds when operators had nothing to look at in some rows
/// (they matched none there), so an empty answer is not read as "nothing like that happened".
public enum FilterNotice {
    /// What the rows are.
    public enum Rows: Sendable, Equatable {
        /// Flow rows: connections, which hold no request.
        case flows
        /// Requests (exchange rows, HAR entries): headers and bodies only where content was kept.
        case requests
    }

    /// The sentence, or nil when every operator had something to look at in every row.
    public static func sentence(_ matcher: FilterMatcher, rows: Rows) -> String? {
        let ops = FilterOperator.allCases.filter { (matcher.unanswered[$0] ?? 0) > 0 }
        guard !ops.isEmpty else { return nil }
        let names = list(ops.map(\.spelling))
        let they = ops.count == 1 ? "it" : "they"
        switch rows {
        case .flows:
            return "\(names) \(ops.count == 1 ? "looks" : "look") at requests, which flow rows do not hold, so \(they) matched no flow; `tv requests --filter` filters requests."
        case .requests:
            let count = ops.compactMap { matcher.unanswered[$0] }.max() ?? 0
            return "\(names) \(ops.count == 1 ? "looks" : "look") in kept headers and bodies, which \(count) of the \(matcher.rows) requests checked do not have (no content was kept for them: content.keep was off, their flow's recording budget had run out, tv answered them itself, or what was kept expired or was deleted), so \(they) matched none of those."
        }
    }

    /// What a filtered page says in the terminal: the unanswered operators' sentence, then
    /// where a time limit stopped it.
    public static func sentences(_ matcher: FilterMatcher, rows: Rows, stopped: FilterTimeLimitReached?) -> [String] {
        [sentence(matcher, rows: rows), stopped?.sentence(rows)].compactMap { $0 }
    }

    /// The same for `--json`: `"notice"` (the unanswered operators' sentence or null) and
    /// `"stopped"` (`FilterTimeLimitReached.json`, or null when the page did not stop).
    public static func json(_ matcher: FilterMatcher, rows: Rows, stopped: FilterTimeLimitReached?) -> [(String, JSONValue)] {
        [("notice", sentence(matcher, rows: rows).map { .string($0) } ?? .null), ("stopped", stopped?.json(rows) ?? .null)]
    }

    /// `a`, `a and b`, `a, b and c`.
    static func list(_ words: [String]) -> String {
        words.count <= 1 ? words.joined() : words.dropLast().joined(separator: ", ") + " and " + words.last!
    }
}
