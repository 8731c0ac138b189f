@testable import Proxy
import FlowTerms
import Wire
import Testing

/// Where tv knows the stream is HTTP before its first byte (`ExchangeReader.Settings.knowsHTTP`:
/// ALPN http/1.1 or h2, reverse mode), a first request that does not begin like one is refused
/// as a broken request; elsewhere such bytes are another protocol, relayed and said so
/// (`NotHTTPStart`). The hostile-input trial's cases: a lax server answered each, and the
/// request after it, with no row.
@Suite("Exchange rows: first bytes that begin no request")
struct ExchangeReaderKnownHTTPTests {
    static let hidden = "GET /hidden?secret=1 HTTP/1.1\r\nHost: x\r\n\r\n"

    /// The trial's first bytes, each with the sentence tv refuses it with.
    static let cases: [(name: String, bytes: [UInt8], reason: String)] = [
        ("a NUL first", [0] + Array("GET /first HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
         "The stream starts with byte 0x0, which cannot begin an HTTP method (RFC 9112 §3)."),
        ("a control byte in the method", Array("G\u{1}T /first HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
         "The request method contains byte 0x1, which is not allowed in a token (RFC 9110 §9.1)."),
        ("a junk first line", Array("hello\r\nGET /first HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
         "The request line is not a method, a target and a version separated by single spaces (RFC 9112 §3)."),
        ("a TAB between method and target", Array("GET\t/first HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
         "The request line is not a method, a target and a version separated by single spaces (RFC 9112 §3)."),
    ]

    static func reader(_ known: String) -> ExchangePlaybook {
        switch known {
        case "alpn": return ExchangePlaybook(http1: true)
        case "reverse http": return ExchangePlaybook(scheme: "http", target: ("http", "127.0.0.1:8080"))
        case "reverse https": return ExchangePlaybook(scheme: "http", target: ("https", "origin.test"))
        default: return ExchangePlaybook()
        }
    }

    @Test("known HTTP (ALPN http/1.1, reverse mode to http:// or https://): refused from the first byte with tv's 400, nothing forwarded, no row (no line to salvage), the reason the scanner's", arguments: ["alpn", "reverse http", "reverse https"])
    func refusedWhereKnown(_ known: String) {
        for item in Self.cases {
            let p = Self.reader(known)
            #expect(p.feed(item.bytes + Array(Self.hidden.utf8), .clientToServer, at: 1).isEmpty, "\(item.name)")
            #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .requestUnreadable(item.reason), answer: .status(400))), "\(known), \(item.name)")
        }
    }

    @Test("not known (TLS without ALPN, a plain relay): the same bytes are another protocol, relayed, with their first 16 bytes to say so")
    func anotherProtocolElsewhere() {
        for item in Self.cases {
            let p = ExchangePlaybook()
            #expect(p.feed(item.bytes, .clientToServer, at: 1).isEmpty)
            #expect(p.reader.stop == .notHTTP(NotHTTPStart(.client, first: Array(item.bytes.prefix(16)), more: true)), "\(item.name)")
        }
        #expect(NotHTTPStart(.client, first: [0] + Array("GET /first HTTP/".utf8.prefix(15)), more: true).sentence
                == "the client's first bytes, the bytes 00 47 45 54 20 2f 66 69 72 73 74 20 48 54 54 50 …, begin neither an HTTP/1 request line nor HTTP/2's preface")
        #expect(NotHTTPStart(.server, first: Array("SSH-2.0-OpenSSH_".utf8), more: true).sentence
                == "the server spoke first, 'SSH-2.0-OpenSSH_…', before any request, which an HTTP server does not")
        #expect(ConnectionFailure.notReadAsHTTP(NotHTTPStart(.client, first: Array("EHLO a\r\n".utf8))).sentence
                == "tv did not read this connection as HTTP, its bytes going on as they came: the client's first bytes, the bytes 45 48 4c 4f 20 61 0d 0a, begin neither an HTTP/1 request line nor HTTP/2's preface")
    }

    @Test("known HTTP: a request line salvaged keeps its row, answered 400, as anywhere; lower-case methods are the server's to judge (nginx answers 400), as before")
    func salvagedWhereKnown() {
        let p = Self.reader("alpn")
        #expect(p.client("GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", at: 1).map { "\($0.method) \($0.path) \($0.status ?? 0) \($0.state.rawValue)" } == ["GET /a%20b 400 answered"])
        let lower = Self.reader("reverse http")
        #expect(lower.client("get /first HTTP/1.1\r\nHost: x\r\n\r\n", at: 1).map { "\($0.method) \($0.path) \($0.state.rawValue)" } == ["get /first open"])
        #expect(lower.reader.stop == nil)
    }

    @Test("known HTTP: a server that speaks before any request sent bytes no request asked for: dropped and the connection closed; elsewhere another protocol")
    func serverFirst() {
        let p = Self.reader("alpn")
        #expect(p.server("SSH-2.0-OpenSSH_9.2\r\n", at: 1).isEmpty)
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .responseUnasked(bytes: 21), answer: .close)))
        let other = ExchangePlaybook()
        other.server("SSH-2.0-OpenSSH_9.2\r\n", at: 1)
        #expect(other.reader.stop == .notHTTP(NotHTTPStart(.server, first: Array("SSH-2.0-OpenSSH_".utf8), more: true)))
    }

    @Test("ALPN h2: bytes that are not HTTP/2's preface are refused as the client's PROTOCOL_ERROR (RFC 9113 §3.4), none forwarded, the server's connection closed (it never had a preface)")
    func http2Known() {
        let p = ExchangePlaybook(http2: true)
        p.client("GET / HTTP/1.1\r\nHost: x\r\n\r\n", at: 1)
        let error = HTTP2ConnectionError(sentBy: .client, kind: .malformed("The client's bytes do not begin with the HTTP/2 connection preface (RFC 9113 §3.4)."),
                                         errorCode: 0x1, lastClientStream: 0, lastServerStream: 0, otherSideFramed: false)
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .http2ConnectionError(error), answer: .goaway(error), passing: 0)))
    }
}
