import CommandLineParser
import FlowStore
import Foundation
import Synchronization
import TVCore
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// `tv top`: the Dashboard's live part in the terminal, redrawn every second in place (the
/// alternate screen; each line drawn from the cursor's home and cleared to its end, so nothing
/// flickers), to the terminal's size (SIGWINCH redraws at once). Keys: q quits, s sorts the
/// talkers, p pauses. The session's figures come over the control socket, the newest flows
/// from the database.
enum TopCommand {
    static let spec = CommandSpec(
        name: "top", summary: "Show the running session live: rates, totals, top talkers and the newest flows (q quits, s sorts, p pauses).",
        discussion: "Tells a session that is off, starting, live or whose start failed (with the reason) apart by a word. With --once it prints one sample and ends (exit 3 when no session runs, as `tv status`). With two or more sessions live on the data folder (a `tv run` and `tv exec`s), each gets a line and the figures are their sum; --session PID shows one. The newest flows are those started since the session (the first of them) began.",
        options: [OptionSpec("once", help: "Print one sample (two readings a second apart, for the rates) and end."),
                  FlowCommands.json, LiveSessionOption.spec])

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = ["top": run]

    static func run(_ inv: Invocation) throws -> Int32 {
        let home = try inv.home()
        // A pid no live session has is refused at once (exit 3), as `tv status --session` does.
        let pid = try inv.command.value("session").map(LiveSessionChoice.pid)
        if pid != nil { _ = try LiveSessionOption.choice(inv, home: home, timeoutSeconds: 2) }
        var sampler = Sampler(home: home, pid: pid)
        if inv.command.has("once") {
            sampler.sample()
            if case .live = sampler.liveness {
                usleep(1_000_000)
                sampler.sample()
            }
            let screen = sampler.screen(sort: .bytes, paused: false)
            if inv.json {
                inv.console.line(screen.json.serialized(pretty: true))
            } else if let size = Terminal.size(environment: inv.environment) {
                // The screen without the keys line and the blank rows that fill a terminal.
                var lines = Array(screen.lines(width: size.columns, height: size.rows).dropLast())
                while lines.last == "" { lines.removeLast() }
                for line in lines { inv.console.line(line) }
            } else {
                // A pipe or a file: nothing cut (as `top -b`), every row of the sample.
                for line in screen.report() { inv.console.line(line) }
            }
            // As `tv status`: 3 when no session runs (off, or its start failed), for scripts (it
            // said 0 either way: a trial).
            switch sampler.liveness {
            case .off, .failed: return 3
            case .live, .starting: return 0
            }
        }
        guard inv.console.stdoutIsTerminal else {
            throw UsageRefusal("`tv top` redraws a terminal; for scripts use `tv top --once --json`.")
        }
        return loop(inv, sampler: &sampler)
    }

    /// The signal seen last (SIGWINCH, SIGINT, SIGTERM, SIGHUP), for the main loop to act on.
    private static let signalled = Atomic<Int32>(0)

    private static func loop(_ inv: Invocation, sampler: inout Sampler) -> Int32 {
        let watched = [SIGINT, SIGTERM, SIGHUP, SIGWINCH]
        Terminal.unblock(watched)
        let sources = watched.map { sig -> DispatchSourceSignal in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { signalled.store(sig, ordering: .relaxed) }
            source.resume()
            return source
        }
        Terminal.enter()
        defer {
            Terminal.leave()
            sources.forEach { $0.cancel() }
            for sig in watched { signal(sig, SIG_DFL) }
        }
        var sort = TalkerSort.bytes
        var paused = false
        var lastSample = Int64(0)
        while true {
            let now = FlowCommands.nowMicros()
            if !paused, now - lastSample >= 1_000_000 {
                sampler.sample()
                lastSample = now
            }
            let size = Terminal.size(environment: inv.environment) ?? (24, 80)
            draw(sampler.screen(sort: sort, paused: paused).lines(width: size.columns, height: size.rows))
            // Wait for a key or a signal, at most until the next sample.
            var redraw = false
            while !redraw {
                switch signalled.exchange(0, ordering: .relaxed) {
                case SIGWINCH: redraw = true; continue
                case 0: break
                default: return 0
                }
                guard let key = Terminal.key(timeoutMillis: 100) else {
                    if FlowCommands.nowMicros() - lastSample >= 1_000_000 { redraw = true }
                    continue
                }
                switch key {
                case UInt8(ascii: "q"), UInt8(ascii: "Q"), 3: return 0
                case UInt8(ascii: "s"), UInt8(ascii: "S"): sort = sort.next; redraw = true
                case UInt8(ascii: "p"), UInt8(ascii: "P"): paused.toggle(); redraw = true
                default: continue
                }
            }
        }
    }

    /// One frame in one write: each line from column 1 of its row, cleared to its end, then
    /// everything below cleared.
    private static func draw(_ lines: [String]) {
        var frame = ""
        for (i, line) in lines.enumerated() {
            frame += "\u{1B}[\(i + 1);1H" + TerminalText.guarded(line) + "\u{1B}[K"
        }
        frame += "\u{1B}[J"
        Terminal.write(Array(frame.utf8))
    }

    /// Reads the sessions (their sockets) and the newest flows (database) once per sample.
    struct Sampler {
        let home: TVHome
        /// `--session PID`: only that session (nil: every live one, added up).
        let pid: Int32?
        var liveness: SessionLiveness = .off
        /// The session's values, or what two or more add up to (`LiveSessionTotals.merged`).
        var values: [String: String] = [:]
        /// Each session's values when two or more are shown (`TopScreen.sessions`).
        var sessions: [[String: String]] = []
        var history = RateHistory()
        var newest: [FlowRecord] = []
        var programs: [ProgramTotals] = []
        var auditStrip: String?
        var markers: [AuditMarker] = []
        /// The pids of the sessions the rates were read from: another set starts them again.
        private var sampled: [Int32] = []
        private var store: FlowStore?

        init(home: TVHome, pid: Int32? = nil) {
            self.home = home
            self.pid = pid
        }

        mutating func sample() {
            let now = FlowCommands.nowMicros()
            let live = (try? LiveSessionStatus.all(home: home, timeoutSeconds: 2)) ?? []
            let shown = LiveSessionChoice.of(live, pid: pid).sessions
            if !shown.isEmpty {
                liveness = .live
                values = LiveSessionTotals.merged(shown.map(\.values))
                sessions = shown.count > 1 ? shown.map(\.values) : []
                let pids = shown.compactMap(\.pid)
                if pids != sampled { history = RateHistory() }
                sampled = pids
                history.add(RateHistory.Sample(atMicros: now, received: UInt64(values["bytesFromServers"] ?? "") ?? 0,
                                               sent: UInt64(values["bytesFromClients"] ?? "") ?? 0))
                if store == nil { store = try? FlowStore(readingHome: home) }
                // Only flows since the session began (the first of them): earlier sessions'
                // were listed under "This session" (a trial).
                let started = shown.compactMap(\.startedAt).min() ?? now
                newest = (try? store?.flows(FlowQuery(from: started, limit: 50)).flows) ?? []
                programs = (try? store?.programTotals(since: started, limit: 10)) ?? []
                auditStrip = AuditRecording.strip(home: home, now: now)
                markers = newest.last.flatMap { oldest in try? store?.audit.markers(from: oldest.startTime, to: now + 1) } ?? []
            } else {
                liveness = SessionLiveness.notAnswering(SessionStartRecord.read(home)) { pid in kill(pid, 0) == 0 || errno == EPERM }
                values = [:]
                sessions = []
                sampled = []
                history = RateHistory()
                newest = []
                programs = []
            }
        }

        func screen(sort: TalkerSort, paused: Bool) -> TopScreen {
            var screen = TopScreen(liveness: liveness, values: values, history: history, newest: newest, programs: programs, sort: sort,
                                   paused: paused, nowMicros: FlowCommands.nowMicros(), dataFolder: home.path)
            screen.sessions = sessions
            screen.auditStrip = auditStrip
            screen.markers = markers
            return screen
        }
    }
}
