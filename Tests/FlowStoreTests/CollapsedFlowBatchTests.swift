import CSQLite
import FlowTerms
import Testing
@testable import FlowStore

/// What the flow writer writes of one batch (`CollapsedFlowBatch`), and the costs the writer's
/// path was cut by (i25-hist): events boxed, the queue's storage kept, SQLite's memory statistics off.
@Suite struct CollapsedFlowBatchTests {
    private func exchange(flow: Int64, _ sequence: Int, _ state: ExchangeState) -> ExchangeRecord {
        ExchangeRecord(flowID: flow, sequence: sequence, httpVersion: "HTTP/1.1", method: "GET", path: "/\(sequence)",
                       requestTime: 100, state: state)
    }

    @Test("each flow's latest record once, in first-appearance order; exchanges' latest; programs in order; first DER kept")
    func collapses() {
        let a1 = sampleFlow(start: 10, host: "a.example").with(id: 1)
        var a2 = a1
        a2.bytesUp = 500
        a2.newCertificates = [SeenCertificate(sha256: "aa", der: [2])]
        var b = sampleFlow(start: 20, host: "b.example").with(id: 2)
        b.newCertificates = [SeenCertificate(sha256: "aa", der: [1]), SeenCertificate(sha256: "bb", der: [3])]
        var a3 = a2
        a3.duration = 7
        a3.newCertificates = []
        let batch = CollapsedFlowBatch([
            .opened(a1), .opened(b), .exchange(exchange(flow: 1, 1, .open)), .updated(a2),
            .program(flowID: 2, .notKnown(.socketGone)), .exchange(exchange(flow: 1, 1, .complete)),
            .program(flowID: 9, .notKnown(.otherMachine)), .closed(a3),
        ])
        #expect(batch.flowCount == 2)
        #expect(batch.flows == [a3, b])
        #expect(Array(batch.latestFlows) == [a3, b])
        #expect(batch.hasRecord(of: 1) && batch.hasRecord(of: 2) && !batch.hasRecord(of: 9))
        #expect(batch.exchanges.inOrder == [exchange(flow: 1, 1, .complete)])
        #expect(batch.programs.map(\.0) == [2, 9])
        #expect(batch.programs.map(\.1) == [.notKnown(.socketGone), .notKnown(.otherMachine)])
        // b's DER for "aa" came first among the events (a2 is later), so it is the one kept.
        #expect(batch.certificates == ["aa": [1], "bb": [3]])
    }

    @Test("an empty batch, and one of exchanges only, has no flow")
    func noFlows() {
        #expect(CollapsedFlowBatch([]).flowCount == 0)
        let batch = CollapsedFlowBatch([.exchange(exchange(flow: 3, 1, .complete))])
        #expect(batch.flowCount == 0)
        #expect(batch.flows == [])
        #expect(!batch.hasRecord(of: 3))
    }

    @Test("an event is one reference: the record is boxed, not carried inline")
    func eventIsOneReference() {
        #expect(MemoryLayout<FlowEvent>.size == 8)
        #expect(MemoryLayout<FlowRecord>.size > 400)
    }

    @Test("the queue keeps up to 16,384 events' room between batches, not a larger burst's")
    func keepsStorage() {
        var counters = FlowWriterCounters(accepted: 0, written: 0, dropped: 0, failed: 0, pending: 0, lastError: nil)
        var pending = PendingFlowEvents(capacity: 65_536)
        let event = FlowEvent.program(flowID: 1, .notKnown(.socketGone))
        for _ in 0..<10_000 { _ = pending.add(event, refusing: false, counters: &counters) }
        let grown = pending.events.capacity
        pending.removeAll()
        #expect(pending.count == 0)
        #expect(pending.events.capacity == grown)
        for _ in 0..<20_000 { _ = pending.add(event, refusing: false, counters: &counters) }
        pending.removeAll()
        #expect(pending.events.capacity == 0)
        #expect(counters.dropped == 0)
    }

    @Test("SQLite's memory statistics are off once a connection opened (no mutex on each allocation)")
    func memoryStatisticsOff() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        defer { database.close() }
        try database.execute("CREATE TABLE t (a)")
        try database.execute("INSERT INTO t VALUES (randomblob(100000))")
        #expect(sqlite3_memory_used() == 0)
    }
}
