import LocalCA

/// An IPv4 or IPv6 address as two 64-bit halves of its network-order bytes, so that hashing and
/// comparing an address in the packet path costs two integer operations. IPv4 lives in the low
/// 32 bits of `low` with `high` 0.
public struct PacketAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Bytes 0–7 of an IPv6 address, big-endian; 0 for IPv4.
    public var high: UInt64
    /// Bytes 8–15 of an IPv6 address, or the 4 IPv4 bytes in the low 32 bits, big-endian.
    public var low: UInt64
    public var isIPv6: Bool

    /// From 4 or 16 network-order bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self = bytes.withUnsafeBytes { PacketAddress(reading: $0.baseAddress!, isIPv6: bytes.count == 16) }
    }

    /// From text (`10.77.0.1`, `fd77::1`); nil when it is not an address.
    public init?(_ text: String) {
        guard let ip = IPAddress(text) else { return nil }
        self.init(bytes: ip.bytes)
    }

    init(high: UInt64, low: UInt64, isIPv6: Bool) {
        self.high = high
        self.low = low
        self.isIPv6 = isIPv6
    }

    /// Reads 4 (IPv4) or 16 (IPv6) bytes at `pointer`.
    @inline(__always)
    public init(reading pointer: UnsafeRawPointer, isIPv6: Bool) {
        if isIPv6 {
            high = UInt64(bigEndian: pointer.loadUnaligned(as: UInt64.self))
            low = UInt64(bigEndian: pointer.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        } else {
            high = 0
            low = UInt64(UInt32(bigEndian: pointer.loadUnaligned(as: UInt32.self)))
        }
        self.isIPv6 = isIPv6
    }

    /// Writes the 4 or 16 bytes at `pointer`.
    @inline(__always)
    public func write(to pointer: UnsafeMutableRawPointer) {
        if isIPv6 {
            pointer.storeBytes(of: high.bigEndian, as: UInt64.self)
            pointer.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        } else {
            pointer.storeBytes(of: UInt32(truncatingIfNeeded: low).bigEndian, as: UInt32.self)
        }
    }

    /// 4 or 16.
    public var byteCount: Int { isIPv6 ? 16 : 4 }

    /// The network-order bytes.
    public var bytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: byteCount)
        out.withUnsafeMutableBytes { write(to: $0.baseAddress!) }
        return out
    }

    /// The one's complement sum of the address's 16-bit words (unfolded, at most 8 × 0xffff).
    @inline(__always)
    public var wordSum: UInt32 {
        func words(_ v: UInt64) -> UInt32 {
            UInt32(v >> 48) &+ UInt32((v >> 32) & 0xffff) &+ UInt32((v >> 16) & 0xffff) &+ UInt32(v & 0xffff)
        }
        return isIPv6 ? words(high) &+ words(low) : words(low)
    }

    /// This address plus `n` (wrapping within the family's width): the pool walks addresses this way.
    public func adding(_ n: UInt64) -> PacketAddress {
        if isIPv6 {
            let (low2, carry) = low.addingReportingOverflow(n)
            return PacketAddress(high: high &+ (carry ? 1 : 0), low: low2, isIPv6: true)
        }
        return PacketAddress(high: 0, low: (low &+ n) & 0xffff_ffff, isIPv6: false)
    }

    /// Whether the address lies in `base/prefixLength` (same family).
    public func isIn(_ base: PacketAddress, prefixLength: Int) -> Bool {
        isIPv6 == base.isIPv6 && masked(prefixLength: prefixLength) == base.masked(prefixLength: prefixLength)
    }

    /// The address with every bit past the first `prefixLength` cleared: its network
    /// (`10.77.0.1` masked to 24 is `10.77.0.0`). Lengths outside the family's are clamped.
    public func masked(prefixLength: Int) -> PacketAddress {
        if !isIPv6 {
            let p = min(max(prefixLength, 0), 32)
            let mask: UInt64 = p == 0 ? 0 : (0xffff_ffff << UInt64(32 - p)) & 0xffff_ffff
            return PacketAddress(high: 0, low: low & mask, isIPv6: false)
        }
        let p = min(max(prefixLength, 0), 128)
        let highMask: UInt64 = p >= 64 ? ~0 : (p == 0 ? 0 : ~0 << UInt64(64 - p))
        let lowMask: UInt64 = p <= 64 ? 0 : (p == 128 ? ~0 : ~0 << UInt64(128 - p))
        return PacketAddress(high: high & highMask, low: low & lowMask, isIPv6: true)
    }

    public static func < (a: PacketAddress, b: PacketAddress) -> Bool {
        (a.isIPv6 ? 1 : 0, a.high, a.low) < (b.isIPv6 ? 1 : 0, b.high, b.low)
    }

    /// The canonical text (inet_ntop(3)).
    public var description: String { IPAddress(bytes: bytes)?.description ?? "?" }
}

/// An address and a port: one end of a five-tuple.
public struct PacketEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var address: PacketAddress
    public var port: UInt16

    public init(_ address: PacketAddress, _ port: UInt16) {
        self.address = address
        self.port = port
    }

    /// `10.0.0.1:443`, `[fd00::1]:443`.
    public var description: String { address.isIPv6 ? "[\(address)]:\(port)" : "\(address):\(port)" }
}
