import FlowTerms
import Testing
@testable import FlowStore

/// `ExchangeRunCoding`, `ExchangeRunPlan` and `ExchangePageMerge`: pure, exact values.
@Suite struct ExchangeRunCodingTests {
    private func get(_ sequence: Int, at time: Int64, ending end: Int64) -> ExchangeRecord {
        ExchangeRecord(flowID: 7, sequence: sequence, httpVersion: "HTTP/1.1", method: "GET", path: "/", status: 200,
                       requestTime: time, endTime: end, state: .complete)
    }

    @Test("two exchanges pack to the bytes the format describes, the second's texts as repeats")
    func exactBytes() throws {
        var encoder = ExchangeRunCoding.Encoder()
        encoder.append(get(1, at: 1_000, ending: 1_500))
        encoder.append(get(2, at: 1_100, ending: 1_300))
        let first: [UInt8] = [0x90, 0x10, 0x02] + [0x09] + Array("HTTP/1.1".utf8) + [0x04] + Array("GET".utf8)
            + [0x02] + Array("/".utf8) + [0x09] + Array("complete".utf8) + [0xC8, 0x01, 0x00, 0x00, 0xD0, 0x0F, 0xE8, 0x07]
        let second: [UInt8] = [0x90, 0x10, 0x02, 0x00, 0x00, 0x00, 0x00, 0xC8, 0x01, 0x00, 0x00, 0xC8, 0x01, 0x90, 0x03]
        #expect(encoder.bytes == first + second)
        let values = try ExchangeRunCoding.values(encoder.bytes, firstID: 40, flowID: 7, count: 2)
        var a = get(1, at: 1_000, ending: 1_500)
        a.id = 40
        var b = get(2, at: 1_100, ending: 1_300)
        b.id = 41
        #expect(try values.map { try ExchangeColumns.record($0) } == [a, b])
    }

    @Test("every field, present and absent, negative deltas and extreme values come back as written")
    func roundTrips() throws {
        let full = ExchangeRecord(
            flowID: 3, sequence: 9, streamID: 0x7fff_ffff, httpVersion: "HTTP/2", method: "CONNECT", scheme: "https",
            authority: "ws.example:443", path: "/chat/ü", queryRemoved: true, status: 101, reason: "Switching Protocols",
            requestBodyBytes: 7, requestWireBytes: Int64.max, responseBodyBytes: 0, responseWireBytes: 11,
            contentType: "application/json", contentEncoding: "br", requestTime: 1_700_000_000_000_000,
            responseTime: 1_699_999_999_999_990, endTime: 1_700_000_000_000_030, upgrade: true, connect: true, state: .incomplete,
            requestEndTime: 1_700_000_000_000_012)
        let bare = ExchangeRecord(flowID: 3, sequence: 2, httpVersion: "HTTP/1.0", method: "HEAD", path: "",
                                  requestTime: 5, state: .answered)
        var again = full
        again.sequence = 10
        again.reason = nil
        again.authority = "other.example"
        var encoder = ExchangeRunCoding.Encoder()
        for exchange in [full, bare, again] { encoder.append(exchange) }
        let read = try ExchangeRunCoding.values(encoder.bytes, firstID: 1, flowID: 3, count: 3).map { try ExchangeColumns.record($0) }
        var expected = [full, bare, again]
        for index in expected.indices { expected[index].id = Int64(index) + 1 }
        #expect(read == expected)
    }

    @Test("bytes that are not a run: the offset where reading stopped")
    func malformed() throws {
        var encoder = ExchangeRunCoding.Encoder()
        encoder.append(get(1, at: 1_000, ending: 1_500))
        let bytes = encoder.bytes
        #expect(throws: ExchangeRunCoding.Malformed(offset: bytes.count - 1)) {
            try ExchangeRunCoding.values(Array(bytes.dropLast()), firstID: 1, flowID: 7, count: 1)
        }
        #expect(throws: ExchangeRunCoding.Malformed(offset: bytes.count)) {
            try ExchangeRunCoding.values(bytes + [0], firstID: 1, flowID: 7, count: 1)
        }
        #expect(throws: ExchangeRunCoding.Malformed(offset: bytes.count)) {
            try ExchangeRunCoding.values(bytes, firstID: 1, flowID: 7, count: 2)
        }
        // A repeat (0) where the run has no earlier HTTP version.
        #expect(throws: ExchangeRunCoding.Malformed(offset: 3)) {
            try ExchangeRunCoding.values([0x00, 0x02, 0x00], firstID: 1, flowID: 7, count: 1)
        }
        // A version of one byte that is not UTF-8.
        #expect(throws: ExchangeRunCoding.Malformed(offset: 3)) {
            try ExchangeRunCoding.values([0x00, 0x02, 0x02, 0xFF], firstID: 1, flowID: 7, count: 1)
        }
        // A varint of eleven bytes.
        #expect(throws: ExchangeRunCoding.Malformed(offset: 10)) {
            try ExchangeRunCoding.values(Array(repeating: 0x80, count: 11), firstID: 1, flowID: 7, count: 1)
        }
    }

    @Test("a batch's finished exchanges: one run per flow in order of appearance, split past 60 s")
    func plan() {
        let a1 = get(1, at: 100, ending: 200)
        var b1 = get(1, at: 50, ending: 60)
        b1.flowID = 8
        let a2 = get(2, at: 100 + ExchangeRunCoding.span, ending: 0)
        let a3 = get(3, at: 101 + ExchangeRunCoding.span, ending: 0)
        let plan = ExchangeRunPlan([a1, b1, a2, a3])
        #expect(plan.exchangeCount == 4)
        #expect(plan.runs == [
            .init(flowID: 7, exchanges: [a1, a2], firstRequestTime: 100, lastRequestTime: 100 + ExchangeRunCoding.span),
            .init(flowID: 8, exchanges: [b1], firstRequestTime: 50, lastRequestTime: 50),
            .init(flowID: 7, exchanges: [a3], firstRequestTime: 101 + ExchangeRunCoding.span,
                  lastRequestTime: 101 + ExchangeRunCoding.span),
        ])
    }

    @Test("a page gathered from rows and runs keeps the newest, and says when a run can still change it")
    func merge() {
        func found(_ time: Int64, _ id: Int64) -> StoredExchanges.Found {
            (FlowCursor(startTime: time, id: id), .success(get(Int(id), at: time, ending: time)))
        }
        var merge = ExchangePageMerge(size: 3)
        for (time, id) in [(10, 1), (30, 2), (20, 3)] as [(Int64, Int64)] { merge.add(found(time, id)) }
        #expect(merge.needs(runUpTo: 10))
        #expect(merge.needs(runUpTo: 9) == false)
        merge.add(found(20, 9))
        merge.add(found(5, 10))
        #expect(merge.newestFirst.map { [$0.key.startTime, $0.key.id] } == [[30, 2], [20, 9], [20, 3]])
        #expect(merge.needs(runUpTo: 20))
        #expect(merge.needs(runUpTo: 19) == false)
        let window = ExchangeQuery.Window(from: 10, to: 30, before: FlowCursor(startTime: 20, id: 5))
        #expect([(9, 1), (10, 1), (20, 4), (20, 5), (29, 1), (30, 1)].map { window.admits(FlowCursor(startTime: $0.0, id: $0.1)) }
            == [false, true, true, false, false, false])
    }

    @Test("the runs' SELECT bounds the index range by the run span")
    func runPlan() throws {
        let cursor = FlowCursor(startTime: 1_000, id: 4).string
        let plan = try ExchangeQuery(flowID: 2, from: 10, to: 900, limit: 5, after: cursor).runPlan()
        #expect(plan.sql == "SELECT first_id, flow_id, exchange_count, first_request_time, last_request_time, exchanges "
            + "FROM exchange_runs WHERE flow_id = ? AND last_request_time >= ? AND first_request_time < ? AND last_request_time < ? "
            + "AND first_request_time <= ? AND last_request_time <= ? ORDER BY last_request_time DESC")
        #expect(plan.bindings == [.integer(2), .integer(10), .integer(900), .integer(900 + ExchangeRunCoding.span),
                                  .integer(1_000), .integer(1_000 + ExchangeRunCoding.span)])
    }
}
