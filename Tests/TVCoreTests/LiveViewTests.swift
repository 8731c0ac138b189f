import FlowStore
import FlowTerms
import Testing
import TVHome
@testable import TVCore

/// `tv flows --follow`'s follower, `tv top`'s rates, talkers and screen, and the start record.
@Suite struct LiveViewTests {
    static let s: Int64 = 1_000_000
    /// 2025-11-30 14:05:03 UTC.
    static let t0: Int64 = 1_764_511_503 * s

    static func flow(_ id: Int64, at start: Int64, duration: Int64? = nil, host: String = "a.test", status: FlowStatus = .inspected) -> FlowRecord {
        FlowRecord(id: id, startTime: start, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: "127.0.0.1",
                   serverPort: 443, host: host, hostOrigin: .sni, alpn: "h2", status: status, bytesUp: 120, bytesDown: 3_000,
                   duration: duration)
    }

    @Test("follower: new flows once each, their finish once, flows of other writers with lower ids, flows seen already over")
    func follower() {
        let t0 = Self.t0, s = Self.s
        var f = FlowFollower(startMicros: t0)
        f.watch([Self.flow(1, at: t0 - 10 * s), Self.flow(2, at: t0 - 9 * s, duration: s)])
        #expect(f.open == [1: t0 - 10 * s])
        // First poll: flow 10 opens; flow 3 (a tv exec's reserved id, lower) opened and finished.
        var events = f.take(started: [Self.flow(10, at: t0 + s), Self.flow(3, at: t0 + 2 * s, duration: s / 2)],
                            rechecked: [Self.flow(1, at: t0 - 10 * s)])
        #expect(events == [.opened(Self.flow(10, at: t0 + s)), .opened(Self.flow(3, at: t0 + 2 * s, duration: s / 2)),
                           .finished(Self.flow(3, at: t0 + 2 * s, duration: s / 2))])
        #expect(f.since == t0)  // 2 s is within the 5 s lag
        // Second poll reads the same window again (the lag): nothing twice; 1 and 10 finish.
        events = f.take(started: [Self.flow(10, at: t0 + s, duration: 3 * s), Self.flow(3, at: t0 + 2 * s, duration: s / 2)],
                        rechecked: [Self.flow(10, at: t0 + s, duration: 3 * s), Self.flow(1, at: t0 - 10 * s, duration: 12 * s)])
        #expect(events == [.finished(Self.flow(1, at: t0 - 10 * s, duration: 12 * s)), .finished(Self.flow(10, at: t0 + s, duration: 3 * s))])
        #expect(f.open.isEmpty)
        // A flow 20 s later moves the window on to 15 s; a full read starts at the last row itself.
        _ = f.take(started: [Self.flow(11, at: t0 + 20 * s)], rechecked: [])
        #expect(f.since == t0 + 15 * s)
        _ = f.take(started: [Self.flow(12, at: t0 + 30 * s)], rechecked: [], full: true)
        #expect(f.since == t0 + 30 * s)
        // An explicit proxy's flow before its CONNECT is read (no host, port 0) is not told yet,
        // and holds the window at its start; once it has a destination it is told, once.
        var bare = Self.flow(13, at: t0 + 31 * s)
        bare.host = nil
        bare.serverPort = 0
        events = f.take(started: [bare, Self.flow(14, at: t0 + 40 * s)], rechecked: [])
        #expect(events == [.opened(Self.flow(14, at: t0 + 40 * s))])
        #expect(f.since == t0 + 31 * s)
        events = f.take(started: [Self.flow(13, at: t0 + 31 * s), Self.flow(14, at: t0 + 40 * s)], rechecked: [])
        #expect(events == [.opened(Self.flow(13, at: t0 + 31 * s))])
        #expect(f.since == t0 + 31 * s)  // the newest told this time is 13 (31 s), less the lag
    }

    @Test("follow lines: + and - with id, time, host, protocol; the end adds bytes, duration, status; JSON lines")
    func followLines() {
        let open = FlowFollower.Event.opened(Self.flow(7, at: Self.t0))
        let done = FlowFollower.Event.finished(Self.flow(7, at: Self.t0, duration: 1_500_000, host: "b.test\u{1B}", status: .encrypted))
        #expect(open.line == "+ 7 14:05:03 a.test h2 :443")
        #expect(done.line == "- 7 14:05:04 b.test\\x1b h2 :443 ↑ 120 B ↓ 2.9 KiB 1.5 s encrypted")
        var named = Self.flow(7, at: Self.t0, duration: 1_500_000, host: "b.test", status: .encrypted)
        named.program = .known(ProgramIdentity(pid: 42, command: "curl", executable: "/usr/bin/curl", uid: 0, user: "root"))
        #expect(FlowFollower.Event.finished(named).line == "- 7 14:05:04 curl b.test h2 :443 ↑ 120 B ↓ 2.9 KiB 1.5 s encrypted")
        #expect(open.json.serialized().hasPrefix(#"{"event":"opened","flow":{"id":7,"#))
    }

    @Test("rates per second between samples; a new session (totals lower) starts the history again; the chart")
    func rates() {
        var h = RateHistory()
        h.add(.init(atMicros: Self.t0, received: 1_000, sent: 100))
        #expect(h.current == nil)
        h.add(.init(atMicros: Self.t0 + Self.s, received: 3_048, sent: 100))
        h.add(.init(atMicros: Self.t0 + 3 * Self.s, received: 4_048, sent: 300))
        #expect(h.rates == [.init(received: 2_048, sent: 0), .init(received: 500, sent: 100)])
        h.add(.init(atMicros: Self.t0 + 4 * Self.s, received: 10, sent: 0))
        #expect(h.samples.count == 1)
        for i in 1...70 { h.add(.init(atMicros: Self.t0 + Int64(4 + i) * Self.s, received: 10, sent: 0)) }
        #expect(h.samples.count == 61)
        #expect(RateHistory.chart([0, 8, 4, 1], width: 6) == "   █▄▁")
        #expect(RateHistory.chart([8, 4, 1, 0], width: 2) == "█ ")  // scaled to what is shown
    }

    @Test("talkers from the values, in the three orders")
    func talkers() {
        let values = ["talkers.1.host": "big.test", "talkers.1.flows": "1", "talkers.1.bytesFromServer": "9000", "talkers.1.bytesFromClient": "100",
                      "talkers.2.host": "a.test", "talkers.2.flows": "5", "talkers.2.bytesFromServer": "10", "talkers.2.bytesFromClient": "10"]
        let all = Talker.all(values)
        #expect(all.map(\.host) == ["big.test", "a.test"])
        #expect(Talker.sorted(all, by: .bytes).map(\.host) == ["big.test", "a.test"])
        #expect(Talker.sorted(all, by: .flows).map(\.host) == ["a.test", "big.test"])
        #expect(Talker.sorted(all, by: .host).map(\.host) == ["a.test", "big.test"])
        #expect(TalkerSort.bytes.next == .flows && TalkerSort.flows.next == .host && TalkerSort.host.next == .bytes)
    }

    static let liveValues = ["mode": "regular", "modeLabel": "explicit proxy (HTTP CONNECT and plain HTTP)", "listen": "127.0.0.1:8080",
                             "inspection": "on", "contentKeeping": "off", "startedAt": String(t0 - 65 * s),
                             "bytesFromServers": "4096", "bytesFromClients": "1024", "accepted": "3", "openConnections": "1", "closed.failed": "1", "closed.inspected": "1",
                             "talkers.1.host": "a.test", "talkers.1.flows": "2", "talkers.1.bytesFromServer": "3000", "talkers.1.bytesFromClient": "120"]

    @Test("the screen at 80×24: strip, rates, totals, talkers, newest, keys; exactly 24 lines of at most 80")
    func screen() {
        var h = RateHistory()
        h.add(.init(atMicros: Self.t0 - Self.s, received: 2_048, sent: 1_024))
        h.add(.init(atMicros: Self.t0, received: 4_096, sent: 1_024))
        let screen = TopScreen(liveness: .live, values: Self.liveValues, history: h, newest: [Self.flow(9, at: Self.t0, duration: Self.s)],
                               sort: .bytes, paused: true, nowMicros: Self.t0, dataFolder: "/d")
        let lines = screen.lines(width: 80, height: 24)
        #expect(lines.count == 24)
        #expect(lines.allSatisfy { $0.count <= 80 })
        #expect(lines[0] == "tv top  LIVE  explicit proxy (HTTP CONNECT and plain HTTP) on 127.0.0.1:8080")
        #expect(lines[1] == "  inspection on · content keeping off · up 1 min 05 s · sort: bytes · PAUSED")
        #expect(lines[2].hasPrefix("Received 2.0 KiB/s    "))
        #expect(lines[2].hasSuffix("█"))
        #expect(lines[4] == "This session: received 4.0 KiB, sent 1.0 KiB, 3 flows (1 open), 1 failed")
        // In a tunnel mode the open UDP flows are among the open ones.
        var tunnel = Self.liveValues
        tunnel["tunnel.udpFlowsOpen"] = "2"
        #expect(TopScreen(liveness: .live, values: tunnel, history: h, newest: [], sort: .bytes, paused: false, nowMicros: Self.t0, dataFolder: "/d").totalsLine
                == "This session: received 4.0 KiB, sent 1.0 KiB, 5 flows (3 open), 1 failed")
        #expect(lines[5].hasPrefix("Top talkers (closed connections)"))
        #expect(lines[6] == "  a.test" + String(repeating: " ", count: 42) + "       2    2.9 KiB      120 B")
        #expect(lines[7] == "Newest flows")
        #expect(lines[8] == "  9 14:05:03 a.test h2 :443 ↓ 2.9 KiB ↑ 120 B 1.0 s inspected")
        #expect(lines[23] == "q quit · s sort · p resume", "paused: p resumes")
        // At 60 columns the headings stay over their columns (the programs' heading pushed SENT
        // off the line: a trial): every line of a table ends at the same column.
        let narrow = screen.lines(width: 60, height: 24)
        #expect(narrow[5] == "Top talkers (closed connectio…   FLOWS   RECEIVED       SENT" && narrow[5].count == 60, "\(narrow)")
        #expect(narrow[6] == "  a.test                             2    2.9 KiB      120 B", "\(narrow)")
        #expect(screen.lines(width: 30, height: 5).count == 5)
        #expect(screen.lines(width: 30, height: 5).allSatisfy { $0.count <= 30 })
        // A long name gives way before the bytes, the duration and the status (at 80 columns
        // they were cut off: a trial).
        var long = Self.flow(9, at: Self.t0, duration: Self.s)
        long.host = "a-rather-long-host-name-that-runs-on.example.test"
        long.tlsVersion = "TLSv1.2"
        long.clientTLSVersion = "TLSv1.3"
        long.alpn = nil
        let cutRow = TopScreen(liveness: .live, values: Self.liveValues, history: h, newest: [long], sort: .bytes, paused: false,
                               nowMicros: Self.t0, dataFolder: "/d").lines(width: 80, height: 24)[8]
        #expect(cutRow == "  9 14:05:03 a-rather-long-host-name-that-run… ↓ 2.9 KiB ↑ 120 B 1.0 s inspected" && cutRow.count <= 80,
                "\(cutRow)")
        // Not live, the strip's sentence is wrapped, not cut.
        let off = TopScreen(liveness: .off, values: [:], history: RateHistory(), newest: [], sort: .bytes, paused: false,
                            nowMicros: Self.t0, dataFolder: "/home/someone/.local/share/tunnelvision").lines(width: 60, height: 24)
        #expect(Array(off.prefix(4)) == ["tv top  OFF  no session is running for",
                                         "  /home/someone/.local/share/tunnelvision; start one with",
                                         "  `tv run`, or run one command through tv with `tv exec --",
                                         "  CMD`"], "\(off)")
    }

    @Test("the report for a pipe (tv top --once, no terminal): nothing cut, every talker and newest flow, no keys line or blank rows")
    func report() {
        var values = Self.liveValues
        for n in 1...30 {
            values["talkers.\(n).host"] = "talker-\(n).a-rather-long-name-that-runs-past-eighty-columns.example"
            values["talkers.\(n).flows"] = "1"
            values["talkers.\(n).bytesFromServer"] = String(31 - n)
            values["talkers.\(n).bytesFromClient"] = "0"
        }
        let newest = (1...25).reversed().map { Self.flow(Int64($0), at: Self.t0 + Int64($0) * Self.s, duration: Self.s) }
        let screen = TopScreen(liveness: .live, values: values, history: RateHistory(), newest: newest,
                               sort: .bytes, paused: false, nowMicros: Self.t0, dataFolder: "/d")
        let lines = screen.report()
        // strip, settings, two rate lines, totals, the talkers' heading and 30 rows, "Newest flows" and 25 rows.
        #expect(lines.count == 5 + 1 + 30 + 1 + 25, "\(lines)")
        #expect(lines[6] == "  talker-1.a-rather-long-name-that-runs-past-eighty-columns.example       1       30 B        0 B")
        #expect(lines[35].hasPrefix("  talker-30."))
        #expect(lines[36] == "Newest flows")
        #expect(lines.last == "  1 14:05:04 a.test h2 :443 ↓ 2.9 KiB ↑ 120 B 1.0 s inspected")
        #expect(!lines.contains(TopScreen.keysLine) && !lines.contains(""))
        // The terminal's screen of the same sample cuts both.
        #expect(screen.lines(width: 80, height: 24).allSatisfy { $0.count <= 80 })
        let off = TopScreen(liveness: .off, values: [:], history: RateHistory(), newest: [], sort: .bytes, paused: false, nowMicros: Self.t0, dataFolder: "/a/data/folder/with/a/long/path/that/would/not/fit/in/80/columns")
        #expect(off.report() == ["tv top  OFF  no session is running for /a/data/folder/with/a/long/path/that/would/not/fit/in/80/columns; start one with `tv run`, or run one command through tv with `tv exec -- CMD`"])
    }

    @Test("with programs known, a by-program table sits between the talkers and the newest flows; --json carries it")
    func programs() {
        let programs = [ProgramTotals(command: "curl", flows: 3, bytesDown: 3_072, bytesUp: 100),
                        ProgramTotals(command: nil, flows: 1, bytesDown: 10, bytesUp: 0)]
        let screen = TopScreen(liveness: .live, values: Self.liveValues, history: RateHistory(), newest: [], programs: programs,
                               sort: .bytes, paused: false, nowMicros: Self.t0, dataFolder: "/d")
        let lines = screen.lines(width: 80, height: 24)
        #expect(lines[5].hasPrefix("Top talkers (closed connections)"))
        #expect(lines[7].hasPrefix("Top programs (all flows since this session began)"))
        #expect(lines[8] == "  curl" + String(repeating: " ", count: 44) + "       3    3.0 KiB      100 B")
        #expect(lines[9] == "  not known" + String(repeating: " ", count: 39) + "       1       10 B        0 B")
        #expect(lines[10] == "Newest flows")
        #expect(screen.json.serialized().contains(#""programs":[{"program":"curl","flows":3,"received":3072,"sent":100},{"program":null,"flows":1,"received":10,"sent":0}]"#))
    }

    @Test("a marker sits above the first newest flow that started before it; --json carries the audit strip and the markers")
    func markers() {
        var screen = TopScreen(liveness: .live, values: Self.liveValues, history: RateHistory(),
                               newest: [Self.flow(9, at: Self.t0 + 2 * Self.s, duration: Self.s), Self.flow(8, at: Self.t0, duration: Self.s)],
                               sort: .bytes, paused: false, nowMicros: Self.t0, dataFolder: "/d")
        screen.auditStrip = "● Audit: project 'app', session 3, recording for 5.0 s, 1 marker"
        screen.markers = [AuditMarker(id: 1, sessionID: 3, time: Self.t0 + Self.s, text: "opened the login screen")]
        let lines = screen.lines(width: 100, height: 24)
        #expect(lines[2] == "  ● Audit: project 'app', session 3, recording for 5.0 s, 1 marker")
        let newest = lines.firstIndex(of: "Newest flows") ?? -1
        #expect(Array(lines[(newest + 1)...].prefix(3)) == [
            "  9 14:05:05 a.test h2 :443 ↓ 2.9 KiB ↑ 120 B 1.0 s inspected",
            "  ── 2025-11-30 14:05:04.000 UTC  marker: opened the login screen (session 3)",
            "  8 14:05:03 a.test h2 :443 ↓ 2.9 KiB ↑ 120 B 1.0 s inspected",
        ], "\(lines)")
        let json = screen.json.serialized()
        #expect(json.contains(#""audit":"● Audit: project 'app', session 3, recording for 5.0 s, 1 marker","markers":[{"id":1,"session":3,"time":\#(Self.t0 + Self.s),"text":"opened the login screen"}]"#), "\(json)")
    }

    @Test("off, starting and failed are told apart by a word; the failed start keeps its reason")
    func states() {
        func strip(_ l: SessionLiveness) -> String {
            TopScreen(liveness: l, values: [:], history: RateHistory(), newest: [], sort: .bytes, paused: false, nowMicros: Self.t0, dataFolder: "/d").stripLine
        }
        #expect(strip(.off) == "tv top  OFF  no session is running for /d; start one with `tv run`, or run one command through tv with `tv exec -- CMD`")
        #expect(strip(.starting(pid: 42)) == "tv top  STARTING  a session (pid 42) is preparing")
        #expect(strip(.failed(atMicros: Self.t0, reason: "port 8080 is taken")) == "tv top  FAILED  the last start, at 2025-11-30 14:05:03 UTC, failed: port 8080 is taken")
        let starting = SessionStartRecord(state: .starting, pid: 42, atMicros: Self.t0)
        #expect(SessionLiveness.notAnswering(nil) { _ in true } == .off)
        #expect(SessionLiveness.notAnswering(starting) { _ in true } == .starting(pid: 42))
        #expect(SessionLiveness.notAnswering(starting) { _ in false } == .off)
        #expect(SessionLiveness.notAnswering(SessionStartRecord(state: .failed, pid: 42, atMicros: Self.t0, reason: "r")) { _ in false }
                == .failed(atMicros: Self.t0, reason: "r"))
    }
}
