import Testing
@testable import Wire

/// The byte-level field-line and start-line checks the head scanners share (`HTTPToken`,
/// `HTTP1HeadParser.fieldLineParts`, the Content-Length fast path): exact answers for each edge
/// the pointer loops and the token bit set must keep (RFC 9110 §5.1, §5.5, §5.6.2, §8.6; RFC 9112
/// §2.3, §3, §5).
struct HTTP1HeadBytesTests {
    private func scan(_ text: String, _ kind: HTTP1HeadParser.Kind, answering method: String? = nil) -> HTTP1HeadScanner.Result {
        var scanner = HTTP1HeadScanner(kind, answering: method)
        return Array(text.utf8).withUnsafeBytes { scanner.consumeHead($0).result }
    }

    private func response(contentLength value: String) -> HTTP1HeadScanner.Result {
        scan("HTTP/1.1 200 OK\r\nContent-Length:\(value)\r\n\r\n", .response, answering: "GET")
    }

    private func length(_ n: Int) -> HTTP1HeadScanner.Result {
        .response(HTTP1ResponseSummary(version: .http11, code: 200, reason: "OK", contentType: nil, contentEncoding: nil,
                                       framing: .contentLength(n)))
    }

    @Test("tchar is exactly RFC 9110 §5.6.2's set, over all 256 bytes")
    func tokenBytes() {
        let tchar = Set(Array("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8))
        #expect(tchar.count == 77)
        for byte in 0 ... 255 {
            #expect(HTTPToken.isTokenByte(UInt8(byte)) == tchar.contains(UInt8(byte)), "byte 0x\(String(byte, radix: 16))")
        }
    }

    @Test("field lines: which rule a broken name breaks, in the parser's order (no colon first)")
    func nameRules() {
        // A byte that is not a tchar, in a line with no colon at all: the missing colon is said.
        #expect(scan("GET / HTTP/1.1\r\nNo colon here\r\n\r\n", .request) == .malformed(reason: "A header line has no colon (RFC 9112 §5)."))
        #expect(scan("GET / HTTP/1.1\r\nNoColonAtAll\r\n\r\n", .request) == .malformed(reason: "A header line has no colon (RFC 9112 §5)."))
        // The same byte before a colon later on the line: the name is refused for it.
        #expect(scan("GET / HTTP/1.1\r\nNo colon: here\r\n\r\n", .request)
            == .malformed(reason: "A header name is followed by whitespace before its colon, which RFC 9112 §5.1 forbids."))
        #expect(scan("GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", .request)
            == .malformed(reason: "A header name is followed by whitespace before its colon, which RFC 9112 §5.1 forbids."))
        #expect(scan("GET / HTTP/1.1\r\nA\u{7F}b: c\r\n\r\n", .request)
            == .malformed(reason: "A header name contains byte 0x7f, which is not allowed in a token (RFC 9110 §5.1)."))
        #expect(scan("GET / HTTP/1.1\r\nA\"b: c: d\r\n\r\n", .request)
            == .malformed(reason: "A header name contains byte 0x22, which is not allowed in a token (RFC 9110 §5.1)."))
        #expect(scan("GET / HTTP/1.1\r\n: c\r\n\r\n", .request) == .malformed(reason: "A header line has an empty name (RFC 9110 §5.1)."))
        // A colon in the value is the value's.
        #expect(scan("GET / HTTP/1.1\r\nHost:a:1:2\r\n\r\n", .request)
            == .request(HTTP1RequestSummary(method: "GET", target: "/", version: .http11, host: "a:1:2", framing: .none)))
    }

    @Test("field values: NUL and CR refused, every other control byte below 0x0E kept, OWS trimmed")
    func valueBytes() {
        for byte in 1 ... 0x0D where byte != 0x0A && byte != 0x0D {
            let value = "a\(Character(Unicode.Scalar(UInt8(byte))))b"
            #expect(scan("GET / HTTP/1.1\r\nHost: \t\(value) \t\r\n\r\n", .request)
                == .request(HTTP1RequestSummary(method: "GET", target: "/", version: .http11, host: value, framing: .none)),
                "byte 0x\(String(byte, radix: 16))")
        }
        #expect(scan("GET / HTTP/1.1\r\nHost: \u{0}\r\n\r\n", .request)
            == .malformed(reason: "A header value contains a NUL byte, which RFC 9110 §5.5 forbids."))
        #expect(scan("GET / HTTP/1.1\r\nHost: a\r \r\n\r\n", .request)
            == .malformed(reason: "A header value contains a bare CR byte, which RFC 9110 §5.5 forbids."))
        #expect(scan("GET / HTTP/1.1\r\nHost: \t \r\n\r\n", .request)
            == .request(HTTP1RequestSummary(method: "GET", target: "/", version: .http11, host: "", framing: .none)))
    }

    @Test("field values read eight bytes at a time: NUL or CR at any position of a long value is found; every other byte passes")
    func valueBytesByWord() {
        let name = Array("X-Long: ".utf8)
        for length in [7, 8, 9, 15, 16, 17, 31] {
            for position in 0 ..< length {
                for refused: UInt8 in [0x00, 0x0D] {
                    var value = Array(repeating: UInt8(ascii: "v"), count: length)
                    value[position] = refused
                    let outcome: String? = (name + value).withUnsafeBufferPointer { bytes in
                        do throws(WireFormatError) {
                            _ = try HTTP1HeadParser.fieldLineParts(bytes)
                            return nil
                        } catch {
                            return error.reason
                        }
                    }
                    #expect(outcome == "A header value contains a \(refused == 0 ? "NUL" : "bare CR") byte, which RFC 9110 §5.5 forbids.",
                            "length \(length), position \(position)")
                }
            }
        }
        // Every byte but NUL and CR (0x0E…0xFF included: the high bytes must not look low to the
        // word test), in words of eight, is one value.
        var value: [UInt8] = [UInt8(ascii: "a")]
        for byte in UInt8(0) ... UInt8(255) where byte != 0x00 && byte != 0x0D && byte != 0x20 && byte != 0x09 {
            value.append(byte)
        }
        value.append(UInt8(ascii: "z"))
        let range = (name + value).withUnsafeBufferPointer { bytes -> Range<Int>? in
            try? HTTP1HeadParser.fieldLineParts(bytes).value
        }
        #expect(range == name.count ..< name.count + value.count)
    }

    @Test("Content-Length read in place: digits only, up to 18 of them; anything else by the full rules (RFC 9110 §8.6)")
    func contentLengthInPlace() {
        #expect(response(contentLength: " 0") == length(0))
        #expect(response(contentLength: "000123") == length(123))
        #expect(response(contentLength: " \t42 \t") == length(42))
        #expect(response(contentLength: " 999999999999999999") == length(999_999_999_999_999_999))
        #expect(response(contentLength: " 12a")
            == .malformed(reason: "The Content-Length value (3 bytes, not repeated here: header values are content) is not a decimal number of bytes (RFC 9110 §8.6)."))
        #expect(response(contentLength: " 1/") == .malformed(reason: "The Content-Length value (2 bytes, not repeated here: header values are content) is not a decimal number of bytes (RFC 9110 §8.6)."))
        // Repeated (the second and third held apart from the first); a fold is refused.
        #expect(scan("HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-length: 5\r\nCONTENT-LENGTH: 5\r\n\r\n", .response, answering: "GET")
            == length(5))
        #expect(scan("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", .response, answering: "GET")
            == .malformed(reason: "The response has Content-Length values that disagree (5, 5, 6), so its body cannot be delimited (RFC 9112 §6.3)."))
        #expect(scan("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n 5\r\n\r\n", .response, answering: "GET")
            == .malformed(reason: "A header line of the response starts with whitespace (obs-fold), which RFC 9112 §5.2 has a proxy refuse with 502."))
    }

    @Test("start lines: the version's bytes one by one (RFC 9112 §2.3), a DEL or space in the target (§3.2)")
    func startLines() {
        #expect(scan("HTTQ/1.1 200 OK\r\n\r\n", .response)
            == .malformed(reason: "The status line is not an HTTP version, a space and a three-digit status code (RFC 9112 §4)."))
        #expect(scan("HTTP-1.1 200 OK\r\n\r\n", .response)
            == .malformed(reason: "The status line is not an HTTP version, a space and a three-digit status code (RFC 9112 §4)."))
        #expect(scan("GET / HTTP/1,1\r\n\r\n", .request)
            == .malformed(reason: "The request line does not end in an HTTP version of the form HTTP/1.1 (RFC 9112 §2.3)."))
        #expect(scan("GET /a\u{7F} HTTP/1.1\r\n\r\n", .request)
            == .malformed(reason: "The request target contains byte 0x7f, which is not visible ASCII (RFC 9112 §3.2)."))
        #expect(scan("GET /a HTTP/1.1 x\r\n\r\n", .request)
            == .malformed(reason: "The request line does not end in an HTTP version of the form HTTP/1.1 (RFC 9112 §2.3)."))
        #expect(scan("HTTP/1.1 200 \tOK\r\n\r\n", .response, answering: "HEAD")
            == .response(HTTP1ResponseSummary(version: .http11, code: 200, reason: "\tOK", contentType: nil, contentEncoding: nil, framing: .none)))
    }
}
