import Testing
@testable import Wire

/// `HTTP2FrameScanner`'s GOAWAY (RFC 9113 §6.8): a frame on stream 0 of at least 8 bytes, the
/// last stream (31 bits), the error code (§7), then debug data, of which the first
/// `goawayDebugKept` bytes are handed on; frames laid out as §4.1 says.
@Suite("HTTP/2 frames: GOAWAY")
struct HTTP2FrameScannerGoAwayTests {
    /// One frame: length (24 bits), type, flags, stream (RFC 9113 §4.1).
    static func frame(_ type: UInt8, _ flags: UInt8, _ stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(payload.count >> 16 & 0xff), UInt8(payload.count >> 8 & 0xff), UInt8(payload.count & 0xff), type, flags,
         UInt8(stream >> 24 & 0x7f), UInt8(stream >> 16 & 0xff), UInt8(stream >> 8 & 0xff), UInt8(stream & 0xff)] + payload
    }

    /// A GOAWAY's payload: the reserved bit set on the last stream (§6.8 says it is ignored).
    static func goaway(last: UInt32, code: UInt32, debug: [UInt8]) -> [UInt8] {
        frame(0x7, 0, 0, [UInt8(last >> 24) | 0x80, UInt8(last >> 16 & 0xff), UInt8(last >> 8 & 0xff), UInt8(last & 0xff),
                          UInt8(code >> 24), UInt8(code >> 16 & 0xff), UInt8(code >> 8 & 0xff), UInt8(code & 0xff)] + debug)
    }

    /// The events `bytes` make, fed in pieces of `piece` bytes (0: whole), as text.
    static func events(_ bytes: [UInt8], piece: Int = 0, client: Bool = false) -> (events: [String], failure: String?) {
        var scanner = HTTP2FrameScanner(expectingPreface: client)
        var out: [String] = []
        let step = piece == 0 ? max(bytes.count, 1) : piece
        for start in stride(from: 0, to: bytes.count, by: step) {
            Array(bytes[start ..< min(start + step, bytes.count)]).withUnsafeBytes { chunk in
                scanner.feed(chunk) { event in
                    switch event {
                    case let .goaway(last, code, debug): out.append("goaway \(last) \(code) \(Array(debug))")
                    case let .settings(size, _): out.append("settings \(size.map(String.init) ?? "-")")
                    case .ping: out.append("ping")
                    case .inert(let type): out.append("inert \(type)")
                    case let .data(id, count, end): out.append("data \(id) \(count) \(end)")
                    case let .reset(id, code, _): out.append("reset \(id) \(code.map(String.init) ?? "-")")
                    case let .headerBlock(id, _, _, block): out.append("headers \(id) \(block.count)")
                    }
                }
            }
        }
        return (out, scanner.failure)
    }

    @Test("a GOAWAY with an error code and debug text, whole or a byte at a time, between other frames")
    func goawayRead() {
        let bytes = Self.frame(0x4, 0, 0, []) + Self.goaway(last: 5, code: 0x1, debug: Array("bad".utf8)) + Self.frame(0x0, 0x1, 5, [1, 2])
        let expected = ["settings -", "goaway 5 1 [98, 97, 100]", "data 5 2 true"]
        for piece in [0, 1, 7, 13] {
            let read = Self.events(bytes, piece: piece)
            #expect(read.events == expected, "pieces of \(piece)")
            #expect(read.failure == nil)
        }
        // NO_ERROR with no debug data, the largest stream id.
        #expect(Self.events(Self.goaway(last: 0x7fff_ffff, code: 0, debug: [])).events == ["goaway 2147483647 0 []"])
    }

    @Test("debug data past 256 bytes is skipped, whole or gathered; the frames after it are read")
    func longDebugData() {
        let debug = (0 ..< 20_000).map { UInt8(truncatingIfNeeded: $0) }
        let bytes = Self.goaway(last: 3, code: 0xb, debug: debug) + Self.frame(0x3, 0, 3, [0, 0, 0, 8])
        for piece in [0, 1_000, 16_384] {
            let read = Self.events(bytes, piece: piece)
            #expect(read.events == ["goaway 3 11 \(Array(debug.prefix(256)))", "reset 3 8"], "pieces of \(piece)")
            #expect(read.failure == nil)
        }
        #expect(HTTP2FrameScanner.goawayDebugKept == 256)
    }

    @Test("a GOAWAY on a stream other than 0, or shorter than 8 bytes, breaks the framing (RFC 9113 §6.8)")
    func malformed() {
        let onStream = Self.events(Self.frame(0x7, 0, 1, [0, 0, 0, 0, 0, 0, 0, 1]))
        #expect(onStream.events.isEmpty && onStream.failure == "A GOAWAY frame on stream 1, not 0 (RFC 9113 §6.8).")
        let short = Self.events(Self.frame(0x7, 0, 0, [0, 0, 0, 0, 0, 0, 1]))
        #expect(short.events.isEmpty && short.failure == "A GOAWAY frame of 7 bytes, shorter than its 8 (RFC 9113 §6.8).")
    }
}
