import FlowStore
import FlowTerms
import TVHome

/// How `tv top` orders its talkers; `s` moves to the next.
public enum TalkerSort: String, Sendable, CaseIterable {
    case bytes, flows, host

    /// The next order (bytes → flows → host → bytes).
    public var next: TalkerSort {
        let all = TalkerSort.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }
}

/// One host among a session's busiest (`SessionTally`'s `talkers.N.*` values).
public struct Talker: Sendable, Equatable {
    public var host: String
    public var flows: Int64
    /// Bytes from the server (what the client received).
    public var received: Int64
    /// Bytes from the client (what it sent).
    public var sent: Int64

    /// The talkers in `values`, in the order given there (busiest by bytes first).
    public static func all(_ values: [String: String]) -> [Talker] {
        var out: [Talker] = []
        var i = 1
        while let host = values["talkers.\(i).host"] {
            func n(_ key: String) -> Int64 { values["talkers.\(i).\(key)"].flatMap { Int64($0) } ?? 0 }
            out.append(Talker(host: host, flows: n("flows"), received: n("bytesFromServer"), sent: n("bytesFromClient")))
            i += 1
        }
        return out
    }

    /// `talkers` in `order`: most bytes, most flows, or host names A to Z (ties by host).
    public static func sorted(_ talkers: [Talker], by order: TalkerSort) -> [Talker] {
        talkers.sorted { a, b in
            switch order {
            case .bytes where a.received + a.sent != b.received + b.sent: return a.received + a.sent > b.received + b.sent
            case .flows where a.flows != b.flows: return a.flows > b.flows
            default: return a.host < b.host
            }
        }
    }
}

/// `tv top`'s screen: the monitoring strip, the rates with a chart of the last minute, the
/// session's totals, the top talkers and the newest flows, laid out for a terminal of a given
/// size. Pure: everything it shows is in the value; the command samples and redraws.
///
/// The four states are told apart by a word, not a colour: `LIVE`, `STARTING`, `FAILED` (with
/// when and why), `OFF`.
public struct TopScreen: Sendable {
    public var liveness: SessionLiveness
    /// The session's `status` values (empty unless live); with two or more sessions live, what
    /// they add up to (`LiveSessionTotals.merged`).
    public var values: [String: String]
    /// Each live session's values when two or more are shown (a `tv run` and `tv exec`s on one
    /// data folder): each gets a line of its own, and the figures are their sum. Empty for one.
    public var sessions: [[String: String]] = []
    public var history: RateHistory
    /// The newest flows, newest first.
    public var newest: [FlowRecord]
    /// This session's flows by program, busiest first (`FlowStore.programTotals`).
    public var programs: [ProgramTotals]
    public var sort: TalkerSort
    public var paused: Bool
    public var nowMicros: Int64
    public var dataFolder: String
    /// The recording audit session's strip (`AuditPresentation.strip`), nil when none records.
    public var auditStrip: String?
    /// Audit markers placed among the newest flows at their time.
    public var markers: [AuditMarker] = []

    public init(liveness: SessionLiveness, values: [String: String], history: RateHistory, newest: [FlowRecord],
                programs: [ProgramTotals] = [], sort: TalkerSort, paused: Bool, nowMicros: Int64, dataFolder: String) {
        self.programs = programs
        self.liveness = liveness
        self.values = values
        self.history = history
        self.newest = newest
        self.sort = sort
        self.paused = paused
        self.nowMicros = nowMicros
        self.dataFolder = dataFolder
    }

    /// The strip's first line: the state's word, then the mode and address (live), or what the
    /// state means.
    public var stripLine: String {
        let v = values.mapValues(TerminalText.line)
        switch liveness {
        case .live where sessions.count > 1:
            return "tv top  LIVE  \(sessions.count) sessions, added up (`tv top --session PID` shows one)"
        case .live:
            return "tv top  LIVE  \(v["modeLabel"] ?? v["mode"] ?? "?") on \(v["listen"] ?? "?")"
        case .off:
            return "tv top  OFF  no session is running for \(TerminalText.line(dataFolder)); " + SessionStatusPresentation.startOne
        case .starting(let pid):
            return "tv top  STARTING  a session (pid \(pid)) is preparing"
        case let .failed(at, reason):
            return "tv top  FAILED  the last start, at \(Units.utc(at / 1_000_000)), failed: \(TerminalText.line(reason))"
        }
    }

    /// The strip's second line (live): inspection, content keeping, for how long, the order, paused.
    /// With two or more sessions, the order and paused only: each session's settings are on
    /// its own line (`sessionLines`).
    public var settingsLine: String {
        var parts = sessions.count > 1 ? [] : Self.settings(values, nowMicros: nowMicros)
        parts.append("sort: \(sort.rawValue)")
        if paused { parts.append("PAUSED") }
        return "  " + parts.joined(separator: " · ")
    }

    /// With two or more sessions live, a line each: "  pid 4242: tv exec of curl … on a TUN in
    /// its own network namespace · inspection off · content keeping off · up 3 s". Empty for one.
    public var sessionLines: [String] {
        guard sessions.count > 1 else { return [] }
        return sessions.map { values in
            "  " + ([LiveSession(socket: "", values: values).title] + Self.settings(values, nowMicros: nowMicros)).joined(separator: " · ")
        }
    }

    /// A session's inspection, content keeping and time up, in words.
    static func settings(_ values: [String: String], nowMicros: Int64) -> [String] {
        var parts = ["inspection \(TerminalText.line(values["inspection"] ?? "?"))",
                     "content keeping \(TerminalText.line(values["contentKeeping"] ?? "?"))"]
        if let started = values["startedAt"].flatMap({ Int64($0) }) {
            parts.append("up " + Units.duration(microseconds: max(0, nowMicros - started)))
        }
        return parts
    }

    /// "This session": received, sent, flows (open), failed. The flows are the closed ones by
    /// status (UDP, DNS and refused connects in the tunnel modes too) and the open
    /// connections, so the failed are among them (a trial's "3 connections (0 open), 1 failed"
    /// counted accepted connections, and the failed one was a refused connect outside them).
    public var totalsLine: String {
        func n(_ key: String) -> Int64 { values[key].flatMap { Int64($0) } ?? 0 }
        // Open: the connections, and in the tunnel modes the UDP flows (a re-check's open UDP
        // flow was left out while the list showed it).
        let open = n("openConnections") + n("tunnel.udpFlowsOpen")
        let flows = FlowStatus.allCases.reduce(open) { $0 + n(SessionStatusPresentation.closedKey($1)) }
        let whose = sessions.count > 1 ? "All \(sessions.count) sessions" : "This session"
        return "\(whose): received \(Units.bytes(n("bytesFromServers"))), sent \(Units.bytes(n("bytesFromClients"))), "
            + "\(Units.grouped(flows)) flow\(flows == 1 ? "" : "s") (\(Units.grouped(open)) open), "
            + "\(Units.grouped(n(SessionStatusPresentation.closedKey(.failed)))) failed"
    }

    /// The keys the live screen takes, its last line (while paused, `p` resumes).
    static let keysLine = "q quit · s sort · p pause"
    static let pausedKeysLine = "q quit · s sort · p resume"
    var keys: String { paused ? Self.pausedKeysLine : Self.keysLine }

    /// The screen as `height` lines of at most `width` characters (cut, never wrapped).
    public func lines(width: Int, height: Int) -> [String] {
        // Not live: the strip says why in a sentence, wrapped rather than cut (at 80 columns the
        // OFF line lost its `tv run`: a trial).
        guard case .live = liveness else { return fit(Self.wrapped(stripLine, width: width) + ["  " + Self.keysLine], width: width, height: height) }
        var fitted = fit(content(width: width, height: height, cut: true), width: width, height: height - 1)
        while fitted.count < height - 1 { fitted.append("") }
        return fitted + [String(keys.prefix(width))]
    }

    /// The screen for a pipe or a file (`tv top --once` when standard output is no terminal and
    /// `$COLUMNS` is not set): laid out for `width` columns but no line cut and no row left out
    /// for want of room (every talker, every program, every newest flow of the sample), without
    /// the keys line or blank rows.
    public func report(width: Int = 80) -> [String] {
        guard case .live = liveness else { return [stripLine] }
        return content(width: width, height: Int(Int32.max))
    }

    /// The live screen's lines above the keys line, rows chosen for `height` lines; `cut`: the
    /// tables' first column is cut to its width (the terminal), else lines run on (a report).
    private func content(width: Int, height: Int, cut: Bool = false) -> [String] {
        var out: [String] = [stripLine]
        out += sessionLines
        out.append(settingsLine)
        if let auditStrip { out.append("  " + auditStrip) }
        let chartWidth = max(0, min(60, width - 24))
        let rates = history.rates
        let now = history.current
        out.append("Received " + pad(now.map { Units.bytes($0.received) + "/s" } ?? "…", 12) + "  " + RateHistory.chart(rates.map(\.received), width: chartWidth))
        out.append("Sent     " + pad(now.map { Units.bytes($0.sent) + "/s" } ?? "…", 12) + "  " + RateHistory.chart(rates.map(\.sent), width: chartWidth))
        out.append(totalsLine)
        // What is left, less the keys line, shared by the two tables (each with its heading).
        let room = max(0, height - out.count - 1)
        let talkers = Talker.sorted(Talker.all(values), by: sort)
        let tables = programs.isEmpty ? 2 : 3
        let rowsPerTable = max(1, (room - tables) / tables)
        let talkerRows = min(talkers.count, rowsPerTable)
        out.append(column("Top talkers (closed connections)", max(20, width - 30), cut: cut) + pad("FLOWS", 8, right: true) + pad("RECEIVED", 11, right: true) + pad("SENT", 11, right: true))
        if talkers.isEmpty { out.append("  none yet") }
        for t in talkers.prefix(talkerRows) {
            out.append(column("  " + TerminalText.line(t.host), max(20, width - 30), cut: cut) + pad(Units.grouped(t.flows), 8, right: true)
                       + pad(Units.bytes(t.received), 11, right: true) + pad(Units.bytes(t.sent), 11, right: true))
        }
        if !programs.isEmpty {
            // Every flow of the session (open ones too), by the program the lookup named.
            out.append(column("Top programs (all flows since this session began)", max(20, width - 30), cut: cut) + pad("FLOWS", 8, right: true) + pad("RECEIVED", 11, right: true) + pad("SENT", 11, right: true))
            for p in programs.prefix(rowsPerTable) {
                out.append(column("  " + TerminalText.line(p.command ?? "not known"), max(20, width - 30), cut: cut) + pad(Units.grouped(p.flows), 8, right: true)
                           + pad(Units.bytes(p.bytesDown), 11, right: true) + pad(Units.bytes(p.bytesUp), 11, right: true))
            }
        }
        out.append("Newest flows")
        let flowRows = max(0, height - out.count - 1)
        if newest.isEmpty { out.append("  none yet") }
        var pendingMarkers = markers.sorted { ($0.time, $0.id) > ($1.time, $1.id) }[...]
        for f in newest.prefix(flowRows) {
            while let m = pendingMarkers.first, m.time > f.startTime {
                out.append(AuditPresentation.markerLine(m))
                pendingMarkers = pendingMarkers.dropFirst()
            }
            let end = f.duration.map { Units.duration(microseconds: $0) } ?? "open"
            let status = f.status == .encrypted && f.failureReason == nil ? "encrypted" : FlowListPresentation.statusWord(f)
            let head = "  \(f.id) \(Units.utc(f.startTime / 1_000_000, format: "%H:%M:%S")) "
            let name = "\(TerminalText.line(f.host ?? f.serverAddress)) \(FlowListPresentation.protocolAndPort(f))"
            let tail = " ↓ \(Units.bytes(f.bytesDown)) ↑ \(Units.bytes(f.bytesUp)) \(end) \(status)"
            // Cut, the name and protocol give way first, so the bytes, the duration and the
            // status stay on the line (at 80 columns they were cut off: a trial); a long
            // reason is what is cut after that.
            let room = width - head.count - tail.count
            out.append(cut && name.count > room ? head + column(name, max(room, 16), cut: true) + tail : head + name + tail)
        }
        return out
    }

    /// `tv top --once --json`: `state`, `reason` (failed), `session` (the status values, as
    /// `tv status --json`; with two or more sessions the first's, with `sessionCount`,
    /// `sessions` and `totals` beside it, as `tv status --json` has them), `rates` (`received`, `sent` bytes per second; null before two
    /// samples), `talkers`, `newest` (as `tv flow --json`), `audit` (the recording audit
    /// session's strip, null when none records) and `markers` (`tv audit show --json`'s, among
    /// the newest flows' span).
    public var json: JSONValue {
        var fields: [(String, JSONValue)] = [("state", .string(liveness.word.lowercased()))]
        if case let .failed(at, reason) = liveness {
            fields += [("failedAt", .int(at)), ("reason", .string(reason))]
        }
        guard case .live = liveness else { return .object(fields) }
        if sessions.count > 1 {
            // The first session's object as for one (scripts read it), each one's and the sums beside.
            fields.append(("session", SessionStatusPresentation.json(sessions[0])))
            fields.append(("sessionCount", .int(Int64(sessions.count))))
            fields.append(("sessions", .array(sessions.map(SessionStatusPresentation.json))))
            fields.append(("totals", LiveSessionTotals.json(sessions)))
        } else {
            fields.append(("session", SessionStatusPresentation.json(values)))
        }
        fields.append(("rates", history.current.map { .object([("received", .int($0.received)), ("sent", .int($0.sent))]) } ?? .null))
        fields.append(("talkers", .array(Talker.sorted(Talker.all(values), by: sort).map {
            .object([("host", .string($0.host)), ("flows", .int($0.flows)), ("received", .int($0.received)), ("sent", .int($0.sent))])
        })))
        fields.append(("programs", .array(programs.map {
            .object([("program", $0.command.map { .string($0) } ?? .null), ("flows", .int($0.flows)),
                     ("received", .int($0.bytesDown)), ("sent", .int($0.bytesUp))])
        })))
        fields.append(("newest", .array(newest.map { FlowDetailPresentation.json($0) })))
        fields.append(("audit", auditStrip.map { .string($0) } ?? .null))
        fields.append(("markers", .array(markers.map(AuditPresentation.json))))
        return .object(fields)
    }

    /// `line` broken at spaces into lines of at most `width` characters (a word longer than
    /// that is left for `fit` to cut); continuation lines are indented by two spaces.
    static func wrapped(_ line: String, width: Int) -> [String] {
        guard width > 8, line.count > width else { return [line] }
        var out: [String] = []
        var current = ""
        for word in line.split(separator: " ", omittingEmptySubsequences: false) {
            let indent = out.isEmpty ? "" : "  "
            if current.isEmpty {
                current = indent + word
            } else if current.count + 1 + word.count <= width {
                current += " " + word
            } else {
                out.append(current)
                current = "  " + word
            }
        }
        out.append(current)
        return out
    }

    private func fit(_ lines: [String], width: Int, height: Int) -> [String] {
        lines.prefix(max(0, height)).map { String($0.prefix(max(0, width))) }
    }

    /// A table's first column: with `cut`, a text longer than `w` is cut with "…", so the
    /// columns after it stay under their headings (at 60 columns the programs' heading, 35
    /// characters in a 30-character column, pushed SENT off the line: a trial).
    private func column(_ s: String, _ w: Int, cut: Bool) -> String {
        if cut, s.count > w, w > 1 { return String(s.prefix(w - 1)) + "…" }
        return pad(s, w)
    }

    private func pad(_ s: String, _ w: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, w - s.count))
        return right ? fill + s : s + fill
    }
}
