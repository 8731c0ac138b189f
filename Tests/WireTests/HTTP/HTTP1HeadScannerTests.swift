import Testing
@testable import Wire

/// The exchange rows' lean head scan: exact values for heads real tools sent and RFC examples,
/// and, over a table of odd and broken heads, the same answer as the full parser (lenient, with
/// its body framing, but for obs-fold, refused as strict refuses it) gives — the rules it must keep.
struct HTTP1HeadScannerTests {
    /// Scans `bytes` in one feed: the answer and how many bytes the head took.
    private func scan(_ bytes: [UInt8], _ kind: HTTP1HeadParser.Kind, answering method: String? = nil,
                      maxHeadBytes: Int = HTTP1HeadParser.defaultMaxHeadBytes) -> (HTTP1HeadScanner.Result, Int) {
        var scanner = HTTP1HeadScanner(kind, answering: method, maxHeadBytes: maxHeadBytes)
        return bytes.withUnsafeBytes { scanner.consumeHead($0) }
    }

    private func scan(_ text: String, _ kind: HTTP1HeadParser.Kind, answering method: String? = nil) -> HTTP1HeadScanner.Result {
        scan(Array(text.utf8), kind, answering: method).0
    }

    /// What the full parser (lenient) and `HTTP1Head.bodyFraming` make of `bytes`, in the
    /// scanner's terms.
    private func reference(_ bytes: [UInt8], _ kind: HTTP1HeadParser.Kind, answering method: String? = nil) -> HTTP1HeadScanner.Result {
        // obs-fold: the strict reading's refusal, where it is the first thing strict refuses.
        if case .malformed(let reason) = HTTP1HeadParser.parse(bytes, kind: kind, leniency: .strict),
           reason == HTTP1HeadParser.obsFoldSentence(kind) {
            return .malformed(reason: reason)
        }
        switch HTTP1HeadParser.parse(bytes, kind: kind, leniency: .lenient) {
        case .needMoreData: return .needMoreData
        case .malformed(let reason): return .malformed(reason: reason)
        case let .tooLong(limit, inStartLine): return .tooLong(maxHeadBytes: limit, inStartLine: inStartLine)
        case .head(let head):
            let framing: HTTPBodyFraming
            switch head.bodyFraming(leniency: .lenient, answering: method) {
            case .success(let found): framing = found
            case .failure(let error): return .malformed(reason: error.reason)
            }
            switch head.startLine {
            case let .request(method, target, version):
                // The strict reading's refusal, where Transfer-Encoding is there.
                var refusal: String?
                if head.value(forHeader: "Transfer-Encoding") != nil, case .failure(let error) = head.bodyFraming(leniency: .strict) {
                    refusal = error.reason
                }
                let upgrades = head.values(forHeader: "Upgrade")
                return .request(HTTP1RequestSummary(method: method, target: target, version: version,
                                                    host: head.value(forHeader: "Host"), framing: framing, framingRefusal: refusal,
                                                    upgrade: upgrades.isEmpty ? nil : upgrades.joined(separator: ", "),
                                                    webSocketKey: head.value(forHeader: "Sec-WebSocket-Key")))
            case let .status(version, code, reason):
                let both = head.value(forHeader: "Transfer-Encoding") != nil && head.value(forHeader: "Content-Length") != nil
                    && !HTTP1Head.responseHasNoBody(status: code, answering: method)
                let upgrades = head.values(forHeader: "Upgrade")
                return .response(HTTP1ResponseSummary(version: version, code: code, reason: reason,
                                                      contentType: head.value(forHeader: "Content-Type"),
                                                      contentEncoding: head.value(forHeader: "Content-Encoding"), framing: framing,
                                                      framingRefusal: both ? HTTP1ResponseSummary.lengthAndCoding : nil,
                                                      upgrade: upgrades.isEmpty ? nil : upgrades.joined(separator: ", "),
                                                      webSocketAccept: head.value(forHeader: "Sec-WebSocket-Accept")))
            }
        }
    }

    @Test("curl's absolute-form GET and POST (captured): method, target, Host, framing; the body is not taken")
    func curlRequests() {
        let get = CapturedHTTPHeads.curlAbsoluteGET
        #expect(scan(get, .request) == (.request(HTTP1RequestSummary(
            method: "GET", target: "http://a.test:8080/path?q=1", version: .http11, host: "a.test:8080", framing: .none)), get.count))
        let post = CapturedHTTPHeads.curlAbsolutePOST
        #expect(scan(post, .request) == (.request(HTTP1RequestSummary(
            method: "POST", target: "http://a.test/form", version: .http11, host: "a.test", framing: .contentLength(11))), post.count - 11))
        let connect = CapturedHTTPHeads.curlConnect
        #expect(scan(connect, .request) == (.request(HTTP1RequestSummary(
            method: "CONNECT", target: "a.test:443", version: .http11, host: "a.test:443", framing: .none)), connect.count))
    }

    @Test("nginx's 200 and 404 (captured): status, reason, Content-Type, Content-Length; HEAD has no body")
    func nginxResponses() {
        #expect(scan(CapturedHTTPHeads.nginx200, .response, answering: "GET") == (.response(HTTP1ResponseSummary(
            version: .http11, code: 200, reason: "OK", contentType: "application/octet-stream", contentEncoding: nil,
            framing: .contentLength(1024))), CapturedHTTPHeads.nginx200.count))
        #expect(scan(CapturedHTTPHeads.nginx404, .response, answering: "GET").0 == .response(HTTP1ResponseSummary(
            version: .http11, code: 404, reason: "Not Found", contentType: "text/html", contentEncoding: nil, framing: .contentLength(153))))
        #expect(scan(CapturedHTTPHeads.nginx404, .response, answering: "HEAD").0 == .response(HTTP1ResponseSummary(
            version: .http11, code: 404, reason: "Not Found", contentType: "text/html", contentEncoding: nil, framing: .none)))
    }

    @Test("the example exchange of RFC 7230 §2.1 (RFC 9110 keeps it)")
    func rfcExample() {
        let request = "GET /hello.txt HTTP/1.1\r\nUser-Agent: curl/7.16.3 libcurl/7.16.3 OpenSSL/0.9.7l zlib/1.2.3\r\n"
            + "Host: www.example.com\r\nAccept-Language: en, mi\r\n\r\n"
        #expect(scan(request, .request) == .request(HTTP1RequestSummary(
            method: "GET", target: "/hello.txt", version: .http11, host: "www.example.com", framing: .none)))
        let response = "HTTP/1.1 200 OK\r\nDate: Mon, 27 Jul 2009 12:28:53 GMT\r\nServer: Apache\r\n"
            + "Last-Modified: Wed, 22 Jul 2009 19:15:56 GMT\r\nETag: \"34aa387-d-1568eb00\"\r\nAccept-Ranges: bytes\r\n"
            + "Content-Length: 51\r\nVary: Accept-Encoding\r\nContent-Type: text/plain\r\n\r\n"
        #expect(scan(response, .response, answering: "GET") == .response(HTTP1ResponseSummary(
            version: .http11, code: 200, reason: "OK", contentType: "text/plain", contentEncoding: nil, framing: .contentLength(51))))
    }

    @Test("names without case, obs-fold refused (the relay forwards it as it came), repeated and listed lengths, chunked over a length")
    func fieldRules() {
        #expect(scan("HTTP/1.1 200 OK\r\nCONTENT-type: text/plain\r\ncontent-ENCODING: gzip\r\nContent-Length: 2\r\n\r\n", .response)
            == .response(HTTP1ResponseSummary(version: .http11, code: 200, reason: "OK", contentType: "text/plain",
                                              contentEncoding: "gzip", framing: .contentLength(2))))
        // The trial's three: a folded response field, a request's Transfer-Encoding folded onto
        // ` chunked` (forwarded, nginx refused it while the row said chunked), and a fold that
        // hid a Content-Length (the next request's method was recorded as `abGET`).
        #expect(scan("HTTP/1.1 200 OK\r\nX-Fold: a\r\n  folded\r\nContent-Length: 2\r\n\r\n", .response)
            == .malformed(reason: "A header line of the response starts with whitespace (obs-fold), which RFC 9112 §5.2 has a proxy refuse with 502."))
        #expect(scan("POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n", .request)
            == .malformed(reason: "A header line of the request starts with whitespace (obs-fold), which RFC 9112 §5.2 lets tv refuse with 400."))
        #expect(scan("POST /ok HTTP/1.1\r\nHost: a\r\nX-A: b\r\n Content-Length: 2\r\n\r\nab", .request)
            == .malformed(reason: "A header line of the request starts with whitespace (obs-fold), which RFC 9112 §5.2 lets tv refuse with 400."))
        #expect(scan("POST / HTTP/1.1\r\nhOsT: a\r\nContent-Length: 5\r\nContent-Length: 5, 5\r\n\r\n", .request)
            == .request(HTTP1RequestSummary(method: "POST", target: "/", version: .http11, host: "a", framing: .contentLength(5))))
        #expect(scan("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", .response)
            == .malformed(reason: "The response has Content-Length values that disagree (5, 6), so its body cannot be delimited (RFC 9112 §6.3)."))
        #expect(scan("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n 5\r\n\r\n", .response)
            == .malformed(reason: HTTP1HeadParser.obsFoldSentence(.response)))
        // Read as chunked, and what a strict reading says of it (the relay refuses to forward it).
        #expect(scan("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", .request)
            == .request(HTTP1RequestSummary(method: "POST", target: "/", version: .http11, host: nil, framing: .chunked,
                                            framingRefusal: "The request has both Content-Length and Transfer-Encoding, a request-smuggling risk RFC 9112 §6.3 lets a server refuse.")))
        #expect(scan("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", .request)
            == .request(HTTP1RequestSummary(method: "POST", target: "/", version: .http10, host: nil, framing: .chunked,
                                            framingRefusal: "The HTTP/1.0 request has a Transfer-Encoding header, which RFC 9112 §6.1 says to treat as faulty framing.")))
        #expect(scan("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", .response)
            == .response(HTTP1ResponseSummary(version: .http11, code: 200, reason: "OK", contentType: nil, contentEncoding: nil, framing: .untilClose)))
        #expect(scan("HTTP/1.0 204\r\n\r\n", .response) == .response(HTTP1ResponseSummary(
            version: .http10, code: 204, reason: nil, contentType: nil, contentEncoding: nil, framing: .none)))
        // The first of a repeated Host is kept.
        #expect(scan("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", .request)
            == .request(HTTP1RequestSummary(method: "GET", target: "/", version: .http11, host: "a", framing: .none)))
    }

    @Test("bad bytes and broken lines fail with the full parser's sentence")
    func refusals() {
        #expect(scan([0x16, 0x03, 0x01, 0x00, 0x10], .request) == (.malformed(reason:
            "The stream starts with byte 0x16, which cannot begin an HTTP method (RFC 9112 §3)."), 5))
        #expect(scan("GET / HTTP/1.1\r\nA: b\u{0}c\r\n\r\n", .request)
            == .malformed(reason: "A header value contains a NUL byte, which RFC 9110 §5.5 forbids."))
        #expect(scan("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", .request)
            == .malformed(reason: "A header value contains a bare CR byte, which RFC 9110 §5.5 forbids."))
        #expect(scan("GET / HTTP/1.1\r\nHost : a\r\n\r\n", .request)
            == .malformed(reason: "A header name is followed by whitespace before its colon, which RFC 9112 §5.1 forbids."))
        #expect(scan("GET / HTTP/1.1\r\n folded\r\n\r\n", .request)
            == .malformed(reason: "The first header line starts with whitespace, which RFC 9112 §2.2 lets a recipient refuse."))
        #expect(scan("HTTP/2.0 200 OK\r\n\r\n", .response)
            == .malformed(reason: "The response is HTTP/2.0, but only HTTP/1.0 and HTTP/1.1 heads are read here."))
        let long = Array("GET / HTTP/1.1\r\nA: ".utf8) + Array(repeating: UInt8(ascii: "x"), count: 100)
        #expect(scan(long, .request, maxHeadBytes: 64) == (.tooLong(maxHeadBytes: 64, inStartLine: false), 64))
    }

    @Test("odd and broken heads: the same answer as the full parser, whole and split anywhere")
    func sameAsTheFullParser() {
        let requests: [[UInt8]] = [
            CapturedHTTPHeads.curlConnect, CapturedHTTPHeads.curlAbsoluteGET, CapturedHTTPHeads.curlAbsolutePOST,
            Array("\r\n\nGET /a?b=c#d HTTP/1.0\nHost: h\n\n".utf8),
            Array("GET http://u:p@h/x HTTP/1.1\r\nHost: h\r\nX: é\r\n\r\n".utf8),
            Array("GET / HTTP/1.1\r\nHost: caf\u{e9}\r\n\r\n".utf8.map { $0 }),
            [0x47, 0x45, 0x54, 0x20, 0x2f, 0x20, 0x48, 0x54, 0x54, 0x50, 0x2f, 0x31, 0x2e, 0x31, 0x0d, 0x0a,
             0x48, 0x6f, 0x73, 0x74, 0x3a, 0x20, 0xe9, 0x0d, 0x0a, 0x0d, 0x0a],  // Host: 0xE9 (Latin-1)
            Array("POST / HTTP/1.1\r\nTransfer-Encoding: gzip,\r\n chunked\r\n\r\n".utf8),
            Array("POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n".utf8),
            Array("POST / HTTP/1.1\r\nContent-Length: 1234567890123456789\r\n\r\n".utf8),
            Array("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n".utf8),
            Array("POST / HTTP/1.1\r\nContent-Length: 7\r\n\t\r\n\r\n".utf8),
            Array("GET  / HTTP/1.1\r\n\r\n".utf8),
            Array("GET / HTTP/1.1\r\n: empty\r\n\r\n".utf8),
            Array("GET / HTTP/1.1\r\nNo colon\r\n\r\n".utf8),
            Array("G@T / HTTP/1.1\r\n\r\n".utf8),
            Array("GET / HTTP/1.1\r\nHo(st: a\r\n\r\n".utf8),
        ]
        let responses: [([UInt8], String?)] = [
            (CapturedHTTPHeads.nginx200, "GET"), (CapturedHTTPHeads.nginx404, "HEAD"),
            (Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), "POST"),
            (Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8), "GET"),
            (Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8), "CONNECT"),
            (Array("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n".utf8), "GET"),
            (Array("HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\n".utf8), "GET"),
            (Array("HTTP/1.1 200\r\n\r\n".utf8), "GET"),
            (Array("HTTP/1.1 099 Low\r\n\r\n".utf8), "GET"),
            (Array("HTTP/1.1 200 O\u{1}K\r\n\r\n".utf8), "GET"),
            (Array("HTTP/1.1 200 OK\r\nContent-Type: a\r\nContent-Type: b\r\n\r\n".utf8), "GET"),
            (Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n".utf8), "GET"),
        ]
        let cases = requests.map { ($0, HTTP1HeadParser.Kind.request, String?.none) } + responses.map { ($0.0, .response, $0.1) }
        for (bytes, kind, method) in cases {
            let expected = reference(bytes, kind, answering: method)
            #expect(scan(bytes, kind, answering: method).0 == expected, "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
            // Split in two at every offset: the same answer, and the two feeds take the head's length.
            for cut in 1 ..< bytes.count {
                var scanner = HTTP1HeadScanner(kind, answering: method)
                let first = bytes[..<cut].withUnsafeBytes { scanner.consumeHead($0) }
                let (result, consumed) = first.result == .needMoreData
                    ? bytes[cut...].withUnsafeBytes { scanner.consumeHead($0) } : (first.result, 0)
                #expect(result == expected, "split at \(cut) of \(String(decoding: bytes, as: UTF8.self).debugDescription)")
                if case .malformed = expected {} else {
                    #expect(first.consumed + consumed == headLength(bytes), "split at \(cut)")
                }
            }
        }
    }

    @Test("a head past the bound is tv's one limit, as the full parser's: the trial's 80 fields of 1,000 bytes before Content-Length are tooLong (in the fields), whole and in 1,000-byte feeds, at the bound's byte; a request line past it is tooLong in the start line")
    func headPastTheBound() {
        let filler = (1 ... 80).map { "X-Big-\($0): " + String(repeating: "v", count: 1_000) + "\r\n" }.joined()
        let head = Array(("POST /echo HTTP/1.1\r\nHost: 127.0.0.1:18211\r\n" + filler + "Content-Length: 10\r\n\r\n").utf8)
        #expect(head.count > HTTP1HeadParser.defaultMaxHeadBytes)
        let expected = HTTP1HeadScanner.Result.tooLong(maxHeadBytes: 65_536, inStartLine: false)
        let bytes = head + Array("small body".utf8)
        #expect(scan(bytes, .request) == (expected, 65_536))
        #expect(reference(bytes, .request) == expected, "the full parser's answer")
        var scanner = HTTP1HeadScanner(.request)
        var consumed = 0
        var result = HTTP1HeadScanner.Result.needMoreData
        for start in stride(from: 0, to: bytes.count, by: 1_000) where result == .needMoreData {
            let fed = bytes[start ..< min(start + 1_000, bytes.count)].withUnsafeBytes { scanner.consumeHead($0) }
            result = fed.result
            consumed += fed.consumed
        }
        #expect(result == expected)
        #expect(consumed == 65_536)
        let line = Array(("GET /" + String(repeating: "a", count: 70_000) + " HTTP/1.1\r\n\r\n").utf8)
        #expect(scan(line, .request) == (.tooLong(maxHeadBytes: 65_536, inStartLine: true), 65_536))
        let response = Array(("HTTP/1.1 200 OK\r\n" + filler + "\r\n").utf8)
        #expect(scan(response, .response, answering: "GET") == (.tooLong(maxHeadBytes: 65_536, inStartLine: false), 65_536))
    }

    @Test("heads padded with fields not kept give the full parser's answer, whole and in feeds of 1, 7 and 50 bytes, within the bound and past a bound of 160 bytes: folds (refused) after padding, repeated lengths, broken lines among the padding")
    func paddedHeadsSameAsTheFullParser() {
        let pad: String = (1 ... 12).map { (n: Int) -> String in "X-Pad-\(n): " + String(repeating: "p", count: 20) + "\r\n" }.joined()
        let requests: [String] = [
            "GET /a HTTP/1.1\r\n" + pad + "Host: a.test\r\n" + pad + "\r\n",
            "GET /a HTTP/1.1\r\nHost: a\r\n" + pad + " folded onto the last pad\r\n" + pad + "\r\n",
            "GET /a HTTP/1.1\r\n" + pad + "Host: first\r\n  and more\r\n" + pad + "Host: second\r\n\r\n",
            "POST /a HTTP/1.1\r\n" + pad + "Content-Length: 5\r\n" + pad + "Content-Length: 5\r\n\r\n",
            "POST /a HTTP/1.1\r\n" + pad + "Content-Length: 5\r\n" + pad + "Content-Length: 6\r\n\r\n",
            "POST /a HTTP/1.1\r\n" + pad + "Transfer-Encoding: gzip,\r\n" + pad + "Transfer-Encoding: chunked\r\n\r\n",
            "GET /a HTTP/1.1\r\n" + pad + "Bad Name: x\r\n" + pad + "\r\n",
            "GET /a HTTP/1.1\r\n" + pad + "No colon\r\n" + pad + "\r\n",
            "GET /a HTTP/1.1\r\n" + pad + "A: b\u{0}c\r\n" + pad + "\r\n",
            "GET /a HTTP/1.1\r\n folded first\r\n" + pad + "\r\n",
            "GET /a HTTP/1.1\n" + String(String.UnicodeScalarView(pad.unicodeScalars.filter { $0 != "\r" })) + "Host: lf\n\n",
        ]
        let responses: [String] = [
            "HTTP/1.1 200 OK\r\n" + pad + "Content-Type: text/plain\r\n" + pad + "Content-Encoding: gzip\r\n\tx\r\nContent-Length: 3\r\n\r\n",
            "HTTP/1.1 200 OK\r\n" + pad + pad + pad + "Transfer-Encoding: chunked\r\n\r\n",
        ]
        let cases = requests.map { (Array($0.utf8), HTTP1HeadParser.Kind.request) } + responses.map { (Array($0.utf8), .response) }
        for (bytes, kind) in cases {
            let label = String(decoding: bytes, as: UTF8.self).debugDescription
            #expect(bytes.count > 320, "\(label)")
            let expected = reference(bytes, kind, answering: "GET")
            #expect(scan(bytes, kind, answering: "GET").0 == expected, "\(label)")
            #expect(scan(bytes, kind, answering: "GET", maxHeadBytes: 160).0 == reference160(bytes, kind), "\(label)")
            for size in [1, 7, 50] {
                var scanner = HTTP1HeadScanner(kind, answering: "GET")
                var consumed = 0
                var result = HTTP1HeadScanner.Result.needMoreData
                for start in stride(from: 0, to: bytes.count, by: size) where result == .needMoreData {
                    let fed = bytes[start ..< min(start + size, bytes.count)].withUnsafeBytes { scanner.consumeHead($0) }
                    result = fed.result
                    consumed += fed.consumed
                }
                #expect(result == expected, "feeds of \(size): \(label)")
                if case .malformed = expected {} else { #expect(consumed == bytes.count, "feeds of \(size): \(label)") }
            }
        }
        let lengths = "POST / HTTP/1.1\r\n" + String(repeating: "Content-Length: 5\r\n", count: 12) + "\r\n"
        #expect(scan(Array(lengths.utf8), .request, maxHeadBytes: 160).0 == .tooLong(maxHeadBytes: 160, inStartLine: false))
    }

    /// The full parser's answer under a bound of 160 bytes, in the scanner's terms (a line
    /// refused within the first 160 bytes is refused by both; past them, the head is too long).
    private func reference160(_ bytes: [UInt8], _ kind: HTTP1HeadParser.Kind) -> HTTP1HeadScanner.Result {
        switch HTTP1HeadParser.parse(bytes, kind: kind, leniency: .lenient, maxHeadBytes: 160) {
        case let .tooLong(limit, inStartLine): return .tooLong(maxHeadBytes: limit, inStartLine: inStartLine)
        case .malformed(let reason): return .malformed(reason: reason)
        default: return reference(bytes, kind, answering: "GET")
        }
    }

    /// The offset just past a head's empty line (the fixtures' heads end there, or a body follows).
    private func headLength(_ bytes: [UInt8]) -> Int {
        var scanner = HTTP1HeadEndScanner()
        if case .end(let end) = bytes.withUnsafeBufferPointer({ scanner.scan($0, kind: .response) }) { return end }
        return bytes.count
    }
}
