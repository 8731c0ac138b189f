import FlowFilter
import FlowStore

/// `tv flows --filter`: one page of the flows `query` selects that also match a filter,
/// evaluated in memory over the store's keyset pages (newest first), so the answer is exact
/// whatever the expression; the next page's cursor is the last flow shown, so paging goes on
/// where this page stopped.
public enum FilteredFlows {
    /// Rows read from the store per step of the scan.
    public static let scanStep = 1_000

    /// Up to `query.effectiveLimit` matching flows, and a cursor when at least one more matches.
    /// `matcher` counts the rows it saw (for `FilterNotice`).
    /// - Throws: `FlowStoreError` (a bad cursor, an unreadable store).
    public static func page(_ query: FlowQuery, matching matcher: inout FilterMatcher, in store: FlowStore) throws -> FlowPage {
        let want = query.effectiveLimit
        var scan = query
        scan.limit = scanStep
        var matched: [FlowRecord] = []
        var damaged: [DamagedRow] = []
        scanning: while true {
            let page = try store.flows(scan)
            damaged += page.damaged
            for flow in page.flows where matcher.matches(FlowRowSubject(flow)) {
                matched.append(flow)
                if matched.count > want { break scanning }
            }
            guard let next = page.nextCursor else { break }
            scan.after = next
        }
        var result = FlowPage(flows: Array(matched.prefix(want)), nextCursor: nil)
        if matched.count > want, let last = result.flows.last {
            result.nextCursor = FlowCursor(startTime: last.startTime, id: last.id).string
        }
        result.damaged = damaged
        return result
    }
}

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
            return "\(names) \(ops.count == 1 ? "looks" : "look") in kept headers and bodies, which \(count) of the \(matcher.rows) requests checked do not have (content.keep was off for them), so \(they) matched none of those."
        }
    }

    /// `a`, `a and b`, `a, b and c`.
    static func list(_ words: [String]) -> String {
        words.count <= 1 ? words.joined() : words.dropLast().joined(separator: ", ") + " and " + words.last!
    }
}
