import Foundation
import Testing
@testable import FlowStore
import FlowTerms

/// Issue 25's shared writer after i22: batches sent by COPY (and the same rows by multi-row
/// INSERTs), the audit session a shared flow belongs to, the local tables copied on the idle
/// timer, and a flow the local writer never wrote before a kill. Against a real PostgreSQL
/// server (`PostgresServer`).
@Suite(.serialized) struct SharedStoreGapsTests {
    typealias World = SharedStoreRowsTests.World

    /// Text that COPY's format must escape, and a NUL (which PostgreSQL text cannot hold).
    static let oddText = "tab\there\nnew line\r\\back slash é→ \u{0}end"

    func events() -> [FlowEvent] {
        var a = sampleFlow(start: 1_000, host: SharedStoreGapsTests.oddText)
        a.id = 1
        a.error = "said \"no\"\t\\N"
        a.otherHosts = ["x.example", "y\texample"]
        a.duration = 30
        var b = sampleFlow(start: 2_000, host: nil, status: .failed)
        b.id = 2
        b.failureReason = "handshake"
        var c = sampleFlow(start: 3_000)
        c.id = 3
        var request = ExchangeRecord(flowID: 1, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "https",
                                     authority: "a\tb", path: "/p\\q\nr?secret=1", requestTime: 1_010)
        request.contentType = "text/plain\r"
        return [.opened(a), .opened(b), .closed(a), .opened(c), .exchange(request),
                .program(flowID: 1, .known(ProgramIdentity(pid: 42, command: "cu\trl", executable: "/usr/bin/curl", uid: 0, user: "root"))),
                .program(flowID: 2, .notKnown(.otherMachine))]
    }

    @Test func copyAndMultiRowInsertsWriteTheSameRowsAndTextRoundTrips() throws {
        let url = try PostgresServer.shared().makeDatabase()
        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        let target = try SharedStoreTarget(url)
        let copy = try FlowWriter(shared: target, instance: InstanceIdentity(id: "by-copy", machine: "m"), insertion: .copy)
        let rows = try FlowWriter(shared: target, instance: InstanceIdentity(id: "by-rows", machine: "m"), insertion: .rows)
        for writer in [copy, rows] {
            for event in events() { #expect(writer.enqueue(event)) }
            writer.flush()
            // A program whose flow was written in an earlier batch.
            #expect(writer.enqueue(.program(flowID: 3, .known(ProgramIdentity(pid: 7, command: "git", executable: nil, uid: 1_000, user: nil)))))
            writer.close()
        }
        let columns = (FlowRecordColumns.names + FlowProgramColumns.names + ["audit_session_id"]).joined(separator: ", ")
        func table(_ instance: String) throws -> String {
            try PostgresServer.shared().psql("SELECT \(columns) FROM flows WHERE instance_id = '\(instance)' ORDER BY id", database: database)
        }
        let byCopy = try table("by-copy")
        #expect(byCopy == (try table("by-rows")))
        #expect(byCopy.split(separator: "\n").count >= 3)
        let exchangeColumns = SharedExchangeRows.upsertColumns.dropFirst(2).joined(separator: ", ")
        func requests(_ instance: String) throws -> String {
            try PostgresServer.shared().psql("SELECT \(exchangeColumns) FROM exchanges WHERE instance_id = '\(instance)'", database: database)
        }
        #expect(try requests("by-copy") == (try requests("by-rows")))

        let history = try SharedFlowHistory(target, instance: "by-copy")
        defer { history.close() }
        let page = try history.flows(FlowQuery()).flows
        #expect(page.map(\.id) == [3, 2, 1])
        let a = try #require(page.last)
        #expect(a.host == SharedStoreGapsTests.oddText.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}"))
        #expect(a.error == "said \"no\"\t\\N" && a.otherHosts == ["x.example", "y\texample"] && a.duration == 30)
        #expect(a.program == .known(ProgramIdentity(pid: 42, command: "cu\trl", executable: "/usr/bin/curl", uid: 0, user: "root")))
        #expect(page[1].program == .notKnown(.otherMachine) && page[1].host == nil && page[1].failureReason == "handshake")
        #expect(page[0].program == .known(ProgramIdentity(pid: 7, command: "git", executable: nil, uid: 1_000, user: nil)))
        let request = try #require(try history.exchanges(of: a).exchanges.first)
        #expect(request.authority == "a\tb" && request.path == "/p\\q\nr" && request.queryRemoved && request.contentType == "text/plain\r")
    }

    /// As SQLite's upsert: a flow first written while an audit session records belongs to it,
    /// and later updates (after the session stopped) do not move it.
    @Test func aSharedFlowBelongsToTheAuditSessionRecordingWhenItWasFirstWritten() throws {
        let w = try World()
        _ = try w.startShared()
        _ = try w.store.audit.newProject(name: "lab", note: "", now: 100)
        let session = try w.store.audit.start(project: "lab", note: "", settings: "{}", now: 200)
        var during = sampleFlow(start: 300)
        var early = sampleFlow(start: 150)
        try w.write { writer in
            during = writer.open(during)
            early = writer.open(early)   // began before the session, written during it: not its
        }
        _ = try w.store.audit.stop(now: 400)
        var after = sampleFlow(start: 500)
        try w.write { writer in
            during.duration = 250
            writer.enqueue(.closed(during))
            after = writer.open(after)
        }
        #expect(try w.psql("SELECT id, audit_session_id, duration FROM flows ORDER BY id") == "\(during.id)|\(session.id)|250\n\(early.id)||\n\(after.id)||")
        let local = try SQLiteDatabase(readingAt: w.store.path)
        defer { local.close() }
        let statement = try local.prepare("SELECT id, audit_session_id FROM flows ORDER BY id")
        var localRows: [[SQLiteValue]] = []
        try statement.forEachRow { localRows.append([$0.value(at: 0), $0.value(at: 1)]) }
        #expect(localRows == [[.integer(during.id), .integer(session.id)], [.integer(early.id), .null], [.integer(after.id), .null]])
    }

    /// Pinned hosts, names and audit rows changed while no flow is written travel on the shared
    /// writer's idle timer (at most once a second), not only with flows or at stop.
    @Test func localTablesTravelOnTheIdleTimerWithoutFlows() throws {
        let w = try World()
        let shared = try w.startShared()
        try w.write { writer in _ = writer.open(sampleFlow(start: 100)) }
        #expect(try w.psql("SELECT count(*) FROM pinned_hosts") == "0")
        try w.store.pinnedHosts.remember("quiet.example", reason: "the client refused tv's certificate", at: 200)
        _ = try w.store.audit.newProject(name: "idle", note: "", now: 300)
        try w.store.hostNames.remember(name: "late.example", address: "192.0.2.9", at: 400)
        var seen = ""
        for _ in 0..<100 {
            seen = try w.psql("SELECT (SELECT count(*) FROM pinned_hosts) || ' ' || (SELECT count(*) FROM audit_projects) || ' ' || (SELECT count(*) FROM host_names)")
            if seen == "1 1 1" { break }
            usleep(50_000)
        }
        #expect(seen == "1 1 1")
        #expect(shared.counters.accepted == 1)
        #expect(try w.psql("SELECT host, reason FROM pinned_hosts") == "quiet.example|the client refused tv's certificate")
    }

    /// The server drops the writer's connection while no flow comes (`pg_terminate_backend`):
    /// the idle timer's copy fails, and a later tick reconnects (with backoff) and copies what
    /// waited, without a batch; the failure and the recovery are counted and said.
    @Test func theIdleTimerReconnectsAfterTheServerDropsTheConnection() throws {
        let w = try World()
        let shared = try w.startShared()
        try w.write { writer in _ = writer.open(sampleFlow(start: 100)) }
        try w.store.pinnedHosts.remember("before.example", reason: "pinned", at: 200)
        #expect(try w.psql("SELECT count(*) FROM pinned_hosts", awaiting: "1") == "1")
        #expect(try w.psql("""
            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
            """) == "1")
        try w.store.pinnedHosts.remember("after.example", reason: "pinned", at: 300)
        try w.store.hostNames.remember(name: "later.example", address: "192.0.2.9", at: 400)
        #expect(try w.psql("SELECT string_agg(host, ' ' ORDER BY host) || ' ' || (SELECT count(*) FROM host_names) FROM pinned_hosts",
                           awaiting: "after.example before.example 1") == "after.example before.example 1")
        #expect(shared.counters.failedWrites >= 1)
        for _ in 0..<20 where shared.counters.failing { usleep(50_000) }
        #expect(!shared.counters.failing)
        #expect(shared.counters.accepted == 1)
    }

    /// kill -9 between the shared writer's commit and the local writer's: the shared flow has no
    /// local row. The next start closes it from its shared row (interrupted at its last activity,
    /// its open request incomplete) when no local writer lives; a live one may not have written
    /// it yet, so it is left open then.
    @Test func aFlowNeverWrittenLocallyIsClosedAtTheNextStartWhenNoLocalWriterLives() throws {
        let w = try World()
        let first = try w.startShared()
        var flow = sampleFlow(start: 200)
        flow.id = 9
        flow.lastActivityTime = 260
        #expect(first.enqueue(.opened(flow)))
        #expect(first.enqueue(.exchange(ExchangeRecord(flowID: 9, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "https",
                                                       authority: "example.com", path: "/slow", requestTime: 210))))
        first.flush()
        first.close()
        #expect(try w.psql("SELECT id, duration IS NULL FROM flows") == "9|t")
        #expect(try w.psql("SELECT state FROM exchanges") == "open")

        let live = try w.store.makeWriter()
        _ = try w.startShared()
        #expect(try w.psql("SELECT id, duration IS NULL FROM flows") == "9|t")
        w.shared?.close()
        live.close()

        _ = try w.startShared()
        #expect(try w.psql("SELECT id, status, duration FROM flows") == "9|interrupted|60")
        #expect(try w.psql("SELECT state, end_time FROM exchanges") == "incomplete|260")
    }
}
