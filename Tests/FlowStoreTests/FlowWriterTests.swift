import Testing
@testable import FlowStore

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
            let flow = writer.open(FlowRecord(
                startTime: 1_712_000_000_000_000, lastActivityTime: 1_712_000_000_500_000,
                clientAddress: "::1", clientPort: 51_234, serverAddress: "2001:db8::1", serverPort: 8_443,
                transport: .udp, host: "quic.example", hostOrigin: .dns, alpn: "h3", tlsVersion: "TLSv1.3",
                status: .keptPrivate, failureReason: "client sent alert 48 (unknown_ca)",
                bytesUp: 1_234_567_890_123, bytesDown: 9, duration: 500_000, error: "connection reset by peer",
                clientVersions: ["TLSv1.3", "TLSv1.2"], clientALPN: ["h3", "h2", "odd,alpn"],
                chosenVersionSource: "upstream_leg", certificateSubject: "CN=quic.example",
                certificateIssuer: "CN=Example CA, O=Example", certificateSANs: ["DNS:quic.example", "IP:2001:db8::1"],
                certificateNotBefore: 1_700_000_000, certificateNotAfter: 1_800_000_000,
                certificateSHA256: String(repeating: "ab", count: 32)))
            writer.flush()
            #expect(try store.flow(id: flow.id) == flow)
            #expect(try store.flow(id: flow.id + 1) == nil)
        }
    }

    @Test func idsContinueFromTheLargestInTheFile() throws {
        try withStore { store, _ in
            let first = try writeFlows([sampleFlow(start: 1), sampleFlow(start: 2), sampleFlow(start: 3)], to: store)
            #expect(first.map(\.id) == [1, 2, 3])
            let writer = try store.makeWriter()
            defer { writer.close() }
            #expect(writer.open(sampleFlow(start: 4)).id == 4)
            #expect(writer.allocateID() == 5)
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

    @Test func aFailedBatchIsCountedNotFatal() throws {
        try withStore { store, folder in
            let writer = try store.makeWriter()
            defer { writer.close() }
            // A trigger makes every insert fail, as a full disk would.
            try store.connection.withDatabase { try $0.execute("CREATE TRIGGER refuse BEFORE INSERT ON flows BEGIN SELECT RAISE(ABORT, 'refused by test'); END") }
            writer.open(sampleFlow(start: 1))
            writer.flush()
            let counters = writer.counters
            #expect(counters.failed == 1)
            #expect(counters.written == 0)
            #expect(counters.lastError == .failed(path: folder + "/tunnelvision.sqlite3", reason: "refused by test"))
            try store.connection.withDatabase { try $0.execute("DROP TRIGGER refuse") }
            writer.open(sampleFlow(start: 2))
            writer.flush()
            #expect(writer.counters.written == 1)
            #expect(try store.count(FlowQuery()) == 1)
        }
    }
}

extension FlowRecord {
    func with(id: Int64) -> FlowRecord {
        var copy = self
        copy.id = id
        return copy
    }
}
