@testable import Proxy
import FlowTerms
import Wire
import Testing

/// The relay's HTTP/1 reading against the hostile-input trial's shapes: valid messages never stop
/// it, and what it cannot follow is refused (`ExchangeRefusal`), never passed on unread.
@Suite("Exchange rows: what a hostile peer sends on the relay")
struct ExchangeReaderRefusalTests {
    static let post = "POST /first HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
    static let hidden = "GET /hidden?secret=1 HTTP/1.1\r\nHost: h\r\n\r\n"

    /// The trial's valid bodies (nginx served the request after each; tv stopped reading).
    static let validBodies: [(String, String)] = [
        ("a 16-digit size with leading zeros", "0000000000000002\r\nab\r\n0\r\n\r\n"),
        ("an 8 KB extension", "2;x=" + String(repeating: "e", count: 8_000) + "\r\nab\r\n0\r\n\r\n"),
        ("a 70 KB extension", "2;x=" + String(repeating: "e", count: 70_000) + "\r\nab\r\n0\r\n\r\n"),
        ("a 70 KB trailer section", "2\r\nab\r\n0\r\nX-T: " + String(repeating: "v", count: 70_000) + "\r\n\r\n"),
    ]

    @Test("a valid chunked request body of any shape is read through and the request after it has its row, whole and in 1,000-byte bursts")
    func validRequestBodies() {
        for (name, body) in Self.validBodies {
            let bytes = Array((Self.post + body + Self.hidden).utf8)
            for size in [bytes.count, 1_000] {
                let p = ExchangePlaybook()
                for start in stride(from: 0, to: bytes.count, by: size) {
                    p.feed(Array(bytes[start ..< min(start + size, bytes.count)]), .clientToServer, at: 1)
                }
                #expect(p.emitted.map(\.path) == ["/first", "/hidden"], "\(name), bursts of \(size)")
                #expect(p.reader.stop == nil, "\(name)")
                p.server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", at: 2)
                let done = p.emitted.filter { $0.state == .complete }
                #expect(done.map { "\($0.path) \($0.requestBodyBytes) \($0.status ?? 0)" } == ["/first 2 200", "/hidden 0 200"], "\(name)")
            }
        }
    }

    @Test("valid chunked responses (the trial's hsrv /cext2k, /zeros16, /trailers with 50,000 lines) are read through; the next exchange has its row")
    func validResponseBodies() {
        let bodies = [
            "2;x=" + String(repeating: "e", count: 2_000) + "\r\nok\r\n0\r\n\r\n",
            "0000000000000002\r\nok\r\n0\r\n\r\n",
            "2\r\nok\r\n0\r\n" + (0 ..< 50_000).map { "X-T\($0): v\r\n" }.joined() + "\r\n",
        ]
        for body in bodies {
            let p = ExchangePlaybook()
            p.client("GET /a HTTP/1.1\r\nHost: h\r\n\r\n", at: 1)
            let first = p.server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body, at: 2)
            #expect(first.map { "\($0.path) \($0.responseBodyBytes ?? 0) \($0.state.rawValue)" } == ["/a 2 complete"], "\(body.prefix(20))")
            p.client("GET /later HTTP/1.1\r\nHost: h\r\n\r\n", at: 3)
            #expect(p.server("HTTP/1.1 204 No Content\r\n\r\n", at: 4).map(\.path) == ["/later"])
            #expect(p.reader.stop == nil)
        }
    }

    @Test("a malformed chunked request body (the trial's smuggling shapes) is refused: tv's 400, the row answered, nothing after it read", arguments: [
        ("10000000000000002\r\nab\r\n0\r\n\r\n", ChunkedBodyProblem.sizeTooLarge),
        ("2g\r\nab\r\n0\r\n\r\n", .sizeFollowedBy(0x67)),
        ("0x2\r\nab\r\n0\r\n\r\n", .sizeFollowedBy(0x78)),
        ("-2\r\nab\r\n0\r\n\r\n", .sizeNotHex(0x2D)),
        ("2;a\nb\r\nab\r\n0\r\n\r\n", .bareLFInExtension),
        ("2\r\nabXX0\r\n\r\n", .dataNotFollowedByCRLF(chunkSize: 2)),
        (" 2\r\nab\r\n0\r\n\r\n", .sizeNotHex(0x20)),
    ])
    func malformedRequestBody(_ body: String, _ problem: ChunkedBodyProblem) {
        let p = ExchangePlaybook()
        let rows = p.client(Self.post + body + Self.hidden, at: 5)
        #expect(rows.map { "\($0.path) \($0.status ?? 0) \($0.state.rawValue)" } == ["/first 0 open", "/first 400 answered"], "\(rows)")
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .chunkedBodyRefused(.client, problem), answer: .status(400))))
        // Its head in one burst, the body in the next: the same.
        let split = ExchangePlaybook()
        split.client(Self.post, at: 5)
        #expect(split.client(body + Self.hidden, at: 6).map { "\($0.status ?? 0) \($0.state.rawValue)" } == ["400 answered"])
        #expect(split.reader.stop == .refused(ExchangeRefusal(failure: .chunkedBodyRefused(.client, problem), answer: .status(400))))
        // Behind a request waiting for its response, in the same burst: the request before goes
        // on and is answered, then tv's 400 (a reset before, both rows incomplete).
        let piped = ExchangePlaybook()
        let wait = "GET /wait HTTP/1.1\r\nHost: h\r\n\r\n"
        let both = piped.client(wait + Self.post + body, at: 7)
        #expect(both.map { "\($0.path) \($0.state.rawValue)" } == ["/wait open", "/first open"], "\(both)")
        #expect(piped.reader.takeHold() == ExchangeRefusal(failure: .chunkedBodyRefused(.client, problem), answer: .status(400), passing: wait.utf8.count,
                                                           awaitsResponses: true))
        #expect(piped.server("HTTP/1.1 204 No Content\r\n\r\n", at: 8).map { "\($0.path) \($0.status ?? 0) \($0.state.rawValue)" }
                    == ["/wait 204 complete", "/first 400 answered"])
        #expect(piped.reader.stop == .refused(ExchangeRefusal(failure: .chunkedBodyRefused(.client, problem), answer: .status(400), passing: 27)))
        // Its head went on in an earlier burst behind another waiting: the server has part of
        // it, and no answer fits: a reset, both rows incomplete (both went on).
        let late = ExchangePlaybook()
        late.client(wait + Self.post, at: 7)
        #expect(late.client(body, at: 8).map { "\($0.path) \($0.state.rawValue)" } == ["/wait incomplete", "/first incomplete"])
        #expect(late.reader.stop == .refused(ExchangeRefusal(failure: .chunkedBodyRefused(.client, problem), answer: .reset)))
    }

    @Test("a broken chunked response: tv's 502 in its place when its head came in the same burst, after the end of the response before it; cut when its head went on earlier")
    func malformedResponseBody() {
        let p = ExchangePlaybook()
        p.client("GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n", at: 1)
        let first = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        let rows = p.server(first + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000002\r\nab\r\n0\r\n\r\n", at: 2)
        #expect(rows.map { "\($0.path) \($0.status ?? 0) \($0.state.rawValue)" } == ["/1 200 complete", "/2 502 answered"], "\(rows)")
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .chunkedBodyRefused(.server, .sizeTooLarge), answer: .status(502), passing: first.utf8.count)))
        let late = ExchangePlaybook()
        late.client("GET /1 HTTP/1.1\r\nHost: h\r\n\r\n", at: 1)
        late.server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n", at: 2)
        #expect(late.server("2g\r\nab\r\n0\r\n\r\n", at: 3).map { "\($0.status ?? 0) \($0.state.rawValue)" } == ["200 incomplete"])
        #expect(late.reader.stop == .refused(ExchangeRefusal(failure: .chunkedBodyRefused(.server, .sizeFollowedBy(0x67)), answer: .reset)))
    }

    @Test("obs-fold is refused both ways (RFC 9112 §5.2): a request's with tv's 400 and a row, a response's with tv's 502; the trial's `Transfer-Encoding:\\r\\n chunked` and `X-A: b\\r\\n Content-Length: 2` among them")
    func obsFold() {
        for head in ["POST /te HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n",
                     "POST /te HTTP/1.1\r\nHost: h\r\nX-A: b\r\n Content-Length: 2\r\n\r\nab"] {
            let p = ExchangePlaybook()
            let rows = p.client(head + Self.hidden, at: 3)
            #expect(rows.map { "\($0.method) \($0.path) \($0.status ?? 0) \($0.state.rawValue)" } == ["POST /te 400 answered"], "\(rows)")
            #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .requestUnreadable(HTTP1HeadParser.obsFoldSentence(.request)), answer: .status(400))))
        }
        let r = ExchangePlaybook()
        r.client("GET /fold HTTP/1.1\r\nHost: h\r\n\r\n", at: 1)
        let rows = r.server("HTTP/1.1 200 OK\r\nX-Fold: a\r\n  folded\r\nContent-Length: 2\r\n\r\nok", at: 2)
        #expect(rows.map { "\($0.path) \($0.status ?? 0) \($0.state.rawValue)" } == ["/fold 502 answered"])
        #expect(r.reader.stop == .refused(ExchangeRefusal(failure: .responseUnreadable(HTTP1HeadParser.obsFoldSentence(.response)), answer: .status(502))))
    }

    @Test("the head clock's two questions: when the request head part way began (from its first byte to its empty line), and whether tv's 408 would be read as its answer")
    func headUnderWay() {
        let p = ExchangePlaybook()
        #expect(!p.reader.readsRequestHead)
        p.client("GET /slow HTTP/1.1\r\nHost: h\r\n", at: 1)
        #expect(p.reader.readsRequestHead && p.reader.requestHeadAnswerable)
        p.client("X-a: b\r\n", at: 2)
        #expect(p.reader.readsRequestHead)
        #expect(p.reader.requestHeadStartedAt == 1)
        p.client("\r\n", at: 3)
        #expect(!p.reader.readsRequestHead && !p.reader.requestHeadAnswerable && p.reader.requestHeadStartedAt == nil)
        // The next head begins while the first waits for its response: not answerable.
        p.client("GET /next HTTP/1.1\r\n", at: 4)
        #expect(p.reader.readsRequestHead && !p.reader.requestHeadAnswerable && p.reader.requestHeadStartedAt == 4)
        p.server("HTTP/1.1 204 No Content\r\n\r\n", at: 5)
        #expect(p.reader.readsRequestHead && p.reader.requestHeadAnswerable && p.reader.requestHeadStartedAt == 4)
        // A head that ends in a burst where the next begins: the next one's start is that burst's.
        p.client("Host: h\r\n\r\nGET /third HTTP/1.1\r\n", at: 6)
        #expect(p.reader.requestHeadStartedAt == 6 && !p.reader.requestHeadAnswerable)
        // A body is no head.
        let b = ExchangePlaybook()
        b.client(Self.post + "2\r\na", at: 1)
        #expect(!b.reader.readsRequestHead)
        // HTTP/2 has none.
        #expect(!ExchangePlaybook(http2: true).reader.readsRequestHead)
    }
}
