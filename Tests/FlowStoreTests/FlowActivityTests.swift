import Testing
@testable import FlowStore

/// `tv activity`'s aggregate and `tv flows --follow`'s reads.
@Suite struct FlowActivityTests {
    static let s: Int64 = 1_000_000

    @Test("counts per interval from one aggregate: half-open bounds, sparse (no row for an empty interval)")
    func countsPerInterval() throws {
        try withStore { store, _ in
            let starts: [Int64] = [100, 100, 101, 103, 109, 110, 99].map { $0 * Self.s }
            _ = try writeFlows(starts.map { sampleFlow(start: $0) }, to: store)
            #expect(try store.activity(from: 100 * Self.s, to: 110 * Self.s, widthMicros: 2 * Self.s) == [0: 3, 1: 1, 4: 1])
            #expect(try store.activity(from: 100 * Self.s, to: 111 * Self.s, widthMicros: 5 * Self.s) == [0: 4, 1: 1, 2: 1])
            #expect(try store.activity(from: 200 * Self.s, to: 300 * Self.s, widthMicros: Self.s) == [:])
            let bounds = try #require(try store.startTimeBounds())
            #expect(bounds.oldest == 99 * Self.s && bounds.newest == 110 * Self.s)
        }
        try withStore { store, _ in
            let bounds = try store.startTimeBounds()
            #expect(bounds == nil)
        }
    }

    @Test("the aggregate is a range scan of the start-time index, with no table lookup")
    func usesTheTimeIndex() throws {
        try withStore { store, _ in
            let details = try store.connection.withDatabase { database -> [String] in
                let statement = try database.prepare("EXPLAIN QUERY PLAN " + FlowStore.activitySQL)
                try statement.bind([.integer(0), .integer(1), .integer(0), .integer(10)])
                var details: [String] = []
                try statement.forEachRow { details.append($0.string(at: 3) ?? "") }
                return details
            }
            #expect(details.contains { $0.contains("COVERING INDEX flows_by_start_time (start_time>? AND start_time<?)") }, "\(details)")
        }
    }

    @Test("follow reads: started since a moment with the filters, oldest first; rows by id")
    func followReads() throws {
        try withStore { store, _ in
            let flows = try writeFlows([sampleFlow(start: 5 * Self.s, host: "a.test"), sampleFlow(start: 7 * Self.s, host: "b.test"),
                                        sampleFlow(start: 6 * Self.s, host: "a.test", status: .failed), sampleFlow(start: 2 * Self.s, host: "a.test")],
                                       to: store)
            #expect(try store.flows(matching: FlowQuery(), startedSince: 5 * Self.s, limit: 10).map(\.host) == ["a.test", "a.test", "b.test"])
            #expect(try store.flows(matching: FlowQuery(host: "a."), startedSince: 5 * Self.s, limit: 10).map(\.startTime) == [5 * Self.s, 6 * Self.s])
            #expect(try store.flows(matching: FlowQuery(status: .failed), startedSince: 0, limit: 10).map(\.id) == [flows[2].id])
            #expect(try store.flows(matching: FlowQuery(), startedSince: 0, limit: 2).count == 2)
            #expect(Set(try store.flows(ids: [flows[0].id, flows[3].id, 999]).map(\.id)) == [flows[0].id, flows[3].id])
        }
    }
}
