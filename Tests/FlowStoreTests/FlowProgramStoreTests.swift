import FlowTerms
import Synchronization
import Testing
@testable import FlowStore

@Suite("the program behind a flow in the store: FlowEvent.program, --program, the columns' checks")
struct FlowProgramStoreTests {
    static let curl = FlowProgram.known(ProgramIdentity(pid: 4242, command: "curl", executable: "/usr/bin/curl", uid: 65_534, user: "nobody"))

    @Test("the program event sets the program columns; record updates and closes after it leave them; a second flow is not known (socket gone)")
    func programSurvivesRecordUpdates() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            var a = writer.open(sampleFlow(start: 10))
            let b = writer.open(sampleFlow(start: 20))
            #expect(writer.enqueue(.program(flowID: a.id, Self.curl)))
            #expect(writer.enqueue(.program(flowID: b.id, .notKnown(.socketGone))))
            writer.flush()
            a.bytesUp = 99
            a.duration = 5
            #expect(writer.enqueue(.closed(a)))
            writer.close()
            let readA = try #require(try store.flow(id: a.id))
            #expect(readA.program == Self.curl && readA.bytesUp == 99)
            #expect(try store.flow(id: b.id)?.program == .notKnown(.socketGone))
        }
    }

    @Test("a record and its program in one batch: the record is written first, then the program")
    func sameBatch() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            writer.pauseForTesting()
            let a = writer.open(sampleFlow(start: 10))
            writer.enqueue(.program(flowID: a.id, Self.curl))
            writer.resumeForTesting()
            writer.close()
            #expect(try store.flow(id: a.id)?.program == Self.curl)
        }
    }

    @Test("programs sharing a batch with their records: written with the record (the last one of the batch wins), an update of an older row too, and alone for a record not in the batch")
    func programsWrittenWithTheirRecords() throws {
        try withStore { store, _ in
            let python = FlowProgram.known(ProgramIdentity(pid: 7, command: "python3", executable: nil, uid: 0, user: "root"))
            let writer = try store.makeWriter()
            var older = writer.open(sampleFlow(start: 5))
            let alone = writer.open(sampleFlow(start: 6))
            writer.flush()
            writer.pauseForTesting()
            let a = writer.open(sampleFlow(start: 10))
            writer.enqueue(.program(flowID: a.id, python))
            writer.enqueue(.program(flowID: a.id, Self.curl))
            older.bytesDown = 77
            writer.enqueue(.updated(older))
            writer.enqueue(.program(flowID: older.id, .notKnown(.socketGone)))
            writer.enqueue(.program(flowID: alone.id, python))
            writer.resumeForTesting()
            writer.flush()
            // A later record of the flow leaves its program.
            var closed = a
            closed.duration = 3
            writer.enqueue(.closed(closed))
            writer.close()
            #expect(try store.flow(id: a.id)?.program == Self.curl)
            #expect(try store.flow(id: a.id)?.duration == 3)
            let readOlder = try #require(try store.flow(id: older.id))
            #expect(readOlder.program == .notKnown(.socketGone) && readOlder.bytesDown == 77)
            #expect(try store.flow(id: alone.id)?.program == python)
        }
    }

    @Test("--program curl: only curl's flows, through the index flows_by_program_time")
    func filter() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            let flows = (0..<4).map { writer.open(sampleFlow(start: Int64(10 * $0))) }
            writer.enqueue(.program(flowID: flows[0].id, Self.curl))
            writer.enqueue(.program(flowID: flows[2].id, Self.curl))
            writer.enqueue(.program(flowID: flows[1].id, .known(ProgramIdentity(pid: 7, command: "python3", executable: nil, uid: 0, user: "root"))))
            writer.close()
            #expect(try store.flows(FlowQuery(program: "curl")).flows.map(\.id) == [flows[2].id, flows[0].id])
            #expect(try store.count(FlowQuery(program: "python3")) == 1)
            #expect(try store.flows(FlowQuery(program: "cur")).flows.isEmpty)
            let plan = try FlowQuery(program: "curl").plan()
            #expect(plan.sql.contains("WHERE program_command = ?") && plan.bindings.first == .text("curl"))
            // A name past the kernel's 15 bytes is looked for as the kernel keeps it.
            #expect(try FlowQuery(program: "a-very-long-program-name-curl").plan().bindings.first == .text("a-very-long-pro"))
            let database = try SQLiteDatabase(readingAt: store.path)
            defer { database.close() }
            let statement = try database.prepare("EXPLAIN QUERY PLAN SELECT id FROM flows WHERE program_command = 'curl'")
            var explain = ""
            while try statement.step() { explain += "\(statement.value(at: 3))" }
            #expect(explain.contains("flows_by_program_time"), "\(explain)")
        }
    }

    @Test("tv top's by-program totals: flows since a time summed by command, busiest first, not known as nil")
    func totals() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            var flows: [FlowRecord] = []
            for (i, down) in [100, 5_000, 300, 7, 50].enumerated() {  // flows started at 10, 20, … 50
                var f = sampleFlow(start: Int64(10 * (i + 1)))
                f.bytesDown = Int64(down)
                f.bytesUp = 1
                flows.append(writer.open(f))
            }
            writer.enqueue(.program(flowID: flows[0].id, Self.curl))   // start 10: before `since`
            writer.enqueue(.program(flowID: flows[1].id, Self.curl))
            writer.enqueue(.program(flowID: flows[2].id, Self.curl))
            writer.enqueue(.program(flowID: flows[3].id, .known(ProgramIdentity(pid: 7, command: "python3", executable: nil, uid: 0, user: "root"))))
            writer.enqueue(.program(flowID: flows[4].id, .notKnown(.socketGone)))
            writer.close()
            #expect(try store.programTotals(since: 20, limit: 10) == [
                ProgramTotals(command: "curl", flows: 2, bytesDown: 5_300, bytesUp: 2),
                ProgramTotals(command: nil, flows: 1, bytesDown: 50, bytesUp: 1),
                ProgramTotals(command: "python3", flows: 1, bytesDown: 7, bytesUp: 1),
            ])
            #expect(try store.programTotals(since: 20, limit: 1).map(\.command) == ["curl"])
        }
    }

    @Test("programs of a failed batch are kept for the next attempt: a flow's right after it, one whose flow is not kept after the flows")
    func unwrittenKeepsPrograms() {
        var kept = UnwrittenFlows(limit: 10)
        let flow = FlowRecord(id: 3, startTime: 1, clientAddress: "127.0.0.1", clientPort: 1, serverAddress: "192.0.2.1", serverPort: 443, status: .encrypted)
        #expect(kept.keep([.opened(flow), .program(flowID: 3, Self.curl), .program(flowID: 2, .notKnown(.otherMachine))]).isEmpty)
        #expect(kept.take(upTo: .max).events == [.updated(flow), .program(flowID: 3, Self.curl), .program(flowID: 2, .notKnown(.otherMachine))])
        #expect(kept.take(upTo: .max).events.isEmpty)
    }

    /// A trial's tmpfs filled with 16,384 flows waiting: once 12,822 had been given up, the
    /// programs kept for them filled the room for programs, and 12,822 of the 16,384 flows
    /// written when the disk had room again were saved without theirs.
    @Test("flows given up past the retry limit take their programs with them: every flow written once writes work has its program; the giving up is told once, and counted")
    func programsAfterGivingUp() throws {
        try withStore { store, _ in
            let told = Mutex<[Int]>([])
            let writer = try store.makeWriterKeepingTriggersForTesting(retryLimit: 4, onGivingUp: { counters in
                told.withLock { $0.append(counters.flowsNotSaved) }
            })
            defer { writer.close() }
            func program(_ n: Int) -> FlowProgram { .known(ProgramIdentity(pid: Int32(n), command: "p\(n)", executable: nil, uid: 0, user: nil)) }
            // A flow whose row is written; its end and its program wait, then are given up first.
            let first = writer.open(sampleFlow(start: 0))
            writer.flush()
            try store.connection.withDatabase { try $0.execute("CREATE TRIGGER refuse BEFORE INSERT ON flows BEGIN SELECT RAISE(ABORT, 'refused by test'); END; CREATE TRIGGER refuseUpdate BEFORE UPDATE ON flows BEGIN SELECT RAISE(ABORT, 'refused by test'); END") }
            var closed = first
            closed.duration = 5
            writer.enqueue(.closed(closed))
            writer.enqueue(.program(flowID: first.id, program(0)))
            writer.flush()
            var flows: [FlowRecord] = []
            for n in 1...8 {
                let flow = writer.open(sampleFlow(start: Int64(n)))
                writer.enqueue(.program(flowID: flow.id, program(n)))
                flows.append(flow)
                writer.flush()
            }
            var counters = writer.counters
            // Given up: the first flow's end and program (its row lacks both), flows 1 to 4 (no row).
            #expect(counters.unwrittenFlows == 4 && counters.flowsNotSaved == 4 && counters.flowUpdatesNotSaved == 1
                    && counters.programsNotSaved == 1, "\(counters)")
            #expect(told.withLock { $0 } == [0])
            try store.connection.withDatabase { try $0.execute("DROP TRIGGER refuse; DROP TRIGGER refuseUpdate") }
            let ninth = writer.open(sampleFlow(start: 9))
            writer.enqueue(.program(flowID: ninth.id, program(9)))
            writer.flush()
            counters = writer.counters
            #expect(!counters.failing && counters.unwrittenFlows == 0)
            #expect(try store.flow(id: first.id)?.program == nil)
            for (n, flow) in flows.enumerated() where n < 4 { #expect(try store.flow(id: flow.id) == nil) }
            for (n, flow) in (flows + [ninth]).enumerated() where n >= 4 {
                #expect(try store.flow(id: flow.id)?.program == program(n + 1), "flow \(flow.id)")
            }
            // Given up again later: told again, once.
            try store.connection.withDatabase { try $0.execute("CREATE TRIGGER refuse BEFORE INSERT ON flows BEGIN SELECT RAISE(ABORT, 'refused by test'); END") }
            for n in 10...15 {
                writer.open(sampleFlow(start: Int64(n)))
                writer.flush()
            }
            #expect(told.withLock { $0 } == [0, 5])
        }
    }

    @Test("the columns' values: NULL everywhere is not looked up (nil); a reason no tv writes, or a pid of 0, is a damaged row")
    func checks() throws {
        let base: [SQLiteValue] = FlowRecordColumns.names.map { name -> SQLiteValue in
            switch name {
            case "id": return .integer(3)
            case "client_address", "server_address": return .text("127.0.0.1")
            case "transport": return .text("tcp")
            case "host_origin": return .text("none")
            case "status": return .text("encrypted")
            case "client_versions", "client_alpn", "cert_sans", "other_hosts": return .text("")
            case "ech_public_name": return .integer(0)
            case "start_time", "last_activity_time", "client_port", "server_port", "bytes_up", "bytes_down": return .integer(1)
            default: return .null
            }
        }
        #expect(try FlowRecordColumns.record(base).program == nil)
        #expect(try FlowRecordColumns.record(base + [.integer(4242), .text("curl"), .text("/usr/bin/curl"), .integer(65_534), .text("nobody"), .null]).program == Self.curl)
        #expect(try FlowRecordColumns.record(base + [.null, .null, .null, .null, .null, .text("socket_gone")]).program == .notKnown(.socketGone))
        #expect(throws: DamagedRow(row: "flow 3", column: "program_unknown", value: .text("vanished"))) {
            try FlowRecordColumns.record(base + [.null, .null, .null, .null, .null, .text("vanished")])
        }
        #expect(throws: DamagedRow(row: "flow 3", column: "program_pid", value: .integer(0))) {
            try FlowRecordColumns.record(base + [.integer(0), .text("curl"), .null, .integer(0), .null, .null])
        }
        #expect(FlowProgramColumns.bindings(Self.curl) == [.integer(4242), .text("curl"), .text("/usr/bin/curl"), .integer(65_534), .text("nobody"), .null])
        #expect(FlowProgramColumns.updateSQL == "UPDATE flows SET program_pid = ?, program_command = ?, program_executable = ?, program_uid = ?, program_user = ?, program_unknown = ? WHERE id = ?")
    }
}
