import Foundation
import Testing

/// Issue 25 through the real `tv` binary: two `tv run` instances (two data folders) writing to
/// one scratch PostgreSQL server with real curl traffic through each; the server stopped and
/// started again mid-run.
@Suite("tv run --store: many instances, one history in PostgreSQL (issue 25)", .serialized)
struct SharedStoreRunTests {
    /// The shared rows of `--store url`, read by `box` (`tv flows --store URL --json`).
    func sharedRows(_ box: Sandbox, _ url: String, instance: String? = nil) throws -> [JSON] {
        let result = try box.tvArgs(["flows", "--store", url, "--limit", "10000", "--json"] + (instance.map { ["--instance", $0] } ?? []))
        let page = try JSONSerialization.jsonObject(with: result.stdout) as? JSON
        return page?["flows"] as? [JSON] ?? []
    }

    /// Waits (≤ `timeout` s) until `count` shared rows are there, all closed.
    /// Starts `server` and makes a database on it: its URL and name.
    static func started(_ server: PostgresServer) throws -> (url: String, database: String) {
        try server.start()
        let url = try server.makeDatabase()
        return (url, String(url.split(separator: "/").last!.split(separator: "?").first!))
    }

    func closedSharedRows(_ box: Sandbox, _ url: String, _ count: Int, instance: String? = nil, timeout: Double = 15) throws -> [JSON] {
        let deadline = Date().addingTimeInterval(timeout)
        var rows: [JSON] = []
        repeat {
            rows = try sharedRows(box, url, instance: instance)
            if rows.count >= count, rows.allSatisfy({ $0["duration"] is Int }) { return rows }
            usleep(100_000)
        } while Date() < deadline
        Issue.record("expected \(count) closed shared rows within \(timeout) s, have \(rows.count)")
        return rows
    }

    func instanceID(_ box: Sandbox) throws -> String {
        try String(contentsOfFile: box.dataDir + "/instance-id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("two instances write to one server at once: every flow once, tagged with its instance; a server stopped mid-run loses nothing acknowledged and is written again when it returns")
    func twoInstancesOneServer() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        try server.start()
        let url = try server.makeDatabase()
        let first = try RunWorld(), second = try RunWorld()
        let a = try first.run("--inspect", "--store", url)
        let b = try second.run("--inspect", "--store", url)
        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        #expect(a.log().contains("  shared      flows also go to PostgreSQL 127.0.0.1:\(server.port)/\(database) (sslmode disable) as instance "), "\(a.log())")
        let idA = try instanceID(first.sandbox), idB = try instanceID(second.sandbox)
        #expect(idA != idB)
        let mode = try FileManager.default.attributesOfItem(atPath: first.sandbox.dataDir + "/instance-id")[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // Real traffic through both at once.
        let jobs: [(work: String, arguments: [String], environment: [String: String])] = [(first, a), (second, b)].map { world, session in
            (world.sandbox.work, ["-sS", "-x", session.proxyURL, "--cacert", world.tvRoot, world.url("/index.html")], world.sandbox.environment)
        }
        DispatchQueue.concurrentPerform(iterations: 2) { i in
            for _ in 0..<5 {
                let r = try? Run.process("curl", jobs[i].arguments, in: jobs[i].work, environment: jobs[i].environment, timeout: 60)
                #expect(r?.out == "hello from nginx\n")
            }
        }
        let rows = try closedSharedRows(first.sandbox, url, 10)
        #expect(rows.count == 10)
        let keys = rows.map { "\($0.object("instance")?.string("id") ?? "?")/\($0.int("id") ?? 0)" }
        #expect(Set(keys).count == 10, "\(keys)")
        for (box, id) in [(first.sandbox, idA), (second.sandbox, idB)] {
            let local = try box.closedFlows(5)
            let shared = rows.filter { $0.object("instance")?.string("id") == id }
            #expect(shared.map { $0.int("id") ?? 0 }.sorted() == local.map { $0.int("id") ?? 0 }, "\(id)")
            #expect(shared.allSatisfy { $0.string("status") == "inspected" && ($0.int("bytesDown") ?? 0) > 0 })
            #expect(try sharedRows(second.sandbox, url, instance: id).count == 5)
        }
        // The list names each row's machine; tv flow reads one row of one instance.
        let list = try first.sandbox.tv("flows", "--store", url)
        #expect(list.status == 0 && list.out.split(separator: "\n").count == 11, "\(list)")
        let one = try first.sandbox.tv("flow", "1", "--store", url, "--instance", idB)
        #expect(one.status == 0 && one.out.contains("  instance     ") && one.out.contains("(instance \(idB))"), "\(one)")
        let ambiguous = try first.sandbox.tv("flow", "1", "--store", url)
        #expect(ambiguous.status != 0 && ambiguous.err.contains("name one with --instance"), "\(ambiguous)")
        // Both instances run on this machine: the list tells their flows apart by the id's first
        // 8 characters (a trial's list showed two flows as `vm:20`), and `tv flow` takes the label.
        let label = "/" + idB.prefix(8) + ":1"
        #expect(list.out.contains(label + " ") && list.out.contains("/" + idA.prefix(8) + ":1 "), "\(list)")
        let machine = try #require(list.out.split(separator: "\n").compactMap { line -> String? in
            line.split(separator: " ").first.map(String.init).flatMap { $0.hasSuffix(label) ? $0 : nil } }.first)
        let byLabel = try first.sandbox.tv("flow", machine, "--store", url)
        #expect(byLabel.status == 0 && byLabel.out.contains("(instance \(idB))"), "\(byLabel)")
        #expect(try first.sandbox.tv("flow", "1", "--store", url, "--instance", String(idB.prefix(8))).out.contains("(instance \(idB))"))
        // An audit session's number is each instance's own: over several, it is refused.
        let audit = try first.sandbox.tv("flows", "--store", url, "--audit", "1")
        #expect(audit.status == 2 && audit.err.contains("Audit session 1 is a number each instance gives its own sessions; add --instance NAME"), "\(audit)")
        #expect(try first.sandbox.tv("flows", "--store", url, "--audit", "1", "--instance", idA).status == 0)
        let instances = try first.sandbox.tvArgs(["store", "instances", "--store", url, "--json"])
        let listed = (try JSONSerialization.jsonObject(with: instances.stdout) as? [JSON]) ?? []
        #expect(Set(listed.compactMap { $0.string("id") }) == [idA, idB] && listed.allSatisfy { $0.int("flows") == 5 }, "\(instances)")

        // The server goes away: traffic goes on, tv status says so, nothing acknowledged is lost.
        server.stop()
        for _ in 0..<3 {
            let r = try first.curlThrough(a, [first.url("/index.html")])
            #expect(r.out == "hello from nginx\n", "\(r)")
        }
        #expect(try first.sandbox.closedFlows(8).count == 8)
        var status = try #require(try first.sandbox.status())
        let deadline = Date().addingTimeInterval(10)
        while status.object("sharedStore")?.string("state") != "retrying", Date() < deadline {
            usleep(100_000)
            status = try #require(try first.sandbox.status())
        }
        let shared = try #require(status.object("sharedStore"), "\(status)")
        #expect(shared.string("state") == "retrying" && (shared.int("flowsWaiting") ?? 0) >= 3, "\(shared)")
        #expect(shared.string("server") == "127.0.0.1:\(server.port)/\(database)" && shared.string("instance") == idA)
        let text = try first.sandbox.tv("status").out
        #expect(text.contains("  shared store      retrying 127.0.0.1:\(server.port)/\(database) ("), "\(text)")
        #expect(a.log().contains("Flows are not reaching the shared store at 127.0.0.1:\(server.port)/\(database)"), "\(a.log())")
        try server.start()
        let rowsAfter = try closedSharedRows(first.sandbox, url, 8, instance: idA, timeout: 20)
        #expect(rowsAfter.count == 8)
        // Every event accepted is counted written, the backlog written on the retry too (a trial's
        // status said 52 of 157 written with every flow in the store).
        var back = try #require(try first.sandbox.status()?.object("sharedStore"))
        let settle = Date().addingTimeInterval(10)
        while back.int("written") != back.int("accepted"), Date() < settle {
            usleep(100_000)
            back = try #require(try first.sandbox.status()?.object("sharedStore"))
        }
        #expect(back.int("written") == back.int("accepted"), "\(back)")
        #expect(back.string("state") == "connected" && back.int("flowsNotSaved") == 0 && back.int("dropped") == 0
                && back.int("flowsWaiting") == 0, "\(back)")
        #expect(a.log().contains("is written again (0 flows did not reach it)"), "\(a.log())")
        #expect(try first.sandbox.tv("status").out.contains("  shared store      connected to 127.0.0.1:\(server.port)/\(database) ("))
        try a.stop()
        // The server goes away again and the other instance stops while its flows wait: what
        // never reached the store is said at the stop (a trial's 100 waiting flows went unsaid).
        server.stop()
        for _ in 0..<2 {
            let r = try second.curlThrough(b, [second.url("/index.html")])
            #expect(r.out == "hello from nginx\n", "\(r)")
        }
        #expect(try second.sandbox.closedFlows(7).count == 7)
        let stopped = try b.stop()
        #expect(stopped.out.contains("This session could not send 2 flows to the shared store at 127.0.0.1:\(server.port)/\(database); this data folder has them (`tv store backfill --store "), "\(stopped)")
        // The printed backfill names the session's store (`--store`; run without it, it was refused).
        #expect(stopped.out.contains(url.contains("?") ? "--store '\(url)' --since SPAN` sends whatever is still missing once the store answers)." : "--store \(url) --since SPAN` sends"), "\(stopped)")
        try server.start()
        #expect(try sharedRows(first.sandbox, url).count == 13)
        // Sent afterwards from the data folder that has them: every local flow is then shared,
        // the request rows with them; sending again changes nothing.
        for _ in 0..<2 {
            let backfill = try second.sandbox.tv("store", "backfill", "--store", url, "--all")
            #expect(backfill.status == 0 && backfill.out.hasPrefix("Sent 7 flows and 7 request rows to the shared store at 127.0.0.1:\(server.port)/\(database) as instance "), "\(backfill)")
        }
        let backfilled = try sharedRows(first.sandbox, url, instance: idB)
        #expect(backfilled.map { $0.int("id") ?? 0 }.sorted() == (try second.sandbox.closedFlows(7)).map { $0.int("id") ?? 0 }, "\(backfilled)")
        #expect(try sharedRows(first.sandbox, url).count == 15)
        let refusedSpan = try second.sandbox.tv("store", "backfill", "--store", url)
        #expect(refusedSpan.status == 2 && refusedSpan.err.contains("Say which flows to send: --since SPAN, --from TIME [--to TIME], or --all."), "\(refusedSpan)")
    }

    @Test("tv run --store with PostgreSQL down starts anyway (forwarding never waits on the network), says so before its banner, and its flows reach the store once the server answers")
    func startsWhileTheStoreIsDown() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        let url = server.url()
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--store", url)
        #expect(tv.log().contains("tv: Flows are not reaching the shared store at 127.0.0.1:\(server.port)/postgres: tv could not connect to the shared store"), "\(tv.log())")
        let r = try world.curlThrough(tv, [world.url("/index.html")])
        #expect(r.out == "hello from nginx\n", "\(r)")
        _ = try box.closedFlows(1)
        let status = try box.json("status")
        #expect(status.object("sharedStore")?.string("state") == "retrying", "\(status)")
        try server.start()
        var rows: [JSON] = []
        let deadline = Date().addingTimeInterval(20)
        repeat {
            rows = (try? sharedRows(box, url)) ?? []
            if rows.count == 1 { break }
            usleep(100_000)
        } while Date() < deadline
        #expect(rows.count == 1 && rows.first?.string("host") == "localhost", "\(rows)")
        try tv.stop()
    }

    @Test("a quiet session whose store was down at start connects once the server answers, with no flow to send (it has the local tables and left-open flows to write)")
    func quietSessionConnectsWhenTheStoreComesBack() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--store", server.url())
        #expect(try box.json("status").object("sharedStore")?.string("state") == "retrying")
        try server.start()
        var state: String?
        let deadline = Date().addingTimeInterval(20)
        repeat {
            state = try box.json("status").object("sharedStore")?.string("state")
            if state == "connected" { break }
            usleep(200_000)
        } while Date() < deadline
        #expect(state == "connected", "\(tv.log())")
        #expect(try server.psql("SELECT count(*) FROM instances", database: "postgres") == "1")
        try tv.stop()
    }

    @Test("kill -9 leaves the shared rows open; the instance's next start closes them as interrupted; tv requests, tv request, tv activity and tv export connections read the shared store")
    func killedInstanceClosesItsSharedFlowsAtNextStart() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        try server.start()
        let url = try server.makeDatabase()
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--store", url)
        let held = try HeldTunnels(box, proxyPort: tv.port)
        defer { held.stop() }
        var rows = try held.waitUntilBothCarried { try sharedRows(box, url) }
        try #require(rows.count == 2, "\(rows)")
        // The local rows too (a reading command flushes the writer first): the shared writer can
        // be ahead of the local one by its linger, and what a kill -9 takes from the local file
        // before it is written is not this test's subject.
        try #require(try box.flowRows().count == 2)
        tv.kill()
        held.releaseClients()
        #expect(try sharedRows(box, url).allSatisfy { $0["duration"] is NSNull })

        let next = try world.run("--inspect", "--store", url)
        let deadline = Date().addingTimeInterval(10)
        repeat {
            rows = try sharedRows(box, url)
            if rows.allSatisfy({ $0.string("status") == "interrupted" }) { break }
            usleep(50_000)
        } while Date() < deadline
        #expect(rows.count == 2)
        for row in rows {
            #expect(row.string("status") == "interrupted", "\(row)")
            #expect(row.int("duration") == (row.int("lastActivityTime") ?? 0) - (row.int("startTime") ?? 0), "\(row)")
        }
        let local = try box.flowRows().sorted { ($0.int("id") ?? 0) < ($1.int("id") ?? 0) }
        #expect(local.map { $0.int("duration") ?? -1 } == rows.sorted { ($0.int("id") ?? 0) < ($1.int("id") ?? 0) }.map { $0.int("duration") ?? -2 })

        // A request through the new session: its row travels without the query.
        let r = try world.curlThrough(next, [world.url("/index.html?token=secret")])
        #expect(r.out == "hello from nginx\n", "\(r)")
        let id = try instanceID(box)
        var requests: [JSON] = []
        for _ in 0..<200 {
            let listed = try box.tvArgs(["requests", "--store", url, "--instance", id, "--json"])
            requests = ((try JSONSerialization.jsonObject(with: listed.stdout) as? JSON)?["requests"] as? [JSON]) ?? []
            if requests.first?.string("state") == "complete" { break }
            usleep(50_000)
        }
        let request = try #require(requests.first, "\(requests)")
        #expect(requests.count == 1 && request.string("path") == "/index.html" && (request["queryRemoved"] as? Bool) == true, "\(requests)")
        #expect(request.object("instance")?.string("id") == id && request.int("status") == 200, "\(request)")
        let shown = try box.tv("request", String(request.int("id") ?? 0), "--store", url)
        #expect(shown.status == 0 && shown.out.contains("  instance     ") && shown.out.contains("/index.html") && !shown.out.contains("secret"), "\(shown)")
        // Content never travels: the shared views say where it is, not that keeping was off.
        #expect(shown.out.contains("  the query string, headers and bodies never travel to the shared store; if kept, they are in the data folder of ")
                && !shown.out.contains("content keeping was off") && !shown.out.contains("Without content keeping"), "\(shown)")
        #expect(shown.out.hasPrefix("Request "), "the instance line comes under the title: \(shown)")
        let curl = try box.tv("request", String(request.int("id") ?? 0), "--store", url, "--curl")
        #expect(curl.err.contains("never travel to the shared store") && !curl.err.contains("keeping was off"), "\(curl)")
        let sharedFlow = try box.tv("flow", String(request.int("flow") ?? 0), "--store", url, "--instance", id)
        #expect(sharedFlow.status == 0 && sharedFlow.out.contains("What was said inside stays on the machine that recorded it; if it was kept, `tv turns ")
                && !sharedFlow.out.contains("keeping decrypted content was off"), "\(sharedFlow)")
        let list = try box.tv("requests", "--store", url)
        #expect(list.status == 0 && list.out.contains("/index.html?…"), "\(list)")

        let activity = try box.tvArgs(["activity", "--store", url, "--bars", "10", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: activity.stdout) as? JSON, "\(activity)")
        let counts = (report["buckets"] as? [JSON])?.compactMap { $0.int("count") } ?? []
        #expect(counts.reduce(0, +) == 3, "\(report)")

        let file = box.work + "/shared.csv"
        let export = try box.tv("export", "connections", "--store", url, "--format", "csv", "-o", file)
        #expect(export.status == 0, "\(export)")
        let csv = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\r\n")
        #expect(csv.count == 4 && csv[0].hasSuffix(",instanceID,machine") && csv.dropFirst().allSatisfy { $0.contains("," + id + ",") }, "\(csv)")
        try next.stop()
    }

    @Test("kill -9 after the shared writer sent two flows the local writer could not write (its file locked): the next start closes them in the shared store as interrupted")
    func flowsNeverWrittenLocallyAreClosedAtNextStart() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        let (url, database) = try Self.started(server)
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--store", url)
        // Another connection holds the local file's write lock: the local writer retries, the
        // shared writer goes on.
        let lockScript = box.work + "/lock.py"
        try Data("""
            import sqlite3, sys, time
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            c.execute('BEGIN IMMEDIATE')
            print('locked', flush=True)
            time.sleep(120)
            """.utf8).write(to: URL(fileURLWithPath: lockScript))
        let lockLog = box.root + "/lock.log"
        let locker = try Background(["python3", lockScript, box.dataDir + "/tunnelvision.sqlite3"], logPath: lockLog)
        defer { locker.stop() }
        for _ in 0..<200 where (try? String(contentsOfFile: lockLog, encoding: .utf8))?.contains("locked") != true { usleep(25_000) }
        try #require((try? String(contentsOfFile: lockLog, encoding: .utf8))?.contains("locked") == true)
        let echo = try PythonServer(echoServer)
        defer { echo.stop() }
        let script = box.work + "/hold.py"
        try Data(tunnelClient.utf8).write(to: URL(fileURLWithPath: script))
        let holders = try (0..<2).map { i in
            try Background(["python3", script, String(tv.port), "127.0.0.1:\(echo.port)", "hold", "ping \(i)\n"], logPath: box.root + "/hold\(i).log")
        }
        defer { holders.forEach { $0.stop() } }
        var open = ""
        for _ in 0..<400 {
            open = try server.psql("SELECT count(*) FROM flows WHERE duration IS NULL AND bytes_up = 7", database: database)
            if open == "2" { break }
            usleep(25_000)
        }
        try #require(open == "2")
        tv.kill()
        holders.forEach { $0.stop() }
        locker.stop()
        let local = try Run.process("python3", ["-c", "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM flows').fetchone()[0])",
                                                box.dataDir + "/tunnelvision.sqlite3"], in: box.work, environment: box.environment, timeout: 30)
        #expect(local.out == "0\n", "the local writer wrote the flows before the kill: \(local)")
        // The store down at the next start: its flows still take ids past the two the store
        // holds (kept beside the database before they were sent; a trial's took them again,
        // and its flows replaced those rows once the store answered).
        let sharedIDs = try server.psql("SELECT string_agg(id::text, ',' ORDER BY id) FROM flows", database: database)
        server.stop()
        let down = try world.run("--inspect", "--store", url)
        #expect(try world.curlThrough(down, [world.url("/index.html?down")]).status == 0)
        let downIDs = try box.closedFlows(1).compactMap { $0.int("id") }
        try down.stop()
        try server.start()
        #expect(downIDs.count == 1 && downIDs.allSatisfy { id in !sharedIDs.split(separator: ",").contains { Int($0) == id } },
                "local \(downIDs), shared \(sharedIDs)")

        let next = try world.run("--inspect", "--store", url)
        var rows = ""
        for _ in 0..<200 {
            rows = try server.psql("SELECT status, duration = last_activity_time - start_time FROM flows ORDER BY id", database: database)
            if rows == "interrupted|t\ninterrupted|t" { break }
            usleep(50_000)
        }
        #expect(rows == "interrupted|t\ninterrupted|t")
        try next.stop()
    }

    @Test("flows a killed session held for a store that was down are said at the next start, with the backfill that sends them; flows made after the store comes back take ids past its rows")
    func unsentFlowsSaidAndIDsPastTheStoreAfterReconnecting() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        let (url, database) = try Self.started(server)
        let world = try RunWorld()
        let box = world.sandbox
        let a = try world.run("--inspect", "--store", url)
        #expect(try world.curlThrough(a, [world.url("/index.html?a")]).status == 0)
        _ = try closedSharedRows(box, url, 1)
        try a.stop()
        let database1 = box.dataDir + "/tunnelvision.sqlite3", backup = box.work + "/backup.sqlite3"
        try #require(try Run.process("cp", [database1, backup], in: box.work, environment: box.environment, timeout: 30).status == 0)

        // The store down; two flows written here and waiting for it when the session is killed.
        server.stop()
        let b = try world.run("--inspect", "--store", url)
        for q in ["b1", "b2"] { #expect(try world.curlThrough(b, [world.url("/index.html?\(q)")]).status == 0) }
        _ = try box.closedFlows(3)
        b.kill()
        try server.start()
        let c = try world.run("--inspect", "--store", url)
        let said = "2 flows this data folder recorded (started "
        var log = ""
        for _ in 0..<100 where !log.contains(said) { log = c.log(); usleep(50_000) }
        #expect(log.contains(said) && log.contains("are not in the shared store at 127.0.0.1:\(server.port)/\(database): an earlier session gave them up while the store was away, ended before it could send them or ran while no store was set, or they were deleted there. `tv store backfill --store "), "\(log)")
        try c.stop()
        #expect(try server.psql("SELECT count(*) FROM flows", database: database) == "1")
        let backfill = try box.tv("store", "backfill", "--store", url, "--all")
        #expect(backfill.status == 0, "\(backfill)")
        #expect(try server.psql("SELECT count(*) FROM flows", database: database) == "3")

        // The database restored to before those flows (the same file, so the same instance), the
        // mark beside it gone, the store down at the start: once the store answers, new flows go
        // on past its rows (the engine took ids from a counter of its own and wrote over them).
        try #require(try Run.process("cp", [backup, database1], in: box.work, environment: box.environment, timeout: 30).status == 0)
        unlink(box.dataDir + "/instance-store-highest")
        server.stop()
        let d = try world.run("--inspect", "--store", url)
        try server.start()
        var state: String?
        for _ in 0..<200 where state != "connected" {
            state = try box.json("status").object("sharedStore")?.string("state")
            usleep(100_000)
        }
        #expect(state == "connected", "\(d.log())")
        #expect(try world.curlThrough(d, [world.url("/index.html?d")]).status == 0)
        let rows = try closedSharedRows(box, url, 4)
        try d.stop()
        #expect(try server.psql("SELECT string_agg(id::text || ':' || status, ',' ORDER BY id) FROM flows", database: database).split(separator: ",").count == 4,
                "every row kept: \(rows)")
    }

    @Test("sessions run with --store '' keep their flows here, a killed one's too: the next session with the store does not call them unsent, and `tv store backfill --all` leaves them out, saying so (before, every start said them and the backfill sent them)")
    func keptLocalSessionsStayHere() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        let (url, database) = try Self.started(server)
        let world = try RunWorld()
        let box = world.sandbox
        #expect(try box.tv("settings", "set", "store.url", url).status == 0)
        let a = try world.run("--inspect")
        #expect(try world.curlThrough(a, [world.url("/index.html?a")]).status == 0)
        _ = try closedSharedRows(box, url, 1)
        try a.stop()
        let b = try world.run("--inspect", "--store", "")
        for q in ["b1", "b2"] { #expect(try world.curlThrough(b, [world.url("/index.html?\(q)")]).status == 0) }
        _ = try box.closedFlows(3)
        try b.stop()
        let killed = try world.run("--inspect", "--store", "")
        #expect(try world.curlThrough(killed, [world.url("/index.html?k")]).status == 0)
        _ = try box.closedFlows(4)
        killed.kill()
        let c = try world.run("--inspect")
        #expect(try world.curlThrough(c, [world.url("/index.html?c")]).status == 0)
        _ = try closedSharedRows(box, url, 2)
        try c.stop()
        #expect(!c.log().contains("not in the shared store"), "\(c.log())")
        let backfill = try box.tv("store", "backfill", "--all")
        #expect(backfill.status == 0 && backfill.out.contains("3 flows were left out: recorded by a session run with --store '', which keeps its flows in this data folder only."), "\(backfill)")
        #expect(try server.psql("SELECT count(*) FROM flows", database: database) == "2")
        #expect(try box.flowRows().count == 5)
    }

    @Test("a copied data folder (cp -a) takes its own instance id, says so, and neither it nor the original overwrites the other's shared rows (before, the copy's flows 4 and 5 replaced the original's)")
    func copiedDataFolderTakesItsOwnInstance() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        try server.start()
        let url = try server.makeDatabase()
        let first = try RunWorld(), second = try RunWorld()
        let a = try first.run("--inspect", "--store", url)
        for _ in 0..<3 { #expect(try first.curlThrough(a, [first.url("/index.html")]).out == "hello from nginx\n") }
        _ = try closedSharedRows(first.sandbox, url, 3)
        try a.stop()
        let idA = try instanceID(first.sandbox)

        // The copy: another database file, the same instance-id file.
        try FileManager.default.removeItem(atPath: second.sandbox.dataDir)
        let copied = try Run.process("cp", ["-a", first.sandbox.dataDir, second.sandbox.dataDir], in: second.sandbox.work, environment: second.sandbox.environment, timeout: 30)
        try #require(copied.status == 0, "\(copied)")
        #expect(try instanceID(second.sandbox) == idA)
        let again = try first.run("--inspect", "--store", url)
        let b = try second.run("--inspect", "--store", url)
        let idB = try instanceID(second.sandbox)
        #expect(idB != idA)
        #expect(b.log().contains("This data folder's shared-store instance id \(idA) was made for another database file (this data folder is a copy or a restored backup, or its database was made anew); so that the two never overwrite each other's rows in the shared store, it now writes as instance \(idB)."), "\(b.log())")
        #expect(b.log().contains("as instance ") && b.log().contains(idB), "\(b.log())")
        #expect(!again.log().contains("was made for another"), "\(again.log())")
        for _ in 0..<2 {
            #expect(try first.curlThrough(again, [first.url("/index.html")]).out == "hello from nginx\n")
            #expect(try second.curlThrough(b, [second.url("/index.html")]).out == "hello from nginx\n")
        }
        // Both went on from flow 3: each has flows 4 and 5, and each instance's shared rows are its own.
        let localA = try first.sandbox.closedFlows(5), localB = try second.sandbox.closedFlows(5)
        let sharedA = try closedSharedRows(first.sandbox, url, 5, instance: idA)
        let sharedB = try closedSharedRows(first.sandbox, url, 2, instance: idB)
        func keyed(_ rows: [JSON]) -> [String] { rows.map { "\($0.int("id") ?? 0)@\($0.int("startTime") ?? 0)" }.sorted() }
        #expect(keyed(sharedA) == keyed(localA), "the original's rows are its own")
        #expect(keyed(sharedB) == keyed(localB.filter { ($0.int("id") ?? 0) > 3 }), "the copy's new flows are under its new id")
        #expect(Set(sharedA.compactMap { $0.int("startTime") }).isDisjoint(with: sharedB.compactMap { $0.int("startTime") }))
        try again.stop()
        try b.stop()
        // A backfill from the copy sends its own flows only: 1 to 3 are the original's, under
        // its id already (a re-check's copy sent them again under its new one).
        let backfill = try second.sandbox.tv("store", "backfill", "--store", url, "--all")
        #expect(backfill.status == 0 && backfill.out.hasPrefix("Sent 2 flows and 2 request rows")
                && backfill.out.contains("3 flows were left out: recorded before this data folder became instance \(idB) (it is a copy)"), "\(backfill)")
        #expect(keyed(try sharedRows(first.sandbox, url, instance: idB)) == keyed(localB.filter { ($0.int("id") ?? 0) > 3 }))
    }

    @Test("a backup restored over the database in place (same inode and birth time, so the same instance id): its next flows take ids past the shared store's, and overwrite none of the shared rows of the flows it lost")
    func restoredInPlaceGoesOnPastTheStoresIDs() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        try server.start()
        let url = try server.makeDatabase()
        let world = try RunWorld()
        let box = world.sandbox
        let a = try world.run("--inspect", "--store", url)
        for _ in 0..<2 { #expect(try world.curlThrough(a, [world.url("/index.html")]).out == "hello from nginx\n") }
        _ = try closedSharedRows(box, url, 2)
        try a.stop()
        let database = box.dataDir + "/tunnelvision.sqlite3", backup = box.work + "/backup.sqlite3"
        try #require(try Run.process("cp", [database, backup], in: box.work, environment: box.environment, timeout: 30).status == 0)
        let b = try world.run("--inspect", "--store", url)
        for _ in 0..<2 { #expect(try world.curlThrough(b, [world.url("/1k.bin"), "-o", "/dev/null"]).status == 0) }
        let before = try closedSharedRows(box, url, 4)
        try b.stop()
        let id = try instanceID(box)
        // `cp` over the file writes into it: the inode and birth time stay.
        var was = stat(), now = stat()
        stat(database, &was)
        try #require(try Run.process("cp", [backup, database], in: box.work, environment: box.environment, timeout: 30).status == 0)
        stat(database, &now)
        #expect(was.st_ino == now.st_ino)
        let c = try world.run("--inspect", "--store", url)
        #expect(try instanceID(box) == id)
        #expect(try world.curlThrough(c, [world.url("/index.html?after")]).status == 0)
        let after = try closedSharedRows(box, url, 5)
        try c.stop()
        func keyed(_ rows: [JSON]) -> [String] { rows.map { "\($0.int("id") ?? 0)@\($0.int("startTime") ?? 0)" }.sorted() }
        let newest = after.filter { !keyed(before).contains(keyed([$0])[0]) }
        #expect(newest.count == 1 && (newest.first?.int("id") ?? 0) > (before.compactMap { $0.int("id") }.max() ?? 0), "\(after)")
        #expect(Set(keyed(before)).isSubset(of: Set(keyed(after))), "the rows of the flows the restore lost are as they were")
        // Locally, the restored history and the new flow.
        #expect(try box.closedFlows(3).compactMap { $0.int("id") }.max() == newest.first?.int("id"))

        // Restored again, and the store down at the start: the ids still go on past what it was
        // known to hold (`instance-store-highest`, beside the database), so a backfill once it
        // answers writes over nothing (a re-check's went over rows 7 to 9).
        try #require(try Run.process("cp", [backup, database], in: box.work, environment: box.environment, timeout: 30).status == 0)
        server.stop()
        let d = try world.run("--inspect", "--store", url)
        #expect(try world.curlThrough(d, [world.url("/index.html?down")]).status == 0)
        _ = try box.closedFlows(3)
        try d.stop()
        try server.start()
        let backfill = try box.tv("store", "backfill", "--store", url, "--all")
        #expect(backfill.status == 0, "\(backfill)")
        let final = try closedSharedRows(box, url, 6)
        #expect(Set(keyed(after)).isSubset(of: Set(keyed(final))), "no row written over: \(final)")
        #expect(final.count == 6, "\(final)")
    }

    @Test("the database and its store mark both put back from an older copy, the store down at the start: the flow made before it answers takes an id it holds; at its first write it is found by its start, kept here and said, the store's row stays as it was, and a backfill leaves it out")
    func restoredWithItsMarkKeepsTheStoresRows() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        try server.start()
        let url = try server.makeDatabase()
        let world = try RunWorld()
        let box = world.sandbox
        let a = try world.run("--inspect", "--store", url)
        #expect(try world.curlThrough(a, [world.url("/index.html?a")]).status == 0)
        _ = try closedSharedRows(box, url, 1)
        try a.stop()
        let database = box.dataDir + "/tunnelvision.sqlite3", mark = box.dataDir + "/instance-store-highest"
        for (from, to) in [(database, box.work + "/backup.sqlite3"), (mark, box.work + "/backup-mark")] {
            try #require(try Run.process("cp", [from, to], in: box.work, environment: box.environment, timeout: 30).status == 0)
        }
        let b = try world.run("--inspect", "--store", url)
        for q in ["b1", "b2"] { #expect(try world.curlThrough(b, [world.url("/index.html?\(q)")]).status == 0) }
        let before = try closedSharedRows(box, url, 3)
        try b.stop()
        for (from, to) in [(box.work + "/backup.sqlite3", database), (box.work + "/backup-mark", mark)] {
            try #require(try Run.process("cp", [from, to], in: box.work, environment: box.environment, timeout: 30).status == 0)
        }
        server.stop()
        let c = try world.run("--inspect", "--store", url)
        #expect(try world.curlThrough(c, [world.url("/index.html?down")]).status == 0)
        let down = try #require(try box.closedFlows(2).max { ($0.int("id") ?? 0) < ($1.int("id") ?? 0) }, "the flow made while the store was down")
        try server.start()
        let said = "1 flow of this session was not sent to the shared store at 127.0.0.1:\(server.port)/"
        var log = ""
        for _ in 0..<300 where !log.contains(said) { log = c.log(); usleep(50_000) }
        #expect(log.contains(said) && log.contains(": it holds other flows of this instance under its id, which it keeps; this data folder's database and its store mark look restored from an older copy. The flow stays here; new flows go on past the store's ids."), "\(log)")
        #expect(try box.status()?.object("sharedStore")?.int("idClashes") == 1)
        #expect(try box.tv("status").out.contains(", 1 kept here under ids the store holds for other flows"))
        // A flow made now goes past the store's ids.
        #expect(try world.curlThrough(c, [world.url("/index.html?after")]).status == 0)
        let after = try closedSharedRows(box, url, 4)
        try c.stop()
        func keyed(_ rows: [JSON]) -> [String] { rows.map { "\($0.int("id") ?? 0)@\($0.int("startTime") ?? 0)" }.sorted() }
        #expect(Set(keyed(before)).isSubset(of: Set(keyed(after))) && after.count == 4, "the store's rows as they were: \(before) → \(after)")
        #expect(!keyed(after).contains(keyed([down])[0]), "the clashing flow is not in the store")
        #expect((after.compactMap { $0.int("id") }.max() ?? 0) > (before.compactMap { $0.int("id") }.max() ?? 0))
        let backfill = try box.tv("store", "backfill", "--store", url, "--all")
        #expect(backfill.status == 0 && backfill.out.contains("1 flow was left out: the shared store holds other flows of this instance under its id (this data folder's database looks restored from an older copy); it stays here, and the store's rows are as they were."), "\(backfill)")
        #expect(Set(keyed(try sharedRows(box, url))) == Set(keyed(after)), "the backfill wrote over nothing")
    }

    @Test("a server that takes writes and never answers (SIGSTOP): forwarding goes on, tv status says it waits, and `tv stop` ends the session within the stop's wait, both saying so")
    func hungServerDoesNotHoldTheStop() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        try server.start()
        let url = try server.makeDatabase()
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--store", url)
        #expect(try world.curlThrough(tv, [world.url("/index.html")]).out == "hello from nginx\n")
        _ = try closedSharedRows(box, url, 1)
        let pidText = try String(contentsOfFile: server.folder + "/data/postmaster.pid", encoding: .utf8)
        let postmaster = try #require(pid_t(pidText.split(separator: "\n").first ?? ""))
        let children = try Run.process("pgrep", ["-P", String(postmaster)], in: box.work, environment: box.environment, timeout: 10)
            .out.split(separator: "\n").compactMap { pid_t($0) }
        let stopped = [postmaster] + children
        for pid in stopped { kill(pid, SIGSTOP) }
        defer { for pid in stopped { kill(pid, SIGCONT) } }
        #expect(try world.curlThrough(tv, [world.url("/index.html?during")]).out == "hello from nginx\n")
        var line = ""
        let deadline = Date().addingTimeInterval(25)
        repeat {
            line = (try? box.tv("status").out) ?? ""
            if line.contains("shared store  waiting for ") || line.contains("waiting for 127.0.0.1") { break }
            usleep(500_000)
        } while Date() < deadline
        #expect(line.contains("waiting for 127.0.0.1:\(server.port)/") && line.contains(", which has not answered a write for "), "\(line)")
        // The flow made meanwhile waits with the write: counted (it read "0 flows waiting": a trial).
        let unanswered = line.components(separatedBy: " s (").dropFirst().first?.split(separator: " ").first.flatMap { Int($0) } ?? 0
        #expect(unanswered > 0 && line.contains(" events wait for that answer or behind it; "), "\(line)")
        // `tv stop` says it too (it said "everything is saved": its answer came before the wait ended).
        let began = Date()
        let stop = try box.tv("stop")
        #expect(tv.waitForExit(seconds: 25), "\(tv.log())")
        #expect(Date().timeIntervalSince(began) < 25)
        #expect(stop.out.contains("everything is saved in \(box.dataDir). The shared store at 127.0.0.1:\(server.port)/")
                && stop.out.contains("did not answer a write for 15 s, so tv stopped without it"), "\(stop)")
        #expect(tv.log().contains("did not answer a write for 15 s, so tv stopped without it"), "\(tv.log())")
    }

    @Test("a store URL with a password is refused before anything listens, with the reason, and the password is not repeated")
    func passwordInURLRefused() throws {
        let box = try Sandbox()
        defer { box.remove() }
        let r = try box.tv("run", "--listen", "127.0.0.1:\(freeLoopbackPort())", "--store", "postgresql://tv:hunter2@127.0.0.1:1/db")
        #expect(r.status != 0, "\(r)")
        #expect(r.err.contains("holds a password") && r.err.contains("PGPASSFILE") && !r.all.contains("hunter2"), "\(r)")
    }
}
