/// QUIC's variable-length integers (RFC 9000 §16): the two high bits of the first byte give
/// the length (1, 2, 4 or 8 bytes), the rest is a big-endian value of 6, 14, 30 or 62 bits.
extension ByteCursor {
    /// Reads one variable-length integer; `field` names it in the error.
    /// - Throws: `WireFormatError` when the container ends inside it.
    mutating func readQUICVarint(_ field: @autoclosure () -> String) throws(WireFormatError) -> UInt64 {
        let first = try readUInt8(field())
        let length = 1 << Int(first >> 6)
        var value = UInt64(first & 0x3F)
        guard remaining >= length - 1 else {
            throw WireFormatError("\(ByteCursor.capitalized(field())) is a \(length)-byte variable-length integer (RFC 9000 §16) but only \(remaining + 1) bytes remain in its container.")
        }
        for _ in 1..<length { value = value << 8 | UInt64(try readUInt8(field())) }
        return value
    }

    /// `field` with its first letter capitalised, to start a sentence.
    static func capitalized(_ field: String) -> String { field.prefix(1).uppercased() + field.dropFirst() }
}

/// Encoding of QUIC variable-length integers (RFC 9000 §16), for building packets in tests and
/// tools: the shortest form that holds `value`.
public enum QUICVarint {
    /// The largest value a variable-length integer holds, 2^62 − 1.
    public static let maximum: UInt64 = (1 << 62) - 1

    /// The shortest encoding of `value` (1, 2, 4 or 8 bytes); nil above `maximum`.
    public static func encode(_ value: UInt64) -> [UInt8]? {
        switch value {
        case 0..<64: return [UInt8(value)]
        case 64..<16_384: return [UInt8(0x40 | value >> 8), UInt8(value & 0xFF)]
        case 16_384..<(1 << 30): return (0..<4).map { i in UInt8((value >> (8 * UInt64(3 - i))) & 0xFF) | (i == 0 ? 0x80 : 0) }
        case (1 << 30)...maximum: return (0..<8).map { i in UInt8((value >> (8 * UInt64(7 - i))) & 0xFF) | (i == 0 ? 0xC0 : 0) }
        default: return nil
        }
    }
}
