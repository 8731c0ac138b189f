@testable import Proxy
import FlowTerms
import Wire
import Testing

/// The relay's HTTP/1 heads against tv's one head limit (`HTTP1HeadParser.defaultMaxHeadBytes`,
/// the plain path's too), the heads it holds back until whole (`ExchangeReader.heldHeadStart`),
/// and the 101s it switches on (`SwitchingProtocols`): a hostile-input trial's 1.29 MB request
/// head went through an inspected tunnel to the server, and a 101 nobody asked for ended the
/// reading.
@Suite("Exchange rows: heads past tv's limit, heads held until whole, 101s checked")
struct ExchangeReaderHeadLimitTests {
    /// A request head of `fields` fields of 1,000 bytes (past 64 KiB from 66 on).
    static func bigRequest(_ path: String, fields: Int) -> [UInt8] {
        Array(("GET \(path) HTTP/1.1\r\nHost: h\r\n"
            + (1 ... fields).map { "X-Big-\($0): " + String(repeating: "v", count: 1_000) + "\r\n" }.joined() + "\r\n").utf8)
    }

    /// Feeds `bytes` in bursts of `size`; the `heldHeadStart` after each burst fed before the stop.
    static func feed(_ p: ExchangePlaybook, _ bytes: [UInt8], _ direction: Direction, bursts size: Int, at micros: Int64) -> [Int?] {
        var held: [Int?] = []
        for start in stride(from: 0, to: bytes.count, by: size) where p.reader.stop == nil {
            p.feed(Array(bytes[start ..< min(start + size, bytes.count)]), direction, at: micros)
            if p.reader.stop == nil { held.append(p.reader.heldHeadStart) }
        }
        return held
    }

    static let tooLongFields = ConnectionFailure.requestUnreadable("The request head exceeds 65536 bytes without ending in an empty line.")

    @Test("a request head past 64 KiB (80 fields of 1,000 bytes) is refused with the plain path's 431, whole or in 16 KiB bursts, each burst held back from the head's start; its row is answered 431; a request line past it gets 414")
    func requestPastTheLimit() {
        let big = Self.bigRequest("/big", fields: 80)
        for size in [big.count, 16_384] {
            let p = ExchangePlaybook(http1: true)
            let held = Self.feed(p, big, .clientToServer, bursts: size, at: 5)
            #expect(held == Array(repeating: 0, count: size == 16_384 ? 3 : 0), "bursts of \(size)")
            #expect(p.reader.stop == .refused(ExchangeRefusal(failure: Self.tooLongFields, answer: .status(431))), "bursts of \(size)")
            #expect(p.emitted.map { "\($0.method) \($0.path) \($0.state.rawValue) \($0.status ?? 0) \($0.reason ?? "")" }
                    == ["GET /big answered 431 Request Header Fields Too Large"], "bursts of \(size)")
        }
        // As `HTTPRequestHeadParser.Result.refusal` answers the plain path's head: one rule.
        let plain = HTTPRequestHeadParser.parse(big).refusal
        #expect(plain?.status == 431 && plain?.reason == "The request head exceeds 65536 bytes without ending in an empty line.")
        let line = ExchangePlaybook(http1: true)
        line.feed(Array(("GET /" + String(repeating: "a", count: 70_000) + " HTTP/1.1\r\n\r\n").utf8), .clientToServer, at: 5)
        #expect(line.reader.stop == .refused(ExchangeRefusal(failure: .requestUnreadable("The request line exceeds 65536 bytes without ending."),
                                                             answer: .status(414))))
    }

    @Test("a request read whole before a head past the limit in the same burst goes on (passing) and is answered first; tv's 431 waits for its response")
    func pastTheLimitBehindARequest() {
        let first = Array("GET /first HTTP/1.1\r\nHost: h\r\n\r\n".utf8)
        let p = ExchangePlaybook(http1: true)
        p.feed(first + Self.bigRequest("/big", fields: 20).dropLast(2), .clientToServer, at: 1)
        #expect(p.reader.heldHeadStart == first.count, "the head part way is held from its start; the request before it goes on")
        p.feed(Array((1 ... 60).map { "X-More-\($0): " + String(repeating: "m", count: 1_000) + "\r\n" }.joined().utf8), .clientToServer, at: 2)
        #expect(p.reader.stop == nil)
        #expect(p.reader.takeHold() == ExchangeRefusal(failure: Self.tooLongFields, answer: .status(431), awaitsResponses: true))
        p.server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", at: 3)
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: Self.tooLongFields, answer: .status(431), passing: 40)))
        #expect(p.emitted.filter { $0.state != .open }.map { "\($0.path) \($0.status ?? 0)" } == ["/first 200", "/big 431"])
    }

    @Test("held heads: none for a head in one burst, from its start for one split (0 once it began in an earlier burst); the connection's first client bytes are not held where tv cannot know the stream is HTTP, later heads are")
    func heldHeads() {
        let p = ExchangePlaybook(http1: true)
        p.client("GET /a HTTP/1.1\r\nHost: h\r\n\r\n", at: 1)
        #expect(p.reader.heldHeadStart == nil && !p.reader.holdsHead(.clientToServer))
        p.client("GET /b HTT", at: 2)
        #expect(p.reader.heldHeadStart == 0 && p.reader.holdsHead(.clientToServer))
        p.client("P/1.1\r\nHost: h\r\n\r\nGET /c", at: 3)
        #expect(p.reader.heldHeadStart == 18)
        p.client(" HTTP/1.1\r\nHost: h\r\n\r\n", at: 3)
        #expect(p.reader.heldHeadStart == nil)
        p.server("HTTP/1.1 200 OK\r\nContent-", at: 4)
        #expect(p.reader.heldHeadStart == 0 && p.reader.holdsHead(.serverToClient))
        p.server("Length: 0\r\n\r\nHTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 2", at: 5)
        #expect(p.reader.heldHeadStart == 40)
        #expect(p.emitted.filter { $0.state == .complete }.map(\.path) == ["/a", "/b"])

        // TLS without ALPN: the first bytes may be another protocol's line waiting for an answer
        // (a Redis PING), held only once a whole request line says the stream is HTTP.
        let ping = ExchangePlaybook()
        ping.client("PING\r\n", at: 1)
        #expect(ping.reader.heldHeadStart == nil && !ping.reader.holdsHead(.clientToServer))
        let unknown = ExchangePlaybook()
        unknown.client("GET /a HT", at: 1)
        #expect(unknown.reader.heldHeadStart == nil && !unknown.reader.holdsHead(.clientToServer))
        unknown.client("TP/1.1\r\nHost: h\r\n", at: 2)
        #expect(unknown.reader.heldHeadStart == 0 && unknown.reader.holdsHead(.clientToServer))
        unknown.client("\r\nGET /b", at: 3)
        #expect(unknown.reader.heldHeadStart == 2 && unknown.reader.holdsHead(.clientToServer))
    }

    @Test("a response head past 64 KiB is refused with the plain path's 502, in 16 KiB bursts held from the first; the row is answered 502")
    func responsePastTheLimit() {
        let p = ExchangePlaybook(http1: true)
        p.client("GET /a HTTP/1.1\r\nHost: h\r\n\r\n", at: 1)
        let head = Array(("HTTP/1.1 200 OK\r\n" + (1 ... 80).map { "X-Big-\($0): " + String(repeating: "v", count: 1_000) + "\r\n" }.joined() + "\r\n").utf8)
        #expect(Self.feed(p, head, .serverToClient, bursts: 16_384, at: 2) == [0, 0, 0])
        let failure = ConnectionFailure.responseUnreadable("The response head exceeds 65536 bytes without ending in an empty line.")
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: failure, answer: .status(502))))
        #expect(p.emitted.last.map { "\($0.path) \($0.state.rawValue) \($0.status ?? 0)" } == "/a answered 502")
        #expect(failure.sentence == "the server's response was not understood: The response head exceeds 65536 bytes without ending in an empty line.")
    }

    static let webSocketRequest = "GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

    @Test("a 101 the request did not ask for, to another protocol, or with a wrong WebSocket accept is refused: tv's 502 in its place, after the response before it in the burst; its row answered 502; a right one switches")
    func switchingProtocols() {
        let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        let cases: [(String, String, SwitchingProtocols.Refusal?)] = [
            ("GET /plain HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\nGET /smuggled", .notAsked),
            ("GET /h2c HTTP/1.1\r\nHost: h\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
             .notOffered(chosen: "websocket", asked: "h2c")),
            (Self.webSocketRequest, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n\r\n", .noProtocolNamed(asked: "websocket")),
            (Self.webSocketRequest, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n",
             .wrongWebSocketAccept(sent: "AAAAAAAAAAAAAAAAAAAAAAAAAAA=", expected: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")),
            (Self.webSocketRequest, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
             .wrongWebSocketAccept(sent: nil, expected: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")),
            (Self.webSocketRequest, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n\u{81}\u{02}hi", nil),
        ]
        for (request, answer, refusal) in cases {
            let p = ExchangePlaybook(http1: true)
            p.client("GET /before HTTP/1.1\r\nHost: h\r\n\r\n" + request, at: 1)
            p.server(ok + answer, at: 2)
            let last = p.emitted.last!
            if let refusal {
                #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .switchRefused(refusal), answer: .status(502), passing: ok.utf8.count)), "\(answer)")
                #expect("\(last.state.rawValue) \(last.status ?? 0) \(last.upgrade)" == "answered 502 false", "\(answer)")
            } else {
                #expect(p.reader.stop == .tunnel)
                #expect("\(last.state.rawValue) \(last.status ?? 0) \(last.upgrade)" == "complete 101 true")
            }
        }
        #expect(ConnectionFailure.switchRefused(.notAsked).sentence
                == "the server's 101 Switching Protocols was refused, since the request asked for no upgrade, and RFC 9110 §15.2.2 forbids a server to switch to a protocol the client did not ask for; tv answered 502 in its place and closed the connection")
    }
}

@Suite("101 Switching Protocols: whether it answers the request (RFC 9110 §7.8, RFC 6455 §4.1)")
struct SwitchingProtocolsTests {
    @Test("the accept for RFC 6455 §1.3's example key, through OpenSSL")
    func acceptVector() {
        #expect(SwitchingProtocols.webSocketAccept(key: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test("decisions: asked and named (case aside, among several), not asked, not named, another, a wrong or missing accept; no key, nothing to check")
    func decisions() {
        let key = "dGhlIHNhbXBsZSBub25jZQ==", accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        #expect(SwitchingProtocols.check(requestUpgrade: "websocket", webSocketKey: key, upgrade: "WebSocket", webSocketAccept: accept) == nil)
        #expect(SwitchingProtocols.check(requestUpgrade: "h2c, websocket", webSocketKey: nil, upgrade: "h2c", webSocketAccept: nil) == nil)
        #expect(SwitchingProtocols.check(requestUpgrade: "websocket", webSocketKey: nil, upgrade: "websocket", webSocketAccept: nil) == nil)
        #expect(SwitchingProtocols.check(requestUpgrade: nil, webSocketKey: nil, upgrade: "websocket", webSocketAccept: accept) == .notAsked)
        #expect(SwitchingProtocols.check(requestUpgrade: " , ", webSocketKey: nil, upgrade: "websocket", webSocketAccept: nil) == .notAsked)
        #expect(SwitchingProtocols.check(requestUpgrade: "websocket", webSocketKey: key, upgrade: nil, webSocketAccept: accept)
                == .noProtocolNamed(asked: "websocket"))
        #expect(SwitchingProtocols.check(requestUpgrade: "h2c", webSocketKey: nil, upgrade: "h2c, websocket", webSocketAccept: nil)
                == .notOffered(chosen: "h2c, websocket", asked: "h2c"))
        #expect(SwitchingProtocols.check(requestUpgrade: "websocket", webSocketKey: key, upgrade: "websocket", webSocketAccept: accept.lowercased())
                == .wrongWebSocketAccept(sent: accept.lowercased(), expected: accept))
        #expect(SwitchingProtocols.check(requestUpgrade: "websocket", webSocketKey: key, upgrade: "websocket", webSocketAccept: nil)
                == .wrongWebSocketAccept(sent: nil, expected: accept))
    }
}
