#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address as its network-order bytes (4 or 16), as an iPAddress SAN carries it
/// (RFC 5280 §4.2.1.6).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// From 4 or 16 network-order bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses a literal: dotted IPv4 (`127.0.0.1`) or IPv6 (`::1`, also bracketed `[::1]`).
    /// Returns nil when the text is not an address (inet_pton(3) rules).
    public init?(_ text: String) {
        var literal = Substring(text)
        if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(literal), &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, String(literal), &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    /// Whether this is an IPv4 address.
    public var isIPv4: Bool { bytes.count == 4 }

    /// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) as the IPv4 address it
    /// carries; any other address as it is.
    public var unmapped: IPAddress {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff else { return self }
        return IPAddress(bytes: Array(bytes[12..<16]))!
    }

    /// Whether this address is reachable only from this machine: 127.0.0.0/8, `::1`, or
    /// 127.0.0.0/8 mapped into IPv6 (`::ffff:127.0.0.1`, RFC 4291 §2.5.5.2).
    public var isLoopback: Bool {
        let ip = unmapped
        return ip.isIPv4 ? ip.bytes[0] == 127 : ip.bytes == [UInt8](repeating: 0, count: 15) + [1]
    }

    /// The canonical text form (inet_ntop(3)): `127.0.0.1`, `::1`.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isIPv4 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard ok != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
