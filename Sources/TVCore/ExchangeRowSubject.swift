import FlowFilter
import FlowStore
import FlowTerms
import HTTPReading
import Recording

/// An exchange row (`tv requests`) as the filter sees it: method, URL (scheme, authority and
/// path as the row keeps them: without the query unless content was kept), status, the
/// response's Content-Type, its flow's addresses and transport; the request's Content-Type,
/// header lines and bodies come from the flow's kept content, and are unanswered (nil) where
/// none was kept. The kept content of a flow is read once, and only when an operator asks.
public struct ExchangeRowSubject: FilterSubject {
    public let exchange: ExchangeRecord
    let context: ExchangeFilterContext

    init(_ exchange: ExchangeRecord, context: ExchangeFilterContext) {
        self.exchange = exchange
        self.context = context
    }

    public func texts(_ field: FilterField) -> [String]? {
        let e = exchange
        switch field {
        case .domain:
            if let host = e.authority.flatMap(Self.host) { return [host] }
            return context.flow(e.flowID).map { [$0.host ?? $0.serverAddress] } ?? []
        case .method: return [e.method]
        case .url:
            if e.connect, e.path == e.authority { return [e.path] }
            return [(e.authority.map { "\(e.scheme ?? "http")://\($0)" } ?? "") + e.path]
        case .statusCode: return e.status.map { [String($0)] } ?? []
        case .responseContentType: return e.contentType.map { [$0] } ?? []
        case .requestContentType: return context.recorded(e).map { $0.request?.headers.all("content-type") ?? [] }
        case .requestHeaders: return context.recorded(e).map { KeptExchangeSubject.lines($0.request) }
        case .responseHeaders: return context.recorded(e).map { KeptExchangeSubject.lines($0.response) }
        case .requestBody: return context.recorded(e).map { KeptExchangeSubject.body($0.request, reader: context.reader) }
        case .responseBody: return context.recorded(e).map { KeptExchangeSubject.body($0.response, reader: context.reader) }
        case .source: return context.flow(e.flowID).map { [filterAddress($0.clientAddress, port: $0.clientPort)] }
        case .destination: return context.flow(e.flowID).map { [filterAddress($0.serverAddress, port: $0.serverPort)] }
        }
    }

    public func flag(_ flag: FilterFlag) -> Bool? {
        switch flag {
        // tv's own answer (`.answered`) is no response of the server's, and a failure.
        case .hasResponse: return exchange.status != nil && exchange.state != .answered
        // A cancelled stream is one, as kept content's reset is (`FilterSubjects`).
        case .failed: return exchange.state == .incomplete || exchange.state == .answered || exchange.state == .cancelled
        case .tcp: return context.flow(exchange.flowID).map { $0.transport == .tcp }
        case .udp: return context.flow(exchange.flowID).map { $0.transport == .udp }
        }
    }

    /// The host of an authority: `[::1]:8443` → `::1`, `example.com:8080` → `example.com`.
    static func host(_ authority: String) -> String? {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        let host = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return host.isEmpty ? nil : host
    }
}

/// What exchange rows look up while one command filters them: their flows' rows and their
/// flows' kept conversations, each read once. One command, one thread.
final class ExchangeFilterContext {
    let store: FlowStore
    let content: ContentStore?
    /// Decodes bodies for `~b`, within its own budget.
    let reader = BoundedBodyReader()
    private var flows: [Int64: FlowRecord?] = [:]
    /// Per flow, its rows' recorded exchanges by row id (`ExchangeRowMatch`), read once.
    private var recordedByRow: [Int64: [Int64: HTTPExchange]] = [:]

    init(store: FlowStore, content: ContentStore?) {
        self.store = store
        self.content = content
    }

    func flow(_ id: Int64) -> FlowRecord? {
        if let known = flows[id] { return known }
        let record = (try? store.flow(id: id)) ?? nil
        flows[id] = .some(record)
        return record
    }

    /// The recorded exchange of `exchange`, nil when its flow's content was not kept (or not read
    /// as HTTP), or does not hold it.
    func recorded(_ exchange: ExchangeRecord) -> HTTPExchange? {
        guard let content else { return nil }
        if recordedByRow[exchange.flowID] == nil {
            var byRow: [Int64: HTTPExchange] = [:]
            if let recorded = (try? RequestReading.recordedExchanges(flow: exchange.flowID, content: content)) ?? nil,
               let rows = try? store.exchanges(ofFlow: exchange.flowID).exchanges {
                let pairs = ExchangeRowMatch.pair(recorded, rows: rows, flowStart: flow(exchange.flowID)?.startTime ?? 0)
                for (one, index) in zip(recorded, pairs) {
                    if let index { byRow[rows[index].id] = one }
                }
            }
            recordedByRow[exchange.flowID] = byRow
        }
        return recordedByRow[exchange.flowID]?[exchange.id]
    }
}

/// `tv requests --filter`: one page of the exchanges `query` selects that also match a filter.
public enum FilteredRequests {
    /// Up to `query.effectiveLimit` matching exchanges, a cursor when at least one more matches
    /// (or the matcher's deadline passed: then `stopped` says how far it looked); kept content
    /// is read from `content` (nil: none is looked at). `matcher` counts the rows it saw (for
    /// `FilterNotice`).
    /// - Throws: `FlowStoreError` (a bad cursor, an unreadable store).
    public static func page(_ query: ExchangeQuery, matching matcher: inout FilterMatcher, in store: FlowStore,
                            content: ContentStore?) throws -> (page: ExchangePage, stopped: FilterTimeLimitReached?) {
        let context = ExchangeFilterContext(store: store, content: content)
        var scan = query
        scan.limit = KeysetFilter.step
        let found = try KeysetFilter.collect(want: query.effectiveLimit, after: query.after, fetch: { after in
            scan.after = after
            let page = try store.exchanges(scan)
            return (page.exchanges, page.nextCursor, page.damaged)
        }, decide: { matcher.decide(ExchangeRowSubject($0, context: context)) })
        let ending = KeysetFilter.ending(found, after: query.after, matcher: matcher,
                                         cursor: { FlowCursor(startTime: $0.requestTime, id: $0.id).string }, id: \.id)
        var page = ExchangePage(exchanges: found.rows, nextCursor: ending.next)
        page.damaged = found.damaged
        return (page, ending.stopped)
    }
}
