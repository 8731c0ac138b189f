import FlowFilter
import FlowStore

/// Filtering in memory over keyset pages (newest first), so the answer is exact whatever the
/// expression: the store's pages are read in steps of `step` rows until one more row than the
/// page matches, the rows end, or the matcher's deadline passes; the next page's cursor is the
/// last row shown (or, when time ran out, the last row looked at), so paging goes on where this
/// page stopped.
public enum KeysetFilter {
    /// Rows read from the store per step of the scan.
    public static let step = 1_000

    /// What one scan found.
    struct Collected<Row> {
        /// The rows kept, at most `want`.
        var rows: [Row] = []
        /// Whether another row matches (or, when `stopped`, may).
        var more = false
        /// Damaged rows met on the way.
        var damaged: [DamagedRow] = []
        /// Set when the deadline passed: the last row looked at (nil: none on this page, so the
        /// next page starts where this one did), and whether its own search was cut.
        var stopped: (lastLooked: Row?, cut: Bool)?
    }

    /// The first `want` rows that `decide` keeps, whether another one follows, and the damaged
    /// rows met on the way. `fetch` reads the page after a cursor (nil: the first) of `step` rows.
    static func collect<Row>(want: Int, after: String?,
                             fetch: (String?) throws -> (rows: [Row], next: String?, damaged: [DamagedRow]),
                             decide: (Row) -> FilterDecision) throws -> Collected<Row> {
        var found = Collected<Row>()
        var cursor = after
        var previous: Row?
        while true {
            let page = try fetch(cursor)
            found.damaged += page.damaged
            for row in page.rows {
                switch decide(row) {
                case .match:
                    found.rows.append(row)
                    if found.rows.count > want {
                        found.rows.removeLast()
                        found.more = true
                        return found
                    }
                case .noMatch: break
                case .outOfTime(let cut):
                    found.more = true
                    found.stopped = (cut ? row : previous, cut)
                    return found
                }
                previous = row
            }
            guard let next = page.next else { return found }
            cursor = next
        }
    }

    /// The next page's cursor (`cursor` of the last row shown, or when time ran out of the last
    /// row looked at; nil when no row follows) and how far a page cut by the deadline looked.
    static func ending<Row>(_ found: Collected<Row>, after: String?, matcher: FilterMatcher, cursor: (Row) -> String,
                            id: (Row) -> Int64) -> (next: String?, stopped: FilterTimeLimitReached?) {
        guard let stopped = found.stopped else { return (found.more ? found.rows.last.map(cursor) : nil, nil) }
        return (stopped.lastLooked.map(cursor) ?? after,
                FilterTimeLimitReached(limit: matcher.deadline?.limit ?? .zero, looked: matcher.rows, matched: found.rows.count,
                                       cut: stopped.cut ? stopped.lastLooked.map(id) : nil))
    }
}

/// `tv flows --filter`: one page of the flows `query` selects that also match a filter.
public enum FilteredFlows {
    /// Up to `query.effectiveLimit` matching flows, a cursor when at least one more matches (or
    /// the matcher's deadline passed: then `stopped` says how far it looked). `matcher` counts
    /// the rows it saw (for `FilterNotice`).
    /// - Throws: `FlowStoreError` (a bad cursor, an unreadable store).
    public static func page(_ query: FlowQuery, matching matcher: inout FilterMatcher,
                            in store: FlowStore) throws -> (page: FlowPage, stopped: FilterTimeLimitReached?) {
        var scan = query
        scan.limit = KeysetFilter.step
        let found = try KeysetFilter.collect(want: query.effectiveLimit, after: query.after, fetch: { after in
            scan.after = after
            let page = try store.flows(scan)
            return (page.flows, page.nextCursor, page.damaged)
        }, decide: { matcher.decide(FlowRowSubject($0)) })
        let ending = KeysetFilter.ending(found, after: query.after, matcher: matcher,
                                         cursor: { FlowCursor(startTime: $0.startTime, id: $0.id).string }, id: \.id)
        var page = FlowPage(flows: found.rows, nextCursor: ending.next)
        page.damaged = found.damaged
        return (page, ending.stopped)
    }
}
