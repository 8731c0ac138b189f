import CommandLineParser
import FlowFilter
import FlowStore
import Recording
import TVCore
import TVHome

/// `tv requests`, `tv request ID [--curl]`: the HTTP exchanges read from inspected and plain
/// connections (issue 16).
enum RequestCommands {
    static let requestsSpec = CommandSpec(
        name: "requests", summary: "List recorded HTTP requests, newest first: time, method, host, path, status, sizes, duration, type.",
        discussion: RequestDetailPresentation.keptWithoutContent + " A path whose query was not kept ends in ?…. A flow listed whose connection had requests tv counted without rows (past a connection's first 10,000 requests, then 10 a second, or while 256 of its HTTP/2 streams were open) is named on standard error, and in --json's requestsLeftOut. A running session is asked to write what it holds first (waiting at most 1 s). Pages are keyset-based: follow the printed --after cursor for the next one.",
        options: [OptionSpec("flow", value: "ID", help: "Only the requests of flow ID."),
                  OptionSpec("since", value: "SPAN", help: "Only requests made within SPAN (90s, 15m, 1h, 2d, 1w)."),
                  OptionSpec("from", value: "TIME", help: "Only requests made at or after TIME (UTC: 2026-11-30T14:05Z, 2026-11-30, or epoch seconds)."),
                  OptionSpec("to", value: "TIME", help: "Only requests made before TIME."),
                  OptionSpec("filter", value: "EXPR", help: "Only requests matching EXPR. " + FilterOperator.summary),
                  FlowCommands.timeLimitOption,
                  OptionSpec("limit", value: "N", help: "At most N requests (default 50, at most 10000)."),
                  OptionSpec("after", value: "CURSOR", help: "The page after CURSOR (printed at the end of the previous page)."),
                  FlowCommands.json] + SharedStoreReadCommands.options)

    static let requestSpec = CommandSpec(
        name: "request", summary: "Show one HTTP request: its timing and, when content was kept, its headers and bodies.",
        options: [OptionSpec("curl", help: "Print an equivalent curl command instead."),
                  OptionSpec("full", help: "Print every kept byte of the bodies instead of previews (as `tv turns --full`)."),
                  FlowCommands.json] + SharedStoreReadCommands.options,
        positionals: [PositionalSpec("ID", help: "The request's id, as `tv requests` prints it.")])

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = ["requests": requests, "request": request]

    static func requests(_ inv: Invocation) throws -> Int32 {
        let c = inv.command
        var query = ExchangeQuery()
        if let text = c.value("flow") {
            guard let id = Int64(text), id > 0 else { throw UsageRefusal("--flow takes a flow id, as `tv flows` prints it, not '\(text)'.") }
            query.flowID = id
        }
        let now = FlowCommands.nowMicros()
        if let since = c.value("since") { query.from = now - (try TimeFilter.span(since)) }
        if let from = c.value("from") { query.from = max(query.from ?? .min, try TimeFilter.moment(from)) }
        if let to = c.value("to") { query.to = try TimeFilter.moment(to) }
        if let limit = c.value("limit") {
            // One page holds at most FlowQuery.maximumLimit; more was cut silently (a trial).
            guard let n = Int(limit), n > 0, n <= FlowQuery.maximumLimit else {
                throw UsageRefusal("--limit takes a whole number from 1 to \(FlowQuery.maximumLimit) (a page; the page's last line says how to read on), not '\(limit)'.")
            }
            query.limit = n
        }
        query.after = c.value("after")
        if let shared = try SharedStoreCommands.open(inv) { return try SharedStoreReadCommands.requests(inv, history: shared, query: query) }
        let filter = try c.value("filter").map(FilterParser.parse)
        try FlowCommands.askSessionToFlush(inv)
        let store = try FlowCommands.openStoreForReading(inv)
        defer { store.close() }
        if let id = query.flowID, try store.flow(id: id) == nil { throw ContentRefusal.noFlow(id) }
        let page: ExchangePage
        var said: [(String, JSONValue)] = []
        if let filter {
            // Headers and bodies are read from kept content, only for the rows an operator asks about.
            let content = try ContentStore(readingHome: try inv.existingHome())
            defer { content.close() }
            var matcher = FilterMatcher(filter, deadline: try FlowCommands.filterDeadline(c))
            let found = try FilteredRequests.page(query, matching: &matcher, in: store, content: content)
            page = found.page
            said = FilterNotice.json(matcher, rows: .requests, stopped: found.stopped)
            for sentence in FilterNotice.sentences(matcher, rows: .requests, stopped: found.stopped) { inv.console.note("tv: " + sentence) }
        } else {
            page = try store.exchanges(query)
        }
        // The flows shown whose connections had requests counted without rows say so (only
        // `tv flow` did: a flood's last rows read as the whole connection).
        let leftOut = LeftOutRequestsNotice(try store.requestsLeftOut(flows: page.exchanges.map(\.flowID) + (query.flowID.map { [$0] } ?? [])))
        if let sentence = leftOut.sentence { inv.console.note("tv: " + sentence) }
        if inv.json {
            inv.console.line(RequestListPresentation.json(page).adding(said + [("requestsLeftOut", leftOut.json)]).serialized(pretty: true))
        } else if let filter = c.value("filter"), page.exchanges.isEmpty, page.nextCursor == nil {
            inv.console.line("No requests match --filter \(ShellWord.quote(TerminalText.line(filter))).")
        } else {
            let repeated = ["data-dir", "flow", "since", "from", "to", "filter", "time-limit", "limit"].flatMap { name in c.values(name).flatMap { ["--" + name, $0] } }
            let windowed = c.value("since") != nil || c.value("from") != nil || c.value("to") != nil
            for line in RequestListPresentation(page: page, repeatedOptions: repeated, flow: query.flowID, windowed: windowed).lines() {
                inv.console.line(line)
            }
        }
        return 0
    }

    static func request(_ inv: Invocation) throws -> Int32 {
        let text = inv.command.positionals[0]
        guard let id = Int64(text), id > 0 else { throw UsageRefusal("'\(text)' is not a request id; `tv requests` lists them.") }
        if let shared = try SharedStoreCommands.open(inv) { return try SharedStoreReadCommands.request(inv, history: shared, id: id) }
        try FlowCommands.askSessionToFlush(inv)
        let shape: RequestReading.Shape = inv.command.has("curl") ? .curl : .shown(json: inv.json, full: inv.command.has("full"))
        try RequestReading(id: id, shape: shape).run(home: try inv.existingHome(), to: inv.console)
        return 0
    }
}
