import FlowStore
import TVHome

/// How `tv flows` shows flows: one line each, newest first.
///
/// Columns: id, when (relative), status mark — only departures from "encrypted" are written
/// as words, since encrypted is the normal state — host (or the server address), protocol and
/// port, bytes up and down (with packet counts where the tunnel counted them, e.g. UDP through
/// `tv exec`), duration ("open" while it lasts).
public struct FlowListPresentation: Sendable {
    public struct Row: Sendable, Equatable {
        public var id: String
        public var when: String
        public var status: String
        public var host: String
        public var protocolAndPort: String
        public var up: String
        public var down: String
        public var duration: String
    }

    public let rows: [Row]
    /// Rows of the page left out because they hold values no writer writes.
    public let damaged: [DamagedRow]
    public let nextCursor: String?
    /// The options the user gave, as words (`["--status", "inspected", "--limit", "3"]`), repeated
    /// before `--after` in the closing hint so the next page keeps the same filters.
    public let repeatedOptions: [String]

    /// - Parameters:
    ///   - now: µs since the epoch.
    ///   - repeatedOptions: the filters and global options given (not `--after`, not `--json`),
    ///     unquoted; the hint quotes them for a POSIX shell.
    public init(page: FlowPage, now: Int64, repeatedOptions: [String] = []) {
        rows = page.flows.map { FlowListPresentation.row($0, now: now) }
        damaged = page.damaged
        nextCursor = page.nextCursor
        self.repeatedOptions = repeatedOptions
    }

    /// `tv flows [OPTIONS] --after CURSOR`: the command for the page after `cursor`, with the
    /// given options repeated (shell-quoted where needed).
    public static func moreCommand(cursor: String, repeatedOptions: [String]) -> String {
        (["tv", "flows"] + repeatedOptions.map(shellWord) + ["--after", shellWord(cursor)]).joined(separator: " ")
    }

    /// `word` as is when it holds only characters a POSIX shell leaves alone, else in single
    /// quotes (a `'` inside becomes `'\''`).
    static func shellWord(_ word: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%")
        if !word.isEmpty && word.allSatisfy({ safe.contains($0) }) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The status word: empty for encrypted, else what departed from it (a failure's reason,
    /// which can quote the peer, escaped by `TerminalText.line`).
    public static func statusWord(_ flow: FlowRecord) -> String {
        switch flow.status {
        case .encrypted: return ""
        case .inspected: return "inspected"
        case .notEncrypted: return "not encrypted"
        case .keptPrivate: return "kept private"
        case .failed: return "failed" + (flow.failureReason.map { ": " + TerminalText.line($0) } ?? "")
        case .interrupted: return "interrupted"
        }
    }

    /// `h2 :443`, `TLSv1.3 :443`, `tcp :80` (the ALPN the server chose, escaped).
    public static func protocolAndPort(_ flow: FlowRecord) -> String {
        let proto = flow.alpn ?? flow.tlsVersion ?? flow.transport.rawValue
        return "\(TerminalText.line(proto)) :\(flow.serverPort)"
    }

    static func row(_ flow: FlowRecord, now: Int64) -> Row {
        Row(id: String(flow.id),
            when: Units.relative(flow.startTime, now: now),
            status: statusWord(flow),
            host: TerminalText.line(flow.host ?? flow.serverAddress),
            protocolAndPort: protocolAndPort(flow),
            up: "↑ " + Units.bytes(flow.bytesUp) + packets(flow.packetsUp),
            down: "↓ " + Units.bytes(flow.bytesDown) + packets(flow.packetsDown),
            duration: flow.duration.map { Units.duration(microseconds: $0) } ?? "open")
    }

    /// ` in 3 pkts` after a byte count when the packets were counted; empty otherwise.
    static func packets(_ count: Int64?) -> String {
        guard let count else { return "" }
        return count == 1 ? " in 1 pkt" : " in \(count) pkts"
    }

    /// Aligned lines with a header; a closing line says how to see more, or that there is none.
    public func lines() -> [String] {
        let damagedLine = damaged.isEmpty ? [] : [(damaged.count == 1 ? "1 damaged row on this page is" : "\(damaged.count) damaged rows on this page are")
            + " left out (a value no tv writes): " + damaged.map(\.summary).joined(separator: "; ") + "."]
        guard !rows.isEmpty else {
            if let nextCursor { return damagedLine + ["More: " + FlowListPresentation.moreCommand(cursor: nextCursor, repeatedOptions: repeatedOptions)] }
            // With a filter, the history may be full: say that nothing matched it, not "start tv".
            let filters: Set<String> = ["--host", "--status", "--since", "--from", "--to"]
            let filtered = repeatedOptions.contains { filters.contains($0) }
            return damagedLine + [filtered ? "No flows match these filters." : "No flows match. Start a session with `tv run` and point a client at it."]
        }
        let header = Row(id: "ID", when: "WHEN", status: "STATUS", host: "HOST", protocolAndPort: "PROTO PORT", up: "UP", down: "DOWN", duration: "DURATION")
        let all = [header] + rows
        func width(_ key: KeyPath<Row, String>) -> Int { all.map { $0[keyPath: key].count }.max() ?? 0 }
        let w = [width(\.id), width(\.when), width(\.host), width(\.protocolAndPort), width(\.up), width(\.down), width(\.duration)]
        var out = all.map { r in
            [pad(r.id, w[0], right: true), pad(r.when, w[1]), pad(r.host, w[2]), pad(r.protocolAndPort, w[3]),
             pad(r.up, w[4], right: true), pad(r.down, w[5], right: true), pad(r.duration, w[6], right: true), r.status]
                .joined(separator: "  ").trimmingTrailingSpaces()
        }
        out += damagedLine
        if let nextCursor { out.append("More: " + FlowListPresentation.moreCommand(cursor: nextCursor, repeatedOptions: repeatedOptions)) }
        return out
    }

    private func pad(_ s: String, _ w: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, w - s.count))
        return right ? fill + s : s + fill
    }

    /// The flows as a JSON value for `--json`.
    public static func json(_ page: FlowPage) -> JSONValue {
        .object([("flows", .array(page.flows.map(FlowDetailPresentation.json))),
                 ("damaged", .array(page.damaged.map { .string($0.summary) })),
                 ("nextCursor", page.nextCursor.map { .string($0) } ?? .null)])
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}
