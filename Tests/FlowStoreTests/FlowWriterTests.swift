import Synchronization
import Testing
@testable import FlowStore
import FlowTerms

@Suite struct FlowWriterTests {
    @Test func batchesTenThousandOpensAndUpdates() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            defer { writer.close() }
            let count = 10_000
            var flows: [FlowRecord] = []
            flows.reserveCapacity(count)
            for index in 0..<count {
                flows.append(writer.open(sampleFlow(start: 1_000_000 + Int64(index))))
            }
            #expect(flows.map(\.id) == Array(1...Int64(count)))
            for var flow in flows {
                flow.bytesUp = flow.id * 3
                flow.bytesDown = flow.id * 7
                flow.lastActivityTime = flow.startTime + 5
                #expect(writer.enqueue(.updated(flow)))
            }
            writer.flush()
            #expect(writer.counters == FlowWriterCounters(accepted: 20_000, written: 20_000, dropped: 0,
                                                          failed: 0, pending: 0, lastError: nil))
            #expect(try store.count(FlowQuery()) == count)
            let page = try store.flows(FlowQuery(limit: FlowQuery.maximumLimit))
            #expect(page.flows.count == count)
            #expect(page.nextCursor == nil)
            #expect(page.flows.map(\.id) == Array((1...Int64(count)).reversed()))
            #expect(page.flows.allSatisfy {
                $0.bytesUp == $0.id * 3 && $0.bytesDown == $0.id * 7 && $0.lastActivityTime == $0.startTime + 5
            })
        }
    }

    @Test func theLatestEventForAFlowWins() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            defer { writer.close() }
            var flow = writer.open(sampleFlow(start: 10, status: .encrypted))
            flow.status = .inspected
            flow.bytesUp = 1
            writer.enqueue(.updated(flow))
            flow.status = .failed
            flow.failureReason = "upstream refused our ClientHello"
            flow.duration = 2_500
            writer.enqueue(.closed(flow))
            writer.flush()
            #expect(try store.flow(id: flow.id) == flow)
        }
    }

    @Test func everyColumnRoundTrips() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            defer { writer.close() }
            var record = FlowRecord(
                startTime: 1_712_000_000_000_000, lastActivityTime: 1_712_000_000_500_000,
                clientAddress: "::1", clientPort: 51_234, serverAddress: "2001:db8::1", serverPort: 8_443,
                transport: .udp, host: "quic.example", hostOrigin: .dns, alpn: "h3", tlsVersion: "TLSv1.3",
                status: .keptPrivate, failureReason: "client sent alert 48 (unknown_ca)",
                bytesUp: 1_234_567_890_123, bytesDown: 9, duration: 500_000, error: "connection reset by peer",
                clientVersions: ["TLSv1.3", "TLSv1.2"], clientALPN: ["h3", "h2", "odd,alpn"],
                chosenVersionSource: "upstream_leg", certificateSubject: "CN=quic.example",
                certificateIssuer: "CN=Example CA, O=Example", certificateSANs: ["DNS:quic.example", "IP:2001:db8::1"],
                certificateNotBefore: 1_700_000_000, certificateNotAfter: 1_800_000_000,
                certificateSHA256: String(repeating: "ab", count: 32))
            record.packetsUp = 12
            record.packetsDown = 0
            record.clientTLSVersion = "TLSv1.2"
            record.otherHosts = ["a,b.example", "100%.example"]
            record.hostIsECHPublicName = true
            record.certificateChain = [String(repeating: "ab", count: 32), String(repeating: "cd", count: 32)]
            var flow = writer.open(record)
            writer.flush()
            #expect(try store.flow(id: flow.id) == flow)
            #expect(try store.flow(id: flow.id + 1) == nil)
            // The record with its program in one batch (one upsert with the program's columns),
            // a known program and one not known.
            writer.pauseForTesting()
            let known = FlowProgram.known(ProgramIdentity(pid: 42, command: "curl", executable: "/usr/bin/curl", uid: 1_000, user: "ünï"))
            flow.bytesDown = 10
            writer.enqueue(.updated(flow))
            writer.enqueue(.program(flowID: flow.id, known))
            var other = writer.open(FlowRecord(startTime: 5, lastActivityTime: 6, clientAddress: "127.0.0.1", clientPort: 1,
                                               serverAddress: "", serverPort: 80, transport: .tcp, host: nil, hostOrigin: .none,
                                               alpn: nil, tlsVersion: nil, status: .notEncrypted, bytesUp: 0, bytesDown: 0,
                                               duration: nil, error: nil))
            writer.enqueue(.program(flowID: other.id, .notKnown(.socketGone)))
            writer.resumeForTesting()
            writer.flush()
            flow.program = known
            other.program = .notKnown(.socketGone)
            #expect(try store.flow(id: flow.id) == flow)
            #expect(try store.flow(id: other.id) == other)
        }
    }

    @Test func idsContinueFromTheLargestInTheFile() throws {
        try withStore { store, _ in
            let first = try writeFlows([sampleFlow(start: 1), sampleFlow(start: 2), sampleFlow(start: 3)], to: store)
            #expect(first.map(\.id) == [1, 2, 3])
            let writer = try store.makeWriter()
            defer { writer.close() }
            // Nothing handed out yet: no highest (a tv exec's range start is not a flow of its).
            #expect(writer.highestAllocatedID == nil)
            #expect(writer.open(sampleFlow(start: 4)).id == 4)
            #expect(writer.allocateID() == 5)
            #expect(writer.highestAllocatedID == 5)
            // Raised past the shared store's largest: ids go on from there, none handed out since.
            writer.raiseIDFloor(above: 20)
            #expect(writer.highestAllocatedID == nil)
            writer.raiseIDFloor(above: 10)
            #expect(writer.allocateID() == 21)
            #expect(writer.highestAllocatedID == 21)
            // The engine takes its ids from the same sequence: a floor raised later holds for it.
            let engine = writer.ids
            #expect(engine.next() == 22 && engine.first == 4)
            writer.raiseIDFloor(above: 40)
            #expect(engine.next() == 41 && writer.highestAllocatedID == 41)
        }
    }

    @Test("the shared floor: the store's largest raises the local ids; each batch's largest is kept before it is sent, once per new largest")
    func sharedFloorKeepsTheMarkAhead() throws {
        try withStore { store, _ in
            let kept = Mutex<[Int64]>([])
            let floor = SharedIDFloor(known: 7, persist: { id in kept.withLock { $0.append(id) } })
            let writer = try store.makeWriter()
            defer { writer.close() }
            floor.attach(writer)
            #expect(writer.allocateID() == 8)
            floor.willWrite(upTo: 8)
            floor.willWrite(upTo: 8)
            floor.willWrite(upTo: 5)
            floor.saw(12)
            floor.willWrite(upTo: 12)
            floor.willWrite(upTo: 13)
            #expect(kept.withLock { $0 } == [8, 12, 13])
            #expect(writer.allocateID() == 13)
            #expect(floor.sessionFirstID == 1)
        }
    }

    @Test func aFullQueueDropsAndCounts() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter(capacity: 4)
            defer { writer.close() }
            #expect(writer.capacity == 4)
            writer.pauseForTesting()
            let results = (0..<10).map { writer.enqueue(.opened(sampleFlow(start: Int64($0)).with(id: Int64($0 + 1)))) }
            #expect(results == [true, true, true, true, false, false, false, false, false, false])
            #expect(writer.counters == FlowWriterCounters(accepted: 4, written: 0, dropped: 6, failed: 0,
                                                          pending: 4, lastError: nil))
            #expect(try store.count(FlowQuery()) == 0)
            writer.resumeForTesting()
            writer.flush()
            #expect(try store.count(FlowQuery()) == 4)
            #expect(writer.counters.written == 4)
            // Room again once the writer drained the queue.
            #expect(writer.enqueue(.opened(sampleFlow(start: 99).with(id: 99))))
        }
    }

    @Test func closeWritesWhatIsQueuedThenDrops() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            writer.pauseForTesting()
            let flow = writer.open(sampleFlow(start: 5))
            writer.close()
            writer.close()
            #expect(try store.flow(id: flow.id) == flow)
            #expect(writer.enqueue(.updated(flow)) == false)
            #expect(writer.counters.dropped == 1)
            writer.flush()  // returns at once after close
        }
    }

    @Test func aFailedBatchIsKeptAndRetriedUntilItIsWritten() throws {
        try withStore { store, folder in
            let changes = Mutex<[WriteHealth.Change]>([])
            let writer = try store.makeWriterKeepingTriggersForTesting { change, _ in changes.withLock { $0.append(change) } }
            defer { writer.close() }
            // A trigger makes every insert fail, as a full disk would.
            try store.connection.withDatabase { try $0.execute("CREATE TRIGGER refuse BEFORE INSERT ON flows BEGIN SELECT RAISE(ABORT, 'refused by test'); END") }
            writer.open(sampleFlow(start: 1))
            writer.flush()
            var counters = writer.counters
            #expect(counters.failed == 1)
            #expect(counters.written == 0)
            #expect(counters.failedWrites == 1)
            #expect(counters.unwrittenFlows == 1)
            #expect(counters.flowsNotSaved == 0)
            #expect(counters.failing)
            #expect(counters.lastError == .failed(path: folder + "/tunnelvision.sqlite3", reason: "refused by test"))
            #expect(changes.withLock { $0 } == [.startedFailing])
            try store.connection.withDatabase { try $0.execute("DROP TRIGGER refuse") }
            writer.open(sampleFlow(start: 2))
            writer.flush()
            counters = writer.counters
            #expect(counters.written == 1)
            #expect(counters.unwrittenFlows == 0)
            #expect(!counters.failing)
            #expect(changes.withLock { $0 } == [.startedFailing, .resumed])
            // The flow whose write failed was written with the next batch.
            #expect(try store.count(FlowQuery()) == 2)
        }
    }

    @Test func flowsStillUnwrittenAtCloseAreCountedAsNotSavedOrStale() throws {
        try withStore { store, _ in
            let writer = try store.makeWriterKeepingTriggersForTesting(retryLimit: 2)
            let saved = writer.open(sampleFlow(start: 1))
            writer.flush()
            try store.connection.withDatabase { try $0.execute("CREATE TRIGGER refuse BEFORE UPDATE ON flows BEGIN SELECT RAISE(ABORT, 'refused by test'); END; CREATE TRIGGER refuseNew BEFORE INSERT ON flows BEGIN SELECT RAISE(ABORT, 'refused by test'); END") }
            var closed = saved
            closed.duration = 5
            writer.enqueue(.closed(closed))
            writer.flush()
            // Three new flows: with room for two waiting, the oldest waiting (flow 1's update) is given up.
            for start in 2...4 { writer.open(sampleFlow(start: Int64(start))) }
            writer.flush()
            var counters = writer.counters
            #expect(counters.unwrittenFlows == 2)
            #expect(counters.flowUpdatesNotSaved == 1)
            #expect(counters.flowsNotSaved == 1)
            writer.close()
            counters = writer.counters
            #expect(counters.unwrittenFlows == 0)
            #expect(counters.flowsNotSaved == 3)
            #expect(counters.flowUpdatesNotSaved == 1)
            #expect(try store.count(FlowQuery()) == 1)
            #expect(try store.flow(id: saved.id)?.duration == nil)
        }
    }
}

@Suite struct RetryValuesTests {
    @Test func healthSaysEachChangeOnce() {
        var health = WriteHealth()
        #expect(health.record(succeeded: true) == nil)
        #expect(health.record(succeeded: false) == .startedFailing)
        #expect(health.failing)
        #expect(health.record(succeeded: false) == nil)
        #expect(health.record(succeeded: true) == .resumed)
        #expect(!health.failing)
        #expect(health.record(succeeded: true) == nil)
        #expect(health.failedAttempts == 2)
    }

    @Test func unwrittenFlowsKeepTheLatestStateAndGiveUpTheOldest() {
        var set = UnwrittenFlows(limit: 2)
        let a = sampleFlow(start: 1).with(id: 1), b = sampleFlow(start: 2).with(id: 2), c = sampleFlow(start: 3).with(id: 3)
        var a2 = a
        a2.bytesUp = 99
        #expect(set.keep([.opened(a), .opened(b), .updated(a2)]) == [])
        #expect(set.count == 2)
        #expect(set.keep([.opened(c)]).map(\.record) == [a2])
        #expect(set.take(upTo: .max).events == [.updated(b), .updated(c)])
        #expect(set.isEmpty)
        #expect(set.keep([.closed(a)]) == [])
        #expect(set.giveUpAll().map(\.record) == [a])
        #expect(set.count == 0)
    }

    /// Several events of a flow are one state kept; what it stands for is counted, so the
    /// backlog written on a retry counts as the events first queued (`writtenOnRetry`).
    @Test func unwrittenFlowsCountTheEventsTheirStatesStandFor() {
        var set = UnwrittenFlows(limit: 10)
        let a = sampleFlow(start: 1).with(id: 1), b = sampleFlow(start: 2).with(id: 2)
        _ = set.keep([.opened(a), .updated(a), .closed(a), .opened(b)])
        #expect(set.count == 2 && set.representedEvents == 4)
        let again = set.take(upTo: .max)
        #expect(again.events.count == 2 && again.represented == 4 && set.representedEvents == 0)
        // Put back (its write failed) and kept with a new batch of one: 4 + 1.
        set.putBack(again)
        _ = set.keep([.closed(b)])
        #expect(set.representedEvents == 5)
        // A part counts its flows' events; the part that empties the set takes the rest.
        let first = set.take(upTo: 1)
        #expect(first.events == [.updated(a)] && first.represented == 3 && set.representedEvents == 2)
        #expect(set.take(upTo: 1).represented == 2 && set.representedEvents == 0 && set.isEmpty)
        // A batch whose open exchange the writer held back stands for more events than it keeps.
        _ = set.keep([.opened(a)], representing: 2)
        #expect(set.take(upTo: .max).represented == 2)
    }
}

extension FlowRecord {
    func with(id: Int64) -> FlowRecord {
        var copy = self
        copy.id = id
        return copy
    }
}
