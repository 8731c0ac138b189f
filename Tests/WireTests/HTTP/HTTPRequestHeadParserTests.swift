import Testing
@testable import Wire

/// Parses `text` (UTF-8, with `\r\n` spelled out) and returns the head, recording an issue otherwise.
func expectHead(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> HTTPRequestHead? {
    let result = HTTPRequestHeadParser.parse(Array(text.utf8))
    guard case .head(let head) = result else {
        Issue.record("expected a head, got \(result)", sourceLocation: sourceLocation)
        return nil
    }
    return head
}

/// Parses `bytes` and returns the malformed reason, recording an issue otherwise.
func expectMalformedHead(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> String {
    let result = HTTPRequestHeadParser.parse(bytes)
    guard case .malformed(let reason) = result else {
        Issue.record("expected malformed, got \(result)", sourceLocation: sourceLocation)
        return ""
    }
    #expect(reason.first?.isUppercase == true && reason.hasSuffix("."), "a reason is one sentence: \(reason)", sourceLocation: sourceLocation)
    return reason
}

func expectMalformedHead(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
    expectMalformedHead(Array(text.utf8), sourceLocation: sourceLocation)
}

@Suite("HTTPRequestHeadParser: real heads from curl")
struct HTTPRequestHeadCapturedTests {
    @Test("curl -x … https://a.test/ sends CONNECT a.test:443")
    func connect() {
        var parser = HTTPRequestHeadParser()
        guard case .head(let head) = parser.feed(CapturedHTTPHeads.curlConnect) else {
            Issue.record("did not parse")
            return
        }
        #expect(head.method == "CONNECT")
        #expect(head.isConnect)
        #expect(head.target == "a.test:443")
        #expect(head.requestTarget == .authority(HostPort(host: "a.test", port: 443)))
        #expect(head.destination == HostPort(host: "a.test", port: 443))
        #expect(head.version == .http11)
        #expect(head.headers == [
            HTTPHeaderField(name: "Host", value: "a.test:443"),
            HTTPHeaderField(name: "User-Agent", value: "curl/7.88.1"),
            HTTPHeaderField(name: "Proxy-Connection", value: "Keep-Alive"),
        ])
        #expect(head.value(forHeader: "PROXY-connection") == "Keep-Alive")
        #expect(head.bodyFraming == HTTPBodyFraming.none)
        #expect(head.keepsAlive)
        #expect(head.byteCount == CapturedHTTPHeads.curlConnect.count)
        #expect(parser.unconsumedBytes.isEmpty)
    }

    @Test("curl -x … http://a.test:8080/path?q=1 sends an absolute-form GET")
    func absoluteGET() {
        guard let head = expectHead(String(decoding: CapturedHTTPHeads.curlAbsoluteGET, as: UTF8.self)) else { return }
        #expect(head.method == "GET")
        #expect(head.requestTarget == .absolute(scheme: "http", destination: HostPort(host: "a.test", port: 8080), originForm: "/path?q=1"))
        #expect(head.value(forHeader: "accept") == "*/*")
        #expect(head.headers.count == 4)
        #expect(head.contentLength == nil)
        #expect(!head.isChunked)
    }

    @Test("curl -x … -d hello=world http://a.test/form: POST with Content-Length and its body in the same read")
    func absolutePOST() {
        let bytes = CapturedHTTPHeads.curlAbsolutePOST
        var parser = HTTPRequestHeadParser()
        guard case .head(let head) = parser.feed(bytes) else {
            Issue.record("did not parse")
            return
        }
        #expect(head.method == "POST")
        #expect(head.requestTarget == .absolute(scheme: "http", destination: HostPort(host: "a.test", port: 80), originForm: "/form"))
        #expect(head.contentLength == 11)
        #expect(head.value(forHeader: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(head.byteCount == bytes.count - 11)
        #expect(parser.unconsumedBytes == Array("hello=world".utf8))
    }

    static let captures: [[UInt8]] = [CapturedHTTPHeads.curlConnect, CapturedHTTPHeads.curlAbsoluteGET, CapturedHTTPHeads.curlAbsolutePOST]

    @Test("every split into two pieces gives the same head and leftover", arguments: captures.indices)
    func everySplitPoint(_ index: Int) {
        let bytes = Self.captures[index]
        guard case .head(let head) = HTTPRequestHeadParser.parse(bytes) else {
            Issue.record("did not parse")
            return
        }
        for split in 0 ... bytes.count {
            var parser = HTTPRequestHeadParser()
            _ = parser.feed(bytes[..<split])
            #expect(parser.feed(bytes[split...]) == .head(head), "split at \(split)")
            // Bytes fed after a final answer are the caller's; the leftover is what came with the head.
            let leftoverEnd = split >= head.byteCount ? split : bytes.count
            #expect(parser.unconsumedBytes == Array(bytes[head.byteCount ..< leftoverEnd]), "split at \(split)")
        }
    }

    @Test("one byte at a time: needMoreData until the empty line", arguments: captures.indices)
    func oneByteAtATime(_ index: Int) {
        let bytes = Self.captures[index]
        guard case .head(let head) = HTTPRequestHeadParser.parse(bytes) else {
            Issue.record("did not parse")
            return
        }
        var parser = HTTPRequestHeadParser()
        for offset in 0 ..< head.byteCount {
            let result = parser.feed([bytes[offset]])
            #expect(result == (offset == head.byteCount - 1 ? .head(head) : .needMoreData), "after \(offset + 1) bytes")
        }
    }
}

@Suite("HTTPRequestHeadParser: targets")
struct HTTPRequestTargetTests {
    @Test("CONNECT authority-form targets", arguments: [
        ("a.test:443", "a.test", 443, "a.test:443"),
        ("A.Test:8443", "A.Test", 8443, "A.Test:8443"),
        ("127.0.0.1:1", "127.0.0.1", 1, "127.0.0.1:1"),
        ("[::1]:443", "::1", 443, "[::1]:443"),
        ("[2001:db8::8a2e:370:7334]:65535", "2001:db8::8a2e:370:7334", 65535, "[2001:db8::8a2e:370:7334]:65535"),
        ("[::ffff:192.0.2.1]:443", "::ffff:192.0.2.1", 443, "[::ffff:192.0.2.1]:443"),
        ("[1:2:3:4:5:6:7:8]:80", "1:2:3:4:5:6:7:8", 80, "[1:2:3:4:5:6:7:8]:80"),
    ] as [(String, String, UInt16, String)])
    func connectTargets(_ target: String, _ host: String, _ port: UInt16, _ description: String) {
        guard let head = expectHead("CONNECT \(target) HTTP/1.1\r\n\r\n") else { return }
        #expect(head.requestTarget == .authority(HostPort(host: host, port: port)))
        #expect(head.destination?.description == description)
        #expect(head.destination?.isIPv6 == host.contains(":"))
    }

    @Test("CONNECT targets refused", arguments: [
        ("a.test", "no port"),
        ("a.test:", "no port"),
        ("a.test:0", "1 to 65535"),
        ("a.test:65536", "1 to 65535"),
        ("a.test:99999999999999999999", "1 to 65535"),
        ("a.test:https", "1 to 65535"),
        ("::1:443", "brackets"),
        ("[::1]", "no port"),
        ("[::1]443", "not a port"),
        ("[::1:443", "never closes"),
        ("[::g]:443", "invalid IPv6"),
        ("[1::2::3]:443", "invalid IPv6"),
        ("[1:2:3:4:5:6:7:8:9]:443", "invalid IPv6"),
        ("[fe80::1%25eth0]:443", "invalid IPv6"),
        ("[::1.2.3.256]:443", "invalid IPv6"),
        (":443", "no host"),
        ("user@a.test:443", "0x40"),
        ("http://a.test/", "not a number"),
    ])
    func connectRefused(_ target: String, _ expected: String) {
        let reason = expectMalformedHead("CONNECT \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(reason.contains(expected), "\(target): \(reason)")
        #expect(reason.contains("CONNECT target"), "\(reason)")
    }

    @Test("userinfo in a refused target is masked in the reason (a trial's CONNECT alice:SECRET@host put the password in the flow's error)")
    func userinfoMasked() {
        let connect = expectMalformedHead("CONNECT alice:SECRET@127.0.0.1:443 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(!connect.contains("SECRET") && connect.contains("\"***@127.0.0.1:443\""), "\(connect)")
        let absolute = expectMalformedHead("GET http://alice:SECRET@a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
        #expect(!absolute.contains("SECRET"), "\(absolute)")
    }

    @Test("a refused target's query or fragment is left out of the reason (an audit trial's `GET *?STAR-SECRET` put it in the flow's error, and so in the shared store)")
    func queryLeftOut() {
        #expect(expectMalformedHead("GET *?STAR-SECRET HTTP/1.1\r\nHost: a.test\r\n\r\n")
                == "The request target \"*?…\" is neither a path, an absolute URI nor (for CONNECT) host:port.")
        #expect(expectMalformedHead("GET page#FRAG-SECRET HTTP/1.1\r\nHost: a.test\r\n\r\n")
                == "The request target \"page?…\" is neither a path, an absolute URI nor (for CONNECT) host:port.")
        #expect(expectMalformedHead("CONNECT a.test:443?Q-SECRET HTTP/1.1\r\nHost: x\r\n\r\n")
                == "The CONNECT target \"a.test:443?…\" has a port that is not a number from 1 to 65535.")
        #expect(expectMalformedHead("CONNECT alice:PW@a.test:99999?Q HTTP/1.1\r\nHost: x\r\n\r\n")
                == "The CONNECT target \"***@a.test:99999?…\" has several colons; an IPv6 address must be written in brackets.")
        #expect(HTTPRequestTarget.quoted("alice:SECRET@127.0.0.1:443") == "***@127.0.0.1:443")
        #expect(HTTPRequestTarget.quoted("/a/b@c") == "/a/b@c", "an @ in the path is no userinfo")
        #expect(HTTPRequestTarget.quoted("http://u:p@a.test/x?y#z") == "http://***@a.test/x?…")
        #expect(HTTPRequestTarget.quoted("") == "")
    }

    @Test("absolute-form targets", arguments: [
        ("http://a.test", "http", "a.test", 80, "/"),
        ("http://a.test?x=1", "http", "a.test", 80, "/?x=1"),
        ("HTTP://A.test:81/p/q?r", "http", "A.test", 81, "/p/q?r"),
        ("https://a.test/", "https", "a.test", 443, "/"),
        ("http://[::1]:8080/x", "http", "::1", 8080, "/x"),
        ("http://a.test:/x", "http", "a.test", 80, "/x"),
    ] as [(String, String, String, UInt16, String)])
    func absoluteTargets(_ target: String, _ scheme: String, _ host: String, _ port: UInt16, _ originForm: String) {
        guard let head = expectHead("GET \(target) HTTP/1.1\r\nHost: a.test\r\n\r\n") else { return }
        #expect(head.requestTarget == .absolute(scheme: scheme, destination: HostPort(host: host, port: port), originForm: originForm))
        #expect(head.target == target)
    }

    @Test("absolute-form targets refused", arguments: [
        ("ftp://a.test/", "scheme"),
        ("http://user:pw@a.test/", "userinfo"),
        ("http:///path", "no host"),
        ("http://a.test/#frag", "fragment"),
        ("http://a.test:99999/", "1 to 65535"),
        ("a.test:443", "neither a path"),
        ("mailto:x", "neither a path"),
    ])
    func absoluteRefused(_ target: String, _ expected: String) {
        let reason = expectMalformedHead("GET \(target) HTTP/1.1\r\nHost: a.test\r\n\r\n")
        #expect(reason.contains(expected), "\(target): \(reason)")
    }

    @Test("origin-form and asterisk-form")
    func originAndAsterisk() {
        let origin = expectHead("GET /index.html?a=b HTTP/1.1\r\nHost: a.test\r\n\r\n")
        #expect(origin?.requestTarget == .origin("/index.html?a=b"))
        #expect(origin?.destination == nil)
        #expect(expectHead("OPTIONS * HTTP/1.1\r\nHost: a.test\r\n\r\n")?.requestTarget == .asterisk)
        #expect(expectMalformedHead("GET * HTTP/1.1\r\nHost: a.test\r\n\r\n").contains("OPTIONS"))
        #expect(expectMalformedHead("GET /a#b HTTP/1.1\r\nHost: a.test\r\n\r\n").contains("fragment"))
    }
}

@Suite("HTTPRequestHeadParser: framing and connection facts")
struct HTTPRequestFramingTests {
    @Test("Content-Length and Transfer-Encoding", arguments: [
        ("Content-Length: 0", HTTPBodyFraming.contentLength(0)),
        ("Content-Length: 42", .contentLength(42)),
        ("Content-Length: 5, 5", .contentLength(5)),
        ("Content-Length: 7\r\nContent-length: 7", .contentLength(7)),
        ("Transfer-Encoding: chunked", .chunked),
        ("transfer-encoding: Chunked", .chunked),
        ("Transfer-Encoding: gzip, chunked", .chunked),
        ("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked", .chunked),
        ("X-Other: 1", .none),
    ])
    func framing(_ fields: String, _ expected: HTTPBodyFraming) {
        let head = expectHead("POST /x HTTP/1.1\r\nHost: a.test\r\n\(fields)\r\n\r\n")
        #expect(head?.bodyFraming == expected)
    }

    @Test("framing refused", arguments: [
        ("HTTP/1.1", "Content-Length: 5\r\nContent-Length: 6", "disagree"),
        ("HTTP/1.1", "Content-Length: 5, 6", "disagree"),
        ("HTTP/1.1", "Content-Length: abc", "decimal"),
        ("HTTP/1.1", "Content-Length: -1", "decimal"),
        ("HTTP/1.1", "Content-Length: +1", "decimal"),
        ("HTTP/1.1", "Content-Length: ", "decimal"),
        ("HTTP/1.1", "Content-Length: 1234567890123456789", "decimal"),
        ("HTTP/1.1", "Content-Length: 3\r\nTransfer-Encoding: chunked", "smuggling"),
        ("HTTP/1.1", "Transfer-Encoding: chunked, gzip", "chunked"),
        ("HTTP/1.1", "Transfer-Encoding: chunked, chunked", "chunked"),
        ("HTTP/1.1", "Transfer-Encoding: gzip", "chunked"),
        ("HTTP/1.0", "Transfer-Encoding: chunked", "HTTP/1.0"),
    ])
    func framingRefused(_ version: String, _ fields: String, _ expected: String) {
        let reason = expectMalformedHead("POST /x \(version)\r\nHost: a.test\r\n\(fields)\r\n\r\n")
        #expect(reason.contains(expected), "\(fields): \(reason)")
    }

    @Test("Connection options and keep-alive", arguments: [
        ("HTTP/1.1", "", [], true),
        ("HTTP/1.1", "Connection: close\r\n", ["close"], false),
        ("HTTP/1.1", "Connection: Upgrade, CLOSE\r\n", ["upgrade", "close"], false),
        ("HTTP/1.1", "Connection: keep-alive\r\n", ["keep-alive"], true),
        ("HTTP/1.0", "", [], false),
        ("HTTP/1.0", "Connection: Keep-Alive\r\n", ["keep-alive"], true),
        ("HTTP/1.0", "Proxy-Connection: keep-alive\r\n", [], false),
    ] as [(String, String, [String], Bool)])
    func connection(_ version: String, _ fields: String, _ options: [String], _ keepsAlive: Bool) {
        let head = expectHead("GET /x \(version)\r\nHost: a.test\r\n\(fields)\r\n")
        #expect(head?.connectionOptions == options)
        #expect(head?.keepsAlive == keepsAlive)
    }

    @Test("Host header rules (RFC 9112 §3.2)")
    func hostRules() {
        #expect(expectMalformedHead("GET /x HTTP/1.1\r\nAccept: */*\r\n\r\n").contains("no Host"))
        #expect(expectMalformedHead("GET /x HTTP/1.1\r\nHost: a\r\nHOST: b\r\n\r\n").contains("2 Host headers"))
        #expect(expectMalformedHead("CONNECT a.test:443 HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n").contains("2 Host headers"))
        #expect(expectHead("GET /x HTTP/1.0\r\n\r\n")?.version == .http10)
        #expect(expectHead("CONNECT a.test:443 HTTP/1.1\r\n\r\n")?.headers == [])
    }

    @Test("values(forHeader:) keeps every value in order")
    func repeatedHeaders() {
        let head = expectHead("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\nx-a: 2\r\nX-B: 3\r\n\r\n")
        #expect(head?.values(forHeader: "X-A") == ["1", "2"])
        #expect(head?.value(forHeader: "x-b") == "3")
        #expect(head?.value(forHeader: "X-C") == nil)
    }
}

@Suite("HTTPRequestHeadParser: syntax")
struct HTTPRequestSyntaxTests {
    @Test("bare LF line ends are accepted, leading empty lines skipped and counted")
    func lineEnds() {
        let text = "\r\n\nGET / HTTP/1.1\nHost: a.test\n\nbody"
        var parser = HTTPRequestHeadParser()
        guard case .head(let head) = parser.feed(Array(text.utf8)) else {
            Issue.record("did not parse")
            return
        }
        #expect(head.headers == [HTTPHeaderField(name: "Host", value: "a.test")])
        #expect(head.byteCount == text.utf8.count - 4)
        #expect(parser.unconsumedBytes == Array("body".utf8))
    }

    @Test("spaces and tabs around a value are trimmed, inner ones kept")
    func valueWhitespace() {
        let head = expectHead("GET / HTTP/1.1\r\nHost:a.test\r\nX-A: \t two  words \t\r\nX-B:\r\n\r\n")
        #expect(head?.headers == [
            HTTPHeaderField(name: "Host", value: "a.test"),
            HTTPHeaderField(name: "X-A", value: "two  words"),
            HTTPHeaderField(name: "X-B", value: ""),
        ])
    }

    @Test("non-ASCII value bytes are kept as ISO-8859-1 and round-trip")
    func latin1Values() {
        let bytes = Array("GET / HTTP/1.1\r\nHost: a\r\nX-Name: caf".utf8) + [0xE9, 0xFF] + Array("\r\n\r\n".utf8)
        guard case .head(let head) = HTTPRequestHeadParser.parse(bytes) else {
            Issue.record("did not parse")
            return
        }
        #expect(head.headers[1].value == "caf\u{E9}\u{FF}")
        #expect(head.headers[1].latin1Bytes == Array("caf".utf8) + [0xE9, 0xFF])
    }

    @Test("malformed heads", arguments: [
        ("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", "obs-fold"),
        ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", "before its colon"),
        ("GET / HTTP/1.1\r\nHost a\r\n\r\n", "no colon"),
        ("GET / HTTP/1.1\r\n: a\r\n\r\n", "empty name"),
        ("GET / HTTP/1.1\r\nHo(st: a\r\n\r\n", "0x28"),
        ("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", "bare CR"),
        ("GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n", "NUL"),
        ("GET / HTTP/1.1\r\r\nHost: a\r\n\r\n", "HTTP version"),
        ("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", "target is empty"),
        ("GET /\u{7F} HTTP/1.1\r\nHost: a\r\n\r\n", "0x7f"),
        ("GET /\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n", "0xc3"),
        ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", "HTTP/2.0"),
        ("GET / HTTP/1.1 x\r\nHost: a\r\n\r\n", "HTTP version"),
        ("GET / http/1.1\r\nHost: a\r\n\r\n", "HTTP version"),
        ("GET / HTTP/1.x\r\nHost: a\r\n\r\n", "HTTP version"),
        ("GET /\r\nHost: a\r\n\r\n", "single spaces"),
        ("G@T / HTTP/1.1\r\nHost: a\r\n\r\n", "0x40"),
        ("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "HTTP/2.0"),
    ])
    func malformed(_ text: String, _ expected: String) {
        let reason = expectMalformedHead(text)
        #expect(reason.contains(expected), "\(text.debugDescription): \(reason)")
    }

    @Test("a TLS ClientHello is refused from its first byte, even after empty lines", arguments: [0, 2])
    func tlsRefusedAtOnce(_ emptyLines: Int) {
        var parser = HTTPRequestHeadParser()
        for _ in 0 ..< emptyLines { #expect(parser.feed(Array("\r\n".utf8)) == .needMoreData) }
        guard case .malformed(let reason) = parser.feed([0x16]) else {
            Issue.record("not refused")
            return
        }
        #expect(reason.contains("0x16"))
    }

    @Test("every truncation of a head is needMoreData")
    func truncations() {
        let bytes = CapturedHTTPHeads.curlAbsoluteGET
        for length in 0 ..< bytes.count {
            #expect(HTTPRequestHeadParser.parse(bytes.prefix(length)) == .needMoreData, "\(length) bytes")
        }
    }

    @Test("the head bound: a head that does not end within maxHeadBytes is refused")
    func bound() {
        let head = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        #expect(HTTPRequestHeadParser.parse(head, maxHeadBytes: head.count) != .needMoreData)
        guard case .head = HTTPRequestHeadParser.parse(head, maxHeadBytes: head.count) else {
            Issue.record("a head of exactly the bound must parse")
            return
        }
        let cut = HTTPRequestHeadParser.parse(head, maxHeadBytes: head.count - 1)
        #expect(cut == .tooLong(maxHeadBytes: head.count - 1, inStartLine: false))
        #expect(cut.refusal?.status == 431)
        #expect(cut.refusal?.reason == "The request head exceeds \(head.count - 1) bytes without ending in an empty line.")
        // A request line that does not end within the bound: 414 (RFC 9110 §15.5.15).
        let longLine = HTTPRequestHeadParser.parse(Array("GET /\(String(repeating: "a", count: 100)) HTTP/1.1\r\n".utf8), maxHeadBytes: 64)
        #expect(longLine == .tooLong(maxHeadBytes: 64, inStartLine: true))
        #expect(longLine.refusal?.status == 414)
        #expect(longLine.refusal?.reason == "The request line exceeds 64 bytes without ending.")
        #expect(HTTPRequestHeadParser.parse(Array("GET / HTTP/1.1\r\nHost".utf8)).refusal == nil)
        #expect(HTTPRequestHeadParser.parse(Array("GET / HTTP/1.1\r\nHost : a\r\n\r\n".utf8)).refusal?.status == 400)

        var parser = HTTPRequestHeadParser()
        var result = parser.feed(Array("GET / HTTP/1.1\r\nHost: a\r\n".utf8))
        let line = Array("X-Filler: \(String(repeating: "a", count: 1_000))\r\n".utf8)
        var fed = 0
        while result == .needMoreData, fed < 100 {
            result = parser.feed(line)
            fed += 1
        }
        #expect(result == .tooLong(maxHeadBytes: 65_536, inStartLine: false))
        #expect(fed == 65)
    }

    @Test("bytes after the head are handed back even when the read exceeds the bound")
    func leftoverBeyondBound() {
        let head = Array("CONNECT a.test:443 HTTP/1.1\r\n\r\n".utf8)
        let tunnelled = CapturedClientHellos.openSSLWithSNIAndALPN
        var parser = HTTPRequestHeadParser(maxHeadBytes: 64)
        guard case .head(let parsed) = parser.feed(head + tunnelled) else {
            Issue.record("did not parse")
            return
        }
        #expect(parsed.byteCount == head.count)
        #expect(parser.unconsumedBytes == tunnelled)
        // The answer is final; more bytes are ignored.
        #expect(parser.feed([1, 2, 3]) == .head(parsed))
        #expect(parser.unconsumedBytes == tunnelled)
    }
}
