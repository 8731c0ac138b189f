import CommandLineParser
import FlowStore
import Foundation
import Recording
import TVCore
import TVHome
import FlowTerms

/// `tv flows`, `tv flow ID`, `tv pinned`: reading the history a session recorded.
enum FlowCommands {
    static let json = OptionSpec("json", help: "Print as JSON.")

    static let flowsSpec = CommandSpec(
        name: "flows", summary: "List recorded connections, newest first.",
        discussion: "The status column names only departures from \"encrypted\" (inspected, not encrypted, kept private, failed, and \"not inspected: REASON\" for an encrypted flow tv would have inspected). PROTO shows the ALPN, else the client's TLS version; when tv's two legs negotiated different versions, the server's follows (TLSv1.3 (server TLSv1.2)). A running session is asked to write what it holds first (waiting at most 1 s). Pages are keyset-based: follow the printed --after cursor for the next one.",
        options: [OptionSpec("host", value: "TEXT", help: "Only flows whose host name or address contains TEXT."),
                  OptionSpec("status", value: "S", help: "Only one status: \(FlowStatus.allCases.map(\.rawValue).joined(separator: ", ")) (dashes or spaces also accepted)."),
                  OptionSpec("since", value: "SPAN", help: "Only flows started within SPAN (90s, 15m, 1h, 2d, 1w)."),
                  OptionSpec("from", value: "TIME", help: "Only flows started at or after TIME (UTC: 2026-11-30T14:05Z, 2026-11-30, or epoch seconds)."),
                  OptionSpec("to", value: "TIME", help: "Only flows started before TIME."),
                  OptionSpec("limit", value: "N", help: "At most N flows (default 50, at most 10000)."),
                  OptionSpec("after", value: "CURSOR", help: "The page after CURSOR (printed at the end of the previous page)."),
                  json])

    static let flowSpec = CommandSpec(
        name: "flow", summary: "Show one flow: its name, addresses, times, bytes, handshake and content.",
        options: [json],
        positionals: [PositionalSpec("ID", help: "The flow's id, as `tv flows` prints it.")])

    static let pinnedSpec = CommandSpec(
        name: "pinned", summary: "Hosts whose clients refused tv's certificate; tv passes them through untouched.",
        options: [json],
        subcommands: [
            CommandSpec(name: "list", summary: "List pinned hosts (the default).", options: [json]),
            CommandSpec(name: "forget", summary: "Forget a host, so tv tries to inspect it again.",
                        positionals: [PositionalSpec("HOST", help: "The host name, as `tv pinned` lists it.")]),
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
    static func askSessionToFlush(_ inv: Invocation) throws {
        if let sentence = LiveSessionFlush.notice(LiveSessionFlush.ask(try inv.existingHome())) { inv.console.note(sentence) }
    }

    static func nowMicros() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }

    static func flows(_ inv: Invocation) throws -> Int32 {
        let c = inv.command
        var query = FlowQuery()
        query.host = c.value("host")
        if let s = c.value("status") {
            let key = s.lowercased().replacingOccurrences(of: "-", with: "_").replacingOccurrences(of: " ", with: "_")
            guard let status = FlowStatus(rawValue: key) else {
                throw UsageRefusal("'\(s)' is not a status; use one of \(FlowStatus.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            query.status = status
        }
        let now = nowMicros()
        if let since = c.value("since") { query.since = now - (try TimeFilter.span(since)) }
        if let from = c.value("from") { query.from = try TimeFilter.moment(from) }
        if let to = c.value("to") { query.to = try TimeFilter.moment(to) }
        if let limit = c.value("limit") {
            guard let n = Int(limit), n > 0 else { throw UsageRefusal("--limit takes a positive whole number, not '\(limit)'.") }
            query.limit = n
        }
        query.after = c.value("after")
        try askSessionToFlush(inv)
        let store = try openStoreForReading(inv)
        defer { store.close() }
        let page = try store.flows(query)
        if inv.json {
            inv.console.line(FlowListPresentation.json(page).serialized(pretty: true))
        } else {
            // An empty page says how many flows there are in all, so a filter matching nothing is not
            // read as an empty history.
            let total = page.flows.isEmpty && page.nextCursor == nil ? try store.count(FlowQuery()) : nil
            for line in FlowListPresentation(page: page, now: now, repeatedOptions: repeatedOptions(c), totalFlows: total).lines() {
                inv.console.line(line)
            }
        }
        return 0
    }

    /// The options of `tv flows` that the next page repeats (global ones first), as typed.
    static func repeatedOptions(_ c: ParsedCommand) -> [String] {
        ["data-dir", "host", "status", "since", "from", "to", "limit"].flatMap { name in
            c.values(name).flatMap { ["--" + name, $0] }
        }
    }

    static func flow(_ inv: Invocation) throws -> Int32 {
        let text = inv.command.positionals[0]
        guard let id = Int64(text), id > 0 else { throw UsageRefusal("'\(text)' is not a flow id; `tv flows` lists them.") }
        try askSessionToFlush(inv)
        let store = try openStoreForReading(inv)
        defer { store.close() }
        guard let record = try store.flow(id: id) else {
            throw UsageRefusal("There is no flow \(id) in this data folder; `tv flows` lists the ones there are.", exitCode: 1)
        }
        if inv.json {
            inv.console.line(FlowDetailPresentation.json(record).serialized(pretty: true))
        } else {
            let content = try ContentStore(readingHome: try inv.existingHome())
            defer { content.close() }
            let summary = try content.summary(flow: id)
            for line in FlowDetailPresentation.lines(record, now: nowMicros(), content: summary) { inv.console.line(line) }
        }
        return 0
    }

    static func pinnedList(_ inv: Invocation) throws -> Int32 {
        let store = try openStoreForReading(inv)
        defer { store.close() }
        let hosts = try store.pinnedHosts.list()
        if inv.json {
            inv.console.line(JSONValue.array(hosts.map { h in
                .object([("host", .string(h.host)), ("firstSeen", .int(h.firstSeen)), ("lastSeen", .int(h.lastSeen)),
                         ("reason", .string(h.reason)), ("count", .int(h.count))])
            }).serialized(pretty: true))
            return 0
        }
        guard !hosts.isEmpty else {
            inv.console.line("No pinned hosts. When a client refuses tv's certificate, its host is listed here and passed through untouched from then on.")
            return 0
        }
        let now = nowMicros()
        // Host names came from clients (SNI, CONNECT) and reasons quote peers: both escaped.
        let names = hosts.map { TerminalText.line($0.host) }
        let width = names.map(\.count).max() ?? 0
        for (h, name) in zip(hosts, names) {
            inv.console.line(name.padding(toLength: width, withPad: " ", startingAt: 0)
                + "  last \(Units.relative(h.lastSeen, now: now)), \(h.count)×  \(TerminalText.line(h.reason))")
        }
        inv.console.line("These hosts are kept private: tv passes them through unread. `tv pinned forget HOST` tries inspecting one again.")
        return 0
    }

    static func pinnedForget(_ inv: Invocation) throws -> Int32 {
        let host = inv.command.positionals[0]
        let store = try openStore(inv)
        defer { store.close() }
        if try store.pinnedHosts.forget(host) {
            inv.console.line("Forgot \(TerminalText.line(PinnedHosts.normalize(host))); the next connection to it will be inspected again (if inspection is on).")
            // Saved first, applied second: a running session drops it from its memory too.
            if let sentence = ControlSocketNotifier(home: try inv.home()).pinnedHostForgotten(PinnedHosts.normalize(host)).sentence {
                inv.console.line(sentence)
            }
            return 0
        }
        throw UsageRefusal("\(TerminalText.line(host)) is not a pinned host; `tv pinned` lists them.", exitCode: 1)
    }
}
