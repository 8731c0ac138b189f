/// A read position inside a borrowed byte buffer, for decoding length-prefixed wire structures
/// (the TLS presentation language of RFC 8446 §3, SOCKS5 messages of RFC 1928).
///
/// Every read checks the remaining length and throws a `WireFormatError` naming `context`
/// instead of trapping. The cursor never copies: sub-vectors are cursors over the same memory,
/// so it must not outlive the `withUnsafeBufferPointer` call that produced `bytes`.
struct ByteCursor {
    /// The whole buffer being read.
    let bytes: UnsafeBufferPointer<UInt8>
    /// Index of the next unread byte.
    private(set) var position: Int
    /// One past the last byte this cursor may read.
    let end: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        self.position = 0
        self.end = bytes.count
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, position: Int, end: Int) {
        self.bytes = bytes
        self.position = position
        self.end = end
    }

    /// Bytes left between `position` and `end`.
    var remaining: Int { end - position }

    /// Whether every byte has been read.
    var isAtEnd: Bool { position == end }

    /// Reads one byte; `field` names it in the error ("the session id length").
    mutating func readUInt8(_ field: @autoclosure () -> String) throws(WireFormatError) -> UInt8 {
        guard remaining >= 1 else { throw truncated(field(), need: 1) }
        defer { position += 1 }
        return bytes[position]
    }

    /// Reads a big-endian 16-bit integer (network byte order).
    mutating func readUInt16(_ field: @autoclosure () -> String) throws(WireFormatError) -> UInt16 {
        guard remaining >= 2 else { throw truncated(field(), need: 2) }
        defer { position += 2 }
        return UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
    }

    /// Reads a big-endian 24-bit integer (TLS handshake lengths, RFC 8446 §4).
    mutating func readUInt24(_ field: @autoclosure () -> String) throws(WireFormatError) -> Int {
        guard remaining >= 3 else { throw truncated(field(), need: 3) }
        defer { position += 3 }
        return Int(bytes[position]) << 16 | Int(bytes[position + 1]) << 8 | Int(bytes[position + 2])
    }

    /// Copies the next `count` bytes into a new array.
    mutating func readBytes(_ count: Int, _ field: @autoclosure () -> String) throws(WireFormatError) -> [UInt8] {
        guard remaining >= count else { throw truncated(field(), need: count) }
        defer { position += count }
        return Array(bytes[position ..< position + count])
    }

    /// Skips the next `count` bytes.
    mutating func skip(_ count: Int, _ field: @autoclosure () -> String) throws(WireFormatError) {
        guard remaining >= count else { throw truncated(field(), need: count) }
        position += count
    }

    /// Returns a cursor over the next `count` bytes and moves past them.
    mutating func subCursor(_ count: Int, _ field: @autoclosure () -> String) throws(WireFormatError) -> ByteCursor {
        guard remaining >= count else { throw truncated(field(), need: count) }
        defer { position += count }
        return ByteCursor(bytes: bytes, position: position, end: position + count)
    }

    /// Reads a vector with a one-byte length prefix (`opaque x<0..2^8-1>`) as a cursor.
    mutating func readVector8(_ field: @autoclosure () -> String) throws(WireFormatError) -> ByteCursor {
        let length = try readUInt8("the length of \(field())")
        return try subCursor(Int(length), field())
    }

    /// Reads a vector with a two-byte length prefix (`opaque x<0..2^16-1>`) as a cursor.
    mutating func readVector16(_ field: @autoclosure () -> String) throws(WireFormatError) -> ByteCursor {
        let length = try readUInt16("the length of \(field())")
        return try subCursor(Int(length), field())
    }

    /// The unread bytes, copied.
    var remainingBytes: [UInt8] { Array(bytes[position ..< end]) }

    private func truncated(_ field: String, need: Int) -> WireFormatError {
        WireFormatError("\(field.prefix(1).uppercased() + field.dropFirst()) needs \(need) byte\(need == 1 ? "" : "s") but only \(remaining) remain\(remaining == 1 ? "s" : "") in its container.")
    }
}

extension ByteCursor {
    /// The unread bytes as a buffer over the same memory (no copy).
    var remainingBuffer: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[position ..< end])
    }
}
