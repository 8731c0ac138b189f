import FlowTerms
import Foundation
import Recording
import TVHome
import Testing
@testable import HTTPReading

@Suite struct HARExportTests {
    let start: Int64 = 1_764_471_900_000_000   // 2025-11-30 03:05:00 UTC

    @Test func http1EntriesCarryMessagesBodiesAndTimings() throws {
        let c = try #require(conversation(TurnRecorder.turns(from: [
            Chunk(up, at: 0, b("POST /submit?q=a%20b&x HTTP/1.1\r\nHost: a.test\r\nCookie: s=1; t=2\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nping")),
            Chunk(down, at: 12_345, b("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Type: text/plain\r\nSet-Cookie: id=7; Path=/; HttpOnly\r\nContent-Length: \(EncodedBodies.gzip.count)\r\n\r\n") + EncodedBodies.gzip),
        ])))
        let text = HARExport.text([HARFlow(id: 7, startTime: start, scheme: "https", host: "a.test", serverAddress: "192.0.2.1",
                                           serverPort: 443, conversation: c)], creatorVersion: "0.1")
        #expect(text.hasPrefix("{\"log\":{\"version\":\"1.2\",\"creator\":{\"name\":\"TunnelVision\",\"version\":\"0.1\"},\"pages\":[],\"entries\":[{\"startedDateTime\":\"2025-11-30T03:05:00.000Z\",\"time\":12.345,"))
        #expect(text.contains("\"url\":\"https://a.test/submit?q=a%20b&x\""))
        #expect(text.contains("\"queryString\":[{\"name\":\"q\",\"value\":\"a b\"},{\"name\":\"x\",\"value\":\"\"}]"))
        #expect(text.contains("\"cookies\":[{\"name\":\"s\",\"value\":\"1\"},{\"name\":\"t\",\"value\":\"2\"}]"))
        #expect(text.contains("\"postData\":{\"mimeType\":\"text/plain\",\"text\":\"ping\"}"))
        #expect(text.contains("\"cookies\":[{\"name\":\"id\",\"value\":\"7\",\"path\":\"/\",\"httpOnly\":true}]"))
        #expect(text.contains("\"content\":{\"size\":512,\"compression\":\(512 - EncodedBodies.gzip.count),\"mimeType\":\"text/plain\",\"text\":\"TunnelVision decodes this body.\\n"))
        #expect(text.contains("\"timings\":{\"send\":0.0,\"wait\":12.345,\"receive\":0.0},\"serverIPAddress\":\"192.0.2.1\",\"connection\":\"7\"}"))
        #expect(text.hasSuffix("\"comment\":\"1 entry from 1 flow\"}}"))
        // A program can read it.
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        #expect(((parsed?["log"] as? [String: Any])?["entries"] as? [Any])?.count == 1)
    }

    @Test func http2StreamsBecomeEntriesAndCutsAreSaid() throws {
        let c = try #require(conversation(TurnRecorder.turns(from: HTTP2Captures.nghttpThreeStreams,
                                                             budget: RecordingBudget(turnLimit: 300))))
        let har = HARExport.text([HARFlow(id: 3, startTime: start, scheme: "https", host: nil, serverAddress: "127.0.0.1",
                                          serverPort: 18444, conversation: c)], creatorVersion: "0.1")
        #expect(har.contains("\"method\":\"GET\",\"url\":\"https://127.0.0.1:18444/index.html\",\"httpVersion\":\"HTTP/2.0\""))
        #expect(har.contains("\"comment\":\"HTTP/2 stream 13"))
        #expect(har.contains("\"comment\":\"HTTP/2 stream 15; response body cut by the recording budget: 92 bytes kept of 1200\"}"))
        #expect(har.hasSuffix("\"comment\":\"3 entries from 1 flow; 2 with a body that is not complete (cut by the recording budget, or not all recorded)\"}}"))
    }

    /// The recording budget cut the server side: the content has the second request but not its
    /// response. The entry takes status, sizes and times from the exchange row (a trial's HAR
    /// said status 0 where `tv requests` said 200); a cut body's bodySize is the row's (what was
    /// sent), and no `compression` is claimed for it.
    @Test func aResponseTheContentLacksComesFromItsRow() throws {
        let c = try #require(conversation(TurnRecorder.turns(from: [
            Chunk(up, at: 0, b("GET /one HTTP/1.1\r\nHost: a.test\r\n\r\n")),
            Chunk(down, at: 0, b("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello")),
            Chunk(up, at: 10, b("GET /two HTTP/1.1\r\nHost: a.test\r\n\r\n")),
        ])))
        func row(_ sequence: Int, status: Int?, body: Int64?, request: Int64, response: Int64?, end: Int64?) -> ExchangeRecord {
            ExchangeRecord(flowID: 7, sequence: sequence, httpVersion: "HTTP/1.1", method: "GET", scheme: "https", authority: "a.test",
                           path: sequence == 1 ? "/one" : "/two", status: status, reason: status == nil ? nil : "OK",
                           responseBodyBytes: body, responseWireBytes: body, contentType: "text/plain",
                           requestTime: request, responseTime: response, endTime: end, state: .complete)
        }
        var flow = HARFlow(id: 7, startTime: start, scheme: "https", host: "a.test", serverAddress: "192.0.2.1", serverPort: 443, conversation: c)
        flow.pairRows([row(1, status: 200, body: 5, request: start, response: start + 628, end: start + 700),
                       row(2, status: 200, body: 113_664, request: start + 10, response: start + 1_010, end: start + 3_010)])
        let text = HARExport.text([flow], creatorVersion: "0.1")
        let log = try #require((try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["log"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        try #require(entries.count == 2)
        // The first: from content, its times from the row (the turns' offsets shared a loop turn: 0 ms).
        #expect(entries[0]["timings"] as? NSDictionary == ["send": 0, "wait": 0.628, "receive": 0.072] as NSDictionary)
        #expect((entries[0]["response"] as? [String: Any])?["status"] as? Int == 200)
        // The second: its response from the row.
        let second = try #require(entries[1]["response"] as? [String: Any])
        #expect(second["status"] as? Int == 200 && second["bodySize"] as? Int == 113_664, "\(second)")
        #expect((second["content"] as? [String: Any])?["size"] as? Int == 113_664)
        #expect(entries[1]["time"] as? Double == 3.0)
        #expect(entries[1]["comment"] as? String
                == "no response was recorded (the recording budget ran out, or not all was recorded); its status and sizes are from the request row")
        // Without rows it says what it knows: nothing.
        let bare = HARExport.text([HARFlow(id: 7, startTime: start, scheme: "https", host: "a.test", serverAddress: "192.0.2.1", serverPort: 443, conversation: c)],
                                  creatorVersion: "0.1")
        #expect(bare.contains("\"comment\":\"no response was recorded\""))
    }
}
