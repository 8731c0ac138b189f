@testable import Proxy
import FlowTerms
import Wire
import Testing

/// `ExchangeReader` fed by hand: bytes and times in, exchange rows out (issue 16).
final class ExchangePlaybook {
    let reader: ExchangeReader
    private(set) var emitted: [ExchangeRecord] = []

    /// `http1`: ALPN chose http/1.1; `maxOpen`: the reader's bound on requests waiting.
    init(keepsQuery: Bool = false, http2: Bool = false, http1: Bool = false, scheme: String = "https",
         target: (scheme: String, authority: String)? = nil, maxOpen: Int = 256) {
        reader = ExchangeReader(.init(flowID: 7, scheme: scheme, keepsQuery: keepsQuery, http2: http2, http1: http1, maxOpen: maxOpen, target: target))
    }

    init(_ settings: ExchangeReader.Settings) {
        reader = ExchangeReader(settings)
    }

    /// Feeds `bytes` as one burst; returns what was emitted for it.
    @discardableResult
    func feed(_ bytes: [UInt8], _ direction: Direction, at micros: Int64) -> [ExchangeRecord] {
        let before = emitted.count
        bytes.withUnsafeBytes { reader.feed($0, direction, at: micros) { emitted.append($0) } }
        return Array(emitted[before...])
    }

    @discardableResult
    func client(_ text: String, at micros: Int64) -> [ExchangeRecord] { feed(Array(text.utf8), .clientToServer, at: micros) }

    @discardableResult
    func server(_ text: String, at micros: Int64) -> [ExchangeRecord] { feed(Array(text.utf8), .serverToClient, at: micros) }

    @discardableResult
    func end(at micros: Int64) -> [ExchangeRecord] {
        let before = emitted.count
        reader.end(at: micros) { emitted.append($0) }
        return Array(emitted[before...])
    }
}

@Suite("Exchange rows read from HTTP/1 on the data path")
struct ExchangeReaderHTTP1Tests {
    @Test("a head whose body is still to come is said once (the driver acknowledges it at once); a body in the same burst, or none, is not")
    func bodyWaitAfterHead() {
        let p = ExchangePlaybook()
        p.client("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", at: 1)
        #expect(!p.reader.takeRequestBodyWait())
        p.client("POST /a HTTP/1.1\r\nHost: example.com\r\nContent-Length: 9\r\n\r\n", at: 2)
        #expect(p.reader.takeRequestBodyWait())
        #expect(!p.reader.takeRequestBodyWait(), "said once")
        // The waited-for body ends: acknowledged too (the next request may wait behind it when
        // the response came first).
        p.client("{\"a\": 12}", at: 3)
        #expect(p.reader.takeRequestBodyWait())
        #expect(!p.reader.takeRequestBodyWait(), "said once")
        p.server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", at: 4)
        // Head and body in one burst: nothing is held back.
        p.client("POST /b HTTP/1.1\r\nHost: example.com\r\nContent-Length: 2\r\n\r\nhi", at: 5)
        #expect(!p.reader.takeRequestBodyWait())
        // The head split over bursts: said after the burst that ends it.
        p.client("PUT /c HTTP/1.1\r\nHost: exa", at: 6)
        #expect(!p.reader.takeRequestBodyWait())
        p.client("mple.com\r\nTransfer-Encoding: chunked\r\n\r\n", at: 7)
        #expect(p.reader.takeRequestBodyWait())
        // A chunk of a waited-for body that does not end it: nothing.
        p.client("5\r\nhello\r\n", at: 8)
        #expect(!p.reader.takeRequestBodyWait())
        p.client("0\r\n\r\n", at: 9)
        #expect(p.reader.takeRequestBodyWait())
    }

    @Test("Expect: 100-continue answered 417 before any body byte, the body never sent: complete at the close, ending with its response; an upload the server answered part way is cut")
    func answeredBeforeTheBody() {
        let p = ExchangePlaybook()
        p.client("POST /x HTTP/1.1\r\nHost: example.com\r\nExpect: 100-continue\r\nContent-Length: 1048576\r\n\r\n", at: 10)
        p.server("HTTP/1.1 417 Expectation Failed\r\nContent-Length: 7\r\nConnection: close\r\n\r\nno way\n", at: 14)
        let ended = p.end(at: 500)
        #expect(ended.count == 1 && ended[0].state == .complete && ended[0].status == 417, "\(ended)")
        #expect(ended[0].responseTime == 14 && ended[0].endTime == 14 && ended[0].requestBodyBytes == 0, "\(ended)")

        // The same 417 with a body delimited by the close: whole at the close, so complete too.
        let u = ExchangePlaybook()
        u.client("POST /x HTTP/1.1\r\nHost: example.com\r\nExpect: 100-continue\r\nContent-Length: 1048576\r\n\r\n", at: 10)
        u.server("HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\n\r\nno way\n", at: 14)
        let closed = u.end(at: 40)
        #expect(closed.count == 1 && closed[0].state == .complete && closed[0].endTime == 40, "\(closed)")

        let q = ExchangePlaybook()
        q.client("POST /y HTTP/1.1\r\nHost: example.com\r\nContent-Length: 10\r\n\r\nabc", at: 10)
        q.server("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", at: 12)
        let cut = q.end(at: 20)
        #expect(cut.count == 1 && cut[0].state == .incomplete && cut[0].endTime == 20, "\(cut)")
    }

    @Test("an end whose time was read before the response's burst (the leg's end read first in the loop turn): the row ends at its response, never before it")
    func endNeverBeforeTheResponse() {
        let p = ExchangePlaybook()
        p.client("GET /reset HTTP/1.1\r\nHost: example.com\r\n\r\n", at: 100)
        p.server("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\npart", at: 597)
        let ended = p.end(at: 558)
        #expect(ended.count == 1 && ended[0].state == .incomplete && ended[0].responseTime == 597 && ended[0].endTime == 597, "\(ended)")
    }

    /// A request as its head opens it; one without a body ends with its head (`requestEndTime`).
    func get(_ sequence: Int, _ path: String, at time: Int64, queryRemoved: Bool = false, method: String = "GET",
             ended: Bool = true) -> ExchangeRecord {
        ExchangeRecord(flowID: 7, sequence: sequence, httpVersion: "HTTP/1.1", method: method, scheme: "https",
                       authority: "example.com", path: path, queryRemoved: queryRemoved, requestTime: time,
                       requestEndTime: ended ? time : nil)
    }

    @Test("reverse mode: the request keeps its own Host (where it was sent is the flow's: sentTo), over the scheme the server got it on; one naming none takes the target's")
    func reverseTarget() {
        let p = ExchangePlaybook(scheme: "http", target: (scheme: "https", authority: "localhost:18443"))
        let first = p.client("GET /index.html HTTP/1.1\r\nHost: other.invalid:9\r\n\r\n", at: 10)
        #expect(first.map(\.authority) == ["other.invalid:9"] && first.map(\.scheme) == ["https"], "\(first)")
        p.server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", at: 20)
        let second = p.client("GET http://elsewhere.invalid/x HTTP/1.1\r\nHost: elsewhere.invalid\r\n\r\n", at: 30)
        #expect(second.map(\.authority) == ["elsewhere.invalid"] && second.map(\.path) == ["/x"], "\(second)")
        p.server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", at: 40)
        let none = p.client("GET /y HTTP/1.0\r\n\r\n", at: 50)
        #expect(none.map(\.authority) == ["localhost:18443"], "\(none)")
    }

    @Test("a response nobody asked for is refused: the responses asked for go on, the rest does not, the connection closes (the trial's smuggled `X-Smuggled: yes` reached the client as its next request's); empty lines between responses go on")
    func unaskedResponseIsRefused() {
        let p = ExchangePlaybook()
        p.client("GET /larger HTTP/1.1\r\nHost: a\r\n\r\n", at: 10)
        let asked = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"
        let smuggled = "HTTP/1.1 200 OK\r\nContent-Length: 8\r\nX-Smuggled: yes\r\n\r\nsmuggled"
        #expect(asked.utf8.count == 49 && smuggled.utf8.count == 63)
        let first = p.server(asked + smuggled, at: 20)
        #expect(first.map { "\($0.path) \($0.status ?? 0) \($0.responseBodyBytes ?? 0) \($0.state.rawValue)" } == ["/larger 200 10 complete"], "\(first)")
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .responseUnasked(bytes: 63), answer: .close, passing: 49)))
        // Later requests are not read (the connection closes).
        #expect(p.client("GET /ok HTTP/1.1\r\nHost: a\r\n\r\n", at: 30) == [])
        // In a burst of its own: none of it goes on.
        let own = ExchangePlaybook()
        own.client("GET /a HTTP/1.1\r\nHost: a\r\n\r\n", at: 10)
        own.server("HTTP/1.1 204 No Content\r\n\r\n", at: 20)
        #expect(own.server("\r\n", at: 25) == [] && own.reader.stop == nil, "an empty line goes on")
        #expect(own.server(smuggled, at: 30) == [])
        #expect(own.reader.stop == .refused(ExchangeRefusal(failure: .responseUnasked(bytes: 63), answer: .close, passing: 0)))
    }

    @Test("keep-alive: two exchanges, the query left out, bodies counted across bursts")
    func keepAlive() {
        let p = ExchangePlaybook()
        let first = get(1, "/a", at: 100, queryRemoved: true)
        #expect(p.client("GET /a?token=secret HTTP/1.1\r\nHost: example.com\r\n\r\n", at: 100) == [first])
        // The head came with part of the body: the row is told with its status while the rest
        // streams (a trial's Server-Sent Events read "status none" until they ended).
        var streaming = first
        streaming.status = 200
        streaming.reason = "OK"
        streaming.contentType = "text/plain"
        streaming.responseBodyBytes = 3
        streaming.responseWireBytes = 3
        streaming.responseTime = 200
        #expect(p.server("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhel", at: 200) == [streaming])
        var done = streaming
        done.responseBodyBytes = 5
        done.responseWireBytes = 5
        done.endTime = 250
        done.state = .complete
        #expect(p.server("lo", at: 250) == [done])
        let post = get(2, "/upload", at: 300, method: "POST", ended: false)
        #expect(p.client("POST /upload HTTP/1.1\r\nHost: example.com\r\nContent-Length: 6\r\n\r\nab", at: 300) == [post])
        #expect(p.client("cdef", at: 310) == [])
        var posted = post
        // The request's last byte came at 310: HAR's send is 10 µs.
        posted.requestEndTime = 310
        posted.requestBodyBytes = 6
        posted.requestWireBytes = 6
        posted.status = 204
        posted.reason = "No Content"
        posted.responseBodyBytes = 0
        posted.responseWireBytes = 0
        posted.responseTime = 400
        posted.endTime = 400
        posted.state = .complete
        #expect(p.server("HTTP/1.1 204 No Content\r\nContent-Length: 99\r\n\r\n", at: 400) == [posted])
        #expect(p.end(at: 500) == [])
        #expect(p.reader.stop == .ended)
    }

    @Test("the query is kept when content is kept; an absolute target gives scheme and authority, never user information")
    func queryKeptAndAbsoluteForm() {
        let p = ExchangePlaybook(keepsQuery: true, scheme: "http")
        let started = p.client("GET http://user:pw@example.org:8080/x?y=1 HTTP/1.1\r\nHost: example.org:8080\r\n\r\n", at: 1)
        #expect(started == [ExchangeRecord(flowID: 7, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "http",
                                           authority: "example.org:8080", path: "/x?y=1", requestTime: 1, requestEndTime: 1)])
    }

    @Test("pipelining: two requests in one burst, their responses in one burst, in order")
    func pipelining() {
        let p = ExchangePlaybook()
        let opened = p.client("GET /1 HTTP/1.1\r\nHost: example.com\r\n\r\nGET /2 HTTP/1.1\r\nHost: example.com\r\n\r\n", at: 10)
        #expect(opened == [get(1, "/1", at: 10), get(2, "/2", at: 10)])
        let ended = p.server("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nAHTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nBB", at: 20)
        #expect(ended.map(\.sequence) == [1, 2])
        #expect(ended.map(\.status) == [200, 404])
        #expect(ended.map(\.responseBodyBytes) == [1, 2])
        #expect(ended.map(\.state) == [.complete, .complete])
    }

    @Test("chunked response: content bytes and bytes as sent; HEAD and 304 have no body")
    func chunkedHeadAnd304() {
        let p = ExchangePlaybook()
        p.client("GET /c HTTP/1.1\r\nHost: example.com\r\n\r\n", at: 1)
        let chunked = p.server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n5\r\nhello\r\n0\r\n\r\n", at: 2)
        #expect(chunked.count == 1)
        #expect(chunked.first?.responseBodyBytes == 5)
        #expect(chunked.first?.responseWireBytes == 15)
        #expect(chunked.first?.contentEncoding == "gzip")
        p.client("HEAD /h HTTP/1.1\r\nHost: example.com\r\n\r\n", at: 3)
        let head = p.server("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", at: 4)
        #expect(head.map(\.responseBodyBytes) == [0])
        #expect(head.map(\.state) == [.complete])
        p.client("GET /n HTTP/1.1\r\nHost: example.com\r\nIf-None-Match: \"x\"\r\n\r\n", at: 5)
        let notModified = p.server("HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n", at: 6)
        #expect(notModified.map(\.status) == [304])
        #expect(notModified.map(\.responseBodyBytes) == [0])
        #expect(p.reader.stop == nil)
    }

    @Test("100-continue: the interim response is skipped; the final response's first byte is the response's (the 100's booked an upload as its receiving: a trial)")
    func continueInterim() {
        let p = ExchangePlaybook()
        p.client("PUT /f HTTP/1.1\r\nHost: example.com\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n", at: 10)
        #expect(p.server("HTTP/1.1 100 Continue\r\n\r\n", at: 20) == [])
        #expect(p.client("abcd", at: 30) == [])
        let done = p.server("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", at: 40)
        #expect(done.map(\.status) == [201])
        #expect(done.map(\.responseTime) == [40])
        #expect(done.map(\.requestBodyBytes) == [4])
        #expect(done.map(\.requestEndTime) == [30])
        #expect(done.map(\.endTime) == [40])
    }

    @Test("a WebSocket upgrade: 101 completes the exchange and reading stops (what follows is not HTTP)")
    func upgrade() {
        let p = ExchangePlaybook()
        p.client("GET /chat HTTP/1.1\r\nHost: example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", at: 1)
        // RFC 6455 §1.3's example key and accept.
        let switched = p.server("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n\u{81}\u{05}hello", at: 2)
        #expect(switched.map(\.status) == [101])
        #expect(switched.map(\.upgrade) == [true])
        #expect(switched.map(\.state) == [.complete])
        #expect(p.reader.stop == .tunnel)
        #expect(p.client("\u{81}\u{85}abcdefghi", at: 3) == [])
        #expect(p.end(at: 4) == [])
    }

    @Test("CONNECT: authority-form target; a 2xx makes a tunnel")
    func connect() {
        let p = ExchangePlaybook()
        let opened = p.client("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", at: 1)
        #expect(opened == [ExchangeRecord(flowID: 7, sequence: 1, httpVersion: "HTTP/1.1", method: "CONNECT", scheme: "https",
                                          authority: "example.com:443", path: "example.com:443", requestTime: 1, connect: true,
                                          requestEndTime: 1)])
        let done = p.server("HTTP/1.1 200 Connection established\r\n\r\n\u{16}\u{03}\u{01}", at: 2)
        #expect(done.map(\.state) == [.complete])
        #expect(p.reader.stop == .tunnel)
    }

    @Test("a request cut off mid-body ends incomplete with the bytes that came")
    func cutOffMidBody() {
        let p = ExchangePlaybook()
        p.client("POST /big HTTP/1.1\r\nHost: example.com\r\nContent-Length: 10\r\n\r\nabcd", at: 1)
        // Its body never ended: no request end.
        var cut = get(1, "/big", at: 1, method: "POST", ended: false)
        cut.requestBodyBytes = 4
        cut.requestWireBytes = 4
        cut.endTime = 9
        cut.state = .incomplete
        #expect(p.end(at: 9) == [cut])
    }

    @Test("a response delimited by the close is complete when the connection ends")
    func untilClose() {
        let p = ExchangePlaybook()
        p.client("GET / HTTP/1.0\r\n\r\n", at: 1)
        #expect(p.server("HTTP/1.0 200 OK\r\n\r\nabc", at: 2).map { [$0.state.rawValue, String($0.status ?? 0)] } == [["open", "200"]])
        let ended = p.end(at: 3)
        #expect(ended.map(\.state) == [.complete])
        #expect(ended.map(\.responseBodyBytes) == [3])
        #expect(ended.map(\.httpVersion) == ["HTTP/1.0"])
        #expect(ended.map(\.authority) == [nil])
    }

    @Test("split anywhere: every split of a keep-alive stream gives the same rows (besides the open row told when a head comes before its body)")
    func splitAnywhere() {
        let request = Array("POST /p?q HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n".utf8)
        let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nxyz".utf8)
        let whole = ExchangePlaybook()
        whole.feed(request, .clientToServer, at: 1)
        whole.feed(response, .serverToClient, at: 2)
        for split in 1..<request.count {
            let p = ExchangePlaybook()
            p.feed(Array(request[..<split]), .clientToServer, at: 1)
            p.feed(Array(request[split...]), .clientToServer, at: 1)
            p.feed(Array(response[..<min(split, response.count)]), .serverToClient, at: 2)
            p.feed(Array(response[min(split, response.count)...]), .serverToClient, at: 2)
            // A split inside the body tells the row once more while the rest comes.
            let told = p.emitted.filter { !($0.state == .open && $0.status != nil) }
            #expect(told == whole.emitted, "split at \(split)")
        }
        #expect(whole.emitted.last?.requestBodyBytes == 3)
        #expect(whole.emitted.last?.requestWireBytes == 13)
    }

    @Test("not HTTP: a TLS record is refused at once and nothing is emitted; a response tv cannot read is answered 502 by tv when none of it was passed on, else cut")
    func notHTTPAndMalformed() {
        let tls = ExchangePlaybook()
        #expect(tls.feed([0x16, 0x03, 0x01, 0x00, 0x05], .clientToServer, at: 1) == [])
        #expect(tls.reader.stop == .notHTTP(NotHTTPStart(.client, first: [0x16, 0x03, 0x01, 0x00, 0x05])))
        let server = ExchangePlaybook()
        #expect(server.server("SSH-2.0-OpenSSH_9.2\r\n", at: 1) == [])
        #expect(server.reader.stop == .notHTTP(NotHTTPStart(.server, first: Array("SSH-2.0-OpenSSH_".utf8), more: true)))
        let broken = ExchangePlaybook()
        broken.client("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", at: 1)
        let ended = broken.server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", at: 2)
        #expect(ended.map { "\($0.status ?? 0) \($0.state.rawValue) \($0.contentType ?? "-")" } == ["502 answered -"])
        #expect(broken.reader.stop == .refused(ExchangeRefusal(failure: .chunkedBodyRefused(.server, .sizeNotHex(0x7A)), answer: .status(502))))
        // Begun in this burst: tv's 502 in its place (passed on, a trial's row read "cut").
        let badName = ExchangePlaybook()
        badName.client("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", at: 1)
        let refused = badName.server("HTTP/1.1 200 OK\r\nX@Bad: 1\r\nContent-Length: 3\r\n\r\nabc", at: 2)
        #expect(refused.map { "\($0.status ?? 0) \($0.state.rawValue) \($0.endTime ?? 0)" } == ["502 answered 2"])
        #expect(badName.reader.stop == .refused(ExchangeRefusal(
            failure: .responseUnreadable("A header name contains byte 0x40, which is not allowed in a token (RFC 9110 §5.1)."), answer: .status(502))))
        // Its head begun in an earlier burst, held back until whole (`heldHeadStart`): the same
        // 502 (it was cut, its first part passed on).
        let split = ExchangePlaybook()
        split.client("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", at: 1)
        #expect(split.server("HTTP/1.1 200 OK\r\n", at: 2).isEmpty)
        #expect(split.reader.heldHeadStart == 0)
        #expect(split.server("X@Bad: 1\r\n\r\n", at: 3).map { "\($0.status ?? 0) \($0.state.rawValue)" } == ["502 answered"])
        #expect(split.reader.stop == .refused(ExchangeRefusal(
            failure: .responseUnreadable("A header name contains byte 0x40, which is not allowed in a token (RFC 9110 §5.1)."), answer: .status(502))))
        // Part of its body passed on: cut (reset), the row incomplete.
        let body = ExchangePlaybook()
        body.client("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", at: 1)
        _ = body.server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n", at: 2)
        #expect(body.server("zz\r\n", at: 3).map(\.state) == [.incomplete])
        #expect(body.reader.stop == .refused(ExchangeRefusal(failure: .chunkedBodyRefused(.server, .sizeNotHex(0x7A)), answer: .reset)))
    }

    @Test("a request head that breaks the rules (a NUL or DEL in its target, a NUL in a field value) is refused with a row, its line salvaged and its target's bytes escaped, answered 400 by tv (it was forwarded and answered with no row: a trial)")
    func unreadableRequestHeadsKeepARow() {
        let nul = ExchangePlaybook()
        let rows = nul.feed(Array("GET /nul".utf8) + [0] + Array("byte?q=1 HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8), .clientToServer, at: 5)
        #expect(rows.count == 1)
        #expect(rows.first.map { [$0.method, $0.path, $0.httpVersion, $0.state.rawValue, $0.reason] } == ["GET", "/nul%00byte", "HTTP/1.1", "answered", "Bad Request"])
        #expect(rows.first?.status == 400 && rows.first?.queryRemoved == true && rows.first?.sequence == 1 && rows.first?.requestTime == 5 && rows.first?.endTime == 5)
        guard case .refused(let refusal)? = nul.reader.stop, refusal.answer == .status(400) else { Issue.record("\(String(describing: nul.reader.stop))"); return }
        // After a request that was read, in a head that came in two bursts.
        let later = ExchangePlaybook(keepsQuery: true)
        later.client("GET /ok HTTP/1.1\r\nHost: a.test\r\n\r\n", at: 1)
        later.server("HTTP/1.1 204 No Content\r\n\r\n", at: 2)
        later.client("POST /del", at: 3)
        let second = later.feed([0x7F] + Array("x?q=1 HTTP/1.0\r\nX-Bad: a".utf8) + [0] + Array("b\r\n\r\n".utf8), .clientToServer, at: 4)
        #expect(second.map { [$0.method, $0.path, $0.httpVersion, $0.state.rawValue, String($0.sequence)] } == [["POST", "/del%7Fx?q=1", "HTTP/1.0", "answered", "2"]])
        // Behind a request still waiting for its response, a 400 now would be read as that
        // one's (a re-check's pipelined GET took it): the first goes on, the refused one is held
        // back and its row waits open for tv's answer (`ExchangeReaderPipelinedRefusalTests`).
        let piped = ExchangePlaybook()
        let first = "GET /first HTTP/1.1\r\nHost: a.test\r\n\r\n"
        let both = piped.client(first + "POST /clte HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", at: 6)
        #expect(both.map { "\($0.path) \($0.state.rawValue)" } == ["/first open", "/clte open"], "\(both)")
        #expect(piped.reader.stop == nil)
        #expect(piped.reader.takeHold() == ExchangeRefusal(failure: .requestUnreadable("The request has both Content-Length and Transfer-Encoding, a request-smuggling risk RFC 9112 §6.3 lets a server refuse."), answer: .status(400),
                                                           passing: first.utf8.count, awaitsResponses: true))
        // Not a request at all: no row, not HTTP (forwarded as another protocol).
        let other = ExchangePlaybook()
        #expect(other.client("hello\u{0}there\r\n\r\n", at: 1) == [])
        #expect(other.reader.stop == .notHTTP(NotHTTPStart(.client, first: Array("hello\u{0}there\r\n\r\n".utf8))))
    }

    @Test("framing a strict server reads otherwise is refused with a row: Content-Length beside Transfer-Encoding (one POST through a tunnel was recorded as a POST and a smuggled GET: a trial), disagreeing lengths, a space before a colon; chunked alone is read")
    func ambiguousFramingIsRefused() {
        let smuggle = ExchangePlaybook()
        let rows = smuggle.client("POST /clte HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n", at: 3)
        #expect(rows.map { [$0.method, $0.authority ?? "", $0.path, $0.state.rawValue] } == [["POST", "x", "/clte", "answered"]])
        #expect(smuggle.reader.stop == .refused(ExchangeRefusal(
            failure: .requestUnreadable("The request has both Content-Length and Transfer-Encoding, a request-smuggling risk RFC 9112 §6.3 lets a server refuse."), answer: .status(400))))
        let lengths = ExchangePlaybook()
        #expect(lengths.client("POST /cl HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 10\r\n\r\n", at: 1).map(\.path) == ["/cl"])
        guard case .refused = lengths.reader.stop else { Issue.record("\(String(describing: lengths.reader.stop))"); return }
        let colon = ExchangePlaybook()
        #expect(colon.client("POST /sp HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n", at: 1).map(\.path) == ["/sp"])
        guard case .refused = colon.reader.stop else { Issue.record("\(String(describing: colon.reader.stop))"); return }
        let chunked = ExchangePlaybook()
        #expect(chunked.client("POST /ok HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", at: 1).map(\.state) == [.open])
        #expect(chunked.reader.stop == nil)
        // A response with both: the client may read it otherwise (RFC 9112 §6.3, response
        // splitting); the request it was for is answered by tv's 502, a later one ends incomplete.
        let split = ExchangePlaybook()
        split.client("GET /r HTTP/1.1\r\nHost: x\r\n\r\nGET /later HTTP/1.1\r\nHost: x\r\n\r\n", at: 1)
        #expect(split.server("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", at: 2)
                    .map { "\($0.path) \($0.status ?? 0) \($0.state.rawValue)" } == ["/r 502 answered", "/later 0 incomplete"])
        #expect(split.reader.stop == .refused(ExchangeRefusal(failure: .responseUnreadable(HTTP1ResponseSummary.lengthAndCoding), answer: .status(502))))
        // A 304 with both has no body: read as usual.
        let noBody = ExchangePlaybook()
        noBody.client("GET /c HTTP/1.1\r\n\r\n", at: 1)
        #expect(noBody.server("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", at: 2).map(\.status) == [304])
        #expect(noBody.reader.stop == nil)
    }

    @Test("a malformed request line salvaged: method, target escaped outside visible ASCII, the version it names")
    func malformedRequestLine() {
        func line(_ bytes: [UInt8]) -> MalformedRequestLine? { bytes.withUnsafeBytes { MalformedRequestLine($0) } }
        #expect(line(Array("GET /a b HTTP/1.1\r\n".utf8)) == MalformedRequestLine(method: "GET", target: "/a%20b", version: "HTTP/1.1"))
        #expect(line(Array("OPTIONS rtsp://x/\u{1} RTSP/1.0\n".utf8)) == MalformedRequestLine(method: "OPTIONS", target: "rtsp://x/%01%20RTSP/1.0", version: "HTTP/1.1"))
        #expect(line(Array("GET /\u{E9}".utf8)) == MalformedRequestLine(method: "GET", target: "/%C3%A9", version: "HTTP/1.1"))
        #expect(line(Array("get / HTTP/1.1\r\n".utf8)) == nil)
        #expect(line([0x16, 0x03, 0x01]) == nil)
    }

    @Test("bounded: more requests waiting than the limit are refused from the first past it, not passed unread: the ones before go on and are answered, then the close (a trial's 300 pipelined GETs got no response, and 256 rows said incomplete for requests never sent)")
    func bounded() {
        let p = ExchangePlaybook(scheme: "http", maxOpen: 2)
        let two = "GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n"
        #expect(p.client(two + "GET /3 HTTP/1.1\r\n\r\nGET /4 HTTP/1.1\r\n\r\n", at: 1).map { "\($0.path) \($0.state.rawValue)" } == ["/1 open", "/2 open"])
        #expect(p.reader.stop == nil)
        #expect(p.reader.takeHold() == ExchangeRefusal(failure: .pipelinedPastLimit(2), answer: .close, passing: two.utf8.count, awaitsResponses: true))
        let answers = "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"
        #expect(p.server(answers, at: 2).map { "\($0.path) \($0.status ?? 0) \($0.state.rawValue)" } == ["/1 204 complete", "/2 204 complete"])
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .pipelinedPastLimit(2), answer: .close, passing: answers.utf8.count)))
    }
}

@Suite("Request targets of exchange rows (RFC 9112 §3.2)")
struct ExchangeTargetTests {
    @Test func forms() {
        #expect(ExchangeTarget("/a/b?c=d#e", keepsQuery: false) == ExchangeTarget(scheme: nil, authority: nil, path: "/a/b", queryRemoved: true))
        #expect(ExchangeTarget("/a/b?c=d", keepsQuery: true) == ExchangeTarget(scheme: nil, authority: nil, path: "/a/b?c=d", queryRemoved: false))
        #expect(ExchangeTarget("/plain", keepsQuery: false) == ExchangeTarget(scheme: nil, authority: nil, path: "/plain", queryRemoved: false))
        #expect(ExchangeTarget("*", keepsQuery: false) == ExchangeTarget(scheme: nil, authority: nil, path: "*", queryRemoved: false))
        #expect(ExchangeTarget("HTTP://u:p@Example.org:8080?x", keepsQuery: false)
                == ExchangeTarget(scheme: "http", authority: "Example.org:8080", path: "/", queryRemoved: true))
        #expect(ExchangeTarget("example.com:443", keepsQuery: false)
                == ExchangeTarget(scheme: nil, authority: "example.com:443", path: "example.com:443", queryRemoved: false))
    }
}
