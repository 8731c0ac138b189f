import Testing
@testable import FlowStore
import FlowTerms

/// The flow writer's connection runs no triggers and does their work itself (`FlowTriggerWork`):
/// which rows may exist, the moved start time's buckets, the pinned list of triggers, and the
/// same flows written by the writer and by a connection that keeps the triggers, compared in
/// every table the triggers keep.
@Suite struct FlowWriterTriggerTests {
    static let s: Int64 = 1_000_000

    @Test("which rows may exist: up to max(id) at open, then up to the largest id written; a rollback only raises the bound")
    func mayExist() {
        var work = FlowTriggerWork(maxIDAtOpen: 10)
        #expect([9, 10, 11].map(work.mayExist) == [true, true, false])
        work.writing(12)
        work.writing(11)
        #expect(work.highestWritten == 12)
        #expect([11, 12, 13].map(work.mayExist) == [true, true, false])
        #expect(FlowTriggerWork(maxIDAtOpen: 0).mayExist(1) == false)
        #expect(FlowTriggerWork(maxIDAtOpen: -5).highestWritten == 0)
    }

    @Test("a moved start: out of the old minute and hour, into the new ones; the same minute moves nothing")
    func moves() {
        #expect(FlowActivityTally.moves(from: 60 * Self.s, to: 119 * Self.s) == false)
        #expect(FlowActivityTally.moves(from: 60 * Self.s, to: 120 * Self.s) == true)
        var tally = FlowActivityTally()
        tally.move(from: 61 * Self.s, to: 100 * Self.s)
        #expect(tally.isEmpty)
        tally.move(from: 61 * Self.s, to: 130 * Self.s)            // same hour, another minute
        tally.move(from: 3_599 * Self.s, to: 3_600 * Self.s)       // another hour
        tally.add(startTime: 3_600 * Self.s)
        #expect(tally.removalRows.map { "\($0.bucket.span) \($0.bucket.bucket) \($0.flows)" } == ["60 1 1", "60 59 1", "3600 0 2"])
        #expect(tally.rows.map { "\($0.bucket.span) \($0.bucket.bucket) \($0.flows)" } == ["60 2 1", "60 60 2", "3600 0 1", "3600 1 2"])
        tally.removeAll()
        #expect(tally.isEmpty)
        #expect(tally.removalRows.isEmpty)
    }

    @Test("the triggers on the tables the writer writes are exactly those whose work it does")
    func triggersArePinned() throws {
        try withStore { store, _ in
            try store.connection.withDatabase { database in
                var triggers: [String] = []
                try database.prepare("""
                    SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name IN
                        ('flows', 'flow_names', 'flow_activity', 'exchanges', 'exchange_runs', 'certificates', 'flow_writers')
                    ORDER BY name
                    """).forEachRow { triggers.append($0.string(at: 0) ?? "") }
                #expect(triggers == FlowTriggerWork.triggersDoneByTheWriter)
            }
        }
    }

    @Test("a connection's triggers switch off and on for it alone")
    func switchIsPerConnection() throws {
        try withStore { store, path in
            let file = path + "/tunnelvision.sqlite3"
            let quiet = try SQLiteDatabase(path: file)
            defer { quiet.close() }
            #expect(quiet.triggersEnabled)
            quiet.triggersEnabled = false
            #expect(quiet.triggersEnabled == false)
            let insert = """
                INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                                   transport, host, host_origin, status) VALUES (%d, 120000000, 120000000, '127.0.0.1', 1, '10.0.0.1', 443, 'tcp', '%@', 'sni', 'encrypted')
                """
            try quiet.execute(insert.replacingOccurrences(of: "%d", with: "1").replacingOccurrences(of: "%@", with: "quiet.test"))
            try store.connection.withDatabase { database in
                try database.execute(insert.replacingOccurrences(of: "%d", with: "2").replacingOccurrences(of: "%@", with: "loud.test"))
                #expect(try database.scalar("SELECT group_concat(name, ' ') FROM flow_names WHERE name LIKE '%.test'") == .text("loud.test"))
            }
            quiet.triggersEnabled = true
            #expect(quiet.triggersEnabled)
        }
    }

    /// Every table the triggers keep, as lines: `flow_activity` (every row, zeros kept), `flow_names`
    /// (id, name, columns), each name's trigram search (the ids `flow_names_text` finds for its
    /// first three characters and for the whole name), the FTS index's own check, and the flows
    /// without `writer`.
    func derived(_ database: SQLiteDatabase) throws -> [String] {
        var lines: [String] = []
        func add(_ sql: String, _ bindings: [SQLiteValue] = []) throws {
            let statement = try database.prepare(sql)
            try statement.bind(bindings)
            try statement.forEachRow { row in
                lines.append((0..<row.columnCount).map { column -> String in
                    switch row.value(at: column) {
                    case let .integer(n): return "\(n)"
                    case let .text(text): return text
                    case .null: return "NULL"
                    case let other: return "\(other)"
                    }
                }.joined(separator: " "))
            }
        }
        try add("SELECT 'activity', span, bucket, flows FROM flow_activity ORDER BY span, bucket")
        try add("SELECT 'name', id, name, columns FROM flow_names ORDER BY id")
        var names: [String] = []
        try database.prepare("SELECT name FROM flow_names ORDER BY id").forEachRow { names.append($0.string(at: 0) ?? "") }
        for name in names {
            for text in [String(name.prefix(3)), name] {
                let phrase = "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                try add("SELECT 'match', ?, group_concat(rowid, ',') FROM (SELECT rowid FROM flow_names_text WHERE flow_names_text MATCH ? ORDER BY rowid)",
                        [.text(text), .text(phrase)])
            }
        }
        try database.execute("INSERT INTO flow_names_text (flow_names_text) VALUES ('integrity-check')")
        try add("SELECT 'flow', id, start_time, host, other_hosts, server_address, client_address, status, duration FROM flows ORDER BY id")
        return lines
    }

    @Test("the same flows, written by the writer (no triggers) and by a connection that keeps them: every derived table identical")
    func writerMatchesTheTriggers() throws {
        // Batches as the writer sees them: new flows, then rewrites with moved starts (another
        // minute in the same hour, another hour), changed names, a name known in another column,
        // a closed flow's rewrite with nothing moved, and a flow whose open was never written.
        var a = sampleFlow(start: 10 * Self.s, host: "a.test", server: "10.0.0.1")
        var b = sampleFlow(start: 70 * Self.s, host: "b.test", server: "2001:db8::1", client: "10.0.0.9")
        b.otherHosts = ["c.test", "d.test"]
        var c = sampleFlow(start: 3_500 * Self.s, host: nil, server: "10.0.0.2")
        let d = sampleFlow(start: 3_700 * Self.s, host: "10.0.0.1", server: "10.0.0.1", status: .inspected)
        let e = sampleFlow(start: 7_300 * Self.s, host: "late.test", server: "10.0.0.3")
        a.id = 1; b.id = 2; c.id = 3
        var d2 = d; d2.id = 4
        var e2 = e; e2.id = 5
        var batches: [[FlowEvent]] = [[.opened(a), .opened(b), .opened(c)]]
        a.startTime = 130 * Self.s; a.duration = 5              // another minute, same hour
        b.host = "renamed.test"                                  // a name changed
        c.startTime = 3_650 * Self.s; c.duration = 1             // another hour
        batches.append([.closed(a), .updated(b), .closed(c), .opened(d2)])
        b.startTime = 75 * Self.s; b.duration = 2                // same minute: nothing moves
        a.startTime = 7_250 * Self.s                             // a closed flow rewritten, moved again
        batches.append([.closed(b), .updated(a), .closed(e2)])   // e's open never written

        var results: [[String]] = []
        // The writer.
        try withStore { store, _ in
            let writer = try store.makeWriter()
            for batch in batches {
                for event in batch {
                    writer.enqueue(event)
                }
                writer.flush()
            }
            writer.close()
            try store.connection.withDatabase { results.append(try derived($0)) }
        }
        // A connection with the triggers: the same upserts, one transaction a batch, no writer id.
        try withStore { store, _ in
            try store.connection.withDatabase { database in
                #expect(database.triggersEnabled)
                let upsert = try database.prepare(FlowRecordColumns.upsertSQL)
                for batch in batches {
                    try database.transaction {
                        for event in batch {
                            guard let flow = event.flow else { continue }
                            var values = FlowRecordColumns.bindings(flow, writer: 0)
                            values[values.count - 1] = .null
                            try upsert.bind(values)
                            try upsert.step()
                        }
                    }
                }
                results.append(try derived(database))
            }
        }
        try #require(results.count == 2)
        #expect(results[0] == results[1])
        // And what they hold is what the flows say.
        #expect(results[0].filter { $0.hasPrefix("activity") }
            == ["activity 60 0 0", "activity 60 1 1", "activity 60 2 0", "activity 60 58 0", "activity 60 60 1", "activity 60 61 1",
                "activity 60 120 1", "activity 60 121 1", "activity 3600 0 1", "activity 3600 1 2", "activity 3600 2 2"])
        #expect(results[0].filter { $0.hasPrefix("name") }
            == ["name 1 a.test 1", "name 2 10.0.0.1 5", "name 3 127.0.0.1 8", "name 4 b.test 1", "name 5 c.test,d.test 2",
                "name 6 2001:db8::1 4", "name 7 10.0.0.9 8", "name 8 10.0.0.2 4", "name 9 renamed.test 1", "name 10 late.test 1",
                "name 11 10.0.0.3 4"])
        #expect(results[0].contains("match renamed.test 9"))
        #expect(results[0].contains("match 10. 2,7,8,11"))
    }
}
