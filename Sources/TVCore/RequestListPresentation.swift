import FlowStore
import FlowTerms
import Proxy
import TVHome

/// How `tv requests` shows HTTP exchanges: one line each, newest first — id, time (UTC), method,
/// host, path (`?…` where a query was there and not kept), status, request and response body
/// sizes, duration, content type — and how `tv run --log requests` prints a finished one.
/// Everything the peers sent (method, host, path, content type, reason) is escaped with
/// `TerminalText.line`.
public struct RequestListPresentation: Sendable {
    public struct Row: Sendable, Equatable {
        public var id: String
        public var time: String
        public var method: String
        public var host: String
        public var path: String
        public var status: String
        public var sizes: String
        public var duration: String
        public var contentType: String
        /// The shared store's rows: the instance that saw it (`MACHINE`, or `MACHINE/PREFIX`
        /// when several instances on the page carry that machine name); "" for a local row.
        public var instance = ""
    }

    public let rows: [Row]
    public let damaged: [DamagedRow]
    public let nextCursor: String?
    /// The options to repeat before `--after` in the closing hint (as `FlowListPresentation`).
    public let repeatedOptions: [String]
    /// What the list was narrowed to, for the sentence an empty list says: one flow (`--flow`,
    /// a flow that exists), and whether a stretch of time was given (`--since`, `--from`, `--to`).
    public let flow: Int64?
    public let windowed: Bool

    public init(page: ExchangePage, repeatedOptions: [String] = [], flow: Int64? = nil, windowed: Bool = false) {
        // A shared page names each row's instance (`tv flows --store` does in its ID column; a
        // trial's `tv requests --store` left it to --json).
        var ids: [String: Set<String>] = [:]
        for instance in page.instances.values { ids[instance.machine, default: []].insert(instance.id) }
        rows = page.exchanges.map { e in
            var row = RequestListPresentation.row(e)
            if let instance = page.instances[e.id] {
                row.instance = TerminalText.line(instance.machine) + ((ids[instance.machine]?.count ?? 0) > 1 ? "/" + String(instance.id.prefix(8)) : "")
            }
            return row
        }
        damaged = page.damaged
        nextCursor = page.nextCursor
        self.repeatedOptions = repeatedOptions
        self.flow = flow
        self.windowed = windowed
    }

    /// What an empty list says: nothing recorded at all, nothing of one flow, nothing in the
    /// stretch of time asked (requests kept elsewhere are not "not recorded yet").
    var emptySentence: String {
        let source = "they are read from inspected connections (`tv inspect on`) and plain HTTP through the proxy"
        switch (flow, windowed) {
        case let (flow?, false):
            return "Flow \(flow) has no HTTP requests recorded; \(source)."
        case let (flow?, true):
            return "Flow \(flow) has no HTTP requests recorded in this stretch of time."
        case (nil, true):
            return "No HTTP requests are recorded in this stretch of time; `tv requests` without --since, --from and --to lists every one kept."
        case (nil, false):
            return "No HTTP requests are recorded yet. They are read from inspected connections (`tv inspect on`) and plain HTTP through the proxy while `tv run` runs."
        }
    }

    /// `https://host/path`, with `?…` when a query was left out (it is content).
    public static func url(_ e: ExchangeRecord) -> String {
        if e.connect && e.path == e.authority { return TerminalText.line(e.path) }
        let prefix = e.authority.map { "\(e.scheme ?? "http")://\($0)" } ?? ""
        return TerminalText.line(prefix + e.path) + (e.queryRemoved ? "?…" : "")
    }

    /// `200`, `404 Not Found` only in the detail; here the code (`502 by tv` when tv answered in
    /// the server's place, `200 incomplete` when the response never reached its end: an aborted
    /// download read as a plain `200`, a trial; `200 cancelled` when the client reset its HTTP/2
    /// stream), or what stands for none: `—` while open, `refused by tv` for a request tv never
    /// sent whose answer never came (`ExchangeState.refusedSentence`), `incomplete` (or
    /// `cancelled`) when it ended without a response. The word is the state's name, as the JSON,
    /// the detail and the HAR say it (`cut` belongs to what a budget or snaplen kept).
    public static func status(_ e: ExchangeRecord) -> String {
        if let status = e.status {
            switch e.state {
            case .answered: return "\(status) by tv"
            case .incomplete: return "\(status) incomplete"
            case .cancelled: return "\(status) cancelled"
            case .open, .complete: return String(status)
            }
        }
        switch e.state {
        case .open: return "—"
        case .answered: return "refused by tv"
        case .cancelled: return "cancelled"
        case .complete, .incomplete: return "incomplete"
        }
    }

    /// `12 B → 1.2 KiB`: request body, then response body (`—` without a response).
    public static func sizes(_ e: ExchangeRecord) -> String {
        Units.bytes(e.requestBodyBytes) + " → " + (e.responseBodyBytes.map(Units.bytes) ?? "—")
    }

    /// The duration, `open` while open.
    public static func duration(_ e: ExchangeRecord) -> String {
        e.duration.map { Units.duration(microseconds: $0) } ?? "open"
    }

    static func row(_ e: ExchangeRecord) -> Row {
        Row(id: String(e.id), time: Units.utc(e.requestTime / 1_000_000, format: "%m-%d %H:%M:%S"),
            method: TerminalText.line(e.method), host: TerminalText.line(e.authority ?? "—"),
            path: TerminalText.line(e.path) + (e.queryRemoved ? "?…" : ""), status: status(e), sizes: sizes(e),
            duration: duration(e), contentType: TerminalText.line(e.contentType ?? ""))
    }

    /// The line `tv run --log requests` prints when an exchange ends, like mitmdump's:
    /// `20:31:05.120 GET https://example.com/a?… 200 1.2 KiB 35 ms` (time UTC, the response
    /// body size; an exchange that ended without a response says `incomplete`).
    public static func logLine(_ e: ExchangeRecord) -> String {
        let time = Units.utcMillis(e.endTime ?? e.requestTime)
        let clock = time.split(separator: " ").dropFirst().first.map(String.init) ?? time
        return "\(clock) \(TerminalText.line(e.method)) \(url(e)) \(status(e)) \(e.responseBodyBytes.map(Units.bytes) ?? "—") \(duration(e))"
    }

    /// Aligned lines with a header; a closing line says how to see more.
    public func lines() -> [String] {
        let damagedLine = damaged.isEmpty ? [] : [(damaged.count == 1 ? "1 damaged row on this page is" : "\(damaged.count) damaged rows on this page are")
            + " left out (a value no tv writes): " + damaged.map(\.summary).joined(separator: "; ") + "."]
        let more = nextCursor.map { ["More: " + RequestListPresentation.moreCommand(cursor: $0, repeatedOptions: repeatedOptions)] } ?? []
        guard !rows.isEmpty else {
            if !more.isEmpty { return damagedLine + more }
            return damagedLine + [emptySentence]
        }
        let shared = rows.contains { !$0.instance.isEmpty }
        let header = Row(id: "ID", time: "TIME (UTC)", method: "METHOD", host: "HOST", path: "PATH", status: "STATUS",
                         sizes: "SIZES (REQ → RESP)", duration: "DURATION", contentType: "TYPE", instance: "INSTANCE")
        let all = [header] + rows
        func width(_ key: KeyPath<Row, String>) -> Int { all.map { $0[keyPath: key].count }.max() ?? 0 }
        let instanceWidth = width(\.instance)
        let w = [width(\.id), width(\.time), width(\.method), width(\.host), width(\.status), width(\.sizes), width(\.duration)]
        let pathWidth = min(width(\.path), 60)
        var out = all.map { r in
            let path = r.path.count > 60 ? String(r.path.prefix(59)) + "…" : r.path
            return ([pad(r.id, w[0], right: true)] + (shared ? [pad(r.instance, instanceWidth)] : [])
                    + [pad(r.time, w[1]), pad(r.method, w[2]), pad(r.host, w[3]), pad(path, pathWidth),
                       pad(r.status, w[4]), pad(r.sizes, w[5], right: true), pad(r.duration, w[6], right: true), r.contentType])
                .joined(separator: "  ").trimmingTrailingSpaces()
        }
        out += damagedLine + more
        return out
    }

    private func pad(_ s: String, _ w: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, w - s.count))
        return right ? fill + s : s + fill
    }

    /// `tv requests [OPTIONS] --after CURSOR`.
    public static func moreCommand(cursor: String, repeatedOptions: [String]) -> String {
        (["tv", "requests"] + repeatedOptions.map(ShellWord.quote) + ["--after", ShellWord.quote(cursor)])
            .joined(separator: " ")
    }

    /// One exchange as JSON (every column; times µs since the epoch, sizes bytes).
    public static func json(_ e: ExchangeRecord) -> JSONValue {
        func int(_ v: Int64?) -> JSONValue { v.map { .int($0) } ?? .null }
        func text(_ v: String?) -> JSONValue { v.map { .string($0) } ?? .null }
        return .object([
            ("id", .int(e.id)), ("flow", .int(e.flowID)), ("sequence", .int(Int64(e.sequence))), ("stream", int(e.streamID)),
            ("httpVersion", .string(e.httpVersion)), ("method", .string(e.method)), ("scheme", text(e.scheme)),
            ("authority", text(e.authority)), ("path", .string(e.path)), ("queryRemoved", .bool(e.queryRemoved)),
            ("status", int(e.status.map(Int64.init))), ("reason", text(e.reason)),
            ("requestBodyBytes", .int(e.requestBodyBytes)), ("requestWireBytes", .int(e.requestWireBytes)),
            ("responseBodyBytes", int(e.responseBodyBytes)), ("responseWireBytes", int(e.responseWireBytes)),
            ("contentType", text(e.contentType)), ("contentEncoding", text(e.contentEncoding)),
            ("requestTime", .int(e.requestTime)), ("requestEndTime", int(e.requestEndTime)), ("responseTime", int(e.responseTime)),
            ("endTime", int(e.endTime)),
            ("duration", int(e.duration)), ("upgrade", .bool(e.upgrade)), ("connect", .bool(e.connect)),
            ("state", .string(e.state.rawValue)),
        ])
    }

    /// The most requests `tv flow ID` lists (its first; `tv requests --flow ID` pages through
    /// the rest), as `tv requests` shows a page by default.
    public static let flowLineCap = 50

    /// Of a flow whose connection made more requests than it got rows for: how many were
    /// counted and not written, and the two bounds (`LeftOutRequestsNotice.bounds`).
    public static func leftOutSentence(_ count: Int64, allowance: RequestRowAllowance = .standard) -> String {
        "\(ByteWords.grouped(count)) more request\(count == 1 ? " was" : "s were") read on this connection and counted, not written: "
            + LeftOutRequestsNotice.bounds(allowance) + "."
    }

    /// `tv flow ID`'s list of the flow's requests, in order (nothing when it has none):
    /// `exchanges` are the first of `total` (all of them when nil), `leftOut` those counted
    /// without rows (`FlowRecord.requestsLeftOut`).
    public static func flowLines(_ exchanges: [ExchangeRecord], damaged: [DamagedRow], total: Int? = nil, leftOut: Int64? = nil,
                                 flowID: Int64? = nil) -> [String] {
        let leftOutLines = leftOut.map { ["  " + leftOutSentence($0)] } ?? []
        guard !exchanges.isEmpty || !damaged.isEmpty else { return leftOutLines.isEmpty ? [] : [""] + leftOutLines }
        let total = max(total ?? exchanges.count, exchanges.count)
        let count = total > exchanges.count
            ? "the first \(ByteWords.grouped(Int64(exchanges.count))) of \(ByteWords.grouped(Int64(total)))"
                + (flowID.map { "; `tv requests --flow \($0)` lists them all" } ?? "")
            : ByteWords.grouped(Int64(total))
        var out = ["", "HTTP requests (\(count); `tv request ID` shows one):"]
        let rows = exchanges.map(row)
        let idWidth = rows.map(\.id.count).max() ?? 0
        let methodWidth = rows.map(\.method.count).max() ?? 0
        for (e, r) in zip(exchanges, rows) {
            let id = String(repeating: " ", count: idWidth - r.id.count) + r.id
            let method = r.method + String(repeating: " ", count: methodWidth - r.method.count)
            var line = "  \(id)  \(method)  \(r.path)  \(r.status)  \(r.sizes)  \(r.duration)"
            if let stream = e.streamID { line += "  stream \(stream)" }
            if !r.contentType.isEmpty { line += "  " + r.contentType }
            out.append(line)
        }
        for row in damaged { out.append("  " + row.sentence) }
        if total > exchanges.count { out.append("  … \(ByteWords.grouped(Int64(total - exchanges.count))) more") }
        return out + leftOutLines
    }

    /// `tv flow ID --json`: the flow's object with its requests added as `requests` (the first
    /// of `requestCount` when given: `tv requests --flow ID --json` pages through them all), and
    /// `requestsLeftOutSentence` (`leftOutSentence` of its `requestsLeftOut`, else null).
    public static func json(flow: JSONValue, _ exchanges: [ExchangeRecord], requestCount: Int? = nil, leftOut: Int64? = nil) -> JSONValue {
        guard case var .object(fields) = flow else { return flow }
        fields.append(("requests", .array(exchanges.map(json))))
        if let requestCount { fields.append(("requestCount", .int(Int64(max(requestCount, exchanges.count))))) }
        fields.append(("requestsLeftOutSentence", leftOut.map { .string(leftOutSentence($0)) } ?? .null))
        return .object(fields)
    }

    /// The page as JSON for `--json`; a shared store's row also names its instance
    /// (`"instance": {"id", "machine"}`), a local one is unchanged.
    public static func json(_ page: ExchangePage) -> JSONValue {
        func row(_ e: ExchangeRecord) -> JSONValue {
            guard case let .object(fields) = json(e) else { return json(e) }
            return .object(fields + SharedInstancePresentation.jsonField(page.instances[e.id]))
        }
        return .object([("requests", .array(page.exchanges.map(row))),
                 ("damaged", .array(page.damaged.map { .string($0.summary) })),
                 ("nextCursor", page.nextCursor.map { .string($0) } ?? .null)])
    }
}
