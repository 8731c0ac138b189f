import Testing
@testable import FlowStore
import FlowTerms

/// The writer's flow upsert (`INSERT OR FAIL`, the live audit session bound once per batch):
/// its statement's shape, and two batches with programs, rewrites and moved starts written by the
/// writer against the same events written by a connection that keeps the triggers.
@Suite struct FlowWriterUpsertTests {
    static let s: Int64 = 1_000_000

    @Test("the upsert: OR FAIL (no statement journal for a rewrite), 42 parameters (48 with the program's columns), the audit session last")
    func statementShape() {
        #expect(FlowRecordColumns.upsertSQL.hasPrefix("INSERT OR FAIL INTO flows ("))
        #expect(FlowRecordColumns.upsertSQL.filter { $0 == "?" }.count == 42)
        #expect(FlowRecordColumns.upsertWithProgramSQL.filter { $0 == "?" }.count == 48)
        #expect(FlowRecordColumns.upsertSQL.contains("audit_session_id) VALUES ("))
        #expect(!FlowRecordColumns.upsertSQL.contains("SELECT"))
    }

    static func flow(_ i: Int64, start: Int64, closed: Bool) -> FlowRecord {
        var f = sampleFlow(start: start, host: i % 9 == 0 ? nil : "h\(i % 7).test", server: "10.0.\(i % 5).1",
                           client: "10.1.0.\(i % 3)")
        f.id = i
        f.duration = closed ? i : nil
        if i % 6 == 0 { f.otherHosts = ["o\(i % 4).test"] }
        // Requests counted without rows: with a known program (8), an unknown one (13), none (3).
        if i % 5 == 3 { f.requestsLeftOut = i * 1_000 }
        return f
    }

    static func program(_ i: Int64) -> FlowProgram? {
        switch i % 4 {
        case 0: return .known(ProgramIdentity(pid: Int32(i), command: "curl", executable: "/usr/bin/curl", uid: 1_000, user: "u\(i)"))
        case 1: return .notKnown(.socketGone)
        default: return nil
        }
    }

    /// Batch 1: flows 1–75 opened, a program for 38 of them. Batch 2: flows 1–40 closed, their
    /// starts 90 s later (rewrites, moved to another minute), and 76–110 opened with their programs.
    static let batches: [[FlowEvent]] = {
        var first: [FlowEvent] = []
        for i in Int64(1)...75 {
            first.append(.opened(flow(i, start: i * 20 * s, closed: false)))
            if let p = program(i) { first.append(.program(flowID: i, p)) }
        }
        var second: [FlowEvent] = []
        for i in Int64(1)...40 { second.append(.closed(flow(i, start: i * 20 * s + 90 * s, closed: true))) }
        for i in Int64(76)...110 {
            second.append(.opened(flow(i, start: i * 20 * s, closed: false)))
            if let p = program(i) { second.append(.program(flowID: i, p)) }
        }
        return [first, second]
    }()

    static let rowsSQL = """
        SELECT 'row', id, start_time, ifnull(duration, 'open'), ifnull(host, '-'), other_hosts, server_address, client_address,
               ifnull(program_pid, '-'), ifnull(program_command, '-'), ifnull(program_executable, '-'), ifnull(program_uid, '-'),
               ifnull(program_user, '-'), ifnull(program_unknown, '-'), ifnull(audit_session_id, '-'), ifnull(requests_left_out, '-')
        FROM flows ORDER BY id
        """

    func lines(_ database: SQLiteDatabase, _ sql: String) throws -> [String] {
        var lines: [String] = []
        try database.prepare(sql).forEachRow { row in
            lines.append((0..<row.columnCount).map { row.string(at: $0) ?? "NULL" }.joined(separator: " "))
        }
        return lines
    }

    @Test("two batches through the writer: rows, programs and every derived table equal the same events written with the triggers")
    func writerMatchesTheTriggers() throws {
        var results: [[String]] = []
        // The writer's batch writer, each batch written whole (as the writer thread would).
        try withStore { store, folder in
            let writer = try FlowBatchWriter(path: folder + "/tunnelvision.sqlite3")
            for batch in Self.batches { try writer.write(batch) }
            writer.close()
            try store.connection.withDatabase { results.append(try lines($0, Self.rowsSQL) + FlowWriterTriggerTests().derived($0)) }
            #expect(try store.flow(id: 8)?.requestsLeftOut == 8_000)
            #expect(try store.flow(id: 7)?.requestsLeftOut == nil)
        }
        // A connection with the triggers: one upsert a flow event, the program set after, no audit session.
        try withStore { store, _ in
            try store.connection.withDatabase { database in
                let upsert = try database.prepare(FlowRecordColumns.upsertSQL)
                let setProgram = try database.prepare(FlowRecordColumns.programUpdateSQL)
                for batch in Self.batches {
                    try database.transaction {
                        for event in batch {
                            if let flow = event.flow {
                                var values = FlowRecordColumns.bindings(flow, writer: 0)
                                values[values.count - 1] = .null
                                try upsert.bind(values)
                                try upsert.step()
                            } else if case let .program(id, program) = event {
                                try setProgram.bind(FlowRecordColumns.programBindings(program) + [.integer(id)])
                                try setProgram.step()
                            }
                        }
                    }
                }
                results.append(try lines(database, Self.rowsSQL) + FlowWriterTriggerTests().derived(database))
            }
        }
        try #require(results.count == 2)
        #expect(results[0] == results[1])
        let rows = results[0].filter { $0.hasPrefix("row ") }
        #expect(rows.count == 110)
        #expect(rows.first == "row 1 110000000 1 h1.test  10.0.1.1 10.1.0.1 - - - - - socket_gone - -")
        #expect(rows[3] == "row 4 170000000 4 h4.test  10.0.4.1 10.1.0.1 4 curl /usr/bin/curl 1000 u4 - - -")
        #expect(rows[5] == "row 6 210000000 6 h6.test o2.test 10.0.1.1 10.1.0.0 - - - - - - - -")
        #expect(rows[7] == "row 8 250000000 8 h1.test  10.0.3.1 10.1.0.2 8 curl /usr/bin/curl 1000 u8 - - 8000")
        #expect(rows[12] == "row 13 350000000 13 h6.test  10.0.3.1 10.1.0.1 - - - - - socket_gone - 13000")
        #expect(rows[109] == "row 110 2200000000 open h5.test  10.0.0.1 10.1.0.2 - - - - - - - -")
        // Every flow counted once, in its latest minute.
        let minutes = results[0].filter { $0.hasPrefix("activity 60 ") }.map { Int($0.split(separator: " ")[3])! }
        #expect(minutes.reduce(0, +) == 110)
        #expect(results[0].contains("activity 60 1 1"))    // flow 1: 110 s
        #expect(results[0].contains("activity 60 0 0"))    // flows 1 and 2 left minute 0
    }
}
