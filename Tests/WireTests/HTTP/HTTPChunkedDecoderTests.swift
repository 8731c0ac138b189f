import Testing
@testable import Wire

/// What one decoder made of some reads: data, bytes consumed per read, where it ended.
private struct Decoded: Equatable {
    var data: [UInt8] = []
    var consumed: [Int] = []
    var done = false
    var trailerOffset: Int?
    var failure: String?
}

private func decode(_ reads: [[UInt8]], _ leniency: HTTP1Leniency = .strict) -> Decoded {
    var decoder = HTTPChunkedDecoder(leniency: leniency)
    var out = Decoded()
    for read in reads {
        out.consumed.append(read.withUnsafeBytes { decoder.consume($0) { out.data += $0 } })
    }
    out.done = decoder.isDone
    out.trailerOffset = decoder.trailerOffset
    out.failure = decoder.failure
    #expect(decoder.consumedCount == out.consumed.reduce(0, +))
    return out
}

private func decode(_ text: String, _ leniency: HTTP1Leniency = .strict) -> Decoded {
    decode([Array(text.utf8)], leniency)
}

@Suite("HTTPChunkedDecoder (RFC 9112 §7.1)")
struct HTTPChunkedDecoderTests {
    static let body = "4;ext=1\r\nWiki\r\n5 ; name=\"quoted value\"\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\n"

    @Test("sizes, extensions, trailers: the data, the trailer offset, the end; split anywhere")
    func everySplit() {
        let bytes = Array(Self.body.utf8) + Array("NEXT".utf8)
        let trailerOffset = Self.body.utf8.count - "Trailer: x\r\n\r\n".utf8.count
        for split in 0 ... bytes.count {
            let decoded = decode([Array(bytes[..<split]), Array(bytes[split...])])
            #expect(decoded.data == Array("Wikipedia in\r\n\r\nchunks.".utf8), "split at \(split)")
            #expect(decoded.consumed.reduce(0, +) == Self.body.utf8.count, "split at \(split)")
            #expect(decoded.done && decoded.failure == nil, "split at \(split)")
            #expect(decoded.trailerOffset == trailerOffset, "split at \(split)")
        }
    }

    @Test("one byte at a time")
    func oneByteAtATime() {
        let decoded = decode(Self.body.utf8.map { [$0] })
        #expect(decoded.data == Array("Wikipedia in\r\n\r\nchunks.".utf8))
        #expect(decoded.consumed == Array(repeating: 1, count: Self.body.utf8.count))
        #expect(decoded.done)
    }

    @Test("bare LF line ends are read as today, without trailers too")
    func bareLF() {
        #expect(decode("3\nabc\n0\n\nrest") == Decoded(data: Array("abc".utf8), consumed: [9], done: true, trailerOffset: 8))
        #expect(decode("3\r\nabc\r\n0\r\n\r\n") == Decoded(data: Array("abc".utf8), consumed: [13], done: true, trailerOffset: 11))
    }

    @Test("a body that stops early is not done and not broken")
    func truncated() {
        #expect(decode("a\r\n01234") == Decoded(data: Array("01234".utf8), consumed: [8]))
        #expect(decode("0\r\nX: 1\r\n") == Decoded(data: [], consumed: [9], trailerOffset: 3))
    }

    @Test("whitespace before a size: skipped when lenient, refused when strict")
    func leadingWhitespace() {
        #expect(decode(" \t3\r\nabc\r\n0\r\n\r\n", .lenient).data == Array("abc".utf8))
        #expect(decode(" 3\r\nabc\r\n0\r\n\r\n", .strict) == Decoded(consumed: [0],
            failure: "A chunk size line starts with byte 0x20, which is not a hexadecimal digit (RFC 9112 §7.1)."))
    }

    @Test("broken codings: where they stop and why", arguments: [
        ("zz\r\n", 0, "A chunk size line starts with byte 0x7a, which is not a hexadecimal digit (RFC 9112 §7.1)."),
        ("\r\n", 0, "A chunk size line starts with byte 0xd, which is not a hexadecimal digit (RFC 9112 §7.1)."),
        ("4x\r\n", 1, "A chunk size is followed by byte 0x78 instead of a ';' or the line end (RFC 9112 §7.1)."),
        ("4 x\r\n", 2, "A chunk size is followed by byte 0x78 instead of a ';' or the line end (RFC 9112 §7.1)."),
        ("4\rx", 2, "A chunk size line has a CR not followed by LF (RFC 9112 §2.2)."),
        ("1000000000000000\r\n", 15, "A chunk size has more than 15 hexadecimal digits (RFC 9112 §7.1)."),
        ("4\r\nWikiX\r\n", 7, "A chunk of 4 bytes is not followed by CRLF (RFC 9112 §7.1)."),
        ("4\r\nWiki\rX", 8, "A chunk of 4 bytes is not followed by CRLF (RFC 9112 §7.1)."),
        ("0\r\nX: 1\rY\r\n\r\n", 8, "A trailer line has a CR not followed by LF (RFC 9112 §2.2)."),
    ])
    func broken(_ text: String, _ consumed: Int, _ reason: String) {
        let decoded = decode(text)
        #expect(decoded.consumed == [consumed])
        #expect(decoded.failure == reason)
        #expect(!decoded.done)
    }

    @Test("bounds: a size line of 1 KiB, a trailer section of 64 KiB")
    func bounds() {
        let longExtension = "1;" + String(repeating: "e", count: HTTPChunkedDecoder.maxSizeLineBytes - 4) + "\r\n"
        #expect(longExtension.utf8.count == HTTPChunkedDecoder.maxSizeLineBytes)
        #expect(decode(longExtension + "a\r\n0\r\n\r\n").data == Array("a".utf8))
        let tooLong = "1;" + String(repeating: "e", count: HTTPChunkedDecoder.maxSizeLineBytes - 3) + "\r\n"
        #expect(decode(tooLong) == Decoded(consumed: [HTTPChunkedDecoder.maxSizeLineBytes],
                                           failure: "A chunk size line runs past 1024 bytes (RFC 9112 §7.1)."))
        let trailers = "0\r\n" + String(repeating: "X: 0123456789abcd\r\n", count: 3_450) + "\r\n"
        #expect(decode(trailers).failure == "The trailer section runs past 65536 bytes (RFC 9112 §7.1.2).")
        let fits = "0\r\n" + String(repeating: "X: 0123456789abcd\r\n", count: 3_449) + "\r\n"
        #expect(decode(fits).done)
    }

    @Test("the body scanner: exact body lengths for each framing")
    func scanner() {
        func consume(_ scanner: inout HTTPBodyScanner, _ text: String) -> Int {
            Array(text.utf8).withUnsafeBytes { scanner.consume($0) }
        }
        var none = HTTPBodyScanner(.none)
        #expect(none.isDone && consume(&none, "GET") == 0)
        var close = HTTPBodyScanner(.untilClose)
        #expect(consume(&close, "all of it") == 9 && !close.isDone)
        var chunked = HTTPBodyScanner(.chunked)
        #expect(consume(&chunked, "1\r\na\r\n0\r\n\r\nGET") == 11 && chunked.isDone && !chunked.malformed)
        var broken = HTTPBodyScanner(.chunked)
        #expect(consume(&broken, "q") == 0 && broken.malformed)
        #expect(broken.failure == "A chunk size line starts with byte 0x71, which is not a hexadecimal digit (RFC 9112 §7.1).")
    }
}
