import FlowTerms

/// Which of a flow's exchange rows each exchange read from its kept turns is — the one pairing
/// `tv request`, `tv export har` and the filters' content operators (`~h`, `~b`) read. Pure.
///
/// - HTTP/2 by stream: a stream is one exchange of its connection, and its id is the row's
///   (RFC 9113 §5.1.1: the client opens odd ones; an even one the server pushed, whose row the
///   data path made from its PUSH_PROMISE with the promised id). A pushed stream is its row too
///   (they were never matched while pushed streams had no rows, and a pushed response kept whole
///   was said not kept: a trial).
/// - HTTP/1 in order, but never by position alone: what is kept may begin after the connection
///   did (its start deleted while it stayed open, `DeletedStart`, or keeping switched on then),
///   and the rows go back to its first request. Each kept request is the next row, in order,
///   made no earlier than the turn its first bytes came in began (`flowStart` + that turn's
///   offset) and naming the same method and path (its query aside: rows of requests whose
///   content went lose it). By position the n-th kept request took the n-th row, so after a
///   delete the second request's content was shown as the first's and the second said not kept
///   (a trial).
///
/// The times compare exactly: a turn's offset is the loop's wall clock read once per wake-up,
/// as the wake-up began, minus the flow's start (`FlowRecord.startTime`, the same value); a
/// row's `requestTime` is that clock read again as the request's bytes are handled, so never
/// before its turn began. (Not an upper bound: a local server's answer is often read in the same
/// wake-up, its turn starting at the same reading of the clock, before the row's.) A local
/// exchange lasts well under a millisecond (a re-check's first request was 0.5 ms before the
/// turn after it), so no slack is allowed for.
public enum ExchangeRowMatch {

    /// For each of `recorded` (in order), the index in `rows` of the row it is; nil when none is
    /// (an exchange without a request, a stream or request no row has).
    /// - Parameters:
    ///   - rows: the flow's exchange rows, in any order.
    ///   - flowStart: the flow's start (µs since the epoch), which the turns' offsets count from.
    public static func pair(_ recorded: [HTTPExchange], rows: [ExchangeRecord], flowStart: Int64) -> [Int?] {
        // Streams looked up by key (a scan of the rows per exchange made a flow of 100,000 reset
        // streams take minutes to export: a trial), HTTP/1 rows walked once, in order.
        var byStream: [Int64: Int] = [:]
        var inOrder: [Int] = []
        for (index, row) in rows.enumerated() {
            if let stream = row.streamID {
                if byStream[stream] == nil { byStream[stream] = index }
            } else {
                inOrder.append(index)
            }
        }
        inOrder.sort { rows[$0].sequence < rows[$1].sequence }
        // Each HTTP/1 request's successor's message, for the bound below.
        let requests = recorded.compactMap { $0.streamID == nil ? $0.request : nil }
        var nth = 0, next = 0
        return recorded.map { exchange -> Int? in
            if let stream = exchange.streamID {
                // A row is a push when its stream is even; the reading's flag must agree.
                guard let index = byStream[Int64(stream)], exchange.pushed == (stream % 2 == 0) else { return nil }
                return index
            }
            guard let request = exchange.request else { return nil }
            nth += 1
            let earliest = flowStart + request.offset
            // A later turn of the next request began in a later wake-up than this row was made
            // in: no row from then on is this one (a pipelined one in this same turn bounds none).
            let following = nth < requests.count ? requests[nth] : nil
            let bound = following.flatMap { $0.turn > request.turn ? flowStart + $0.offset : nil }
            let target = requestTarget(request.startLine)
            var candidate = next
            while candidate < inOrder.count {
                let row = rows[inOrder[candidate]]
                if let bound, row.requestTime >= bound { return nil }
                if row.requestTime >= earliest, row.method == target.method, pathWithoutQuery(row.path) == target.path {
                    next = candidate + 1
                    return inOrder[candidate]
                }
                candidate += 1
            }
            return nil
        }
    }

    /// The recorded exchange that is `row`, nil when none of `recorded` is (see `pair`).
    /// - Parameter rows: every exchange row of `row`'s flow (`row` among them).
    public static func recorded(for row: ExchangeRecord, in recorded: [HTTPExchange], rows: [ExchangeRecord],
                                flowStart: Int64) -> HTTPExchange? {
        for (exchange, index) in zip(recorded, pair(recorded, rows: rows, flowStart: flowStart)) {
            if let index, rows[index].id == row.id { return exchange }
        }
        return nil
    }

    /// An HTTP/1 request line's method and its target's path without the query, as a row keeps
    /// it: an absolute-form target (`http://a.test/x`, RFC 9112 §3.2.2) without its scheme and
    /// authority, authority-form (CONNECT) and `*` as they are.
    static func requestTarget(_ startLine: String) -> (method: String, path: String) {
        let parts = startLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        let method = parts.first.map(String.init) ?? ""
        var target = parts.count > 1 ? Substring(parts[1]) : ""
        if !target.hasPrefix("/"), let scheme = target.range(of: "://") {
            let rest = target[scheme.upperBound...]
            let end = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
            target = rest[end...]
            if !target.hasPrefix("/") { target = "/" + target }
        }
        return (method, pathWithoutQuery(String(target)))
    }

    /// `path` up to its query or fragment, where the data path cuts a row's path without content.
    static func pathWithoutQuery(_ path: String) -> String {
        String(path.prefix { $0 != "?" && $0 != "#" })
    }
}
