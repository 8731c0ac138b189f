import Testing
@testable import FlowStore
import FlowTerms

/// The flow writer keeps `flow_activity` and `flow_names` itself for the rows it inserts
/// (migration 21): the per-batch tally, the name cache, and the store they leave, compared
/// with counting the flows and with the names the flows hold.
@Suite struct FlowWriterRollupTests {
    static let s: Int64 = 1_000_000

    @Test("the tally: each flow in its minute and its hour, rows in (span, bucket) order, truncated as SQLite divides")
    func tally() {
        var tally = FlowActivityTally()
        #expect(tally.isEmpty)
        for start in [0, 59 * Self.s, 60 * Self.s, 3_600 * Self.s + 1, 7_199 * Self.s] { tally.add(startTime: start) }
        let rows = tally.rows.map { "\($0.bucket.span) \($0.bucket.bucket) \($0.flows)" }
        #expect(rows == ["60 0 2", "60 1 1", "60 60 1", "60 119 1", "3600 0 3", "3600 1 2"])
        tally.removeAll()
        #expect(tally.rows.isEmpty)
    }

    @Test("the name cache: a name and bit asked once, learnt on commit, forgotten on rollback, on another connection's commit and when full")
    func nameCache() {
        var cache = FlowNameCache(capacity: 3)
        /// The cache's answers to `asks`, in order.
        func answers(_ asks: [(String, Int64)]) -> [Bool] { asks.map { cache.needs($0.0, bit: $0.1) } }
        cache.begin(dataVersion: 1)
        #expect(answers([("a.test", 1), ("a.test", 1), ("a.test", 2), ("10.0.0.1", 4)]) == [true, false, true, true])
        cache.rolledBack()
        #expect(cache.count == 0)
        cache.begin(dataVersion: 1)
        #expect(answers([("a.test", 1), ("10.0.0.1", 4)]) == [true, true])
        cache.committed()
        #expect(cache.count == 2)
        cache.begin(dataVersion: 1)
        #expect(answers([("a.test", 1), ("a.test", 8), ("10.0.0.1", 4)]) == [false, true, false])
        cache.committed()
        // Another connection committed (retention may have deleted names): start again.
        cache.begin(dataVersion: 2)
        #expect(cache.count == 0)
        #expect(answers([("a.test", 1), ("b.test", 1), ("c.test", 1)]) == [true, true, true])
        cache.committed()
        #expect(cache.count == 3)
        cache.begin(dataVersion: 2)
        #expect(answers([("d.test", 1)]) == [true])
        cache.committed()
        #expect(cache.count == 1)   // past the capacity: only the last transaction's names
    }

    @Test("a row's names: host, other names as stored, both addresses; none for an absent or empty text")
    func namesOfARow() {
        #expect(FlowNameCache.names(host: "a.test", otherHosts: "b.test,c.test", serverAddress: "10.0.0.1", clientAddress: "::1").map { "\($0.name) \($0.bit)" }
            == ["a.test 1", "b.test,c.test 2", "10.0.0.1 4", "::1 8"])
        #expect(FlowNameCache.names(host: nil, otherHosts: "", serverAddress: "10.0.0.1", clientAddress: "").map { "\($0.name) \($0.bit)" }
            == ["10.0.0.1 4"])
        #expect(FlowNameCache.names(host: "", otherHosts: "", serverAddress: "", clientAddress: "").isEmpty)
    }

    /// `flow_names` as "name columns" lines, and the same built from the flows (what migration 20's triggers keep).
    func names(_ database: SQLiteDatabase) throws -> (stored: [String], fromFlows: [String]) {
        func lines(_ sql: String) throws -> [String] {
            var lines: [String] = []
            try database.prepare(sql).forEachRow { lines.append("\($0.string(at: 0) ?? "") \($0.int64(at: 1))") }
            return lines
        }
        return (try lines("SELECT name, columns FROM flow_names ORDER BY name"),
                try lines("""
                    SELECT name, sum(bit) FROM (
                        SELECT DISTINCT host AS name, 1 AS bit FROM flows WHERE host <> ''
                        UNION SELECT DISTINCT other_hosts, 2 FROM flows WHERE other_hosts <> ''
                        UNION SELECT DISTINCT server_address, 4 FROM flows WHERE server_address <> ''
                        UNION SELECT DISTINCT client_address, 8 FROM flows WHERE client_address <> '')
                    GROUP BY name ORDER BY name
                    """))
    }

    /// `flow_activity` as "span bucket flows" lines (buckets above 0), and the same counted from the flows.
    func activity(_ database: SQLiteDatabase) throws -> (stored: [String], fromFlows: [String]) {
        func lines(_ sql: String) throws -> [String] {
            var lines: [String] = []
            try database.prepare(sql).forEachRow { lines.append("\($0.int64(at: 0)) \($0.int64(at: 1)) \($0.int64(at: 2))") }
            return lines
        }
        return (try lines("SELECT span, bucket, flows FROM flow_activity WHERE flows > 0 ORDER BY span, bucket"),
                try lines("""
                    SELECT 60, start_time / 60000000, count(*) FROM flows GROUP BY 2
                    UNION ALL SELECT 3600, start_time / 3600000000, count(*) FROM flows GROUP BY 2 ORDER BY 1, 2
                    """))
    }

    @Test("across batches, with flows opened in one batch and closed in the next, the rollup counts each flow once and the names are the flows'")
    func writerKeepsRollupAndNames() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            var open = sampleFlow(start: 10 * Self.s, host: "a.test", server: "10.0.0.1")
            open = writer.open(open)
            writer.flush()
            // The same flow again (an update: not counted twice), new flows, one with other names.
            open.duration = 5
            writer.enqueue(.closed(open))
            var inferred = sampleFlow(start: 70 * Self.s, host: "b.test", server: "10.0.0.2", client: "10.0.0.9")
            inferred.otherHosts = ["c.test", "d.test"]
            _ = writer.open(inferred)
            _ = writer.open(sampleFlow(start: 3_700 * Self.s, host: "a.test", server: "10.0.0.2"))
            writer.flush()
            // A name the store already holds in another column gains its bit.
            _ = writer.open(sampleFlow(start: 3_800 * Self.s, host: "10.0.0.1", server: "10.0.0.1"))
            writer.close()
            try store.connection.withDatabase { database in
                let (stored, fromFlows) = try names(database)
                #expect(stored == ["10.0.0.1 5", "10.0.0.2 4", "10.0.0.9 8", "127.0.0.1 8", "a.test 1", "b.test 1", "c.test,d.test 2"])
                #expect(stored == fromFlows)
                let rollup = try activity(database)
                #expect(rollup.stored == ["60 0 1", "60 1 1", "60 61 1", "60 63 1", "3600 0 2", "3600 1 2"])
                #expect(rollup.stored == rollup.fromFlows)
            }
        }
    }

    @Test("a name retention deleted while the writer ran is written again with its next flow (the cache starts again)")
    func nameDeletedElsewhereComesBack() throws {
        try withStore { store, path in
            let writer = try store.makeWriter()
            let first = writer.open(sampleFlow(start: 10 * Self.s, host: "gone.test", server: "10.0.0.1"))
            writer.flush()
            // Another connection deletes the flow and its names, as StorageManager does.
            let other = try SQLiteDatabase(path: path + "/tunnelvision.sqlite3")
            try other.execute("DELETE FROM flows WHERE id = \(first.id); DELETE FROM flow_names")
            other.close()
            _ = writer.open(sampleFlow(start: 20 * Self.s, host: "gone.test", server: "10.0.0.1"))
            writer.close()
            try store.connection.withDatabase { database in
                let (stored, fromFlows) = try names(database)
                #expect(stored == ["10.0.0.1 4", "127.0.0.1 8", "gone.test 1"])
                #expect(stored == fromFlows)
            }
            #expect(try store.flows(FlowQuery(host: "gone.te")).flows.count == 1)
        }
    }

    @Test("a row inserted without a writer (the sqlite3 shell, a test's SQL) is still counted and named by the trigger")
    func rowWithoutAWriterKeepsTheTrigger() throws {
        try withStore { store, _ in
            try store.connection.withDatabase { database in
                try database.execute("""
                    INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                                       transport, host, host_origin, status) VALUES (7, 120000000, 120000000, '127.0.0.1', 1, '10.0.0.1', 443, 'tcp', 'shell.test', 'sni', 'encrypted')
                    """)
                let (stored, fromFlows) = try names(database)
                #expect(stored == ["10.0.0.1 4", "127.0.0.1 8", "shell.test 1"])
                #expect(stored == fromFlows)
                let rollup = try activity(database)
                #expect(rollup.stored == ["60 2 1", "3600 0 1"])
                #expect(rollup.stored == rollup.fromFlows)
            }
        }
    }

    @Test("a store made by the schema before: migrated, its rollup and names kept, and they go on agreeing with the flows")
    func migrationFromThePreviousSchema() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/tunnelvision.sqlite3"
        let database = try SQLiteDatabase(path: path)
        let index = try #require(FlowSchema.migrations.firstIndex { $0.contains("CREATE TRIGGER flows_insert_unwritten") })
        try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(index)))
        for (id, start, host) in [(1, 60 * Self.s, "old.test"), (2, 3_700 * Self.s, "older.test")] {
            try database.execute("""
                INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                                   transport, host, host_origin, status, duration) VALUES (\(id), \(start), \(start), '127.0.0.1', 1, '10.0.0.1', 443, 'tcp', '\(host)', 'sni', 'encrypted', 1)
                """)
        }
        #expect(try FlowSchema.migrate(database) == index)
        var triggers: [String] = []
        try database.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'flows' ORDER BY name").forEachRow {
            triggers.append($0.string(at: 0) ?? "")
        }
        #expect(triggers == ["flow_activity_delete", "flow_activity_move", "flow_names_update", "flows_insert_unwritten"])
        database.close()
        let store = try FlowStore(path: path)
        defer { store.close() }
        _ = try writeFlows([sampleFlow(start: 120 * Self.s, host: "old.test", server: "10.0.0.2"), sampleFlow(start: 3_800 * Self.s, host: "new.test")],
                           to: store)
        try store.connection.withDatabase { database in
            let (stored, fromFlows) = try names(database)
            #expect(stored == ["10.0.0.1 4", "10.0.0.2 4", "127.0.0.1 8", "93.184.216.34 4", "new.test 1", "old.test 1", "older.test 1"])
            #expect(stored == fromFlows)
            let rollup = try activity(database)
            #expect(rollup.stored == ["60 1 1", "60 2 1", "60 61 1", "60 63 1", "3600 0 2", "3600 1 2"])
            #expect(rollup.stored == rollup.fromFlows)
        }
    }
}
