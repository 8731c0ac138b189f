import FlowFilter
import FlowStore

/// Filtering in memory over keyset pages (newest first), so the answer is exact whatever the
/// expression: the store's pages are read in steps of `step` rows until one more row than the
/// page matches, or the rows end; the next page's cursor is the last row shown, so paging goes
/// on where this page stopped.
public enum KeysetFilter {
    /// Rows read from the store per step of the scan.
    public static let step = 1_000

    /// The first `want` rows that `matches` keeps, whether another one follows, and the damaged
    /// rows met on the way. `fetch` reads the page after a cursor (nil: the first) of `step` rows.
    static func collect<Row>(want: Int, after: String?,
                             fetch: (String?) throws -> (rows: [Row], next: String?, damaged: [DamagedRow]),
                             matches: (Row) -> Bool) throws -> (rows: [Row], more: Bool, damaged: [DamagedRow]) {
        var kept: [Row] = []
        var damaged: [DamagedRow] = []
        var cursor = after
        while true {
            let page = try fetch(cursor)
            damaged += page.damaged
            for row in page.rows where matches(row) {
                kept.append(row)
                if kept.count > want { return (Array(kept.prefix(want)), true, damaged) }
            }
            guard let next = page.next else { return (kept, false, damaged) }
            cursor = next
        }
    }
}

/// `tv flows --filter`: one page of the flows `query` selects that also match a filter.
public enum FilteredFlows {
    /// Up to `query.effectiveLimit` matching flows, and a cursor when at least one more matches.
    /// `matcher` counts the rows it saw (for `FilterNotice`).
    /// - Throws: `FlowStoreError` (a bad cursor, an unreadable store).
    public static func page(_ query: FlowQuery, matching matcher: inout FilterMatcher, in store: FlowStore) throws -> FlowPage {
        var scan = query
        scan.limit = KeysetFilter.step
        let found = try KeysetFilter.collect(want: query.effectiveLimit, after: query.after, fetch: { after in
            scan.after = after
            let page = try store.flows(scan)
            return (page.flows, page.nextCursor, page.damaged)
        }, matches: { matcher.matches(FlowRowSubject($0)) })
        var page = FlowPage(flows: found.rows, nextCursor: nil)
        if found.more, let last = found.rows.last { page.nextCursor = FlowCursor(startTime: last.startTime, id: last.id).string }
        page.damaged = found.damaged
        return page
    }
}
