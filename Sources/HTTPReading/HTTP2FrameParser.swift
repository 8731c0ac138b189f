/// Splits one direction's bytes into HTTP/2 frames (RFC 9113 §4.1), across turn boundaries:
/// bytes are appended as turns arrive, complete frames come out, a partial frame waits for more.
struct HTTP2FrameParser {
    private var buffer: [UInt8] = []
    private var start = 0

    /// Bytes waiting for the rest of their frame.
    var pending: Int { buffer.count - start }

    /// The header of the partial frame waiting, if at least its 9 header bytes are here.
    var pendingHeader: (type: UInt8, length: Int, streamID: UInt32)? {
        guard pending >= HTTP2Frame.headerSize else { return nil }
        let h = buffer[start..<(start + 9)].map { $0 }
        return (h[3], Int(h[0]) << 16 | Int(h[1]) << 8 | Int(h[2]), HTTP2FrameParser.streamID(h, at: 5))
    }

    /// The flags byte and the payload bytes already here of the partial frame waiting, if its
    /// header is complete.
    var pendingPayload: (flags: UInt8, bytes: ArraySlice<UInt8>)? {
        guard pending >= HTTP2Frame.headerSize else { return nil }
        return (buffer[start + 4], buffer[(start + HTTP2Frame.headerSize)...])
    }

    mutating func append(_ bytes: [UInt8]) {
        if start > 0 && start == buffer.count {
            buffer = []
            start = 0
        }
        buffer += bytes
    }

    /// Checks and drops the client connection preface (RFC 9113 §3.4) at the front.
    /// - Returns: nil while fewer than 24 bytes are here, true when it was there (and is
    ///   dropped), false when the bytes are something else.
    mutating func consumePreface() -> Bool? {
        let preface = HTTPReader.http2Preface
        guard pending >= preface.count else {
            return buffer[start...].elementsEqual(preface.prefix(pending)) ? nil : false
        }
        guard buffer[start..<(start + preface.count)].elementsEqual(preface) else { return false }
        start += preface.count
        return true
    }

    /// The next complete frame, or nil when the bytes end inside one.
    mutating func next() -> HTTP2Frame? {
        guard pending >= HTTP2Frame.headerSize else { return nil }
        let length = Int(buffer[start]) << 16 | Int(buffer[start + 1]) << 8 | Int(buffer[start + 2])
        guard pending >= HTTP2Frame.headerSize + length else { return nil }
        let frame = HTTP2Frame(type: buffer[start + 3], flags: buffer[start + 4],
                               streamID: HTTP2FrameParser.streamID(buffer, at: start + 5),
                               payload: Array(buffer[(start + 9)..<(start + 9 + length)]))
        start += HTTP2Frame.headerSize + length
        if start > 1_048_576 {
            buffer.removeFirst(start)
            start = 0
        }
        return frame
    }

    /// The 31-bit stream identifier at `index` (the reserved bit ignored, §4.1).
    static func streamID(_ bytes: [UInt8], at index: Int) -> UInt32 {
        (UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8 | UInt32(bytes[index + 3]))
            & 0x7fff_ffff
    }

    /// A 32-bit big-endian value at `index`.
    static func uint32(_ bytes: [UInt8], at index: Int) -> UInt32 {
        UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8 | UInt32(bytes[index + 3])
    }
}
