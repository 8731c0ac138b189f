import Foundation
import Testing
@testable import FlowStore
import FlowTerms

/// Issue 23: projects, sessions and markers in the store; one live session at most; flows are
/// tagged by the writer with the session recording when they are first written.
@Suite struct AuditStoreTests {
    @Test("projects: a name is taken once; a blank name and an unknown project are refused with their sentence")
    func projects() throws {
        try withStore { store, _ in
            let app = try store.audit.newProject(name: "app-review", note: "Q4", now: 1_000)
            #expect(app == AuditProject(id: 1, name: "app-review", note: "Q4", created: 1_000))
            #expect(throws: AuditError.projectExists("app-review")) { try store.audit.newProject(name: "app-review", note: "", now: 2_000) }
            #expect(throws: AuditError.empty(what: "project name")) { try store.audit.newProject(name: "  ", note: "", now: 2_000) }
            #expect(throws: AuditError.noProject("nope")) { try store.audit.start(project: "nope", note: "", settings: "{}", now: 3_000) }
            #expect(AuditError.noProject("nope").message
                    == "There is no project named 'nope'; `tv audit projects` lists them and `tv audit project new NAME` makes one.")
            _ = try store.audit.newProject(name: "other", note: "", now: 1_500)
            #expect(try store.audit.projects().map(\.name) == ["app-review", "other"])
        }
    }

    @Test("project names: emoji sequences keep their joiners, selectors and flag tags (a trial's family emoji was refused); the same invisible characters anywhere else are refused")
    func emojiProjectNames() {
        // UTS #51 sequences: ZWJ (family, rainbow flag), VS16 (heart), keycap, a tag flag (Scotland).
        for name in ["👨\u{200D}👩\u{200D}👧", "🏳\u{FE0F}\u{200D}🌈", "❤\u{FE0F} app", "1\u{FE0F}\u{20E3}",
                     "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}", "plain", "übung 🙂"] {
            #expect(AuditLimits.isProjectName(name), "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        // A joiner or selector with nothing to join or select draws nothing: "a" and "a‍" list alike.
        for name in ["a\u{200D}", "a\u{200D}b", "😀\u{200D}", "\u{200D}😀", "1\u{FE0F}", "x\u{FE0F}", "\u{E0067}\u{E007F}",
                     "🏴\u{E0067}\u{E0062}", "🏴\u{E007F}", "😀\u{200B}😀", "😀\u{202E}x",
                     // Tags spelling anything but the three RGI flags draw nothing (a re-check hid text in them).
                     "🏴\u{E0069}\u{E0067}\u{E006E}\u{E006F}\u{E0072}\u{E0065}\u{E007F}", "🏴\u{E0075}\u{E0073}\u{E0074}\u{E0078}\u{E007F}"] {
            #expect(!AuditLimits.isProjectName(name), "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }

    @Test("a name that lists like an existing one (they differ in joiners or selectors) is refused naming it; what is refused is shown with its invisible characters escaped")
    func lookalikeNames() throws {
        try withStore { store, _ in
            _ = try store.audit.newProject(name: "app-🍕🍕", note: "", now: 1)
            #expect(throws: AuditError.projectLooksLike(new: "app-🍕\u{200D}🍕", existing: "app-🍕🍕")) {
                try store.audit.newProject(name: "app-🍕\u{200D}🍕", note: "", now: 2)
            }
            #expect(AuditError.projectLooksLike(new: "app-🍕\u{200D}🍕", existing: "app-🍕🍕").message
                    == "'app-🍕\\u{200D}🍕' would list like the project 'app-🍕🍕' (they differ only in invisible joiners or selectors, or in how the same letters are encoded, as é is one code point or e and an accent); choose another name or use that one (`tv audit start 'app-🍕🍕'`).")
            #expect(AuditError.badProjectName("zw\u{200B}sp").message.hasPrefix("'zw\\u{200B}sp' cannot be a project name"))
        }
    }

    @Test("two sessions never overlap: the second start is refused with the live one named, and the index refuses a raw second row")
    func oneLiveSession() throws {
        try withStore { store, folder in
            _ = try store.audit.newProject(name: "app", note: "", now: 1)
            #expect(throws: AuditError.noLiveSession) { try store.audit.mark("too early", now: 5) }
            #expect(AuditError.noLiveSession.message
                    == "No audit session is recording, so there is nothing to mark or stop; start one with `tv audit start PROJECT`.")
            let first = try store.audit.start(project: "app", note: "login", settings: "{\"mode\":\"regular\"}", now: 10)
            #expect(first == AuditSession(id: 1, projectID: 1, projectName: "app", note: "login", started: 10, ended: nil,
                                          settings: "{\"mode\":\"regular\"}"))
            #expect(throws: AuditError.sessionRecording(id: 1, project: "app")) {
                try store.audit.start(project: "app", note: "", settings: "{}", now: 20)
            }
            #expect(AuditError.sessionRecording(id: 1, project: "app").message
                    == "Session 1 of project 'app' is recording; only one session records at a time, so stop it first (`tv audit stop`).")
            // Another process writing around the check still meets the unique index.
            let raw = try SQLiteDatabase(path: folder + "/tunnelvision.sqlite3")
            defer { raw.close() }
            #expect(throws: FlowStoreError.self) { try raw.execute("INSERT INTO audit_sessions (project_id, started) VALUES (1, 30)") }
            let stopped = try store.audit.stop(now: 40)
            #expect(stopped.ended == 40)
            #expect(throws: AuditError.noLiveSession) { try store.audit.stop(now: 50) }
            let second = try store.audit.start(project: "app", note: "", settings: "{}", now: 60)
            #expect(second.id == 2)
            #expect(try store.audit.sessions(project: "app").map(\.id) == [1, 2])
        }
    }

    @Test("a session whose recorder is gone closes at its last flow's or marker's time, once; a live recorder or none keeps it open")
    func abandonedSession() throws {
        // proc(5): the command name may hold spaces and parentheses; starttime is field 22.
        #expect(AuditRecorder.startTicks(stat: "4242 (tv (run) x) S 1 4242 4242 0 -1 4194560 900 0 0 0 12 3 0 0 20 0 9 0 3394277 31334400 409 18446744073709551615")
                == 3_394_277)
        #expect(AuditRecorder.startTicks(stat: "4242 (tv) S 1 2") == nil)
        #expect(AuditRecorder.startTicks(stat: "no parenthesis") == nil)
        // proc(5): field 3 is the state; Z (zombie) and X (dead) have exited.
        #expect(AuditRecorder.hasExited(stat: "4242 (tv (run) x) Z 1 4242 4242 0 -1 4194560 900 0 0 0 12 3 0 0 20 0 9 0 3394277 0 0"))
        #expect(AuditRecorder.hasExited(stat: "4242 (tv) X 1 2"))
        #expect(!AuditRecorder.hasExited(stat: "4242 (Z) S 1 2"))
        #expect(!AuditRecorder.hasExited(stat: "4242 (tv) R 1 2"))
        #expect(AuditRecorder.abandonedEnd(started: 10, lastFlow: nil, lastMarker: nil) == 10)
        #expect(AuditRecorder.abandonedEnd(started: 10, lastFlow: 90, lastMarker: 40) == 90)
        #expect(AuditRecorder.abandonedEnd(started: 10, lastFlow: 90, lastMarker: 95) == 95)
        try withStore { store, _ in
            _ = try store.audit.newProject(name: "app", note: "", now: 1)
            let recorder = AuditRecorder(pid: 4242, startTicks: 3_394_277)
            // No recorder (tv audit start): open until tv audit stop.
            _ = try store.audit.start(project: "app", note: "", settings: "{}", now: 10)
            #expect(try store.audit.closeAbandoned { _ in false } == nil)
            _ = try store.audit.stop(now: 20)
            let session = try store.audit.start(project: "app", note: "", settings: "{}", now: 100, recorder: recorder)
            var flow = sampleFlow(start: 150)
            flow.lastActivityTime = 180
            _ = try writeFlows([flow, sampleFlow(start: 160)], to: store)
            _ = try store.audit.mark("late marker", now: 170)
            var asked: [AuditRecorder] = []
            #expect(try store.audit.closeAbandoned { asked.append($0); return true } == nil)
            #expect(asked == [recorder])
            #expect(try store.audit.live()?.id == session.id)
            let closed = try store.audit.closeAbandoned { _ in false }
            #expect(closed == AuditSession(id: session.id, projectID: 1, projectName: "app", note: "", started: 100, ended: 180, settings: "{}"))
            #expect(try store.audit.session(session.id).ended == 180)
            #expect(try store.audit.live() == nil)
            #expect(try store.audit.closeAbandoned { _ in false } == nil)
        }
    }

    @Test("flows that start while a session records belong to it, whatever later updates say, and one that started before it does not however late it is written; markers go to the live session")
    func taggingAndSummary() throws {
        try withStore { store, _ in
            _ = try store.audit.newProject(name: "app", note: "", now: 1)
            let before = try writeFlows([sampleFlow(start: 100, host: "early.test")], to: store)
            let session = try store.audit.start(project: "app", note: "", settings: "{}", now: 200)
            var during = try writeFlows([sampleFlow(start: 300, host: "a.test"), sampleFlow(start: 310, host: "a.test"),
                                         sampleFlow(start: 320, host: nil, server: "10.0.0.9")], to: store)
            // Started before the session, first written during it (the writer's batch came
            // late): not the session's (a trial's flow from before `tv audit start` was in it).
            let late = try writeFlows([sampleFlow(start: 199, host: "before.test")], to: store)
            let marker = try store.audit.mark("opened the login screen", now: 330)
            #expect(marker == AuditMarker(id: 1, sessionID: session.id, time: 330, text: "opened the login screen"))
            _ = try store.audit.stop(now: 400)
            // A flow closing after the stop keeps its session; a new one has none.
            let writer = try store.makeWriter()
            during[0].bytesUp = 1_000
            during[0].bytesDown = 5_000
            during[0].duration = 50
            writer.enqueue(.closed(during[0]))
            writer.flush()
            writer.close()
            _ = try writeFlows([sampleFlow(start: 500, host: "late.test")], to: store)
            #expect(try store.audit.flowIDs(session: session.id) == during.map(\.id))
            #expect(!during.map(\.id).contains(before[0].id) && !during.map(\.id).contains(late[0].id))
            var query = FlowQuery()
            query.auditSession = session.id
            #expect(try store.flows(query).flows.map(\.id) == Array(during.map(\.id).reversed()))
            var expected = AuditSessionSummary()
            expected.flows = 3
            expected.bytesUp = 1_000
            expected.bytesDown = 5_000
            expected.hosts = [AuditCount("a.test", 2), AuditCount("10.0.0.9", 1)]
            // Flows whose program is not known count, under no name (`tv audit show` left them
            // out while `tv top` listed them: a trial).
            expected.programs = [AuditCount(nil, 3)]
            expected.markers = 1
            #expect(try store.audit.summary(session: session.id) == expected)
            #expect(try store.audit.markers(from: 300, to: 331) == [marker])
            #expect(try store.audit.markers(from: 331, to: 1_000) == [])
            #expect(try store.audit.markers(from: 300, to: 331, session: session.id) == [marker])
            #expect(try store.audit.markers(from: 300, to: 331, session: session.id + 1) == [], "another session's marker is not this one's")
            #expect(try store.audit.evidence() == AuditEvidenceIDs(captures: [], flows: Set(during.map(\.id))))

            let deletion = try store.audit.delete(session: session.id)
            #expect(deletion.markers == 1 && deletion.flowsReleased == 3)
            #expect(try store.audit.evidence() == AuditEvidenceIDs(captures: [], flows: []))
            #expect(throws: AuditError.noSession(session.id)) { try store.audit.session(session.id) }
        }
    }

    @Test("the live session cannot be deleted")
    func liveSessionIsNotDeleted() throws {
        try withStore { store, _ in
            _ = try store.audit.newProject(name: "app", note: "", now: 1)
            let live = try store.audit.start(project: "app", note: "", settings: "{}", now: 2)
            #expect(throws: AuditError.deleteLive(live.id)) { try store.audit.delete(session: live.id) }
        }
    }
}
