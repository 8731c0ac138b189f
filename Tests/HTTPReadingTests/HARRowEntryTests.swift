import FlowTerms
import Foundation
import TVHome
import Testing
@testable import HTTPReading

/// HAR entries from exchange rows (no content kept): exact documents.
@Suite struct HARRowEntryTests {
    let start: Int64 = 1_764_471_900_000_000   // 2025-11-30 03:05:00 UTC

    func flow(_ rows: [ExchangeRecord], port: Int = 443, host: String? = "a.test") -> HARFlow {
        HARFlow(id: 7, startTime: start, scheme: "https", host: host, serverAddress: "192.0.2.1", serverPort: port,
                conversation: HTTPConversation(version: "HTTP/1.1"), rows: rows)
    }

    @Test func anHTTP1RowIsAWholeEntryWithoutHeadersOrQuery() {
        let row = ExchangeRecord(id: 41, flowID: 7, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "https",
                                 authority: "a.test", path: "/search", queryRemoved: true, status: 404, reason: "Not Found",
                                 requestBodyBytes: 0, requestWireBytes: 0, responseBodyBytes: 153, responseWireBytes: 153,
                                 contentType: "text/html", requestTime: start + 1_500, responseTime: start + 14_000,
                                 endTime: start + 14_250, state: .complete)
        let text = HARExport.text([flow([row])], creatorVersion: "0.1")
        #expect(text == """
        {"log":{"version":"1.2","creator":{"name":"TunnelVision","version":"0.1"},"pages":[],"entries":[\
        {"startedDateTime":"2025-11-30T03:05:00.001Z","time":12.75,\
        "request":{"method":"GET","url":"https://a.test/search","httpVersion":"HTTP/1.1","cookies":[],"headers":[],"queryString":[],"headersSize":-1,"bodySize":0},\
        "response":{"status":404,"statusText":"Not Found","httpVersion":"HTTP/1.1","cookies":[],"headers":[],\
        "content":{"size":153,"mimeType":"text/html"},"redirectURL":"","headersSize":-1,"bodySize":153},\
        "cache":{},"timings":{"send":0.0,"wait":12.5,"receive":0.25},"serverIPAddress":"192.0.2.1","connection":"7",\
        "comment":"from the exchange row: no content is kept for its connection (never kept, or deleted since), so no headers, cookies or bodies; the query string was not kept, so the URL ends at the path",\
        "_tv":{"request":41,"state":"complete"}}],\
        "comment":"1 entry from 1 flow; 1 from exchange rows alone (no content kept: no headers, bodies or query strings)"}}
        """)
        #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil)
    }

    @Test func anOpenHTTP2RowWithoutResponseSaysWhatIsUnknown() {
        let row = ExchangeRecord(id: 9, flowID: 7, sequence: 2, streamID: 3, httpVersion: "HTTP/2", method: "POST", scheme: nil,
                                 authority: nil, path: "/upload", requestBodyBytes: 100, requestWireBytes: 100,
                                 requestTime: start, state: .open)
        let entry = HARRowEntry.entry(row, flow: flow([], port: 8443)).serialized()
        #expect(entry == """
        {"startedDateTime":"2025-11-30T03:05:00.000Z","time":0.0,\
        "request":{"method":"POST","url":"https://a.test:8443/upload","httpVersion":"HTTP/2.0","cookies":[],"headers":[],"queryString":[],"headersSize":-1,"bodySize":100},\
        "response":{"status":0,"statusText":"","httpVersion":"","cookies":[],"headers":[],"content":{"size":0,"mimeType":""},"redirectURL":"","headersSize":-1,"bodySize":-1},\
        "cache":{},"timings":{"send":0.0,"wait":0.0,"receive":0.0},"serverIPAddress":"192.0.2.1","connection":"7",\
        "comment":"from the exchange row: no content is kept for its connection (never kept, or deleted since), so no headers, cookies or bodies; HTTP/2 stream 3; still open when exported; no response was read",\
        "_tv":{"request":9,"state":"open"}}
        """)
    }

    /// HAR 1.2 requires send, wait and receive, non-negative: 0 where the row does not tell.
    @Test func timingsAreMillisecondsWithZeroWhereTheRowDoesNotTell() {
        var row = ExchangeRecord(flowID: 1, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", path: "/", requestTime: 1_000)
        #expect(HARRowEntry.timings(row) == (0, 0, 0))
        row.responseTime = 3_500
        #expect(HARRowEntry.timings(row) == (0, 2.5, 0))
        row.endTime = 4_000
        #expect(HARRowEntry.timings(row) == (0, 2.5, 0.5))
        // The request's last byte at 2.0 ms: 1 ms sending, 1.5 waiting (it was all counted as wait).
        row.requestEndTime = 2_000
        #expect(HARRowEntry.timings(row) == (1, 1.5, 0.5))
        // An early answer (the response began before the request ended): send ends at the
        // response's first byte, no wait, so the three follow one another.
        row.requestEndTime = 3_800
        #expect(HARRowEntry.timings(row) == (2.5, 0, 0.5))
        // No response yet: the wait runs from the request's end to the exchange's.
        var open = ExchangeRecord(flowID: 1, sequence: 1, httpVersion: "HTTP/1.1", method: "PUT", path: "/", requestTime: 1_000,
                                  endTime: 9_000, requestEndTime: 4_000)
        #expect(HARRowEntry.timings(open) == (3, 5, 0))
        open.endTime = nil
        #expect(HARRowEntry.timings(open) == (3, 0, 0))
    }

    @Test func urlsFromTheRowElseTheFlow() {
        let f = flow([], port: 8443, host: nil)
        func url(_ path: String, scheme: String? = nil, authority: String? = nil, connect: Bool = false) -> String {
            HARRowEntry.url(ExchangeRecord(flowID: 7, sequence: 1, httpVersion: "HTTP/1.1", method: connect ? "CONNECT" : "GET",
                                           scheme: scheme, authority: authority, path: path, requestTime: 0, connect: connect), flow: f)
        }
        #expect(url("/a", scheme: "http", authority: "b.test:8080") == "http://b.test:8080/a")
        #expect(url("/a") == "https://192.0.2.1:8443/a")
        #expect(url("*", authority: "b.test") == "https://b.test/*")
        #expect(url("c.test:443", authority: "c.test:443", connect: true) == "https://c.test:443")
    }

    @Test func theCommentNamesStateUpgradeAndCoding() {
        var row = ExchangeRecord(flowID: 5, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", path: "/ws", status: 101,
                                 requestTime: 0, upgrade: true, state: .complete)
        #expect(HARRowEntry.comment(row) == "from the exchange row: no content is kept for its connection (never kept, or deleted since), so no headers, cookies or bodies; switched protocols")
        row.upgrade = false
        row.status = 502
        row.state = .answered
        #expect(HARRowEntry.comment(row) == "from the exchange row: no content is kept for its connection (never kept, or deleted since), so no headers, cookies or bodies; answered by tv in the server's place (`tv flow 5` says why)")
        row.status = nil
        #expect(HARRowEntry.comment(row) == "from the exchange row: no content is kept for its connection (never kept, or deleted since), so no headers, cookies or bodies; refused by tv and never sent to the server; the connection ended before tv's answer could follow the responses to the requests before it (`tv flow 5` says why)")
        row.status = 502
        row.state = .incomplete
        #expect(HARRowEntry.comment(row) == "from the exchange row: no content is kept for its connection (never kept, or deleted since), so no headers, cookies or bodies; incomplete: its end was never read (the connection ended or was reset first, or stopped being read as HTTP)")
        row.contentEncoding = "gzip"
        row.responseBodyBytes = 40
        #expect(HARRowEntry.response(row, version: "HTTP/1.1").serialized().contains(
            #""content":{"size":-1,"mimeType":"","comment":"the decoded size is not known (size -1): the row counts the body as sent, 40 bytes still gzip-coded (bodySize); only kept content is decoded"}"#))
        #expect(HARRowEntry.comment(row) == "from the exchange row: no content is kept for its connection (never kept, or deleted since), so no headers, cookies or bodies; incomplete: its end was never read (the connection ended or was reset first, or stopped being read as HTTP); the response body was gzip-coded and its decoded size is not known, so content.size is -1")
    }

    /// HAR 1.2's `content.size` is the decoded length; a row counts a content-coded body as sent
    /// (a trial's big.json read 4,150, its br-coded length, where Chromium decoded 251,790): -1
    /// and said, never the coded length as if decoded. Without a coding, or with no body, the
    /// row's count is the decoded length.
    @Test func aCodedBodysDecodedSizeIsNotClaimed() {
        var row = ExchangeRecord(id: 37, flowID: 9, sequence: 19, streamID: 37, httpVersion: "HTTP/2", method: "GET", scheme: "https",
                                 authority: "localhost:21443", path: "/data/big.json", status: 200, requestBodyBytes: 0, requestWireBytes: 0,
                                 responseBodyBytes: 4_150, responseWireBytes: 4_150, contentType: "application/json", contentEncoding: "br",
                                 requestTime: start, responseTime: start + 70_000, endTime: start + 70_046, state: .complete)
        #expect(HARRowEntry.decodedSize(row) == nil)
        #expect(HARRowEntry.response(row, version: "HTTP/2.0").serialized() == """
        {"status":200,"statusText":"","httpVersion":"HTTP/2.0","cookies":[],"headers":[],\
        "content":{"size":-1,"mimeType":"application/json","comment":"the decoded size is not known (size -1): the row counts the body as sent, 4150 bytes still br-coded (bodySize); only kept content is decoded"},\
        "redirectURL":"","headersSize":-1,"bodySize":4150}
        """)
        #expect(HARRowEntry.comment(row) == "from the exchange row: no content is kept for its connection (never kept, or deleted since), so no headers, cookies or bodies; HTTP/2 stream 37; the response body was br-coded and its decoded size is not known, so content.size is -1")
        // `identity` is no coding (RFC 9110 §8.4.1): the count is the decoded length.
        row.contentEncoding = "Identity"
        #expect(HARRowEntry.decodedSize(row) == 4_150)
        #expect(HARRowEntry.response(row, version: "HTTP/2.0").serialized().contains(#""content":{"size":4150,"mimeType":"application/json"},"#))
        #expect(HARRowEntry.comment(row) == "from the exchange row: no content is kept for its connection (never kept, or deleted since), so no headers, cookies or bodies; HTTP/2 stream 37")
        // A coded response without a body (a HEAD's, a 304's) decodes to nothing.
        row.contentEncoding = "gzip"
        row.responseBodyBytes = 0
        #expect(HARRowEntry.decodedSize(row) == 0)
        #expect(HARRowEntry.response(row, version: "HTTP/2.0").serialized().contains(#""content":{"size":0,"mimeType":"application/json"},"#))
        #expect(HARRowEntry.unknownSizeClause(row) == nil)
    }

    /// tv's own 502 (the server could not be reached): a trial's entries had no headers and an
    /// empty body without a word; tv's answer is not kept with what the client and server said,
    /// so the response says so and where its sentence is.
    @Test func tvsOwnAnswerSaysItsHeadersAndBodyAreNotKept() {
        let row = ExchangeRecord(id: 3, flowID: 2, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "http",
                                 authority: "clients2.google.com", path: "/time/1/current", status: 502, reason: "Bad Gateway",
                                 requestBodyBytes: 0, requestWireBytes: 0, responseBodyBytes: 113, responseWireBytes: 113,
                                 contentType: "text/plain; charset=utf-8", requestTime: start, responseTime: start + 9_867,
                                 endTime: start + 9_867, state: .answered)
        #expect(HARRowEntry.response(row, version: "HTTP/1.1").serialized() == """
        {"status":502,"statusText":"Bad Gateway","httpVersion":"HTTP/1.1","cookies":[],"headers":[],\
        "content":{"size":113,"mimeType":"text/plain; charset=utf-8"},"redirectURL":"","headersSize":-1,"bodySize":113,\
        "comment":"tv's own answer, not the server's: its headers and body are not kept (its body was a sentence saying why, which `tv flow 2` gives as the connection's error)"}
        """)
    }
}
