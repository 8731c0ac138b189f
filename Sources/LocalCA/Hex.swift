/// Hex text for fingerprints, serials and key ids.
public enum Hex {
    /// Lowercase hex with an optional separator between bytes (`"ab:cd"` with ":").
    public static func encode(_ bytes: [UInt8], separator: String = "", uppercase: Bool = false) -> String {
        let digits = Array(uppercase ? "0123456789ABCDEF" : "0123456789abcdef")
        var parts: [String] = []
        parts.reserveCapacity(bytes.count)
        for b in bytes { parts.append(String([digits[Int(b >> 4)], digits[Int(b & 0x0F)]])) }
        return parts.joined(separator: separator)
    }
}
