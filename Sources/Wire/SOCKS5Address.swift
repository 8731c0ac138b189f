/// A SOCKS5 address (RFC 1928 §5): `ATYP` then IPv4 (4 bytes), a domain name (1-byte length then
/// the name) or IPv6 (16 bytes), as used by requests (DST.ADDR) and replies (BND.ADDR).
public enum SOCKS5Address: Sendable, Hashable, CustomStringConvertible {
    /// ATYP 0x01: four bytes in network order, e.g. `[127, 0, 0, 1]`.
    case ipv4([UInt8])
    /// ATYP 0x03: a fully-qualified domain name as sent (1...255 bytes of printable ASCII, or
    /// UTF-8 holding U-labels that `IDNA.asciiHost` converts), to be resolved by the proxy
    /// (`curl --socks5-hostname`).
    case domain(String)
    /// ATYP 0x04: sixteen bytes in network order.
    case ipv6([UInt8])

    /// ATYP 0x01, IPv4 (RFC 1928 §4).
    public static let ipv4Type: UInt8 = 0x01
    /// ATYP 0x03, domain name (RFC 1928 §4).
    public static let domainType: UInt8 = 0x03
    /// ATYP 0x04, IPv6 (RFC 1928 §4).
    public static let ipv6Type: UInt8 = 0x04

    /// The ATYP byte of this address.
    public var addressType: UInt8 {
        switch self {
        case .ipv4: Self.ipv4Type
        case .domain: Self.domainType
        case .ipv6: Self.ipv6Type
        }
    }

    /// Text form: dotted IPv4 ("127.0.0.1"), the domain, or IPv6 in the RFC 5952 form ("::1").
    public var description: String {
        switch self {
        case .ipv4(let bytes): bytes.map(String.init).joined(separator: ".")
        case .domain(let name): name
        case .ipv6(let bytes): Self.ipv6Text(bytes)
        }
    }

    /// The wire form: ATYP then the address bytes (a domain with its length byte).
    public var encoded: [UInt8] {
        switch self {
        case .ipv4(let bytes): [Self.ipv4Type] + bytes
        case .domain(let name): [Self.domainType, UInt8(truncatingIfNeeded: name.utf8.count)] + Array(name.utf8)
        case .ipv6(let bytes): [Self.ipv6Type] + bytes
        }
    }

    /// RFC 5952 §4: lowercase hex groups without leading zeros, the longest run of two or more
    /// zero groups (the first if tied) written as "::".
    private static func ipv6Text(_ bytes: [UInt8]) -> String {
        guard bytes.count == 16 else { return bytes.map { String($0, radix: 16) }.joined(separator: ":") }
        let groups = (0 ..< 8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
        var bestStart = -1, bestLength = 0, runStart = -1
        for index in 0 ... 8 {
            if index < 8, groups[index] == 0 {
                if runStart < 0 { runStart = index }
            } else if runStart >= 0 {
                if index - runStart > bestLength { bestStart = runStart; bestLength = index - runStart }
                runStart = -1
            }
        }
        func hex(_ range: Range<Int>) -> String { groups[range].map { String($0, radix: 16) }.joined(separator: ":") }
        guard bestLength >= 2 else { return hex(0 ..< 8) }
        return hex(0 ..< bestStart) + "::" + hex(bestStart + bestLength ..< 8)
    }
}
