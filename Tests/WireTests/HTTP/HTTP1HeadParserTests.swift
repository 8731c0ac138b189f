import Testing
@testable import Wire

/// Parses a whole head of `kind` and returns it, recording an issue otherwise.
private func head(_ text: String, _ kind: HTTP1HeadParser.Kind, _ leniency: HTTP1Leniency = .strict,
                  sourceLocation: SourceLocation = #_sourceLocation) -> HTTP1Head? {
    let result = HTTP1HeadParser.parse(Array(text.utf8), kind: kind, leniency: leniency)
    guard case .head(let head) = result else {
        Issue.record("expected a head, got \(result)", sourceLocation: sourceLocation)
        return nil
    }
    return head
}

/// Parses a whole head of `kind` and returns the malformed reason, recording an issue otherwise.
private func refusal(_ bytes: [UInt8], _ kind: HTTP1HeadParser.Kind, _ leniency: HTTP1Leniency = .strict,
                     sourceLocation: SourceLocation = #_sourceLocation) -> String {
    let result = HTTP1HeadParser.parse(bytes, kind: kind, leniency: leniency)
    guard case .malformed(let reason) = result else {
        Issue.record("expected malformed, got \(result)", sourceLocation: sourceLocation)
        return ""
    }
    #expect(reason.first?.isUppercase == true && reason.hasSuffix("."), "one sentence: \(reason)", sourceLocation: sourceLocation)
    return reason
}

private func refusal(_ text: String, _ kind: HTTP1HeadParser.Kind, _ leniency: HTTP1Leniency = .strict,
                     sourceLocation: SourceLocation = #_sourceLocation) -> String {
    refusal(Array(text.utf8), kind, leniency, sourceLocation: sourceLocation)
}

private func field(_ name: String, _ value: String) -> HTTPHeaderField { HTTPHeaderField(name: name, value: value) }

@Suite("HTTP1HeadParser: request and status lines")
struct HTTP1StartLineTests {
    /// The example message exchange of RFC 9110 §3.9, in the HTTP/1.1 syntax of RFC 9112.
    static let rfcRequest = "GET /hello.txt HTTP/1.1\r\nUser-Agent: curl/7.64.1\r\nHost: www.example.com\r\nAccept-Language: en, mi\r\n\r\n"
    static let rfcResponse = "HTTP/1.1 200 OK\r\nDate: Mon, 27 Jul 2009 12:28:53 GMT\r\nServer: Apache\r\n"
        + "Last-Modified: Wed, 22 Jul 2009 19:15:56 GMT\r\nETag: \"34aa387-d-1568eb00\"\r\nAccept-Ranges: bytes\r\n"
        + "Content-Length: 51\r\nVary: Accept-Encoding\r\nContent-Type: text/plain\r\n\r\n"
    static let rfcBody = "Hello World! My content includes a trailing CRLF.\r\n"

    @Test("the RFC example request, strict and lenient alike", arguments: [HTTP1Leniency.strict, .lenient])
    func rfcRequest(_ leniency: HTTP1Leniency) {
        let parsed = head(Self.rfcRequest, .request, leniency)
        #expect(parsed == HTTP1Head(
            startLine: .request(method: "GET", target: "/hello.txt", version: .http11),
            headers: [field("User-Agent", "curl/7.64.1"), field("Host", "www.example.com"), field("Accept-Language", "en, mi")],
            byteCount: 100))
        #expect(parsed?.startLineText == "GET /hello.txt HTTP/1.1")
        #expect(parsed?.method == "GET")
        #expect(parsed?.status == nil)
        #expect(parsed?.bodyFraming(leniency: leniency) == .success(HTTPBodyFraming.none))
    }

    @Test("the RFC example response: status line, fields, Content-Length 51")
    func rfcResponse() {
        let bytes = Array((Self.rfcResponse + Self.rfcBody).utf8)
        var parser = HTTP1HeadParser(.response, leniency: .lenient)
        guard case .head(let parsed) = parser.feed(bytes) else {
            Issue.record("did not parse")
            return
        }
        #expect(parsed.startLine == .status(version: .http11, code: 200, reason: "OK"))
        #expect(parsed.startLineText == "HTTP/1.1 200 OK")
        #expect(parsed.headers.count == 8)
        #expect(parsed.headers[3] == field("ETag", "\"34aa387-d-1568eb00\""))
        #expect(parsed.value(forHeader: "content-type") == "text/plain")
        #expect(parsed.byteCount == Self.rfcResponse.utf8.count)
        #expect(parsed.byteCount == 237)
        #expect(parser.unconsumedBytes == Array(Self.rfcBody.utf8))
        #expect(parsed.bodyFraming(leniency: .lenient, answering: "GET") == .success(.contentLength(51)))
        #expect(parsed.keepsAlive)
    }

    @Test("status lines (RFC 9112 §4)", arguments: [
        ("HTTP/1.1 200 OK", HTTPVersion.http11, 200, "OK" as String?),
        ("HTTP/1.0 404 Not Found", .http10, 404, "Not Found"),
        ("HTTP/1.1 204", .http11, 204, nil),
        ("HTTP/1.1 200 ", .http11, 200, ""),
        ("HTTP/1.1 599 \tx y\u{E9}", .http11, 599, "\tx y\u{E9}"),
        ("HTTP/1.1 999 Z", .http11, 999, "Z"),
    ])
    func statusLines(_ line: String, _ version: HTTPVersion, _ code: Int, _ reason: String?) {
        let parsed = head(line + "\r\n\r\n", .response, .lenient)
        #expect(parsed?.startLine == .status(version: version, code: code, reason: reason))
        #expect(parsed?.startLineText == line)
    }

    @Test("status lines refused", arguments: [
        ("HTTP/1.1 20 OK", "three-digit"),
        ("HTTP/1.1 2000 OK", "three-digit"),
        ("HTTP/1.1  200 OK", "three-digit"),
        ("HTTP/1.1 2x0 OK", "three-digit"),
        ("HTTP/1.1", "three-digit"),
        ("HTTP/1.1 200OK", "three-digit"),
        ("http/1.1 200 OK", "three-digit"),
        ("SSH-2.0-OpenSSH_9.2", "three-digit"),
        ("HTTP/2.0 200 OK", "HTTP/2.0, but only HTTP/1.0 and HTTP/1.1"),
        ("HTTP/1.1 099 Low", "status code 99 is below 100"),
        ("HTTP/1.1 200 O\u{1}K", "control byte 0x1"),
        ("HTTP/1.1 200 O\u{7F}K", "control byte 0x7f"),
    ])
    func statusRefused(_ line: String, _ expected: String) {
        let reason = refusal(line + "\r\n\r\n", .response, .lenient)
        #expect(reason.contains(expected), "\(line.debugDescription): \(reason)")
        #expect(reason.contains("RFC 9112 §4") || reason.contains("RFC 9110 §15") || reason.contains("HTTP/1.1 heads"))
    }

    @Test("a request target with non-ASCII bytes: refused when strict, read when lenient")
    func obsTextTarget() {
        let text = "GET /caf\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n"
        #expect(refusal(text, .request, .strict) == "The request target contains byte 0xc3, which is not visible ASCII (RFC 9112 §3.2).")
        #expect(head(text, .request, .lenient)?.startLine == .request(method: "GET", target: "/caf\u{E9}", version: .http11))
        #expect(refusal("GET /a\u{1}b HTTP/1.1\r\n\r\n", .request, .lenient).contains("0x1"))
    }

    @Test("a request's first byte that cannot begin a method is refused at once; a response waits for its line")
    func firstByte() {
        var request = HTTP1HeadParser(.request)
        #expect(request.feed([0x16]) == .malformed(reason: "The stream starts with byte 0x16, which cannot begin an HTTP method (RFC 9112 §3)."))
        var response = HTTP1HeadParser(.response)
        #expect(response.feed([0x16]) == .needMoreData)
    }
}

@Suite("HTTP1HeadParser: field lines")
struct HTTP1FieldLineTests {
    @Test("obs-fold (RFC 9112 §5.2): refused when strict")
    func obsFoldStrict() {
        #expect(refusal("HTTP/1.1 200 OK\r\nX-A: one\r\n two\r\n\r\n", .response, .strict)
                == "A header line of the response starts with whitespace (obs-fold), which RFC 9112 §5.2 has a proxy refuse with 502.")
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\n\tfolded\r\n\r\n", .request, .strict)
                == "A header line of the request starts with whitespace (obs-fold), which RFC 9112 §5.2 lets tv refuse with 400.")
    }

    @Test("obs-fold (RFC 9112 §5.2): unfolded into one space when lenient")
    func obsFoldLenient() {
        let parsed = head("HTTP/1.1 200 OK\r\nX-A: one \r\n  two\r\n\tthree\r\nX-B:\r\n four\r\nX-C: five\r\n \r\n\r\n", .response, .lenient)
        #expect(parsed?.headers == [field("X-A", "one two three"), field("X-B", "four"), field("X-C", "five")])
    }

    @Test("whitespace right after the start line is refused in both modes, as nothing to fold (RFC 9112 §2.2)", arguments: [HTTP1Leniency.strict, .lenient])
    func whitespaceAfterStartLine(_ leniency: HTTP1Leniency) {
        let reason = refusal("HTTP/1.1 200 OK\r\n X-A: 1\r\n\r\n", .response, leniency)
        #expect(reason == "The first header line starts with whitespace, which RFC 9112 §2.2 lets a recipient refuse.", "\(reason)")
    }

    @Test("bare LF line ends and leading empty lines, as for requests", arguments: [HTTP1Leniency.strict, .lenient])
    func bareLF(_ leniency: HTTP1Leniency) {
        let text = "\r\n\nHTTP/1.1 200 OK\nContent-Length: 2\n\nok"
        var parser = HTTP1HeadParser(.response, leniency: leniency)
        #expect(parser.feed(Array(text.utf8)) == .head(HTTP1Head(
            startLine: .status(version: .http11, code: 200, reason: "OK"), headers: [field("Content-Length", "2")], byteCount: text.utf8.count - 2)))
        #expect(parser.unconsumedBytes == Array("ok".utf8))
    }

    @Test("field lines refused in both modes", arguments: [
        ("X-A : 1", "A header name is followed by whitespace before its colon, which RFC 9112 §5.1 forbids."),
        ("X-A 1", "A header line has no colon (RFC 9112 §5)."),
        (": 1", "A header line has an empty name (RFC 9110 §5.1)."),
        ("X(A: 1", "A header name contains byte 0x28, which is not allowed in a token (RFC 9110 §5.1)."),
        ("X-A: a\rb", "A header value contains a bare CR byte, which RFC 9110 §5.5 forbids."),
        ("X-A: a\u{0}b", "A header value contains a NUL byte, which RFC 9110 §5.5 forbids."),
    ])
    func fieldRefused(_ line: String, _ expected: String) {
        for leniency in [HTTP1Leniency.strict, .lenient] {
            let reason = refusal("HTTP/1.1 200 OK\r\n\(line)\r\n\r\n", .response, leniency)
            #expect(reason == expected, "\(leniency): \(reason)")
        }
    }

    @Test("trailer fields: read like a head's field lines, obs-fold per mode")
    func trailers() {
        let bytes = Array("X-Check: ok\r\nX-More: a\r\n b\r\n\r\n".utf8)
        let lenient = bytes.withUnsafeBufferPointer { HTTP1HeadParser.parseTrailerFields($0, leniency: .lenient) }
        #expect(lenient == .success([field("X-Check", "ok"), field("X-More", "a b")]))
        let strict = bytes.withUnsafeBufferPointer { HTTP1HeadParser.parseTrailerFields($0, leniency: .strict) }
        #expect(strict == .failure(WireFormatError("A header line starts with whitespace (obs-fold), which RFC 9112 §5.2 lets a server refuse.")))
        let empty = [UInt8]("\r\n".utf8).withUnsafeBufferPointer { HTTP1HeadParser.parseTrailerFields($0, leniency: .lenient) }
        #expect(empty == .success([]))
    }
}

@Suite("HTTP1HeadParser: incremental and bounded")
struct HTTP1HeadIncrementalTests {
    @Test("every split of a response into two reads gives the same head and leftover")
    func everySplit() {
        let bytes = Array((HTTP1StartLineTests.rfcResponse + HTTP1StartLineTests.rfcBody).utf8)
        guard case .head(let whole) = HTTP1HeadParser.parse(bytes, kind: .response, leniency: .lenient) else {
            Issue.record("did not parse")
            return
        }
        for split in 0 ... bytes.count {
            var parser = HTTP1HeadParser(.response, leniency: .lenient)
            let first = parser.feed(bytes[..<split])
            #expect(first == (split >= whole.byteCount ? .head(whole) : .needMoreData), "split at \(split)")
            #expect(parser.feed(bytes[split...]) == .head(whole), "split at \(split)")
            let leftoverEnd = split >= whole.byteCount ? split : bytes.count
            #expect(parser.unconsumedBytes == Array(bytes[whole.byteCount ..< leftoverEnd]), "split at \(split)")
        }
    }

    @Test("a response head that does not end within the bound is refused")
    func bound() {
        let text = Array("HTTP/1.1 200 OK\r\nX-Filler: \(String(repeating: "a", count: 100))\r\n\r\n".utf8)
        #expect(HTTP1HeadParser.parse(text, kind: .response, maxHeadBytes: 64)
                == .tooLong(maxHeadBytes: 64, inStartLine: false))
        #expect(HTTP1HeadParser.parse(text.prefix(60), kind: .response, maxHeadBytes: 64) == .needMoreData)
        guard case .head = HTTP1HeadParser.parse(text, kind: .response, maxHeadBytes: text.count) else {
            Issue.record("a head of exactly the bound must parse")
            return
        }
    }
}

@Suite("HTTP1Head.bodyFraming (RFC 9112 §6.3)")
struct HTTP1BodyFramingTests {
    private func framing(_ text: String, _ method: String = "GET") -> Result<HTTPBodyFraming, WireFormatError>? {
        head(text, .response, .lenient)?.bodyFraming(leniency: .lenient, answering: method)
    }

    @Test("responses", arguments: [
        ("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n", "GET", HTTPBodyFraming.contentLength(6)),
        ("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n", "HEAD", .none),
        ("HTTP/1.1 100 Continue\r\n\r\n", "POST", .none),
        ("HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n", "GET", .none),
        ("HTTP/1.1 304 Not Modified\r\n\r\n", "GET", .none),
        ("HTTP/1.1 200 Connection established\r\n\r\n", "CONNECT", .none),
        ("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n", "CONNECT", .contentLength(0)),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "GET", .chunked),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 9\r\n\r\n", "GET", .chunked),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "GET", .untilClose),
        ("HTTP/1.0 200 OK\r\n\r\n", "GET", .untilClose),
        ("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\ncontent-length: 5\r\n\r\n", "GET", .contentLength(5)),
    ])
    func responses(_ text: String, _ method: String, _ expected: HTTPBodyFraming) {
        #expect(framing(text, method) == .success(expected))
    }

    @Test("responses whose length cannot be known")
    func refused() {
        #expect(framing("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n") == .failure(WireFormatError(
            "The response has Content-Length values that disagree (5, 6), so its body cannot be delimited (RFC 9112 §6.3).")))
        // A value that is not a mistaken number is not repeated: it is content, and the sentence
        // becomes the flow's error, which a shared store receives (an audit trial).
        #expect(framing("HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n") == .failure(WireFormatError(
            "The Content-Length value (3 bytes, not repeated here: header values are content) is not a decimal number of bytes (RFC 9110 §8.6).")))
        #expect(framing("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n") == .failure(WireFormatError(
            "The Content-Length \"-1\" is not a decimal number of bytes (RFC 9110 §8.6).")))
        #expect(framing("HTTP/1.1 200 OK\r\nContent-Length: 1.5\r\n\r\n") == .failure(WireFormatError(
            "The Content-Length \"1.5\" is not a decimal number of bytes (RFC 9110 §8.6).")))
        #expect(HTTP1Head.quotedLength(["12, 13", "CL-SECRET"]) == "value (17 bytes, not repeated here: header values are content)")
        #expect(HTTP1Head.quotedLength([String(repeating: "1", count: 41)]) == "value (41 bytes, not repeated here: header values are content)")
    }

    @Test("requests: lenient reads what strict refuses")
    func requests() {
        let both = "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(head(both, .request, .lenient)?.bodyFraming(leniency: .lenient) == .success(.chunked))
        #expect(head(both, .request)?.bodyFraming(leniency: .strict) == .failure(WireFormatError(
            "The request has both Content-Length and Transfer-Encoding, a request-smuggling risk RFC 9112 §6.3 lets a server refuse.")))
        let gzip = "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n"
        #expect(head(gzip, .request, .lenient)?.bodyFraming(leniency: .lenient) == .success(.untilClose))
        #expect(head("GET / HTTP/1.1\r\nHost: a\r\n\r\n", .request)?.bodyFraming(leniency: .strict) == .success(HTTPBodyFraming.none))
    }

    @Test("keep-alive (RFC 9112 §9.3)", arguments: [
        ("HTTP/1.1 200 OK\r\n\r\n", true),
        ("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", false),
        ("HTTP/1.0 200 OK\r\n\r\n", false),
        ("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n\r\n", true),
    ])
    func keepAlive(_ text: String, _ expected: Bool) {
        #expect(head(text, .response, .lenient)?.keepsAlive == expected)
    }
}
