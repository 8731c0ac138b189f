import Foundation
import Testing
@testable import FlowStore
import FlowTerms

/// What travels to the shared store besides flow rows (issue 25): request rows (without their
/// query), names, pinned hosts and audit rows, each tagged with the instance; the `--host` index;
/// the flows a killed instance left open. Against a real PostgreSQL server (`PostgresServer`).
@Suite(.serialized) struct SharedStoreRowsTests {
    /// A data folder's store, a fresh shared database and the shared writer mirroring the local
    /// one with the folder's file (`localPath`), as `tv run --store` wires them.
    final class World {
        let folder = makeTemporaryFolder()
        let store: FlowStore
        let url: String
        let database: String
        let target: SharedStoreTarget
        let instance = InstanceIdentity(id: UUID().uuidString.lowercased(), machine: "rows-machine")
        var shared: FlowWriter?

        init() throws {
            store = try FlowStore(path: folder + "/tunnelvision.sqlite3")
            url = try PostgresServer.shared().makeDatabase()
            database = String(url.split(separator: "/").last!.split(separator: "?").first!)
            target = try SharedStoreTarget(url)
        }

        /// Starts the shared writer (its first connection closes what this instance left open).
        func startShared() throws -> FlowWriter {
            let writer = try FlowWriter(shared: target, instance: instance, localPath: store.path)
            shared = writer
            return writer
        }

        func write(_ body: (FlowWriter) -> Void) throws {
            let writer = try store.makeWriter(mirror: shared)
            body(writer)
            writer.flush()
            writer.close()
            shared?.flush()
        }

        func psql(_ sql: String) throws -> String { try PostgresServer.shared().psql(sql, database: database) }

        /// `sql`'s answer once it is `expected`, or the last one after 5 s (the local tables
        /// travel at most once a second, `LocalTableSync.interval`).
        func psql(_ sql: String, awaiting expected: String) throws -> String {
            var answer = try psql(sql)
            for _ in 0..<100 where answer != expected {
                usleep(50_000)
                answer = try psql(sql)
            }
            return answer
        }

        deinit {
            shared?.close()
            store.close()
            removeFolder(folder)
        }
    }

    func request(flow: Int64, _ sequence: Int, path: String, at time: Int64) -> ExchangeRecord {
        ExchangeRecord(flowID: flow, sequence: sequence, httpVersion: "HTTP/1.1", method: "GET", scheme: "https",
                       authority: "example.com", path: path, requestTime: time)
    }

    @Test func requestRowsTravelWithoutTheirQueryTaggedAndPagedNewestFirst() throws {
        let w = try World()
        _ = try w.startShared()
        var flow = sampleFlow(start: 1_000)
        try w.write { writer in
            flow = writer.open(flow)
            for n in 1...3 { writer.enqueue(.exchange(request(flow: flow.id, n, path: "/item?q=secret\(n)", at: 1_000 + Int64(n)))) }
            var done = request(flow: flow.id, 3, path: "/item?q=secret3", at: 1_003)
            done.status = 200
            done.state = .complete
            done.endTime = 1_010
            writer.enqueue(.exchange(done))
        }
        let history = try SharedFlowHistory(w.target)
        defer { history.close() }
        let first = try history.exchanges(ExchangeQuery(limit: 2))
        #expect(first.exchanges.map(\.sequence) == [3, 2])
        #expect(first.exchanges.allSatisfy { $0.path == "/item" && $0.queryRemoved && $0.flowID == flow.id })
        #expect(first.exchanges.first?.state == .complete && first.exchanges.first?.status == 200 && first.exchanges.first?.endTime == 1_010)
        #expect(Set(first.instances.values) == [w.instance] && first.instances.count == 2)
        let second = try history.exchanges(ExchangeQuery(limit: 2, after: first.nextCursor))
        #expect(second.exchanges.map(\.sequence) == [1])
        #expect(second.nextCursor == nil)
        let one = try #require(try history.exchange(id: second.exchanges[0].id))
        #expect(one.0 == second.exchanges[0] && one.1 == w.instance)
        #expect(try history.exchange(id: 999) == nil)
        var shared = try #require(try history.flow(id: flow.id))
        #expect(try history.exchanges(of: shared).exchanges.map(\.sequence) == [1, 2, 3])
        shared.instance = InstanceIdentity(id: "another", machine: "x")
        #expect(try history.exchanges(of: shared).exchanges.isEmpty)
        // The query stays in this data folder only.
        #expect(try w.store.exchanges(ExchangeQuery()).exchanges.map(\.path) == ["/item?q=secret3", "/item?q=secret2", "/item?q=secret1"])
        #expect(try w.psql("SELECT count(*) FROM exchanges WHERE path LIKE '%secret%'") == "0")
        // Narrowed to this instance, the same rows; to a name no instance has, a refusal.
        let narrowed = try SharedFlowHistory(w.target, instance: w.instance.id)
        defer { narrowed.close() }
        #expect(try narrowed.exchanges(ExchangeQuery()).exchanges.map(\.path) == ["/item", "/item", "/item"])
        #expect(throws: FlowStoreError.noSuchInstance(name: "someone-else", server: w.target.server)) { _ = try SharedFlowHistory(w.target, instance: "someone-else") }
        // A label's id prefix in upper case names the same instance (ids are lowercase UUIDs).
        let upper = try SharedFlowHistory(w.target, instance: "any/" + w.instance.id.prefix(8).uppercased())
        defer { upper.close() }
        #expect(upper.narrowedIDs == [w.instance.id])
    }

    @Test func withoutQueryCutsAtTheFirstQuestionMark() {
        let plain = request(flow: 1, 1, path: "/a/b", at: 1)
        #expect(SharedExchangeRows.withoutQuery(plain) == plain)
        let cut = SharedExchangeRows.withoutQuery(request(flow: 1, 1, path: "/search?q=a?b", at: 1))
        #expect(cut.path == "/search" && cut.queryRemoved)
        #expect(SharedExchangeRows.withoutQuery(request(flow: 1, 1, path: "?", at: 1)).path == "")
        // A fragment (which came whole inside TLS: an audit trial) goes as a query does, and a
        // malformed target's authority is cut too.
        let fragment = SharedExchangeRows.withoutQuery(request(flow: 1, 1, path: "/tlsfrag#TLSFRAG-SECRET", at: 1))
        #expect(fragment.path == "/tlsfrag" && fragment.queryRemoved)
        var odd = request(flow: 1, 1, path: "*", at: 1)
        odd.authority = "*?STAR-SECRET"
        let oddCut = SharedExchangeRows.withoutQuery(odd)
        #expect(oddCut.authority == "*" && oddCut.path == "*" && oddCut.queryRemoved)
    }

    @Test func namesPinnedHostsAndAuditRowsTravelTaggedAndADeletionFollows() throws {
        let w = try World()
        _ = try w.startShared()
        try w.store.hostNames.remember(name: "API.Example.com.", address: "192.0.2.1", at: 100, ttl: 60)
        try w.store.hostNames.remember(name: "cdn.example.com", address: "192.0.2.1", at: 150)
        try w.store.pinnedHosts.remember("pinned.example", reason: "the client refused tv's certificate", at: 200)
        // What tv writes now: per client, host and port (none of these travelled: a trial).
        try w.store.clientPins.remember(clientAddress: "127.0.0.1", clientHello: "0123456789ab", host: "B.Test", port: 8443,
                                        kind: .lacksRoot, reason: "the client lacks tv's root", at: 210)
        _ = try w.store.audit.newProject(name: "lab", note: "phones", now: 300)
        let session = try w.store.audit.start(project: "lab", note: "run 1", settings: "{}", now: 400)
        let marker = try w.store.audit.mark("login tapped", now: 500)
        try w.write { writer in _ = writer.open(sampleFlow(start: 450)) }
        let history = try SharedFlowHistory(w.target)
        defer { history.close() }
        #expect(try w.psql("SELECT instance_id, host, count FROM pinned_hosts", awaiting: "\(w.instance.id)|pinned.example|1") == "\(w.instance.id)|pinned.example|1")
        #expect(try w.psql("SELECT instance_id, machine, client_address, client_hello, host, port, kind, first_seen, last_seen, reason, count FROM client_pins")
                == "\(w.instance.id)|rows-machine|127.0.0.1|0123456789ab|b.test|8443|lacks_root|210|210|the client lacks tv's root|1")
        #expect(try history.names(forAddress: "192.0.2.1") == ["cdn.example.com", "api.example.com"])
        #expect(try w.psql("SELECT instance_id, machine, ttl FROM host_names WHERE name = 'api.example.com'") == "\(w.instance.id)|rows-machine|60")
        #expect(try w.psql("SELECT name, note, created FROM audit_projects") == "lab|phones|300")
        #expect(try w.psql("SELECT id, note, started, ended IS NULL FROM audit_sessions") == "\(session.id)|run 1|400|t")
        #expect(try history.markers(from: 0, to: 1_000) == [marker])
        #expect(try history.markers(from: 501, to: 1_000) == [])
        // Stopped and deleted locally: the shared rows follow at the writer's next copy (its close).
        _ = try w.store.audit.stop(now: 600)
        _ = try w.store.audit.delete(session: session.id)
        #expect(try w.store.pinnedHosts.forget("pinned.example"))
        #expect(try w.store.clientPins.forget(host: "b.test") == 1)
        w.shared?.close()
        #expect(try w.psql("SELECT count(*) FROM client_pins") == "0")
        #expect(try w.psql("SELECT count(*) FROM audit_sessions") == "0")
        #expect(try w.psql("SELECT count(*) FROM audit_markers") == "0")
        #expect(try w.psql("SELECT count(*) FROM pinned_hosts") == "0")
        #expect(try w.psql("SELECT count(*) FROM audit_projects") == "1")
        #expect(try w.psql("SELECT count(*) FROM host_names") == "2")
    }

    /// Flows written straight into the table (not by a tv writer) still reach the names (the
    /// triggers), and the names' lookup can be answered from their trigram index.
    @Test func hostSearchReadsTheNamesTrigramIndex() throws {
        let w = try World()
        let history = try SharedFlowHistory(w.target)
        defer { history.close() }
        #expect(try history.hasHostIndex())
        try w.psql("""
            INSERT INTO flows (instance_id, machine, id, start_time, last_activity_time, client_address, client_port,
                               server_address, server_port, transport, host, host_origin, status)
            SELECT 'i', 'm', n, n, n, '10.0.' || (n % 250) || '.1', 40000, '192.0.2.' || (n % 250), 443, 'tcp',
                   'h' || n || '.example.net', 'sni', 'encrypted' FROM generate_series(1, 20000) n;
            ANALYZE flows;
            """)
        #expect(try w.psql("SELECT count(*) FROM flow_names") == "20500")
        // The question is whether the lookup can be answered from the index, not which plan
        // wins on a small table (20,500 names are cheap to read whole); so the other two ways are
        // taken off the table for this EXPLAIN.
        try history.connection.withLock { try $0.execute("SET enable_seqscan = off; SET enable_indexscan = off") }
        let plan = try history.plan(SharedHostSearch.namesSQL, SharedHostSearch.namesBindings("h12345.example"))
        #expect(plan.contains("Bitmap Index Scan on \(PostgresSchema.hostIndexName)"), "\(plan)")
        #expect(try history.flows(FlowQuery(host: "H12345.EXAMPLE")).flows.map(\.id) == [12345])
    }

    /// Opening the store while a writer's batch is open (its names inserted, not committed)
    /// neither waits for it nor makes it wait: the migration check takes no lock on
    /// `flow_names` once the index is there (`CREATE INDEX IF NOT EXISTS` took a SHARE lock and
    /// waited for the batch: here its `statement_timeout` cancels it, which the DO block's
    /// handler does not catch, and the open fails).
    @Test func openingTheStoreDoesNotWaitForAnOpenBatch() throws {
        let url = try PostgresServer.shared().makeDatabase()
        let target = try SharedStoreTarget(url)
        let first = try SharedFlowHistory(target)
        first.close()
        let batch = try PGConnection(target)
        defer { batch.close() }
        try batch.execute("BEGIN; INSERT INTO flow_names (name, column_bit) VALUES ('open.example', 1)")
        let impatient = try SharedStoreTarget(url + "&options=-c%20statement_timeout%3D5000")
        let opened = try SharedFlowHistory(impatient)
        #expect(try opened.hasHostIndex())
        opened.close()
        try batch.execute("COMMIT")
    }

    /// A role that may make tables but not extensions: the store works, without the index.
    @Test func aRoleThatMayNotCreateTheExtensionReadsWithoutTheIndex() throws {
        let server = try PostgresServer.shared()
        let url = try server.makeDatabase()
        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        let role = "plain" + database.suffix(8)
        try server.psql("CREATE ROLE \(role) LOGIN; GRANT CREATE ON SCHEMA public TO \(role)", database: database)
        let history = try SharedFlowHistory(try SharedStoreTarget("postgresql://\(role)@127.0.0.1:\(server.port)/\(database)?sslmode=disable"))
        defer { history.close() }
        #expect(try !history.hasHostIndex())
        #expect(try server.psql("SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'", database: database) == "0")
        #expect(try history.flows(FlowQuery(host: "example")).flows.isEmpty)
        #expect(try history.explain(FlowQuery(host: "example")).contains(PostgresSchema.hostIndexName) == false)
    }

    /// kill -9 leaves the shared rows open; the instance's next start closes them as its local
    /// store does: a flow closed locally takes its closed row, one still open under a dead writer
    /// becomes interrupted at its last activity (its open request incomplete), one open under a
    /// live writer stays open.
    @Test func flowsLeftOpenByAKilledInstanceAreClosedAtItsNextStart() throws {
        let w = try World()
        let first = try w.startShared()
        let live = try w.store.makeWriter(mirror: first)
        defer { live.close() }
        let endedLocally = live.open(sampleFlow(start: 100)), dead = live.open(sampleFlow(start: 200)), held = live.open(sampleFlow(start: 300))
        live.enqueue(.exchange(request(flow: dead.id, 1, path: "/slow", at: 210)))
        live.flush()
        first.flush()
        first.close()
        #expect(try w.psql("SELECT count(*) FROM flows WHERE duration IS NULL") == "3")
        // Locally, one flow ends (the shared writer is gone and does not hear it) and one is
        // moved to a writer that died (its row never ended, its lock file gone).
        var closed = endedLocally
        closed.status = .inspected
        closed.duration = 40
        live.enqueue(.closed(closed))
        live.flush()
        let local = try SQLiteDatabase(path: w.store.path)
        try local.execute("UPDATE flows SET last_activity_time = 260 WHERE id = \(dead.id)")
        try local.execute("INSERT INTO flow_writers (pid, started) VALUES (999999, 1)")
        try local.execute("UPDATE flows SET writer = (SELECT max(id) FROM flow_writers) WHERE id = \(dead.id)")
        local.close()
        _ = try w.startShared()
        let history = try SharedFlowHistory(w.target)
        defer { history.close() }
        let ended = try #require(try history.flow(id: endedLocally.id))
        #expect(ended.status == .inspected && ended.duration == 40)
        let interrupted = try #require(try history.flow(id: dead.id))
        #expect(interrupted.status == .interrupted && interrupted.duration == 60, "\(interrupted)")
        let requests = try history.exchanges(of: interrupted).exchanges
        #expect(requests.map(\.state) == [.incomplete] && requests.first?.endTime == 260)
        #expect(try history.flow(id: held.id)?.duration == nil)
        #expect(try w.psql("SELECT id FROM flows WHERE duration IS NULL") == String(held.id))
    }

    /// A flow under an id the store holds for another flow of the instance (a database and its
    /// store mark put back from an older copy; `SharedIDClash`): the store's row and request rows
    /// stay as they were, and the flow, its request rows and its later events stay out; the
    /// batch's other flows are written. Before, the upsert replaced the older flow's row.
    @Test(arguments: SharedInsertion.allCases)
    func aFlowUnderAnIDTheStoreHoldsForAnotherStaysOut(_ insertion: SharedInsertion) throws {
        let w = try World()
        let floor = SharedIDFloor()
        let first = try PostgresBatchWriter(target: w.target, instance: w.instance, insertion: insertion, idFloor: floor)
        var old = sampleFlow(start: 100)
        old.id = 7
        old.duration = 5
        try first.write([.closed(old), .exchange(request(flow: 7, 1, path: "/old", at: 101))])
        first.close()
        #expect(floor.clashingIDs.isEmpty)
        let second = try PostgresBatchWriter(target: w.target, instance: w.instance, insertion: insertion, idFloor: floor)
        var clash = sampleFlow(start: 500), fine = sampleFlow(start: 600)
        clash.id = 7
        fine.id = 8
        try second.write([.opened(clash), .exchange(request(flow: 7, 1, path: "/new", at: 501)),
                          .exchange(request(flow: 7, 2, path: "/new2", at: 502)), .opened(fine),
                          .exchange(request(flow: 8, 1, path: "/fine", at: 601))])
        #expect(floor.clashingIDs == [7])
        clash.duration = 9
        try second.write([.closed(clash), .exchange(request(flow: 7, 3, path: "/later", at: 505))])
        second.close()
        #expect(floor.clashCount == 1)
        #expect(try w.psql("SELECT id || ':' || start_time || ':' || coalesce(duration::text, 'open') FROM flows ORDER BY id") == "7:100:5\n8:600:open")
        #expect(try w.psql("SELECT flow_id || ':' || seq || ':' || path FROM exchanges ORDER BY flow_id, seq") == "7:1:/old\n8:1:/fine")
    }

    /// A flow the store holds open whose id this folder's database has for a closed flow with
    /// another start (a restored copy) is another flow: the next start leaves it as it is.
    @Test func anOpenSharedFlowIsNotClosedFromAnotherLocalFlowUnderItsID() throws {
        let w = try World()
        let local = try w.store.makeWriter()
        var mine = local.open(sampleFlow(start: 500))
        local.enqueue(.exchange(request(flow: mine.id, 1, path: "/mine", at: 501)))
        mine.duration = 3
        local.enqueue(.closed(mine))
        local.flush()
        local.close()
        let other = try PostgresBatchWriter(target: w.target, instance: w.instance)
        var theirs = sampleFlow(start: 100)
        theirs.id = mine.id
        try other.write([.opened(theirs)])
        other.close()
        _ = try w.startShared()
        #expect(try w.psql("SELECT start_time || ':' || coalesce(duration::text, 'open') FROM flows") == "100:open")
        #expect(try w.psql("SELECT count(*) FROM exchanges") == "0")
    }

    @Test func aClashIsAnIDTheStoreHoldsWithAnotherStart() {
        func flow(_ id: Int64, _ start: Int64) -> FlowRecord { var f = sampleFlow(start: start); f.id = id; return f }
        #expect(SharedIDClash.clashing([flow(1, 10), flow(2, 20), flow(3, 30)], stored: [1: 10, 2: 21]) == [2])
        #expect(SharedIDClash.clashing([flow(4, 40)], stored: [:]).isEmpty)
        #expect(PostgresDialect.conflictUpdate(["instance_id", "id", "start_time", "audit_session_id"])
                == " ON CONFLICT (instance_id, id) DO UPDATE SET start_time = EXCLUDED.start_time WHERE flows.start_time = EXCLUDED.start_time")
    }

    @Test func interruptedAndIncompleteEndAtTheLastActivity() {
        var flow = sampleFlow(start: 1_000)
        flow.lastActivityTime = 1_250
        let closed = LeftOpenFlows.interrupted(flow)
        #expect(closed.status == .interrupted && closed.duration == 250)
        flow.lastActivityTime = 900
        #expect(LeftOpenFlows.interrupted(flow).duration == 0)
        let open = request(flow: 1, 1, path: "/", at: 1_300)
        #expect(LeftOpenFlows.incomplete(open, flow: closed).endTime == 1_300)
        #expect(LeftOpenFlows.incomplete(request(flow: 1, 1, path: "/", at: 1_100), flow: closed).endTime == 1_250)
        #expect(LeftOpenFlows.incomplete(open, flow: closed).state == .incomplete)
    }
}
