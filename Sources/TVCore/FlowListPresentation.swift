import FlowStore
import TVHome

/// How `tv flows` shows flows: one line each, newest first.
///
/// Columns: id, when (relative), the program that opened it (`FlowProgramPresentation.word`; the
/// column is left out when no row has one), status mark — only departures from "encrypted" are written
/// as words, since encrypted is the normal state — host (or the server address), protocol and
/// port, bytes up and down (with packet counts where the tunnel counted them, e.g. UDP through
/// `tv exec`), duration ("open" while it lasts; "unknown" for a flow its session left open, whose
/// status then reads "left open").
public struct FlowListPresentation: Sendable {
    public struct Row: Sendable, Equatable {
        /// The header line's cells.
        static let header = Row(id: "ID", when: "WHEN", program: "PROGRAM", status: "STATUS", host: "HOST", protocolAndPort: "PROTO PORT",
                                up: "UP", down: "DOWN", duration: "DURATION")

        public var id: String
        public var when: String
        public var program: String
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
    /// How many flows the data folder holds in all, whatever the filters; nil when not counted.
    /// An empty page says it, so "nothing matched" is never mistaken for "nothing recorded".
    public let totalFlows: Int?

    /// - Parameters:
    ///   - now: µs since the epoch.
    ///   - repeatedOptions: the filters and global options given (not `--after`, not `--json`),
    ///     unquoted; the hint quotes them for a POSIX shell.
    ///   - totalFlows: every flow in the data folder, counted without filters (`FlowStore.count`
    ///     of an empty query); needed only for an empty page.
    ///   - machinesWithSeveralInstances: machine names several instances of the shared store
    ///     carry (`SharedFlowHistory.machinesWithSeveralInstances`): their rows are qualified
    ///     even on a page where one of them shows (a trial's `vm:18` was ambiguous to `tv flow`).
    ///   - leftOpen: the page's flows a gone session left open (`FlowStore.leftOpen(among:)`):
    ///     not "open", growing while nothing runs, but "left open", duration unknown.
    public init(page: FlowPage, now: Int64, repeatedOptions: [String] = [], totalFlows: Int? = nil,
                machinesWithSeveralInstances: Set<String> = [], leftOpen: [Int64: LeftOpenCause] = [:]) {
        let shared = SharedInstancePresentation.sharedMachineNames(page.flows).union(machinesWithSeveralInstances)
        rows = page.flows.map {
            FlowListPresentation.row($0, now: now, qualified: shared.contains($0.instance?.machine ?? ""), leftOpen: leftOpen[$0.id])
        }
        damaged = page.damaged
        nextCursor = page.nextCursor
        self.repeatedOptions = repeatedOptions
        self.totalFlows = totalFlows
    }

    /// The options that narrow which flows are listed (not `--limit`, not `--data-dir`).
    static let filterOptions: Set<String> = ["--host", "--program", "--audit", "--status", "--since", "--from", "--to", "--filter"]

    /// The line of an empty page: the start-a-session advice only when nothing is recorded at
    /// all; otherwise the filters given, as typed, and the total, so "nothing matched" is never
    /// read as "nothing recorded".
    func emptyLine() -> String {
        var filters: [String] = []
        var i = 0
        while i < repeatedOptions.count {
            if FlowListPresentation.filterOptions.contains(repeatedOptions[i]) {
                filters.append(repeatedOptions[i])
                if i + 1 < repeatedOptions.count { filters.append(ShellWord.quote(repeatedOptions[i + 1])) }
                i += 2
            } else {
                i += 1
            }
        }
        if totalFlows == 0 || (totalFlows == nil && filters.isEmpty) {
            return "No flows are recorded yet. Start a session with `tv run` and point a client at it."
        }
        let total = totalFlows.map { "; \($0 == 1 ? "1 flow is" : "\($0) flows are") recorded in all" } ?? ""
        if filters.isEmpty { return "No flows on this page\(total)." }
        return "No flows match \(TerminalText.line(filters.joined(separator: " ")))\(total)."
    }

    /// `tv flows [OPTIONS] --after CURSOR`: the command for the page after `cursor`, with the
    /// given options repeated (shell-quoted where needed).
    public static func moreCommand(cursor: String, repeatedOptions: [String]) -> String {
        (["tv", "flows"] + repeatedOptions.map(ShellWord.quote) + ["--after", ShellWord.quote(cursor)]).joined(separator: " ")
    }


    /// The status word: empty for encrypted, else what departed from it (a failure's reason,
    /// which can quote the peer, escaped by `TerminalText.line`). An encrypted flow with a
    /// reason is one tv would have inspected but passed through (e.g. a ClientHello below tv's
    /// minimum version): "not inspected: REASON". An inspected flow whose server's certificate
    /// did not verify (`--upstream-insecure`) says so, with why: "inspected, server NOT verified:
    /// REASON" (it read plain "inspected": a new-user trial).
    public static func statusWord(_ flow: FlowRecord) -> String {
        switch flow.status {
        case .encrypted: return flow.failureReason.map { "not inspected: " + listReason(TerminalText.line($0)) } ?? ""
        case .inspected where flow.certificateVerified == false:
            return "inspected, server NOT verified" + (flow.certificateProblem.map { ": " + listReason(TerminalText.line($0)) } ?? "")
        case .inspected: return "inspected"
        case .notEncrypted where awaitsFirstBytes(flow): return "nothing sent yet"
        case .notEncrypted: return "not encrypted"
        case .keptPrivate: return "kept private"
        case .failed: return "failed" + (flow.failureReason.map { ": " + listReason(TerminalText.line($0)) } ?? "")
        case .interrupted: return "interrupted"
        }
    }

    /// An open flow on which nothing was sent either way yet: whether it is TLS or plain is told
    /// by its first bytes, so its status ("not encrypted", the default until then) says nothing
    /// yet (a CONNECT tunnel whose client waited read "not encrypted" in every live view: a
    /// trial). A ClientHello makes a flow encrypted at once.
    public static func awaitsFirstBytes(_ flow: FlowRecord) -> Bool {
        flow.duration == nil && flow.status == .notEncrypted && flow.bytesUp == 0 && flow.bytesDown == 0
    }

    /// The longest reason a list row shows whole, in characters.
    static let listReasonLimit = 100

    /// A reason as a list row shows it: whole up to `listReasonLimit` characters; a longer one
    /// (a cause, then what to do about it: the client lacking tv's root is ~450 characters) is
    /// cut to its cause, up to the first "; " or ": " outside brackets, else at the limit, and
    /// marked " …" (`tv flow ID` shows it whole).
    static func listReason(_ reason: String) -> String {
        guard reason.count > listReasonLimit else { return reason }
        var depth = 0
        var previous: Character = " "
        var index = reason.startIndex
        while index < reason.endIndex {
            let c = reason[index]
            if c == "(" { depth += 1 } else if c == ")" { depth = max(0, depth - 1) }
            if c == " " && depth == 0 && (previous == ";" || previous == ":") {
                return String(reason[..<reason.index(before: index)]) + " …"
            }
            previous = c
            index = reason.index(after: index)
        }
        return String(reason.prefix(listReasonLimit - 1)) + " …"
    }

    /// `h2 :443`, `TLSv1.3 :443`, `tcp :80`: the ALPN the server chose, else the TLS version
    /// the client negotiated, else the transport (escaped). When tv's two legs negotiated
    /// different versions the server's follows: `TLSv1.3 (server TLSv1.2) :443`,
    /// `h2 (server TLSv1.2) :443`.
    public static func protocolAndPort(_ flow: FlowRecord) -> String {
        var proto = TerminalText.line(flow.alpn ?? flow.clientTLSVersion ?? flow.tlsVersion ?? flow.transport.rawValue)
        if let client = flow.clientTLSVersion, let server = flow.tlsVersion, client != server {
            proto += " (server \(TerminalText.line(server)))"
        }
        return "\(proto) :\(flow.serverPort)"
    }

    static func row(_ flow: FlowRecord, now: Int64, qualified: Bool = false, leftOpen: LeftOpenCause? = nil) -> Row {
        let leftOpen = flow.duration == nil ? leftOpen : nil
        return Row(id: SharedInstancePresentation.id(flow, qualified: qualified),
            when: Units.relative(flow.startTime, now: now),
            program: FlowProgramPresentation.word(flow.program),
            status: leftOpen.map(leftOpenWord) ?? statusWord(flow),
            host: elided(TerminalText.line(flow.host ?? flow.serverAddress)),
            protocolAndPort: FlowNamePresentation.service(flow),
            up: "↑ " + Units.bytes(flow.bytesUp) + packets(flow.packetsUp),
            down: "↓ " + Units.bytes(flow.bytesDown) + packets(flow.packetsDown),
            duration: flow.duration.map { Units.duration(microseconds: $0) } ?? (leftOpen == nil ? "open" : "unknown"))
    }

    /// The STATUS of a flow its session left open (`tv flow ID` says the rest).
    static func leftOpenWord(_ cause: LeftOpenCause) -> String {
        switch cause {
        case .killed: return "left open: its session was killed"
        case .stoppedUnsaved: return "left open: its session could not save its end"
        }
    }

    /// The HOST column's widest: a longer name is cut in its middle, keeping its end (where the
    /// registrable domain is), so one long SNI does not push every row of the page past the
    /// terminal (a trial's 70-character name did); `tv flow ID` shows it whole.
    static let hostColumnLimit = 40

    /// `text` cut to `limit` characters (`hostColumnLimit` unless said): its first 12 (fewer
    /// in a narrow column), "…", and its end.
    static func elided(_ text: String, limit: Int = hostColumnLimit) -> String {
        guard text.count > limit else { return text }
        let head = min(12, max(1, limit / 3))
        return String(text.prefix(head)) + "…" + String(text.suffix(max(0, limit - head - 1)))
    }

    /// The fewest characters a HOST cell is cut to, and a STATUS cell, when a row is fitted to the
    /// terminal (`lines(width:)`).
    static let narrowestHost = 16
    static let narrowestStatus = 14
    /// STATUS is cut to this first, before HOST: what a failure was, not its whole sentence.
    static let readableStatus = 32

    /// ` in 3 pkts` after a byte count when the packets were counted; empty otherwise.
    static func packets(_ count: Int64?) -> String {
        guard let count else { return "" }
        return count == 1 ? " in 1 pkt" : " in \(count) pkts"
    }

    /// Aligned lines with a header; a closing line says how to see more, or that there is none.
    /// Given the terminal's `width`, rows longer than it are fitted, in this order while they
    /// still are: the packet counts after the byte counts go, STATUS is cut at its end (to
    /// `readableStatus`), HOST in its middle (to `narrowestHost`), STATUS further (to
    /// `narrowestStatus`); `tv flow ID` shows each whole. Piped output (no width) is never cut (a trial's 80-column terminal wrapped every
    /// row of a TUN session's page over two lines).
    public func lines(width: Int? = nil) -> [String] {
        guard let width, !rows.isEmpty else { return lines(rows) }
        var fitted = rows
        func longest() -> Int { lines(fitted).prefix(fitted.count + 1).map(\.count).max() ?? 0 }
        if longest() > width {
            fitted = fitted.map { row in
                var row = row
                row.up = Self.withoutPackets(row.up)
                row.down = Self.withoutPackets(row.down)
                return row
            }
        }
        func cutStatus(to narrowest: Int) {
            let excess = longest() - width
            guard excess > 0 else { return }
            let limit = max(narrowest, (fitted.map(\.status.count).max() ?? 0) - excess)
            fitted = fitted.map { row in
                var row = row
                if row.status.count > limit { row.status = String(row.status.prefix(limit - 1)) + "…" }
                return row
            }
        }
        // A long failure sentence gives way first, down to a readable start; then the names.
        cutStatus(to: Self.readableStatus)
        let excess = longest() - width
        if excess > 0 {
            let hostWidth = (fitted + [Row.header]).map(\.host.count).max() ?? 0
            let limit = max(Self.narrowestHost, hostWidth - excess)
            if limit < hostWidth { fitted = fitted.map { var row = $0; row.host = Self.elided(row.host, limit: limit); return row } }
        }
        cutStatus(to: Self.narrowestStatus)
        return lines(fitted)
    }

    /// `↑ 2.9 KiB in 3 pkts` without its packet count.
    static func withoutPackets(_ cell: String) -> String {
        guard let cut = cell.range(of: " in ") else { return cell }
        return String(cell[..<cut.lowerBound])
    }

    private func lines(_ rows: [Row]) -> [String] {
        let damagedLine = damaged.isEmpty ? [] : [(damaged.count == 1 ? "1 damaged row on this page is" : "\(damaged.count) damaged rows on this page are")
            + " left out (a value no tv writes): " + damaged.map(\.summary).joined(separator: "; ") + "."]
        guard !rows.isEmpty else {
            if let nextCursor { return damagedLine + ["More: " + FlowListPresentation.moreCommand(cursor: nextCursor, repeatedOptions: repeatedOptions)] }
            // With a filter, the history may be full: say that nothing matched it, not "start tv".
            return damagedLine + [emptyLine()]
        }
        let all = [Row.header] + rows
        func width(_ key: KeyPath<Row, String>) -> Int { all.map { $0[keyPath: key].count }.max() ?? 0 }
        let w = [width(\.id), width(\.when), width(\.host), width(\.protocolAndPort), width(\.up), width(\.down), width(\.duration),
                 width(\.program)]
        // PROGRAM is left out when no row on the page has one (rows from before the lookup).
        let showProgram = rows.contains { !$0.program.isEmpty }
        var out = all.map { r in
            ([pad(r.id, w[0], right: true), pad(r.when, w[1])] + (showProgram ? [pad(r.program, w[7])] : [])
             + [pad(r.host, w[2]), pad(r.protocolAndPort, w[3]),
                pad(r.up, w[4], right: true), pad(r.down, w[5], right: true), pad(r.duration, w[6], right: true), r.status])
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
    /// - Parameter packetsCaptured: every packet captured of each flow of the page, by id (nil:
    ///   the captures' rows could not be read, or live elsewhere: the shared store); each row then
    ///   carries `packetsCaptured`, as `tv flow ID --json` does (a TCP row read null packets while
    ///   only `tv flow` had its count: a trial).
    /// - Parameter leftOpen: the page's flows a gone session left open (each row's `leftOpen`).
    public static func json(_ page: FlowPage, packetsCaptured: [Int64: Int64]? = nil, leftOpen: [Int64: LeftOpenCause] = [:]) -> JSONValue {
        json(page.flows.map { flow in
            FlowDetailPresentation.detailJSON(flow, packetsCaptured: packetsCaptured.map { $0[flow.id] ?? 0 }, leftOpen: leftOpen[flow.id])
        }, page)
    }

    private static func json(_ rows: [JSONValue], _ page: FlowPage) -> JSONValue {
        .object([("flows", .array(rows)),
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
