import Foundation
import Synchronization
import Testing
@testable import FlowStore
import FlowTerms

/// The flow history's contract, run against both backends: this data folder's SQLite file and
/// the shared store on a real PostgreSQL server (`PostgresServer`, a scratch cluster). Flows are
/// written the way a session writes them: the local writer assigns ids and the shared writer
/// mirrors its events (`FlowWriter(mirror:)`).
@Suite(.serialized) struct SharedStoreContractTests {
    /// `postgresqlRows`: the shared writer sending multi-row INSERTs instead of COPY
    /// (`SharedInsertion.rows`, which `tv-bench shared` compares).
    enum Backend: String, CaseIterable, Sendable { case sqlite, postgresql, postgresqlRows }

    /// A history of `backend` in a fresh folder (and a fresh database), the way to write to it,
    /// and the instance the shared rows carry.
    final class Fixture {
        let folder = makeTemporaryFolder()
        let store: FlowStore
        let shared: FlowWriter?
        let history: any FlowHistory
        let instance = InstanceIdentity(id: UUID().uuidString.lowercased(), machine: "test-machine")

        init(_ backend: Backend) throws {
            store = try FlowStore(path: folder + "/tunnelvision.sqlite3")
            switch backend {
            case .sqlite:
                shared = nil
                history = store
            case .postgresql, .postgresqlRows:
                let url = try PostgresServer.shared().makeDatabase()
                let target = try SharedStoreTarget(url)
                shared = try FlowWriter(shared: target, instance: instance, insertion: backend == .postgresql ? .copy : .rows)
                history = try SharedFlowHistory(target)
            }
        }

        /// Writes `events` as a session does (flushing both writers); `open` gives ids.
        func write(_ body: (FlowWriter) -> Void) throws {
            let writer = try store.makeWriter(mirror: shared)
            body(writer)
            writer.flush()
            writer.close()
            shared?.flush()
        }

        func writeFlows(_ flows: [FlowRecord]) throws -> [FlowRecord] {
            var opened: [FlowRecord] = []
            try write { writer in opened = flows.map { writer.open($0) } }
            return opened
        }

        deinit {
            shared?.close()
            history.close()
            store.close()
            removeFolder(folder)
        }
    }

    @Test(arguments: Backend.allCases) func keysetPagesVisitEveryRowOnceWhenTimesTie(_ backend: Backend) throws {
        let f = try Fixture(backend)
        let written = try f.writeFlows((0..<250).map { _ in sampleFlow(start: 1_000) })
        #expect(written.map(\.id) == Array(1...250))
        var seen: [Int64] = []
        var pages = 0
        var query = FlowQuery(limit: 7)
        while true {
            let page = try f.history.flows(query)
            pages += 1
            seen += page.flows.map(\.id)
            guard let next = page.nextCursor else { break }
            #expect(page.flows.count == 7)
            query.after = next
        }
        #expect(pages == 36)
        #expect(seen == Array((1...250).reversed()))
    }

    @Test(arguments: Backend.allCases) func pagesAreNewestFirstByTimeThenId(_ backend: Backend) throws {
        let f = try Fixture(backend)
        _ = try f.writeFlows([sampleFlow(start: 20), sampleFlow(start: 30), sampleFlow(start: 10), sampleFlow(start: 30), sampleFlow(start: 20)])
        let first = try f.history.flows(FlowQuery(limit: 2))
        #expect(first.flows.map(\.id) == [4, 2])
        let second = try f.history.flows(FlowQuery(limit: 2, after: first.nextCursor))
        #expect(second.flows.map(\.id) == [5, 1])
        let third = try f.history.flows(FlowQuery(limit: 2, after: second.nextCursor))
        #expect(third.flows.map(\.id) == [3])
        #expect(third.nextCursor == nil)
        #expect(try f.history.flows(FlowQuery(limit: 5)).nextCursor == nil)
        #expect(throws: FlowStoreError.badCursor("nope")) { try f.history.flows(FlowQuery(after: "nope")) }
    }

    @Test(arguments: Backend.allCases) func filtersByHostSubstringStatusTimeAndProgram(_ backend: Backend) throws {
        let f = try Fixture(backend)
        try f.write { writer in
            let flows = [
                sampleFlow(start: 1, host: "api.Example.com", server: "192.0.2.10", client: "10.0.0.1", status: .inspected),
                sampleFlow(start: 2, host: nil, server: "198.51.100.7", client: "10.0.0.2", status: .keptPrivate),
                sampleFlow(start: 3, host: "cdn.test", server: "192.0.2.11", client: "10.0.0.99", status: .inspected),
                sampleFlow(start: 4, host: "a_b.test", server: "203.0.113.5", client: "10.0.0.3", status: .failed),
                sampleFlow(start: 5, host: "axb.test", server: "203.0.113.6", client: "10.0.0.3", status: .notEncrypted),
            ].map { writer.open($0) }
            writer.enqueue(.program(flowID: flows[2].id, .known(ProgramIdentity(pid: 42, command: "curl", executable: "/usr/bin/curl", uid: 0, user: "root"))))
        }
        func ids(_ query: FlowQuery) throws -> [Int64] { try f.history.flows(query).flows.map(\.id) }
        #expect(try ids(FlowQuery(host: "example")) == [1])
        #expect(try ids(FlowQuery(host: "EXAMPLE.COM")) == [1])
        #expect(try ids(FlowQuery(host: "198.51.100")) == [2])
        #expect(try ids(FlowQuery(host: "192.0.2.1")) == [3, 1])
        #expect(try ids(FlowQuery(host: "a_b")) == [4])
        #expect(try ids(FlowQuery(host: ".test")) == [5, 4, 3])
        #expect(try ids(FlowQuery(host: "nothing")) == [])
        #expect(try ids(FlowQuery(host: "")) == [5, 4, 3, 2, 1])
        #expect(try f.history.count(FlowQuery(host: ".test")) == 3)
        #expect(try ids(FlowQuery(status: .inspected)) == [3, 1])
        #expect(try ids(FlowQuery(since: 3)) == [5, 4, 3])
        #expect(try ids(FlowQuery(from: 2, to: 4)) == [3, 2])
        #expect(try ids(FlowQuery(program: "curl")) == [3])
        #expect(try f.history.flow(id: 3)?.program == .known(ProgramIdentity(pid: 42, command: "curl", executable: "/usr/bin/curl", uid: 0, user: "root")))
        #expect(try f.history.count(FlowQuery()) == 5)
    }

    /// What the check of the server's certificate found (migration 28, and PostgreSQL's 9): not
    /// checked, verified, and failed with why, each read back as written on both backends.
    @Test(arguments: Backend.allCases) func certificateVerdictIsWrittenAndReadBack(_ backend: Backend) throws {
        let f = try Fixture(backend)
        let verdicts: [(Bool?, String?)] = [(nil, nil), (true, nil), (false, "certificate has expired: it was valid until 2024-02-01 00:00:00 UTC")]
        let flows = verdicts.enumerated().map { index, verdict in
            var flow = sampleFlow(start: Int64(index + 1))
            flow.status = .inspected
            (flow.certificateVerified, flow.certificateProblem) = verdict
            return flow
        }
        let written = try f.writeFlows(flows)
        for (flow, verdict) in zip(written, verdicts) {
            let read = try #require(try f.history.flow(id: flow.id))
            #expect(read.certificateVerified == verdict.0 && read.certificateProblem == verdict.1, "\(verdict)")
        }
    }

    /// The writer binds every `HostOrigin`; PostgreSQL checks each row (SQLite's writer skips
    /// its CHECKs), so a value its list lacks would lose the whole batch there.
    @Test(arguments: Backend.allCases) func everyHostOriginIsWrittenAndReadBack(_ backend: Backend) throws {
        let f = try Fixture(backend)
        let flows = HostOrigin.allCases.enumerated().map { index, origin in
            var flow = sampleFlow(start: Int64(index + 1), host: origin == .none ? nil : "\(origin.rawValue).test")
            flow.hostOrigin = origin
            return flow
        }
        let written = try f.writeFlows(flows)
        for (flow, origin) in zip(written, HostOrigin.allCases) {
            #expect(try f.history.flow(id: flow.id)?.hostOrigin == origin, "\(origin)")
        }
    }

    /// Every `ExchangeState` reaches both stores: PostgreSQL checks each row, so a state its
    /// list lacks (`cancelled` before migration 12) would lose the whole batch there.
    @Test(arguments: Backend.allCases) func everyExchangeStateIsWrittenAndReadBack(_ backend: Backend) throws {
        let f = try Fixture(backend)
        var flow = sampleFlow(start: 1)
        try f.write { writer in
            flow = writer.open(flow)
            for (index, state) in ExchangeState.allCases.enumerated() {
                writer.enqueue(.exchange(ExchangeRecord(flowID: flow.id, sequence: index + 1, streamID: Int64(2 * index + 1), httpVersion: "HTTP/2",
                                                        method: "GET", scheme: "https", authority: "a.test", path: "/\(state.rawValue)",
                                                        requestTime: 10 + Int64(index), endTime: state == .open ? nil : 20, state: state)))
            }
        }
        let query = ExchangeQuery(limit: 100)
        let page = try (f.history as? SharedFlowHistory)?.exchanges(query) ?? f.store.exchanges(query)
        let read = page.exchanges.sorted { $0.sequence < $1.sequence }
        #expect(read.map(\.state) == ExchangeState.allCases, "\(backend)")
    }

    /// `tv requests --store` says which flows shown had requests counted without rows, as `tv
    /// requests` does (it said nothing: a helper's report): the counts of the page's flows, each
    /// with its instance, and none for a flow without.
    @Test(arguments: Backend.allCases) func requestsLeftOutOfThePagesFlows(_ backend: Backend) throws {
        let f = try Fixture(backend)
        var flooded = sampleFlow(start: 1)
        flooded.requestsLeftOut = 5_000
        var plain = sampleFlow(start: 2)
        var unshown = sampleFlow(start: 3)
        unshown.requestsLeftOut = 7
        try f.write { writer in
            flooded = writer.open(flooded)
            plain = writer.open(plain)
            unshown = writer.open(unshown)
            for (n, flow) in [flooded, plain].enumerated() {
                writer.enqueue(.exchange(ExchangeRecord(flowID: flow.id, sequence: 1, httpVersion: "HTTP/2", method: "GET", scheme: "https",
                                                        authority: "a.test", path: "/\(n)", requestTime: 10 + Int64(n), endTime: 20, state: .complete)))
            }
        }
        let query = ExchangeQuery(limit: 100)
        if let shared = f.history as? SharedFlowHistory {
            let page = try shared.exchanges(query)
            #expect(page.exchanges.count == 2)
            let found = try shared.requestsLeftOut(shownIn: page)
            #expect(found.map { [$0.instance.id, String($0.flow), String($0.count)] } == [[f.instance.id, String(flooded.id), "5000"]], "\(found)")
        } else {
            let page = try f.store.exchanges(query)
            let found = try f.store.requestsLeftOut(flows: page.exchanges.map(\.flowID))
            #expect(found.map { [$0.flow, $0.count] } == [[flooded.id, 5_000]], "\(found)")
        }
    }

    @Test(arguments: Backend.allCases) func openUpdatedClosedFlowIsOneRowWithItsLastState(_ backend: Backend) throws {
        let f = try Fixture(backend)
        var flow = sampleFlow(start: 500)
        try f.write { writer in
            flow = writer.open(flow)
            flow.bytesUp = 10
            writer.enqueue(.updated(flow))
            writer.flush()
            flow.bytesUp = 1_234
            flow.bytesDown = 99
            flow.duration = 2_000
            flow.status = .inspected
            flow.otherHosts = ["b.example", "c.example"]
            writer.enqueue(.closed(flow))
        }
        let read = try #require(try f.history.flow(id: flow.id))
        var expected = flow
        if backend != .sqlite { expected.instance = f.instance }
        #expect(read == expected)
        #expect(try f.history.count(FlowQuery()) == 1)
        #expect(try f.history.flow(id: 999) == nil)
    }
}

/// The shared store alone: migrations, instance tags, what a lost server costs.
@Suite(.serialized) struct SharedStoreTests {
    @Test func migratesAnEmptyDatabaseToTheCurrentVersionOnceAndRefusesANewerOne() throws {
        let server = try PostgresServer.shared()
        let url = try server.makeDatabase()
        let connection = try PGConnection(try SharedStoreTarget(url))
        defer { connection.close() }
        #expect(try PostgresSchema.migrate(connection) == 0)
        #expect(try PostgresSchema.migrate(connection) == PostgresSchema.currentVersion)
        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        #expect(try server.psql("SELECT version FROM tv_schema", database: database) == String(PostgresSchema.currentVersion))
        try server.psql("UPDATE tv_schema SET version = version + 1", database: database)
        #expect(throws: FlowStoreError.sharedStoreNewerSchema(server: connection.server, found: PostgresSchema.currentVersion + 1,
                                                   supported: PostgresSchema.currentVersion)) {
            try PostgresSchema.migrate(connection)
        }
    }

    @Test func aDatabaseWithAFlowsTableTvDidNotMakeIsRefusedAndLeftAlone() throws {
        let server = try PostgresServer.shared()
        let url = try server.makeDatabase()
        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        try server.psql("CREATE TABLE flows (note TEXT); INSERT INTO flows VALUES ('theirs')", database: database)
        let connection = try PGConnection(try SharedStoreTarget(url))
        defer { connection.close() }
        #expect(throws: FlowStoreError.sharedStoreNotTvs(server: connection.server, tables: "flows")) { try PostgresSchema.migrate(connection) }
        #expect(try server.psql("SELECT note FROM flows", database: database) == "theirs")
        #expect(try server.psql("SELECT to_regclass('tv_schema') IS NULL", database: database) == "t")
        // Any table of tv's, named (only three were looked for: a trial's `host_names` got
        // advice about permissions).
        let other = try server.makeDatabase()
        let otherName = String(other.split(separator: "/").last!.split(separator: "?").first!)
        try server.psql("CREATE TABLE host_names (x INT); CREATE TABLE audit_sessions (y INT)", database: otherName)
        let second = try PGConnection(try SharedStoreTarget(other))
        defer { second.close() }
        #expect(throws: FlowStoreError.sharedStoreNotTvs(server: second.server, tables: "audit_sessions, host_names")) { try PostgresSchema.migrate(second) }
    }

    @Test("tableNames is every table the migrations make")
    func tableNamesAreTheMigrations() throws {
        let made = Set(PostgresSchema.migrations.joined(separator: "\n").split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            guard let at = words.firstIndex(of: "TABLE"), at > 0, words[at - 1] == "CREATE", at + 1 < words.count else { return nil }
            return String(words[at + 1].prefix { $0.isLetter || $0 == "_" })
        })
        #expect(made == Set(PostgresSchema.tableNames))
    }

    /// Every column of SQLite's `flows` (after all its migrations) is in the shared table, and
    /// the shared one adds only the instance columns.
    @Test func sharedFlowsTableHasSQLitesColumnsAndTheInstanceColumns() throws {
        let server = try PostgresServer.shared()
        let url = try server.makeDatabase()
        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        _ = try SharedFlowHistory(try SharedStoreTarget(url))
        let shared = Set(try server.psql("SELECT column_name FROM information_schema.columns WHERE table_name = 'flows'", database: database)
            .split(separator: "\n").map(String.init))
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let sqlite = try SQLiteDatabase(path: folder + "/f.sqlite3")
        try FlowSchema.migrate(sqlite)
        var local: Set<String> = []
        try sqlite.prepare("SELECT name FROM pragma_table_info('flows')").forEachRow { local.insert($0.string(at: 0)!) }
        sqlite.close()
        #expect(shared == local.subtracting(["writer"]).union(["instance_id", "machine"]))
    }

    @Test func twoInstancesWithTheSameIdsAreTwoRowsAndNarrowByInstance() throws {
        let url = try PostgresServer.shared().makeDatabase()
        let target = try SharedStoreTarget(url)
        let a = InstanceIdentity(id: "00000000-0000-4000-8000-00000000000a", machine: "alpha")
        let b = InstanceIdentity(id: "00000000-0000-4000-8000-00000000000b", machine: "beta")
        for (instance, start) in [(a, Int64(100)), (b, Int64(100))] {
            let writer = try FlowWriter(shared: target, instance: instance)
            var flow = sampleFlow(start: start)
            flow.id = 1
            writer.enqueue(.opened(flow))
            writer.flush()
            writer.close()
        }
        let all = try SharedFlowHistory(target)
        defer { all.close() }
        let page = try all.flows(FlowQuery(limit: 1))
        #expect(page.flows.map(\.instance) == [b])
        #expect(try all.flows(FlowQuery(limit: 1, after: page.nextCursor)).flows.map(\.instance) == [a])
        #expect(throws: FlowStoreError.ambiguousSharedFlow(id: 1, instances: ["alpha \(a.id)", "beta \(b.id)"])) { try all.flow(id: 1) }
        let alpha = try SharedFlowHistory(target, instance: "alpha")
        defer { alpha.close() }
        #expect(try alpha.flow(id: 1)?.instance == a)
        #expect(try alpha.count(FlowQuery()) == 1)
        #expect(try alpha.instances().map(\.identity) == [a])
        #expect(Set(try all.instances().map(\.identity)) == [a, b])
        #expect(try all.instances().map(\.flows) == [1, 1])
        // A name that names no instance is said, not read as an empty history.
        #expect(throws: FlowStoreError.noSuchInstance(name: "gamma", server: target.server)) { _ = try SharedFlowHistory(target, instance: "gamma") }
        #expect(FlowStoreError.noSuchInstance(name: "gamma", server: "db:5432/h").message
                == "The shared store at db:5432/h has no instance with the id or machine name 'gamma'; `tv store instances --store URL` lists them.")
        // A machine name two instances carry names neither: each is said by the label that
        // does (both were read as one: a trial).
        let c = InstanceIdentity(id: "00000000-0000-4000-8000-0000000000cc", machine: "alpha")
        let third = try FlowWriter(shared: target, instance: c)
        third.flush()
        third.close()
        #expect(throws: FlowStoreError.ambiguousInstance(name: "alpha", labels: ["alpha/00000000", "alpha/00000000"])) {
            _ = try SharedFlowHistory(target, instance: "alpha")
        }
        let byID = try SharedFlowHistory(target, instance: c.id)
        defer { byID.close() }
        #expect(byID.narrowsToOneInstance)
        #expect(FlowStoreError.ambiguousInstance(name: "vm", labels: ["vm/24c26974", "vm/489d3e49"]).message
                == "'vm' names 2 instances of the shared store (a machine name they carry, or the start of their ids); name one as vm/24c26974, vm/489d3e49 (`tv store instances --store URL` lists them).")
        // After `MACHINE/`, a short prefix names the one instance it begins (it named none: a
        // re-check); one that begins several is said as they are.
        let short = try SharedFlowHistory(target, instance: "alpha/00000000-0000-4000-8000-0000000000c")
        defer { short.close() }
        #expect(short.narrowsToOneInstance)
        #expect(throws: FlowStoreError.ambiguousInstance(name: "alpha/0000", labels: ["alpha/00000000", "beta/00000000", "alpha/00000000"])) {
            _ = try SharedFlowHistory(target, instance: "alpha/0000")
        }
    }

    /// The server stops mid-run: nothing acknowledged is lost, the writer says it fails, keeps
    /// the flows in memory and writes them when the server is back.
    @Test func aLostServerIsRetriedWithBackoffAndLosesNothing() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        try server.start()
        let url = try server.makeDatabase()
        let target = try SharedStoreTarget(url)
        let instance = InstanceIdentity(id: "00000000-0000-4000-8000-0000000000cc", machine: "gamma")
        let changes = ChangeLog()
        let writer = try FlowWriter(shared: target, instance: instance) { change, _ in changes.append(change) }
        func flow(_ id: Int64) -> FlowRecord { var f = sampleFlow(start: id * 10); f.id = id; return f }
        for id in Int64(1)...5 { writer.enqueue(.opened(flow(id))) }
        writer.flush()
        #expect(writer.counters.written == 5)
        server.stop()
        for id in Int64(6)...10 { writer.enqueue(.opened(flow(id))) }
        writer.flush()
        #expect(writer.counters.failing)
        #expect(writer.counters.unwrittenFlows == 5)
        #expect(changes.all == [.startedFailing])
        try server.start()
        let deadline = Date().addingTimeInterval(15)
        while writer.counters.failing, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        #expect(!writer.counters.failing)
        #expect(changes.all == [.startedFailing, .resumed])
        writer.close()
        #expect(writer.counters.flowsNotSaved == 0)
        let history = try SharedFlowHistory(target)
        defer { history.close() }
        let ids = try history.flows(FlowQuery(limit: 100)).flows.map(\.id)
        #expect(ids == Array((1...10).reversed()))
    }

    /// A server that does not answer at start is said before the writer returns, and the writer
    /// starts anyway (a trial's `tv run --store` exited while PostgreSQL was down, and its
    /// service with it): the flows wait, and reach the server once it answers.
    @Test func aServerThatIsNotThereAtStartIsSaidAndWaitedFor() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        let target = try SharedStoreTarget(server.url())
        let changes = ChangeLog()
        let writer = try FlowWriter(shared: target, instance: InstanceIdentity(id: "00000000-0000-4000-8000-0000000000dd", machine: "delta")) { change, _ in
            changes.append(change)
        }
        #expect(changes.all == [.startedFailing])
        #expect(writer.counters.failing)
        guard case let .sharedStoreUnreachable(where_, reason)? = writer.counters.lastError else {
            Issue.record("\(String(describing: writer.counters.lastError))")
            return
        }
        #expect(where_ == "127.0.0.1:\(server.port)/postgres" && reason.contains("Connection refused"), "\(reason)")
        func flow(_ id: Int64) -> FlowRecord { var f = sampleFlow(start: id * 10); f.id = id; return f }
        for id in Int64(1)...3 { writer.enqueue(.opened(flow(id))) }
        writer.flush()
        #expect(writer.counters.unwrittenFlows == 3)
        try server.start()
        let deadline = Date().addingTimeInterval(15)
        while writer.counters.failing, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        #expect(changes.all == [.startedFailing, .resumed])
        writer.close()
        #expect(writer.counters.flowsNotSaved == 0)
        let history = try SharedFlowHistory(target)
        defer { history.close() }
        #expect(try history.flows(FlowQuery(limit: 100)).flows.map(\.id) == [3, 2, 1])
    }

    /// A server that asks for a password tv has none for is said as that, with where a password
    /// goes; a wrong one is libpq's reason, on one line (its lines were run together unpunctuated).
    @Test func aPasswordTheServerAsksForIsSaidAsSuch() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        try server.start()
        try server.psql("CREATE ROLE pw LOGIN PASSWORD 'right-one'; GRANT CREATE ON SCHEMA public TO pw", database: "postgres")
        let hba = server.folder + "/data/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        try ("host all pw 127.0.0.1/32 scram-sha-256\n" + rules).write(toFile: hba, atomically: false, encoding: .utf8)
        try server.psql("SELECT pg_reload_conf()", database: "postgres")
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let base = "postgresql://pw@127.0.0.1:\(server.port)/postgres?sslmode=disable&passfile="
        do {
            _ = try SharedFlowHistory(try SharedStoreTarget(base + folder + "/none"))
            Issue.record("connected without a password")
        } catch let error as FlowStoreError {
            guard case let .sharedStoreNeedsPassword(where_, _) = error else { Issue.record("\(error)"); return }
            #expect(where_ == "127.0.0.1:\(server.port)/postgres")
            #expect(error.message.contains("asks for a password and tv found none") && error.message.contains("PGPASSFILE, ~/.pgpass, or passfile="))
        }
        let wrong = folder + "/pgpass"
        try "127.0.0.1:\(server.port):postgres:pw:wrong-one\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        chmod(wrong, 0o600)
        do {
            _ = try SharedFlowHistory(try SharedStoreTarget(base + wrong))
            Issue.record("connected with a wrong password")
        } catch let FlowStoreError.sharedStoreLoginRefused(_, reason) {
            #expect(reason.contains("password authentication failed for user \"pw\"") && !reason.contains("\n"), "\(reason)")
        }
        // A session's writer with the wrong password tries it once, not once per batch (each
        // batch made a connection: a failed login each, which a server may lock an account for).
        let log = server.folder + "/server.log"
        func failedLogins() -> Int {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").components(separatedBy: "password authentication failed for user \"pw\"").count - 1
        }
        let before = failedLogins()
        let writer = try FlowWriter(shared: try SharedStoreTarget(base + wrong), instance: InstanceIdentity(id: "00000000-0000-4000-8000-0000000000ef", machine: "m"))
        guard case .sharedStoreLoginRefused? = writer.counters.lastError else {
            Issue.record("\(String(describing: writer.counters.lastError))")
            return
        }
        #expect(writer.counters.lastError?.message.contains("refused tv's login with the password from the password file") == true)
        for id in Int64(1)...20 {
            var flow = sampleFlow(start: id * 10)
            flow.id = id
            writer.enqueue(.opened(flow))
            writer.flush()
        }
        Thread.sleep(forTimeInterval: 0.5)
        #expect(writer.counters.unwrittenFlows == 20)
        #expect(failedLogins() - before == 1, "\(failedLogins() - before) failed logins")
        writer.close()
        try "127.0.0.1:\(server.port):postgres:pw:right-one\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        chmod(wrong, 0o600)  // libpq ignores a password file others may read
        let history = try SharedFlowHistory(try SharedStoreTarget(base + wrong))
        history.close()
    }

    /// A role that may only read reads a store at this version (a trial's `GRANT SELECT` role
    /// was refused: every open ran `CREATE TABLE IF NOT EXISTS`, which needs CREATE).
    @Test func aReadOnlyRoleReadsAStoreAtThisVersion() throws {
        let server = try PostgresServer.shared()
        let url = try server.makeDatabase()
        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        let writer = try FlowWriter(shared: try SharedStoreTarget(url), instance: InstanceIdentity(id: "00000000-0000-4000-8000-0000000000aa", machine: "m"))
        var flow = sampleFlow(start: 5)
        flow.id = 1
        writer.enqueue(.opened(flow))
        writer.flush()
        writer.close()
        let role = "reader_" + database
        try server.psql("CREATE ROLE \(role) LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role); REVOKE CREATE ON SCHEMA public FROM PUBLIC", database: database)
        let reader = try SharedFlowHistory(try SharedStoreTarget(url.replacingOccurrences(of: "//tv@", with: "//\(role)@")))
        defer { reader.close() }
        #expect(try reader.flows(FlowQuery()).flows.map(\.id) == [1])
        #expect(try reader.instances().map(\.identity.machine) == ["m"])
    }

    /// verify-full by default: the scratch server speaks no TLS, so a URL without sslmode is
    /// refused by libpq rather than sent in the clear.
    @Test func tlsIsRequiredUnlessTheURLSaysOtherwise() throws {
        let server = try PostgresServer.shared()
        let plain = "postgresql://tv@127.0.0.1:\(server.port)/postgres"
        #expect(try SharedStoreTarget(plain).sslMode == "verify-full")
        do {
            _ = try SharedFlowHistory(try SharedStoreTarget(plain))
            Issue.record("connected without TLS")
        } catch let FlowStoreError.sharedStoreUnreachable(_, reason) {
            #expect(reason.contains("SSL"))
        }
    }
}

/// Change notices, collected from the writer thread.
final class ChangeLog: Sendable {
    private let changes = Mutex<[WriteHealth.Change]>([])
    func append(_ change: WriteHealth.Change) { changes.withLock { $0.append(change) } }
    var all: [WriteHealth.Change] { changes.withLock { $0 } }
}
