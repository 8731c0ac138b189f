import Testing
@testable import Wire

/// What a client's first bytes begin (RFC 9112 §3's request line, RFC 9113 §3.4's preface, or
/// anything else), told from as few bytes as tell.
struct HTTPRequestStartTests {
    static func judge(_ text: String) -> HTTPRequestStart {
        Array(text.utf8).withUnsafeBytes { HTTPRequestStart.judge($0) }
    }

    @Test("HTTP/1 request lines, once `HTTP/1.` is read; every prefix of one is undecided")
    func requests() {
        for line in ["GET / HTTP/1.1\r\n", "POST /form HTTP/1.0\r\n", "OPTIONS * HTTP/1.1\r\n", "CONNECT a.test:443 HTTP/1.1\r\n",
                     "GET http://a.test/ HTTP/1.1\r\n", "M-SEARCH * HTTP/1.1\r\n"] {
            #expect(Self.judge(line) == .http1, "\(line)")
            let bytes = Array(line.utf8), version = Array("HTTP/1.".utf8)
            let decided = (0...(bytes.count - version.count)).first { Array(bytes[$0..<($0 + version.count)]) == version }! + version.count
            for n in 0..<decided {
                #expect(Self.judge(String(line.prefix(n))) == .undecided, "\(line.prefix(n))")
            }
        }
    }

    @Test("HTTP/2's preface whole; its prefixes undecided; a request line is no preface")
    func preface() {
        let preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
        #expect(Self.judge(preface) == .http2Preface)
        #expect(Self.judge(preface + "\u{0}\u{0}") == .http2Preface)
        #expect(Self.judge("PRI * HTTP/2.0\r\n") == .undecided)
        #expect(Self.judge("PUT / HTTP/1.1\r\n") == .http1)
    }

    @Test("anything else, as soon as it departs: a bare word, binary, a line of another protocol, a bad version")
    func others() {
        #expect(Self.judge("PING\n") == .notHTTP)
        #expect(Self.judge("\u{0}\u{1}\u{2}") == .notHTTP)
        #expect(Self.judge(" GET / HTTP/1.1") == .notHTTP)
        #expect(Self.judge("EHLO client.test\r\n") == .notHTTP)
        #expect(Self.judge("a001 LOGIN bob secret\r\n") == .notHTTP)
        #expect(Self.judge("GET / SIP/2.0\r\n") == .notHTTP)
        #expect(Self.judge("GET  / HTTP/1.1\r\n") == .notHTTP)
        #expect(Self.judge("GET / HTTP/2.0\r\n") == .notHTTP)
        #expect(Self.judge(String(repeating: "A", count: 25)) == .notHTTP)
        #expect(Self.judge(String(repeating: "A", count: 24)) == .undecided)
    }

    @Test("a target still well formed at the line limit is taken for HTTP/1 (a long URL)")
    func longTarget() {
        let start = "GET /" + String(repeating: "a", count: HTTPRequestStart.lineLimit)
        #expect(Self.judge(String(start.prefix(HTTPRequestStart.lineLimit - 1))) == .undecided)
        #expect(Self.judge(start) == .http1)
    }
}
