import CommandLineParser
import FlowFilter
import FlowStore
import Foundation
import Recording
import TVCore
import TVHome
import FlowTerms
import Wire

/// `tv flows`, `tv flow ID`, `tv pinned`: reading the history a session recorded.
enum FlowCommands {
    static let json = OptionSpec("json", help: "Print as JSON.")

    static let flowsSpec = CommandSpec(
        name: "flows", summary: "List recorded connections, newest first.",
        discussion: "The status column names only departures from \"encrypted\" (inspected, not encrypted, kept private, failed, and \"not inspected: REASON\" for an encrypted flow tv would have inspected). PROGRAM names the local program that opened the connection (`tv flow` shows its pid, executable and user, or why it is not known: a client on another machine, or one that finished before tv looked). PROTO shows the ALPN, else the client's TLS version; when tv's two legs negotiated different versions, the server's follows (TLSv1.3 (server TLSv1.2)). A running session is asked to write what it holds first (waiting at most 1 s). Pages are keyset-based: follow the printed --after cursor for the next one.",
        options: [OptionSpec("host", value: "TEXT", help: "Only flows whose host name, another name its address had (a name inferred from DNS), or the server's or the client's address contains TEXT (the client's too: 192.168 matches every flow from a LAN client)."),
                  OptionSpec("program", value: "NAME", help: "Only flows opened by program NAME (its command name, as the PROGRAM column shows it: curl, python3)."),
                  OptionSpec("audit", value: "SESSION", help: "Only flows of audit session SESSION (`tv audit sessions`)."),
                  OptionSpec("status", value: "S", help: "Only one status: \(FlowStatus.allCases.map(\.rawValue).joined(separator: ", ")) (dashes or spaces also accepted)."),
                  OptionSpec("since", value: "SPAN", help: "Only flows started within SPAN (90s, 15m, 1h, 2d, 1w)."),
                  OptionSpec("from", value: "TIME", help: "Only flows started at or after TIME (UTC: 2026-11-30T14:05Z, 2026-11-30, or epoch seconds)."),
                  OptionSpec("to", value: "TIME", help: "Only flows started before TIME."),
                  filterOption, timeLimitOption,
                  OptionSpec("limit", value: "N", help: "At most N flows (default 50, at most 10000)."),
                  OptionSpec("after", value: "CURSOR", help: "The page after CURSOR (printed at the end of the previous page)."),
                  OptionSpec("follow", help: "Keep printing flows as they open (+) and finish (-), with the same filters, until Ctrl-C or the session stops; with --json, one JSON object per line."),
                  OptionSpec("requests", help: "With --follow: one line per finished HTTP request instead (as `tv run --log requests`), of the flows the filters select."),
                  SharedStoreCommands.storeOption, SharedStoreCommands.instanceOption,
                  json])

    /// `--filter EXPR`, shared by the commands that take one.
    static let filterOption = OptionSpec("filter", value: "EXPR", help: "Only rows matching EXPR. " + FilterOperator.summary)

    /// `--time-limit SPAN` of `tv flows` and `tv requests`.
    static let timeLimitOption = OptionSpec("time-limit", value: "SPAN",
        help: "With --filter: stop looking after SPAN (5s, 1m) and print what matched so far, with the cursor that goes on from where the search stopped (tv web's lists stop after \(WebAPI.filterTimeLimit)). A regex that backtracks over a long body is cut too.")

    /// The deadline `--time-limit` asks for, from now; nil without it.
    /// - Throws: `TimeFilterError` for a span that is not one.
    static func filterDeadline(_ c: ParsedCommand) throws -> FilterDeadline? {
        guard let text = c.value("time-limit") else { return nil }
        return FilterDeadline(.microseconds(try TimeFilter.span(text)))
    }

    static let flowSpec = CommandSpec(
        name: "flow", summary: "Show one flow: its name, addresses, times, bytes, handshake and content.",
        options: [json, SharedStoreCommands.storeOption, SharedStoreCommands.instanceOption],
        positionals: [PositionalSpec("ID", help: "The flow's id, as `tv flows` prints it (with --store: the number after MACHINE:).")])

    static let pinnedSpec = CommandSpec(
        name: "pinned", summary: "Clients that pin, or lack tv's root, per host and port; tv passes their connections there through untouched.",
        options: [json],
        subcommands: [
            CommandSpec(name: "list", summary: "List them, \"pinned\" and \"lacks tv's root\" rows (the default).", options: [json]),
            CommandSpec(name: "forget", summary: "Forget a host, every client and kind, so tv tries to inspect it again; or, with --lacks-root, every client remembered as lacking tv's root.",
                        discussion: "Once a program trusts tv's root, `tv pinned forget --lacks-root` has the clients that reached tv before it did inspected again (each trust guide ends with it); one that still lacks the root is refused once more and remembered again.",
                        options: [OptionSpec("lacks-root", help: "Forget every client remembered as lacking tv's root, whatever its host.")],
                        positionals: [PositionalSpec("HOST", help: "The host name, as `tv pinned` lists it.", optional: true)]),
        ],
        defaultSubcommand: "list")

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = [
        "flows": flows, "flow": flow, "pinned list": pinnedList, "pinned forget": pinnedForget,
    ]

    static func openStore(_ inv: Invocation) throws -> FlowStore {
        try FlowStore(home: try inv.existingHome())
    }

    /// The store for a command that only reads: read-only, so it works on a full disk.
    static func openStoreForReading(_ inv: Invocation) throws -> FlowStore {
        try FlowStore(readingHome: try inv.existingHome())
    }

    /// Before reading: a live session of this data folder writes what it holds, so the rows are
    /// current (bounded, `LiveSessionFlush`; a lagging session is said on stderr).
    /// - Returns: the sessions that say they are not saving flows now (`UnsavedFlowsNotice`),
    ///   for the commands that say their list lacks the newest.
    @discardableResult
    static func askSessionToFlush(_ inv: Invocation) throws -> [UnsavedFlowsNotice] {
        let answer = LiveSessionFlush.read(try inv.existingHome())
        if let sentence = LiveSessionFlush.notice(answer.outcome) { inv.console.note(sentence) }
        return answer.unsaved
    }

    static func nowMicros() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }

    /// The filters `tv flows` and `tv export connections` share: --host, --status, --since, --from, --to.
    static func filters(_ c: ParsedCommand, now: Int64) throws -> FlowQuery {
        var query = FlowQuery()
        // Names are stored as DNS carries them: `--host bücher.test` looks for xn--bcher-kva.test.
        query.host = c.value("host").map { IDNA.aLabelRuns($0) ?? $0 }
        query.program = c.value("program")
        if let text = c.value("audit") {
            guard let id = Int64(text), id > 0 else { throw UsageRefusal("--audit takes a session id (`tv audit sessions` lists them), not '\(text)'.") }
            query.auditSession = id
        }
        if let s = c.value("status") {
            let key = s.lowercased().replacingOccurrences(of: "-", with: "_").replacingOccurrences(of: " ", with: "_")
            guard let status = FlowStatus(rawValue: key) else {
                throw UsageRefusal("'\(s)' is not a status; use one of \(FlowStatus.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            query.status = status
        }
        if let since = c.value("since") { query.since = now - (try TimeFilter.span(since)) }
        if let from = c.value("from") { query.from = try TimeFilter.moment(from) }
        if let to = c.value("to") { query.to = try TimeFilter.moment(to) }
        // Checked as tv activity checks them (a trial's reversed range listed nothing, silently).
        if c.has("since"), c.has("from") {
            throw UsageRefusal("--since is a stretch up to now and --from a start of your own; give one of them.")
        }
        if let from = query.from, let to = query.to, to <= from { throw UsageRefusal("--from must be before --to; nothing starts in that window.") }
        return query
    }

    static func flows(_ inv: Invocation) throws -> Int32 {
        let c = inv.command
        let now = nowMicros()
        var query = try filters(c, now: now)
        if let limit = c.value("limit") {
            // One page holds at most FlowQuery.maximumLimit; more was cut silently (a trial).
            guard let n = Int(limit), n > 0, n <= FlowQuery.maximumLimit else {
                throw UsageRefusal("--limit takes a whole number from 1 to \(FlowQuery.maximumLimit) (a page; the page's last line says how to read on), not '\(limit)'.")
            }
            query.limit = n
        }
        query.after = c.value("after")
        if let shared = try SharedStoreCommands.open(inv) { return try SharedStoreCommands.flows(inv, history: shared, query: query, now: now) }
        let filter = try c.value("filter").map(FilterParser.parse)
        if c.has("follow") {
            if c.has("after") || c.has("limit") { throw UsageRefusal("--follow prints flows as they come; it takes no --after or --limit.") }
            return try FollowCommand.run(inv, query: query, requests: c.has("requests"), filter: filter)
        }
        if c.has("requests") { throw UsageRefusal("--requests goes with --follow; `tv requests` lists the recorded ones.") }
        let unsaved = try askSessionToFlush(inv)
        let store = try openStoreForReading(inv)
        defer { store.close() }
        // An audit session that does not exist is said, not an empty page (a trial's --audit 99
        // read "No flows on this page; 80 flows are recorded in all").
        if let audit = query.auditSession { _ = try store.audit.session(audit) }
        let page: FlowPage
        var said: [(String, JSONValue)] = []
        if let filter {
            var matcher = FilterMatcher(filter, deadline: try filterDeadline(c))
            let found = try FilteredFlows.page(query, matching: &matcher, in: store)
            page = found.page
            said = FilterNotice.json(matcher, rows: .flows, stopped: found.stopped)
            for sentence in FilterNotice.sentences(matcher, rows: .flows, stopped: found.stopped) { inv.console.note("tv: " + sentence) }
        } else {
            page = try store.flows(query)
        }
        // Rows a gone session left open read so, not "open" (a trial's list and JSON did).
        let leftOpen = (try? store.leftOpen(among: page.flows.filter { $0.duration == nil }.map(\.id))) ?? [:]
        if inv.json {
            let captured = try? CaptureCommands.capturedCounts(inv, flows: page.flows.map(\.id))
            inv.console.line(FlowListPresentation.json(page, packetsCaptured: captured, leftOpen: leftOpen)
                .adding(said + [("unsavedFlows", UnsavedFlowsNotice.json(unsaved))]).serialized(pretty: true))
        } else {
            // On stderr, as the lagging session's note: the list itself stays a list.
            for notice in unsaved { inv.console.note("tv: " + notice.sentence) }
            // An empty page says how many flows there are in all, so a filter matching nothing is not
            // read as an empty history.
            let total = page.flows.isEmpty && page.nextCursor == nil ? try store.count(FlowQuery()) : nil
            var lines = FlowListPresentation(page: page, now: now, repeatedOptions: repeatedOptions(c), totalFlows: total, leftOpen: leftOpen)
                .lines(width: inv.terminalColumns)
            // Audit markers at their time among the rows (i21-audit).
            if let newest = page.flows.first, let oldest = page.flows.last {
                let markers = try store.audit.markers(from: oldest.startTime, to: query.after == nil ? now + 1 : newest.startTime + 1,
                                                      session: query.auditSession)
                lines = AuditPresentation.interleave(lines, starts: page.flows.map(\.startTime), markers: markers)
            }
            for line in lines { inv.console.line(line) }
        }
        return 0
    }

    /// The options of `tv flows` that the next page repeats (global ones first), as typed.
    static func repeatedOptions(_ c: ParsedCommand) -> [String] {
        ["data-dir", "host", "program", "audit", "status", "since", "from", "to", "filter", "time-limit", "limit"].flatMap { name in
            c.values(name).flatMap { ["--" + name, $0] }
        }
    }

    static func flow(_ inv: Invocation) throws -> Int32 {
        let text = inv.command.positionals[0]
        // With --store, the list's labels (`MACHINE:ID`, `MACHINE/PREFIX:ID`) are ids too.
        if let label = SharedInstancePresentation.parseLabel(text), let named = label.instance {
            if let given = inv.command.value("instance"), given != named {
                throw UsageRefusal("'\(text)' names instance \(named) and --instance names \(given); give one of them.")
            }
            guard let shared = try SharedStoreCommands.open(inv, instance: named) else {
                throw UsageRefusal("'\(text)' is a flow of the shared store; add --store URL to read it.")
            }
            return try SharedStoreCommands.flow(inv, history: shared, id: label.id)
        }
        guard let id = Int64(text), id > 0 else { throw UsageRefusal("'\(text)' is not a flow id; `tv flows` lists them.") }
        if let shared = try SharedStoreCommands.open(inv) { return try SharedStoreCommands.flow(inv, history: shared, id: id) }
        try askSessionToFlush(inv)
        let store = try openStoreForReading(inv)
        defer { store.close() }
        guard let record = try store.flow(id: id) else { throw ContentRefusal.noFlow(id) }
        // The first requests and their count, as packets are shown (a trial's connection had
        // 200,000 and every one was printed).
        let exchanges = try store.exchanges(ofFlow: id, first: RequestListPresentation.flowLineCap)
        if inv.json {
            let captured = try? CaptureCommands.capturedCount(inv, flow: id)
            let leftOpen = record.duration == nil ? (try? store.leftOpen(flowID: id)) ?? nil : nil
            inv.console.line(RequestListPresentation.json(flow: FlowDetailPresentation.detailJSON(record, packetsCaptured: captured, leftOpen: leftOpen),
                                                          exchanges.exchanges,
                                                          requestCount: exchanges.total, leftOut: record.requestsLeftOut)
                .serialized(pretty: true))
        } else {
            let content = try ContentStore(readingHome: try inv.existingHome())
            defer { content.close() }
            let summary = try content.summary(flow: id)
            let leftOpen = record.duration == nil ? (try? store.leftOpen(flowID: id)) ?? nil : nil
            for line in FlowDetailPresentation.lines(record, now: nowMicros(), content: summary, leftOpen: leftOpen) { inv.console.line(line) }
            for line in RequestListPresentation.flowLines(exchanges.exchanges, damaged: exchanges.damaged, total: exchanges.total,
                                                          leftOut: record.requestsLeftOut, flowID: id) { inv.console.line(line) }
            for line in try CaptureCommands.flowPacketLines(inv, flow: id, carried: (record.packetsUp ?? 0) + (record.packetsDown ?? 0)) { inv.console.line(line) }
        }
        return 0
    }

    static func pinnedList(_ inv: Invocation) throws -> Int32 {
        let store = try openStoreForReading(inv)
        defer { store.close() }
        let pins = try store.clientPins.list()
        let hosts = try store.pinnedHosts.list()
        if inv.json {
            // Host-wide pins of an older tv have no client or port: null, for every one.
            let rows: [JSONValue] = pins.map { p in
                .object([("host", .string(p.host)), ("port", .int(Int64(p.port))), ("kind", .string(p.kind.rawValue)),
                         ("clientAddress", .string(p.clientAddress)), ("clientHello", .string(p.clientHello)),
                         ("firstSeen", .int(p.firstSeen)), ("lastSeen", .int(p.lastSeen)),
                         ("reason", .string(p.reason)), ("count", .int(p.count))])
            } + hosts.map { h in
                .object([("host", .string(h.host)), ("port", .null), ("kind", .string(PinKind.pinned.rawValue)),
                         ("clientAddress", .null), ("clientHello", .null),
                         ("firstSeen", .int(h.firstSeen)), ("lastSeen", .int(h.lastSeen)),
                         ("reason", .string(h.reason)), ("count", .int(h.count))])
            }
            inv.console.line(JSONValue.array(rows).serialized(pretty: true))
            return 0
        }
        guard !pins.isEmpty || !hosts.isEmpty else {
            inv.console.line("Nothing is passed through for refusing tv's certificate. When a client lacks tv's root, or pins its certificate, it is listed here and its connections to that host pass through untouched from then on.")
            inv.console.line(Self.retryNote)
            return 0
        }
        let now = nowMicros()
        // Host names came from clients (SNI, CONNECT) and reasons quote peers: all escaped.
        let rows: [[String]] = pins.map { p in
            let target = p.host.contains(":") ? "[\(p.host)]:\(p.port)" : "\(p.host):\(p.port)"
            return [TerminalText.line(target), p.kind.words, TerminalText.line("\(p.clientAddress) (hello \(p.clientHello))"),
                    "refused tv \(p.count)×, last \(Units.relative(p.lastSeen, now: now))  \(TerminalText.line(p.reason))"]
        } + hosts.map { h in
            [TerminalText.line(h.host), PinKind.pinned.words, "every client and port (remembered by an older tv)",
             "refused tv \(h.count)×, last \(Units.relative(h.lastSeen, now: now))  \(TerminalText.line(h.reason))"]
        }
        let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            inv.console.line((0..<3).map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                + "  " + row[3])
        }
        inv.console.line("The count is of refusals tv saw (what taught it), not of connections passed through since. tv passes these clients' connections to these hosts through unread. A client that lacks tv's root: give it the root (`tv ca export`), then `tv pinned forget HOST` (or `--lacks-root` for all of them); the same command tries inspecting a pinned one again.")
        inv.console.line(Self.retryNote)
        return 0
    }

    /// What the list cannot show: a running session's evidence (`PinningEvidenceRule`), kept in
    /// memory until the client comes back.
    static let retryNote = "Not listed: a client that closed right after its handshake with tv in a running session (possible pinning, or a probe such as `openssl s_client </dev/null`) has its next connection to that host and port passed through; it is listed here once it makes that connection."

    static func pinnedForget(_ inv: Invocation) throws -> Int32 {
        if inv.command.has("lacks-root") {
            guard inv.command.positionals.isEmpty else {
                throw UsageRefusal("Give a HOST or --lacks-root, not both: --lacks-root forgets every client remembered as lacking tv's root, whatever its host.")
            }
            let home = try inv.existingHome()
            inv.console.line(LiveSession.lacksRootForgotten(home)
                ?? "No client is remembered as lacking tv's root; nothing to forget.")
            return 0
        }
        guard let given = inv.command.positionals.first else {
            throw UsageRefusal("'tv pinned forget' needs a HOST (as `tv pinned` lists it), or --lacks-root for every client remembered as lacking tv's root.")
        }
        // `tv pinned` lists HOST:PORT (and [v6]:PORT): taken as the host, every port of it (a
        // trial's copy of the listed name was refused).
        let host = pinnedHost(given)
        let store = try openStore(inv)
        defer { store.close() }
        // Every client, port and kind for the host, and an older tv's host-wide pin.
        let forgotten = try store.clientPins.forget(host: host) + (try store.pinnedHosts.forget(host) ? 1 : 0)
        if forgotten > 0 {
            inv.console.line("Forgot \(TerminalText.line(PinnedHosts.normalize(host))); the next connection to it will be inspected again (if inspection is on).")
            // Saved first, applied second: a running session drops it from its memory too.
            if let sentence = ControlSocketNotifier(home: try inv.home()).pinnedHostForgotten(PinnedHosts.normalize(host)).sentence {
                inv.console.line(sentence)
            }
            return 0
        }
        // Not saved, but a running session may weigh a suspicion (`retryNote`): it drops that.
        if ControlSocketNotifier(home: try inv.home()).pinnedHostForgotten(PinnedHosts.normalize(host)) == .applied {
            inv.console.line("\(TerminalText.line(PinnedHosts.normalize(host))) is not listed by `tv pinned`; the running session forgot any suspicion it held against it, so its next connection is inspected (if inspection is on).")
            return 0
        }
        throw UsageRefusal("\(TerminalText.line(host)) is not listed by `tv pinned`; nothing to forget.", exitCode: 1)
    }

    /// The host of `tv pinned`'s `HOST:PORT` or `[ADDRESS]:PORT`; a bare host (or IPv6
    /// address) as given.
    static func pinnedHost(_ text: String) -> String {
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            return String(text[text.index(after: text.startIndex)..<close])
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, parts[1].allSatisfy(\.isNumber) { return String(parts[0]) }
        return text
    }
}
