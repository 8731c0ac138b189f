import FlowStore
import FlowTerms
import Proxy
import Testing
@testable import TVCore

/// `tv flow ID`'s requests: the first ones and their count, as its packets are shown, and the
/// requests its connection's row allowance counted without rows (a trial's one connection made
/// 200,000 rows and `tv flow` printed every one).
@Suite struct FlowRequestLinesTests {
    static func exchange(_ sequence: Int) -> ExchangeRecord {
        ExchangeRecord(id: Int64(sequence), flowID: 7, sequence: sequence, streamID: Int64(sequence * 2 - 1), httpVersion: "HTTP/2",
                       method: "GET", scheme: "https", authority: "a.test", path: "/\(sequence)", status: 200,
                       requestTime: 1_000, endTime: 2_000, state: .complete)
    }

    static let leftOut = "  190,000 more requests were read on this connection and counted, not written: tv writes a connection's first"
        + " 10,000 requests, then 10 a second (far more than a browser makes; a flood such as HTTP/2's rapid reset is held to that),"
        + " and follows at most 256 of its HTTP/2 streams at once (a stream opened while that many wait for their responses is counted)."

    @Test("the first of 10,200 rows, the rest counted in one line, and the requests left out in another")
    func firstAndCount() {
        let lines = RequestListPresentation.flowLines([Self.exchange(1), Self.exchange(2)], damaged: [], total: 10_200, leftOut: 190_000, flowID: 7)
        #expect(lines.count == 6)
        #expect(lines[0] == "")
        #expect(lines[1] == "HTTP requests (the first 2 of 10,200; `tv requests --flow 7` lists them all; `tv request ID` shows one):")
        #expect(lines[2].hasPrefix("  1  GET  /1  200") && lines[3].hasPrefix("  2  GET  /2  200"))
        #expect(lines[4] == "  … 10,198 more")
        #expect(lines[5] == Self.leftOut)
    }

    @Test("every row shown: the count alone, as before; no rows left: the sentence alone")
    func allOrNone() {
        let lines = RequestListPresentation.flowLines([Self.exchange(1)], damaged: [], total: 1, flowID: 7)
        #expect(lines[1] == "HTTP requests (1; `tv request ID` shows one):" && lines.count == 3)
        #expect(RequestListPresentation.flowLines([], damaged: []) == [])
        #expect(RequestListPresentation.flowLines([], damaged: [], total: 0, leftOut: 190_000) == ["", Self.leftOut])
        #expect(RequestListPresentation.leftOutSentence(1).hasPrefix("1 more request was read on this connection"))
    }

    @Test("the count goes from the proxy's facts to the row (nil for none) and to tv flow --json")
    func factsToRowAndJSON() {
        var facts = FlowFacts(id: 7, startMicros: 1_000, client: Endpoint(address: "127.0.0.1", port: 40_000))
        #expect(FlowRecordMapping.record(facts).requestsLeftOut == nil)
        facts.requestsLeftOut = 190_000
        let row = FlowRecordMapping.record(facts)
        #expect(row.requestsLeftOut == 190_000)
        let json = RequestListPresentation.json(flow: FlowDetailPresentation.json(row), [Self.exchange(1)], requestCount: 10_200,
                                                leftOut: row.requestsLeftOut).serialized()
        #expect(json.contains("\"requestsLeftOut\":190000"))
        #expect(json.contains("\"requestCount\":10200,\"requestsLeftOutSentence\":\"190,000 more requests were read"))
    }
}
