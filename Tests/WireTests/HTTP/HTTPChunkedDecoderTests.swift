import Testing
@testable import Wire

/// What one decoder made of some reads: data, bytes consumed per read, where it ended.
private struct Decoded: Equatable {
    var data: [UInt8] = []
    var consumed: [Int] = []
    var done = false
    var trailerOffset: Int?
    var failure: ChunkedBodyProblem?
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
        #expect(decode(" 3\r\nabc\r\n0\r\n\r\n", .strict) == Decoded(consumed: [0], failure: .sizeNotHex(0x20)))
        #expect(ChunkedBodyProblem.sizeNotHex(0x20).sentence
                == "A chunk size line starts with byte 0x20, which is not a hexadecimal digit (RFC 9112 §7.1).")
    }

    @Test("broken codings: where they stop, the kind and its sentence (the trial's smuggling shapes among them)", arguments: [
        ("zz\r\n", 0, ChunkedBodyProblem.sizeNotHex(0x7A), "A chunk size line starts with byte 0x7a, which is not a hexadecimal digit (RFC 9112 §7.1)."),
        ("\r\n", 0, .sizeNotHex(0x0D), "A chunk size line starts with byte 0xd, which is not a hexadecimal digit (RFC 9112 §7.1)."),
        ("-2\r\nab\r\n0\r\n\r\n", 0, .sizeNotHex(0x2D), "A chunk size line starts with byte 0x2d, which is not a hexadecimal digit (RFC 9112 §7.1)."),
        ("4x\r\n", 1, .sizeFollowedBy(0x78), "A chunk size is followed by byte 0x78 instead of a ';' or the line end (RFC 9112 §7.1)."),
        ("2g\r\nab\r\n0\r\n\r\n", 1, .sizeFollowedBy(0x67), "A chunk size is followed by byte 0x67 instead of a ';' or the line end (RFC 9112 §7.1)."),
        ("0x2\r\nab\r\n0\r\n\r\n", 1, .sizeFollowedBy(0x78), "A chunk size is followed by byte 0x78 instead of a ';' or the line end (RFC 9112 §7.1)."),
        ("4 x\r\n", 2, .sizeFollowedBy(0x78), "A chunk size is followed by byte 0x78 instead of a ';' or the line end (RFC 9112 §7.1)."),
        ("4\rx", 2, .bareCRInSizeLine, "A chunk size line has a CR not followed by LF (RFC 9112 §2.2)."),
        ("2;a\nb\r\nab\r\n0\r\n\r\n", 3, .bareLFInExtension,
         "A chunk extension contains a bare LF, which readers may take for the end of the line or not (RFC 9112 §7.1 ends it with CRLF)."),
        ("1000000000000000\r\n", 15, .sizeTooLarge,
         "A chunk size has more than 15 significant hexadecimal digits (2^60 bytes or more), more than tv counts; a 64-bit reader would wrap it around (RFC 9112 §7.1)."),
        // 2^64 + 2: a 64-bit parser that wraps reads a chunk of 2 (the trial's smuggling shape).
        ("10000000000000002\r\nab\r\n0\r\n\r\n", 15, .sizeTooLarge,
         "A chunk size has more than 15 significant hexadecimal digits (2^60 bytes or more), more than tv counts; a 64-bit reader would wrap it around (RFC 9112 §7.1)."),
        ("4\r\nWikiX\r\n", 7, .dataNotFollowedByCRLF(chunkSize: 4), "A chunk of 4 bytes is not followed by CRLF (RFC 9112 §7.1)."),
        ("2\r\nabXX0\r\n\r\n", 5, .dataNotFollowedByCRLF(chunkSize: 2), "A chunk of 2 bytes is not followed by CRLF (RFC 9112 §7.1)."),
        ("4\r\nWiki\rX", 8, .dataNotFollowedByCRLF(chunkSize: 4), "A chunk of 4 bytes is not followed by CRLF (RFC 9112 §7.1)."),
        ("0\r\nX: 1\rY\r\n\r\n", 8, .bareCRInTrailer, "A trailer line has a CR not followed by LF (RFC 9112 §2.2)."),
    ])
    func broken(_ text: String, _ consumed: Int, _ problem: ChunkedBodyProblem, _ sentence: String) {
        let decoded = decode(text)
        #expect(decoded.consumed == [consumed])
        #expect(decoded.failure == problem)
        #expect(problem.sentence == sentence)
        #expect(problem.isLimit == (problem == .sizeTooLarge))
        #expect(!decoded.done)
    }

    @Test("leading zeros are not digits that count: the trial's 16-digit 0000000000000002, and a thousand zeros before a size of 15 digits")
    func leadingZeros() {
        #expect(decode("0000000000000002\r\nab\r\n0\r\n\r\n") == Decoded(data: Array("ab".utf8), consumed: [27], done: true, trailerOffset: 25))
        let zeros = String(repeating: "0", count: 1_000)
        let largest = zeros + "fffffffffffffff\r\n"
        let decoded = decode(largest)
        #expect(decoded.consumed == [largest.utf8.count] && decoded.failure == nil && !decoded.done)
        #expect(decode(zeros + "1000000000000000\r\n").failure == .sizeTooLarge)
        // A last chunk of only zeros.
        #expect(decode("00000\r\n\r\n") == Decoded(consumed: [9], done: true, trailerOffset: 7))
    }

    @Test("chunk extensions and trailer sections of any length are read past, nothing kept: the trial's 8 KB and 70 KB extensions, 70 KB and 50,000 trailer lines")
    func longExtensionsAndTrailers() {
        for length in [2_000, 8_000, 70_000] {
            let body = "2;x=" + String(repeating: "e", count: length) + "\r\nab\r\n0\r\n\r\n"
            #expect(decode(body) == Decoded(data: Array("ab".utf8), consumed: [body.utf8.count], done: true, trailerOffset: body.utf8.count - 2),
                    "extension of \(length)")
            // In reads of 1,000 bytes: the same.
            let bytes = Array(body.utf8)
            let reads = stride(from: 0, to: bytes.count, by: 1_000).map { Array(bytes[$0 ..< min($0 + 1_000, bytes.count)]) }
            #expect(decode(reads).done && decode(reads).data == Array("ab".utf8), "extension of \(length) in reads")
        }
        let trailer = "2\r\nab\r\n0\r\nX-T: " + String(repeating: "v", count: 70_000) + "\r\n\r\n"
        #expect(decode(trailer) == Decoded(data: Array("ab".utf8), consumed: [trailer.utf8.count], done: true, trailerOffset: 10))
        let many = "2\r\nok\r\n0\r\n" + (0 ..< 50_000).map { "X-T\($0): v\r\n" }.joined() + "\r\n"
        #expect(decode(many) == Decoded(data: Array("ok".utf8), consumed: [many.utf8.count], done: true, trailerOffset: 10))
    }

    @Test("a bare LF ends an extension only when lenient (recorded content); strict, the proxy's, refuses it")
    func bareLFInExtension() {
        #expect(decode("2;a\nab\r\n0\r\n\r\n", .lenient) == Decoded(data: Array("ab".utf8), consumed: [13], done: true, trailerOffset: 11))
        #expect(decode("2;a\nab\r\n0\r\n\r\n", .strict) == Decoded(consumed: [3], failure: .bareLFInExtension))
        // A bare LF after the size alone is a line end in both (RFC 9112 §2.2, as nginx reads it).
        #expect(decode("2\nab\n0\n\n", .strict) == Decoded(data: Array("ab".utf8), consumed: [8], done: true, trailerOffset: 7))
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
        #expect(consume(&chunked, "1\r\na\r\n0\r\n\r\nGET") == 11 && chunked.isDone && chunked.failure == nil)
        var broken = HTTPBodyScanner(.chunked)
        #expect(consume(&broken, "q") == 0 && broken.failure == .sizeNotHex(0x71))
        // The proxy's one rule is strict: whitespace before a size is refused on both paths.
        var spaced = HTTPBodyScanner(.chunked)
        #expect(consume(&spaced, " 1\r\na\r\n0\r\n\r\n") == 0 && spaced.failure == .sizeNotHex(0x20))
    }
}
