/// Byte classes and comparisons of HTTP syntax (RFC 9110 §5.6.2).
public enum HTTPToken {
    /// Whether `byte` is a `tchar`: `!#$%&'*+-.^_`|~`, DIGIT or ALPHA. One shift and mask of a
    /// 128-bit set (bytes 0–63, then 64–127), as the head scanners test every name byte.
    @inline(__always)
    public static func isTokenByte(_ byte: UInt8) -> Bool {
        byte < 64 ? (tokenBitsLow >> UInt64(byte)) & 1 != 0
            : byte < 128 && (tokenBitsHigh >> UInt64(byte &- 64)) & 1 != 0
    }

    /// Bit n set: byte n (0–63) is a `tchar` (`!#$%&'*+-.` and DIGIT).
    static var tokenBitsLow: UInt64 { 0x03FF_6CFA_0000_0000 }
    /// Bit n set: byte 64 + n (64–127) is a `tchar` (ALPHA and `^_`|~`).
    static var tokenBitsHigh: UInt64 { 0x57FF_FFFF_C7FF_FFFE }

    /// Whether two strings are equal ignoring ASCII case.
    static func equalsIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case let (x?, y?) where lowercased(x) == lowercased(y): continue
            default: return false
            }
        }
    }

    /// The ASCII lowercase of a byte.
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// The comma-separated list elements of field values (RFC 9110 §5.6.1), trimmed of spaces and
    /// tabs, empty elements dropped, ASCII-lowercased.
    static func lowercasedList(_ values: [String]) -> [String] {
        values.flatMap { value in
            value.split(separator: ",").compactMap { element -> String? in
                let trimmed = element.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
                return trimmed.isEmpty ? nil : String(trimmed).lowercased()
            }
        }
    }

    /// Whether a message of `version` with these Connection options keeps the connection open
    /// (RFC 9112 §9.3): "close" ends it; HTTP/1.1 persists by default, HTTP/1.0 only with "keep-alive".
    static func keepsAlive(version: HTTPVersion, connectionOptions: [String]) -> Bool {
        if connectionOptions.contains("close") { return false }
        return version.minor >= 1 || connectionOptions.contains("keep-alive")
    }
}
