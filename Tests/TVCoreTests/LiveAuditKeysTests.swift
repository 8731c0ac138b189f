import ControlChannel
@testable import FlowStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TVHome
@testable import TVCore

/// Issue 23: a running tv session follows the live audit session's key log (`AuditKeyChoice`,
/// pure), as `tv audit start` and `tv audit stop` tell it (`LiveAuditKeys`, `AuditKeysNotifier`),
/// and the commands say what the running sessions record.
@Suite(.serialized) struct LiveAuditKeysTests {
    /// 2023-11-14 22:13:20.250 UTC.
    let t: Int64 = 1_700_000_000_250_000

    func session(_ id: Int64, ended: Int64? = nil) -> AuditSession {
        AuditSession(id: id, projectID: 1, projectName: "app", note: "", started: t, ended: ended, settings: "{}")
    }

    @Test("the choice follows the live session, none when none is live, and keeps what it follows when the database cannot be read")
    func choice() {
        #expect(AuditKeyChoice.choose(live: .session(3), following: nil) == AuditKeyChoice(follow: 3, changes: true))
        #expect(AuditKeyChoice.choose(live: .session(3), following: 3) == AuditKeyChoice(follow: 3, changes: false))
        #expect(AuditKeyChoice.choose(live: .session(4), following: 3) == AuditKeyChoice(follow: 4, changes: true))
        #expect(AuditKeyChoice.choose(live: .none, following: 3) == AuditKeyChoice(follow: nil, changes: true))
        #expect(AuditKeyChoice.choose(live: .none, following: nil) == AuditKeyChoice(follow: nil, changes: false))
        #expect(AuditKeyChoice.choose(live: .unreadable, following: 3) == AuditKeyChoice(follow: 3, changes: false))
        #expect(AuditKeyChoice.choose(live: .unreadable, following: nil) == AuditKeyChoice(follow: nil, changes: false))
    }

    @Test("a session's answer read: the followed id (empty: none) and inspection; an older tv's refusal as the reason, without its full stop")
    func deliveryReading() {
        #expect(AuditKeysDelivery.reading(ControlResponse(ok: true, message: "following audit session 2",
                                                          values: ["following": "2", "inspection": "on"]), socket: "/s")
                == AuditKeysDelivery(socket: "/s", outcome: .following(session: 2, inspecting: true)))
        #expect(AuditKeysDelivery.reading(ControlResponse(ok: true, message: "following no audit session",
                                                          values: ["following": "", "inspection": "off"]), socket: "/s")
                == AuditKeysDelivery(socket: "/s", outcome: .following(session: nil, inspecting: false)))
        #expect(AuditKeysDelivery.reading(ControlResponse(ok: false, message: "'audit-changed' is not something this session knows; use the same version of tv."),
                                          socket: "/s")
                == AuditKeysDelivery(socket: "/s", outcome: .failed(reason: "'audit-changed' is not something this session knows; use the same version of tv")))
        #expect(AuditKeysDelivery.reading(ControlResponse(ok: true, message: "running"), socket: "/s")
                == AuditKeysDelivery(socket: "/s", outcome: .failed(reason: "running")))
    }

    @Test("tv audit start says what the running sessions record: nothing running, one inspecting, one not, one that could not follow, several")
    func startSentences() {
        let head = "Session 2 of project 'app' is recording from 2023-11-14 22:13:20.250 UTC: "
        #expect(AuditPresentation.started(session(2), told: [])
                == head + "flows any tv session writes from now belong to it (with both legs' TLS secrets while it inspects); start `tv run` or `tv exec` to record.")
        let inspecting = AuditKeysDelivery(socket: "/r", outcome: .following(session: 2, inspecting: true))
        let plain = AuditKeysDelivery(socket: "/e", outcome: .following(session: 2, inspecting: false))
        let old = AuditKeysDelivery(socket: "/o", outcome: .failed(reason: "'audit-changed' is not something this session knows"))
        #expect(AuditPresentation.started(session(2), told: [inspecting])
                == head + "the running session's new flows belong to it from now, with both legs' TLS secrets in its key log.")
        #expect(AuditPresentation.started(session(2), told: [plain])
                == head + "the running session's new flows belong to it from now. It does not inspect TLS now, so it records no TLS secrets until inspection is on.")
        #expect(AuditPresentation.started(session(2), told: [old])
                == head + "the running session's new flows belong to it from now. It could not be told to write TLS secrets into the session's key log ('audit-changed' is not something this session knows); restart it to have them there.")
        #expect(AuditPresentation.started(session(2), told: [AuditKeysDelivery(socket: "/r", outcome: .following(session: 1, inspecting: true))])
                == head + "the running session's new flows belong to it from now. It could not be told to write TLS secrets into the session's key log (it follows session 1); restart it to have them there.")
        #expect(AuditPresentation.started(session(2), told: [plain, plain])
                == head + "the 2 running tv sessions' new flows belong to it from now. 2 of them do not inspect TLS now, so they record no TLS secrets until inspection is on.")
        #expect(AuditPresentation.started(session(2), told: [inspecting, inspecting])
                == head + "the 2 running tv sessions' new flows belong to it from now, with both legs' TLS secrets in its key log.")
        #expect(AuditPresentation.started(session(2), told: [inspecting, plain, old])
                == head + "the 3 running tv sessions' new flows belong to it from now. 1 of them does not inspect TLS now, so it records no TLS secrets until inspection is on. 1 of them could not be told to write TLS secrets into the session's key log ('audit-changed' is not something this session knows); restart it to have them there.")
    }

    @Test("tv audit stop adds a sentence only for running sessions that still follow a key log")
    func stopSentences() {
        let stopped = session(2, ended: t + 61_000_000)
        var summary = AuditSessionSummary()
        summary.flows = 1
        let base = "Session 2 of project 'app' stopped after 1 min 01 s: 1 flow, 0 markers. `tv audit bundle 2 -o FILE` writes its evidence."
        #expect(AuditPresentation.stopped(stopped, summary: summary, told: []) == base)
        #expect(AuditPresentation.stopped(stopped, summary: summary,
                                          told: [AuditKeysDelivery(socket: "/r", outcome: .following(session: nil, inspecting: true))]) == base)
        #expect(AuditPresentation.stopped(stopped, summary: summary,
                                          told: [AuditKeysDelivery(socket: "/r", outcome: .following(session: 2, inspecting: true))])
                == base + " 1 running tv session could not be told to stop writing TLS secrets into its key log (it follows session 2); secrets of its later handshakes may be in the bundle until it stops.")
    }

    func withHome(_ body: (TVHome) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tv-livekeys-\(getpid())-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let home = TVHome(path: path)
        try home.ensureExists()
        try body(home)
    }

    /// A Unix socket file at `path` that nothing listens on (as a killed process leaves it).
    func bindOnly(_ path: String) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8))
            raw[path.utf8.count] = 0
        }
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        #expect(rc == 0)
        close(fd)
    }

    func text(_ path: String) -> String { String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self) }

    @Test("the holder follows the database's live session: lines go to its key log, to the next one's after a stop and start, nowhere with none live, and nowhere after stop")
    func holderFollowsTheDatabase() throws {
        try withHome { home in
            let store = try FlowStore(home: home)
            defer { store.close() }
            _ = try store.audit.newProject(name: "app", note: "", now: t)
            let keys = LiveAuditKeys(home: home)
            func line(_ s: String) { Array(s.utf8).withUnsafeBytes { keys.record(keyLogLine: $0) } }
            #expect(LiveAuditKeys.readLive(home: home) == .none)
            try keys.refollow()
            #expect(keys.following == nil)
            // Nothing followed yet: the session's TLS contexts make no key log lines.
            #expect(!keys.keyLogSwitch.isOn)
            line("EXPORTER_SECRET 00 00")

            let first = try store.audit.start(project: "app", note: "", settings: "{}", now: t)
            #expect(LiveAuditKeys.readLive(home: home) == .session(first.id))
            #expect(keys.answer(inspecting: true) == ControlResponse(ok: true, message: "following audit session \(first.id)",
                                                                    values: ["following": String(first.id), "inspection": "on"]))
            #expect(keys.keyLogSwitch.isOn)
            line("EXPORTER_SECRET aa 01")
            _ = try store.audit.stop(now: t + 1)
            #expect(keys.answer(inspecting: false) == ControlResponse(ok: true, message: "following no audit session",
                                                                     values: ["following": "", "inspection": "off"]))
            line("EXPORTER_SECRET bb 02")
            let second = try store.audit.start(project: "app", note: "", settings: "{}", now: t + 2)
            try keys.refollow()
            line("EXPORTER_SECRET cc 03")
            keys.stop()
            line("EXPORTER_SECRET dd 04")
            try keys.refollow()
            #expect(keys.following == nil)

            #expect(text(AuditKeyLog.path(home: home, session: first.id)) == "EXPORTER_SECRET aa 01\n")
            #expect(text(AuditKeyLog.path(home: home, session: second.id)) == "EXPORTER_SECRET cc 03\n")
            let files = try FileManager.default.contentsOfDirectory(atPath: home.path + "/audit-keys").sorted()
            #expect(files == ["session-\(first.id).log", "session-\(second.id).log"])
        }
    }

    @Test("a key log that cannot be made is said in the answer, and lines then go nowhere")
    func unwritableKeyLog() throws {
        try withHome { home in
            let store = try FlowStore(home: home)
            defer { store.close() }
            _ = try store.audit.newProject(name: "app", note: "", now: t)
            let live = try store.audit.start(project: "app", note: "", settings: "{}", now: t)
            // A file where the folder goes.
            #expect(FileManager.default.createFile(atPath: home.path + "/audit-keys", contents: Data()))
            let keys = LiveAuditKeys(home: home)
            let answer = keys.answer(inspecting: true)
            #expect(!answer.ok && answer.values == ["inspection": "on"], "\(answer)")
            #expect(answer.message.hasPrefix("Could not write \(home.path)/audit-keys"), "\(answer)")
            #expect(keys.following == nil)
            #expect(!keys.keyLogSwitch.isOn)
            _ = live
        }
    }

    @Test("the notifier asks tv run's control socket and each tv exec's, removes an exec socket nothing listens on, and leaves out sockets that are not there")
    func notifierReachesEverySession() throws {
        try withHome { home in
            try home.ensureDirectory(home.runDirectory)
            #expect(AuditKeysNotifier.sockets(home: home) == [SessionPaths.controlSocket(home)])
            #expect(AuditKeysNotifier.tellAll(home: home) == [])
            let answered = { (following: String) in
                { @Sendable (request: ControlRequest) -> ControlResponse in
                    request == LiveAuditKeys.request
                        ? ControlResponse(ok: true, message: "m", values: ["following": following, "inspection": "on"])
                        : ControlResponse(ok: false, message: "unexpected")
                }
            }
            let run = try ControlServer(path: SessionPaths.controlSocket(home), handler: answered("5"))
            defer { run.stop() }
            let exec = try ControlServer(path: AuditKeysNotifier.execSocket(home: home, pid: 4242), handler: answered(""))
            defer { exec.stop() }
            // A socket left by a tv exec that was killed: bound, never listening.
            let stale = AuditKeysNotifier.execSocket(home: home, pid: 4243)
            bindOnly(stale)
            #expect(AuditKeysNotifier.sockets(home: home)
                    == [SessionPaths.controlSocket(home), home.runDirectory + "/exec-4242.sock", home.runDirectory + "/exec-4243.sock"])
            #expect(AuditKeysNotifier.tellAll(home: home) == [
                AuditKeysDelivery(socket: SessionPaths.controlSocket(home), outcome: .following(session: 5, inspecting: true)),
                AuditKeysDelivery(socket: home.runDirectory + "/exec-4242.sock", outcome: .following(session: nil, inspecting: true)),
            ])
            #expect(!FileManager.default.fileExists(atPath: stale))
        }
    }
}
