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

    @Test("a binary request body: base64 with postData's custom _encoding (HAR 1.2 has encoding in content only); a binary response body keeps content.encoding")
    func binaryBodiesAreBase64() throws {
        let c = try #require(conversation(TurnRecorder.turns(from: [
            Chunk(up, at: 0, b("POST /up HTTP/1.1\r\nHost: a.test\r\nContent-Type: application/octet-stream\r\nContent-Length: 3\r\n\r\n") + [0x00, 0xFF, 0x10]),
            Chunk(down, at: 1_000, b("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 2\r\n\r\n") + [0x00, 0x01]),
        ])))
        let text = HARExport.text([HARFlow(id: 7, startTime: start, scheme: "https", host: "a.test", serverAddress: "192.0.2.1",
                                           serverPort: 443, conversation: c)], creatorVersion: "0.1")
        #expect(text.contains("\"postData\":{\"mimeType\":\"application/octet-stream\",\"text\":\"AP8Q\",\"_encoding\":\"base64\"}"), "\(text)")
        #expect(text.contains("\"mimeType\":\"application/octet-stream\",\"text\":\"AAE=\",\"encoding\":\"base64\"}"), "\(text)")
    }

    @Test func http2StreamsBecomeEntriesAndCutsAreSaid() throws {
        let c = try #require(conversation(TurnRecorder.turns(from: HTTP2Captures.nghttpThreeStreams,
                                                             budget: RecordingBudget(turnLimit: 300))))
        let har = HARExport.text([HARFlow(id: 3, startTime: start, scheme: "https", host: nil, serverAddress: "127.0.0.1",
                                          serverPort: 18444, conversation: c)], creatorVersion: "0.1")
        #expect(har.contains("\"method\":\"GET\",\"url\":\"https://127.0.0.1:18444/index.html\",\"httpVersion\":\"HTTP/2.0\""))
        #expect(har.contains("\"comment\":\"HTTP/2 stream 13"))
        // The body limit (300 here) cut a.txt; b.json after it on the same connection is whole.
        #expect(har.contains("\"comment\":\"HTTP/2 stream 15; response body cut by a recording limit: 300 bytes kept of 1200\"}"))
        #expect(har.contains("\"content\":{\"size\":28,\"mimeType\":\"application/json\",\"text\":\"{\\\"stream\\\":\\\"json\\\",\\\"ok\\\":true}\\n\"}"))
        #expect(har.hasSuffix("\"comment\":\"3 entries from 1 flow; 1 with a body that is not complete (cut by a recording limit, or not all recorded)\"}}"))
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

extension HARExportTests {
    /// A gzip body the recording budget cut: its whole decoded length is not known, so content's
    /// size is the kept part's, and the content says so (a trial read it beside a plain cut
    /// body's whole size without a word); no `compression` is claimed.
    @Test func aCutCodedBodySaysItsSizeIsTheKeptPart() throws {
        let sent = Int64(EncodedBodies.gzip.count + 1_000)
        let c = try #require(conversation(TurnRecorder.turns(from: [
            Chunk(up, at: 0, b("GET /z HTTP/1.1\r\nHost: a.test\r\n\r\n")),
            Chunk(down, at: 0, b("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Type: text/plain\r\nContent-Length: \(sent)\r\n\r\n") + EncodedBodies.gzip),
        ])))
        var flow = HARFlow(id: 7, startTime: start, scheme: "https", host: "a.test", serverAddress: "192.0.2.1", serverPort: 443, conversation: c)
        flow.pairRows([ExchangeRecord(flowID: 7, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "https", authority: "a.test",
                                      path: "/z", status: 200, reason: "OK", responseBodyBytes: sent, responseWireBytes: sent, contentType: "text/plain",
                                      contentEncoding: "gzip", requestTime: start, responseTime: start + 10, endTime: start + 20, state: .complete)])
        let text = HARExport.text([flow], creatorVersion: "0.1")
        let log = try #require((try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["log"] as? [String: Any])
        let response = try #require((log["entries"] as? [[String: Any]])?.first?["response"] as? [String: Any])
        let content = try #require(response["content"] as? [String: Any])
        #expect(response["bodySize"] as? Int == Int(sent) && content["compression"] == nil, "\(response)")
        #expect((content["comment"] as? String)?.hasSuffix("the body was cut (recording budget): size is the decoded length of the kept part; the whole body was \(sent) bytes as sent (bodySize)") == true, "\(content)")
    }

    /// A keep-alive connection whose first request (a 100,000-byte upload) spent the flow budget
    /// (64 KiB here): the client side was recorded no further, so the next two requests are not
    /// in the content, only their responses. Their rows become entries (a trial's HAR held 1
    /// entry of 3 and said "2 responses without a recorded request left out"), the two orphan
    /// responses are theirs.
    @Test func requestsPastTheBudgetComeFromTheirRows() throws {
        let body = String(repeating: "x", count: 100_000)
        let c = try #require(conversation(TurnRecorder.turns(from: [
            Chunk(up, at: 0, b("POST /upload HTTP/1.1\r\nHost: a.test\r\nContent-Length: 100000\r\n\r\n" + body)),
            Chunk(down, at: 10, b("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")),
            Chunk(up, at: 20, b("GET /json HTTP/1.1\r\nHost: a.test\r\n\r\n")),
            Chunk(down, at: 30, b("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")),
            Chunk(up, at: 40, b("GET /cookies HTTP/1.1\r\nHost: a.test\r\n\r\n")),
            Chunk(down, at: 50, b("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nck")),
        ], budget: RecordingBudget(flowBudget: 65_536))))
        #expect(c.exchanges.map { $0.request == nil } == [false, true, true])
        // The turn limit alone cuts the upload's turn, and the next requests are read.
        let limited = try #require(conversation(TurnRecorder.turns(from: [
            Chunk(up, at: 0, b("POST /upload HTTP/1.1\r\nHost: a.test\r\nContent-Length: 100000\r\n\r\n" + body)),
            Chunk(down, at: 10, b("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")),
            Chunk(up, at: 20, b("GET /json HTTP/1.1\r\nHost: a.test\r\n\r\n")),
            Chunk(down, at: 30, b("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")),
        ])))
        #expect(limited.exchanges.map { $0.request?.startLine } == ["POST /upload HTTP/1.1", "GET /json HTTP/1.1"])
        #expect(limited.exchanges[0].request?.body.completeness == .cutByBudget(kept: 65_536 - 63, expected: 100_000))
        #expect(limited.exchanges.map { $0.response?.body.content } == [b("ok"), b("{}")] && limited.problems == [])
        func row(_ id: Int64, _ sequence: Int, _ method: String, _ path: String, at offset: Int64) -> ExchangeRecord {
            var r = ExchangeRecord(flowID: 7, sequence: sequence, httpVersion: "HTTP/1.1", method: method, scheme: "https", authority: "a.test",
                                   path: path, status: 200, reason: "OK", responseBodyBytes: 2, responseWireBytes: 2,
                                   requestTime: start + offset, responseTime: start + offset + 2_000, endTime: start + offset + 2_500, state: .complete)
            r.id = id
            return r
        }
        let rows = [row(41, 1, "POST", "/upload", at: 0), row(42, 2, "GET", "/json", at: 20_000), row(43, 3, "GET", "/cookies", at: 40_000)]
        var flow = HARFlow(id: 7, startTime: start, scheme: "https", host: "a.test", serverAddress: "192.0.2.1", serverPort: 443, conversation: c)
        flow.pairRows(rows)
        flow.addRowsLackingRequests(rows)
        #expect(flow.rows.map(\.id) == [42, 43] && flow.rowsSource == .requestNotKept)
        #expect(flow.conversation.exchanges.count == 1 && flow.exchangeRows.map { $0?.id } == [41])
        let log = try #require((try JSONSerialization.jsonObject(with: Data(HARExport.text([flow], creatorVersion: "0.1").utf8)) as? [String: Any])?["log"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
                == ["https://a.test/upload", "https://a.test/json", "https://a.test/cookies"])
        #expect(entries[1]["comment"] as? String
                == "from the exchange row: the flow's recording budget ran out before this request, so no headers, cookies or bodies")
        #expect(entries[1]["timings"] as? NSDictionary == ["send": 0, "wait": 2, "receive": 0.5] as NSDictionary)
        #expect(log["comment"] as? String
                == "3 entries from 1 flow; 1 with a body that is not complete (cut by a recording limit, or not all recorded); 2 from exchange rows alone (requests past their flow's recording budget: no headers or bodies)")
        // A flow whose rows all have their request in the content gets none.
        var whole = HARFlow(id: 7, startTime: start, scheme: "https", host: "a.test", serverAddress: "192.0.2.1", serverPort: 443, conversation: c)
        whole.pairRows(Array(rows.prefix(1)))
        whole.addRowsLackingRequests(Array(rows.prefix(1)))
        #expect(whole.rows.isEmpty && whole.rowsSource == .contentNotKept && whole.conversation.exchanges.count == 3)
    }

    /// tv answered in the server's place (a reset server, a refused connect): the entry says so,
    /// not that the budget ran out; a cut response body's content.size is the body's whole length
    /// (HAR 1.2: the returned content's length), its text what was kept; times in whole µs.
    @Test func answeredByTvAndCutContentSize() throws {
        let c = try #require(conversation(TurnRecorder.turns(from: [
            Chunk(up, at: 0, b("GET /reset HTTP/1.1\r\nHost: a.test\r\n\r\n")),
        ])))
        var answered = ExchangeRecord(flowID: 7, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "https", authority: "a.test",
                                      path: "/reset", status: 502, reason: "Bad Gateway", responseBodyBytes: 120, responseWireBytes: 120,
                                      requestTime: start, responseTime: start + 46_198, endTime: start + 46_199, state: .answered)
        answered.id = 9
        var flow = HARFlow(id: 7, startTime: start, scheme: "https", host: "a.test", serverAddress: "192.0.2.1", serverPort: 443, conversation: c)
        flow.pairRows([answered])
        let entry = try #require(((try JSONSerialization.jsonObject(with: Data(HARExport.text([flow], creatorVersion: "0.1").utf8)) as? [String: Any])?["log"]
                                  as? [String: Any])?["entries"] as? [[String: Any]]).first
        #expect(entry?["comment"] as? String == "answered by tv in the server's place (`tv flow 7` says why); its status and sizes are from the request row")
        #expect(entry?["time"] as? Double == 46.199)

        let big = try #require(conversation(TurnRecorder.turns(from: [
            Chunk(up, at: 0, b("GET /big HTTP/1.1\r\nHost: a.test\r\n\r\n")),
            Chunk(down, at: 10, b("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 200000\r\n\r\n") + [UInt8](repeating: 7, count: 200_000)),
        ])))
        var cut = ExchangeRecord(flowID: 8, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "https", authority: "a.test",
                                 path: "/big", status: 200, reason: "OK", responseBodyBytes: 200_000, responseWireBytes: 200_000,
                                 contentType: "application/octet-stream", requestTime: start, responseTime: start + 1_000, endTime: start + 9_000,
                                 state: .complete)
        cut.id = 10
        var bigFlow = HARFlow(id: 8, startTime: start, scheme: "https", host: "a.test", serverAddress: "192.0.2.1", serverPort: 443, conversation: big)
        bigFlow.pairRows([cut])
        let response = try #require((((try JSONSerialization.jsonObject(with: Data(HARExport.text([bigFlow], creatorVersion: "0.1").utf8)) as? [String: Any])?["log"]
                                      as? [String: Any])?["entries"] as? [[String: Any]])?.first?["response"] as? [String: Any])
        #expect(response["bodySize"] as? Int == 200_000)
        #expect((response["content"] as? [String: Any])?["size"] as? Int == 200_000)

        // The row says the exchange never ended (the client went mid-body): the entry from kept
        // content says it too, after what the content says of its bodies.
        var ended = cut
        ended.state = .incomplete
        var endedFlow = bigFlow
        endedFlow.pairRows([ended])
        let incomplete = try #require(((try JSONSerialization.jsonObject(with: Data(HARExport.text([endedFlow], creatorVersion: "0.1").utf8)) as? [String: Any])?["log"]
                                       as? [String: Any])?["entries"] as? [[String: Any]]).first
        #expect(incomplete?["comment"] as? String
                == "response body cut by a recording limit: 65453 bytes kept of 200000; incomplete: its end was never read (the connection ended or was reset first, or stopped being read as HTTP)")
    }
}

extension HARExportTests {
    /// Header values and a reason phrase that are not UTF-8 (ISO-8859-1 bytes): one character a
    /// byte, so nothing is lost (a trial's HAR had "caf\u{FFFD}"); UTF-8 values stay UTF-8.
    @Test func latin1HeaderBytesSurvive() throws {
        let c = try #require(conversation(TurnRecorder.turns(from: [
            Chunk(up, at: 0, b("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")),
            Chunk(down, at: 10, b("HTTP/1.1 599 Weird ") + [0xE9] + b("\r\nX-Latin: caf") + [0xE9] + b(" na") + [0xEF] + b("ve\r\nX-UTF8: caf")
                  + [0xC3, 0xA9] + b("\r\nContent-Length: 0\r\n\r\n")),
        ])))
        let response = try #require(c.exchanges.first?.response)
        #expect(response.startLine == "HTTP/1.1 599 Weird \u{E9}")
        #expect(response.headers.map(\.value) == ["caf\u{E9} na\u{EF}ve", "caf\u{E9}", "0"])
        let har = HARExport.text([HARFlow(id: 1, startTime: start, scheme: "http", host: "a.test", serverAddress: "192.0.2.1", serverPort: 80,
                                          conversation: c)], creatorVersion: "0.1")
        #expect(har.contains("\"statusText\":\"Weird \u{E9}\"") && har.contains("\"value\":\"caf\u{E9} na\u{EF}ve\"") && !har.contains("\u{FFFD}"))
    }
}

extension HARExportTests {
    /// HAR 1.2 §cookies: `expires` is ISO 8601. From Expires in each HTTP-date form, and from
    /// Max-Age counted from the response's arrival, which wins (RFC 6265 §5.3); neither: none.
    @Test func cookieExpiryInISO8601() {
        func expires(_ header: String) -> String? {
            guard case .object(let fields)? = HARExport.setCookies([header], receivedAt: start).first,
                  case .string(let value)? = fields.first(where: { $0.0 == "expires" })?.1 else { return nil }
            return value
        }
        #expect(expires("a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT") == "2037-10-21T07:28:00.000Z")
        #expect(expires("a=1; expires=Wed, 21-Oct-2037 07:28:00 GMT; Path=/") == "2037-10-21T07:28:00.000Z")
        #expect(expires("a=1; Expires=Sunday, 06-Nov-94 08:49:37 GMT") == "1994-11-06T08:49:37.000Z")
        #expect(expires("a=1; Expires=Sun Nov  6 08:49:37 1994") == "1994-11-06T08:49:37.000Z")
        #expect(expires("a=1; Max-Age=3600; Expires=Wed, 21 Oct 2037 07:28:00 GMT") == "2025-11-30T04:05:00.000Z")
        #expect(expires("a=1; Max-Age=0") == "2025-11-30T03:05:00.000Z")
        #expect(expires("a=1; Expires=tomorrow") == nil)
        #expect(expires("a=1; SameSite=Lax") == nil)
    }
}
