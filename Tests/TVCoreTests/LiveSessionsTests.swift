import FlowStore
import FlowTerms
import Testing
import TVHome
@testable import TVCore

/// Several sessions live on one data folder (a `tv run` and `tv exec`s): which are shown and in
/// what order, what adds up, and how `tv status`, `tv diag` and `tv top` say them. One session
/// is shown exactly as before.
@Suite struct LiveSessionsTests {
    static let s: Int64 = 1_000_000
    /// 2025-11-30 14:05:03 UTC.
    static let t0: Int64 = 1_764_511_503 * s

    static let run: [String: String] = [
        "pid": "100", "mode": "regular", "modeLabel": "explicit proxy (HTTP CONNECT and plain HTTP)", "listen": "127.0.0.1:8080",
        "inspection": "on", "contentKeeping": "off", "startedAt": String(t0 - 65 * s), "connectionCap": "1024",
        "bytesFromServers": "4096", "bytesFromClients": "1024", "accepted": "3", "openConnections": "1",
        "closed.failed": "1", "closed.inspected": "1",
        "talkers.1.host": "a.test", "talkers.1.flows": "2", "talkers.1.bytesFromServer": "3000", "talkers.1.bytesFromClient": "120",
    ]
    static let exec: [String: String] = [
        "pid": "200", "mode": "exec", "modeLabel": "tv exec of sh -c 'sleep 9'", "listen": "a TUN in its own network namespace",
        "inspection": "off", "contentKeeping": "off", "startedAt": String(t0 - 5 * s), "connectionCap": "1024",
        "bytesFromServers": "2048", "bytesFromClients": "100", "accepted": "2", "openConnections": "1", "closed.notEncrypted": "2",
        "talkers.1.host": "b.test", "talkers.1.flows": "1", "talkers.1.bytesFromServer": "50", "talkers.1.bytesFromClient": "5",
        "talkers.2.host": "a.test", "talkers.2.flows": "1", "talkers.2.bytesFromServer": "100", "talkers.2.bytesFromClient": "10",
    ]
    static let control = "/d/run/control.sock"
    static let runSession = LiveSession(socket: control, values: run)
    static let execSession = LiveSession(socket: "/d/run/exec-200.sock", values: exec)

    @Test("order: tv run's socket first, then the tv execs oldest first (ties and no start by pid); titles name pid, what and where")
    func order() {
        var younger = Self.exec
        younger["pid"] = "150"
        younger["startedAt"] = String(Self.t0)
        let young = LiveSession(socket: "/d/run/exec-150.sock", values: younger)
        var unknown = Self.exec
        unknown["pid"] = "90"
        unknown.removeValue(forKey: "startedAt")
        let noStart = LiveSession(socket: "/d/run/exec-90.sock", values: unknown)
        let ordered = LiveSessionStatus.ordered([young, noStart, Self.execSession, Self.runSession], controlSocket: Self.control)
        #expect(ordered.map(\.pid) == [100, 200, 150, 90])
        #expect(Self.runSession.title == "pid 100: explicit proxy (HTTP CONNECT and plain HTTP) on 127.0.0.1:8080")
        #expect(Self.execSession.title == "pid 200: tv exec of sh -c 'sleep 9' on a TUN in its own network namespace")
    }

    @Test("--session PID: every session by default, the one named, or a refusal naming the live ones; a value that is no pid is refused")
    func choice() throws {
        let both = [Self.runSession, Self.execSession]
        #expect(LiveSessionChoice.of([], pid: nil) == .none)
        #expect(LiveSessionChoice.of([], pid: 5) == .none)
        #expect(LiveSessionChoice.of(both, pid: nil) == .shown(both))
        #expect(LiveSessionChoice.of(both, pid: 200) == .shown([Self.execSession]))
        #expect(LiveSessionChoice.of(both, pid: 7) == .notLive(pid: 7, live: both))
        #expect(LiveSessionChoice.of(both, pid: 7).sessions.isEmpty)
        #expect(try LiveSessionChoice.pid("4242") == 4242)
        for bad in ["", "0", "-3", "+3", "12x", "99999999999"] {
            #expect(throws: LiveSessionRefusal.notAProcessID(bad)) { try LiveSessionChoice.pid(bad) }
        }
        #expect(LiveSessionRefusal.notAProcessID("x").message
                == "--session takes a live session's process id, as `tv status` says it (pid 4242); 'x' is not one.")
        #expect(LiveSessionRefusal.notAProcessID("x").exitCode == 2)
        let refusal = LiveSessionRefusal.notLive(pid: 7, live: both, folder: "/d")
        #expect(refusal.message == "No session live on /d has pid 7; the live ones are pid 100: explicit proxy (HTTP CONNECT and plain HTTP) on 127.0.0.1:8080 and pid 200: tv exec of sh -c 'sleep 9' on a TUN in its own network namespace.")
        #expect(refusal.exitCode == 3)
        #expect(LiveSessionRefusal.notLive(pid: 7, live: [Self.runSession], folder: "/d").message
                == "No session live on /d has pid 7; the live one is pid 100: explicit proxy (HTTP CONNECT and plain HTTP) on 127.0.0.1:8080.")
    }

    @Test("what adds up: connections, bytes, closed by status and open UDP flows summed; talkers merged by host, busiest first; the rest the first's")
    func totals() {
        var exec = Self.exec
        exec["tunnel.udpFlowsOpen"] = "1"
        let merged = LiveSessionTotals.merged([Self.run, exec])
        #expect(merged["openConnections"] == "2" && merged["accepted"] == "5")
        #expect(merged["bytesFromClients"] == "1124" && merged["bytesFromServers"] == "6144")
        #expect(merged["closed.failed"] == "1" && merged["closed.inspected"] == "1" && merged["closed.notEncrypted"] == "2")
        #expect(merged["tunnel.udpFlowsOpen"] == "1")
        #expect(merged["pid"] == "100" && merged["inspection"] == "on")
        #expect(Talker.all(merged) == [Talker(host: "a.test", flows: 3, received: 3_100, sent: 130), Talker(host: "b.test", flows: 1, received: 50, sent: 5)])
        #expect(LiveSessionTotals.merged([Self.run]) == Self.run)
        #expect(LiveSessionTotals.line([Self.run, exec])
                == "2 connections open, 5 accepted; ↑ 1.1 KiB from clients, ↓ 6.0 KiB from servers; 4 flows closed (1 failed)")
        #expect(LiveSessionTotals.json([Self.run, exec]).serialized()
                == #"{"accepted":5,"bytesFromClients":1124,"bytesFromServers":6144,"closed":{"failed":1,"inspected":1,"notEncrypted":2},"openConnections":2,"tunnel":{"udpFlowsOpen":1}}"#)
    }

    @Test("tv status, one session: its lines as before (title, inspection, connections, closed, bytes, names), the audit strip under the title")
    func oneSessionStatus() {
        #expect(SessionStatusPresentation.lines(Self.run, auditStrip: "● Audit: project 'app', session 3") == [
            "tv is running (pid 100): explicit proxy (HTTP CONNECT and plain HTTP) on 127.0.0.1:8080",
            "  ● Audit: project 'app', session 3",
            "  inspection        on",
            "  connections open  1 of 1024 (3 accepted, 0 refused at the cap, 0 over the per-client limit)",
            "  closed            1 failed, 1 inspected",
            "  bytes             ↑ 1.0 KiB from clients, ↓ 4.0 KiB from servers",
            "  names             from what each connection announces (SNI, CONNECT, SOCKS5, a Host header): a proxy sees no DNS, so an address-only connection stays unnamed",
        ])
        #expect(SessionStatusPresentation.noSession(folder: "/d")
                == "No tv session is running for /d; start one with `tv run`, or run one command through tv with `tv exec -- CMD`.")
    }

    @Test("tv status, two sessions: how many and how to see one, what they add up to, then each as alone; --json: the first's object with sessionCount, sessions, totals")
    func twoSessionsStatus() throws {
        let both = [Self.runSession, Self.execSession]
        let lines = LiveSessionsPresentation.statusLines(both, folder: "/d", auditStrip: "● Audit: project 'app', session 3")
        #expect(lines == [
            "2 tv sessions are running for /d; each is shown below (`tv status --session PID` shows one).",
            "  ● Audit: project 'app', session 3",
            "  together          2 connections open, 5 accepted; ↑ 1.1 KiB from clients, ↓ 6.0 KiB from servers; 4 flows closed (1 failed)",
            "",
        ] + SessionStatusPresentation.lines(Self.run) + [""] + SessionStatusPresentation.lines(Self.exec))
        #expect(lines[4] == "tv is running (pid 100): explicit proxy (HTTP CONNECT and plain HTTP) on 127.0.0.1:8080")
        #expect(lines[lines.firstIndex(of: "tv is running (pid 200): tv exec of sh -c 'sleep 9' on a TUN in its own network namespace")! + 1]
                == "  inspection        off")
        let json = LiveSessionsPresentation.statusJSON(both)
        guard case .object(let fields) = json else { Issue.record("not an object"); return }
        #expect(fields.map(\.0) == fields.map(\.0).sorted())
        let first = SessionStatusPresentation.json(Self.run)
        guard case .object(let firstFields) = first else { Issue.record("not an object"); return }
        #expect(fields.filter { !["sessionCount", "sessions", "totals"].contains($0.0) }.map(\.0) == firstFields.map(\.0).sorted())
        let text = json.serialized()
        #expect(text.contains(#""pid":100,"#) && text.contains(#""sessionCount":2,"#))
        #expect(text.contains(#""sessions":[\#(first.serialized()),\#(SessionStatusPresentation.json(Self.exec).serialized())]"#), "\(text)")
        #expect(text.contains(#""totals":{"accepted":5,"bytesFromClients":1124,"bytesFromServers":6144,"closed":{"failed":1,"inspected":1,"notEncrypted":2},"openConnections":2}"#), "\(text)")
    }

    @Test("tv diag, two sessions: the sentence, then each session under its title diagnosed alone; --json: the first's with sessionCount and sessions")
    func twoSessionsDiag() {
        let both = [Self.runSession, Self.execSession]
        #expect(LiveSessionsPresentation.diagLines(both, folder: "/d") == [
            "2 tv sessions are running for /d; each is diagnosed below (`tv diag --session PID` diagnoses one).",
            "",
            "Session pid 100: explicit proxy (HTTP CONNECT and plain HTTP) on 127.0.0.1:8080",
        ] + DiagnosticsPresentation.lines(Self.run) + ["", "Session pid 200: tv exec of sh -c 'sleep 9' on a TUN in its own network namespace"]
            + DiagnosticsPresentation.lines(Self.exec))
        let json = LiveSessionsPresentation.diagJSON(both).serialized()
        let first = DiagnosticsPresentation.json(Self.run).serialized()
        #expect(json == String(first.dropLast()) + #","sessionCount":2,"sessions":[\#(first),\#(DiagnosticsPresentation.json(Self.exec).serialized())]}"#)
        #expect(DiagnosticsVerdict.noSession.sentence
                == "No tv session is running, so there is nothing to diagnose (the counters start at zero with every session); start one with `tv run`, or run one command through tv with `tv exec -- CMD`.")
    }

    @Test("tv top, two sessions: a line each with its settings, the figures added up, talkers merged; --json as status's; one session as before")
    func twoSessionsTop() {
        var exec = Self.exec
        exec["tunnel.udpFlowsOpen"] = "1"
        var screen = TopScreen(liveness: .live, values: LiveSessionTotals.merged([Self.run, exec]), history: RateHistory(), newest: [],
                               sort: .bytes, paused: true, nowMicros: Self.t0, dataFolder: "/d")
        screen.sessions = [Self.run, exec]
        let lines = screen.lines(width: 200, height: 30)
        #expect(Array(lines.prefix(4)) == [
            "tv top  LIVE  2 sessions, added up (`tv top --session PID` shows one)",
            "  pid 100: explicit proxy (HTTP CONNECT and plain HTTP) on 127.0.0.1:8080 · inspection on · content keeping off · up 1 min 05 s",
            "  pid 200: tv exec of sh -c 'sleep 9' on a TUN in its own network namespace · inspection off · content keeping off · up 5.0 s",
            "  sort: bytes · PAUSED",
        ], "\(lines)")
        #expect(lines[6] == "All 2 sessions: received 6.0 KiB, sent 1.1 KiB, 7 flows (3 open), 1 failed")
        #expect(lines[7].hasPrefix("Top talkers (closed connections)"))
        #expect(lines[8].hasPrefix("  a.test ") && lines[8].hasSuffix("       3    3.0 KiB      130 B"), "\(lines[8])")
        #expect(lines[9].hasPrefix("  b.test "))
        let json = screen.json.serialized()
        #expect(json.contains(#""session":\#(SessionStatusPresentation.json(Self.run).serialized()),"sessionCount":2,"sessions":["#), "\(json)")
        #expect(json.contains(#""totals":{"accepted":5,"#))
        // One session: the strip and settings line as before, no session lines.
        let one = TopScreen(liveness: .live, values: Self.run, history: RateHistory(), newest: [], sort: .bytes, paused: false,
                            nowMicros: Self.t0, dataFolder: "/d")
        #expect(one.sessionLines.isEmpty)
        #expect(one.stripLine == "tv top  LIVE  explicit proxy (HTTP CONNECT and plain HTTP) on 127.0.0.1:8080")
        #expect(one.settingsLine == "  inspection on · content keeping off · up 1 min 05 s · sort: bytes")
        #expect(one.totalsLine == "This session: received 4.0 KiB, sent 1.0 KiB, 3 flows (1 open), 1 failed")
        #expect(!one.json.serialized().contains("sessionCount"))
        let off = TopScreen(liveness: .off, values: [:], history: RateHistory(), newest: [], sort: .bytes, paused: false, nowMicros: Self.t0, dataFolder: "/d")
        #expect(off.stripLine == "tv top  OFF  no session is running for /d; start one with `tv run`, or run one command through tv with `tv exec -- CMD`")
    }
}
