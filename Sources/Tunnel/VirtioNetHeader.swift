/// The `struct virtio_net_hdr` a TUN opened with `IFF_VNET_HDR` puts before every packet it
/// reads and expects before every packet written (Virtual I/O Device (VIRTIO) Version 1.2,
/// §5.1.6 "Device Operation", the legacy layout without `num_buffers` unless the header size is
/// 12; linux/virtio_net.h). Fields are little-endian (the engine sets TUNSETVNETLE).
///
/// Layout (offsets in bytes): 0 `flags`, 1 `gso_type`, 2 `hdr_len`, 4 `gso_size`,
/// 6 `csum_start`, 8 `csum_offset`; with a 12-byte header, 10 `num_buffers` (ignored by a TUN:
/// not written on reads, skipped on writes).
///
/// With `needsChecksum` the packet's TCP/UDP checksum is not finished (the kernel's
/// CHECKSUM_PARTIAL): the field at `csumStart + csumOffset` holds the folded, uncomplemented
/// pseudo-header sum, and whoever finally sends the packet sums from `csumStart` to the end and
/// stores the complement there. With a `gsoType` other than `gsoNone` the packet is larger than
/// one segment and is cut into `gsoSize`-byte segments later.
public struct VirtioNetHeader: Sendable, Equatable {
    /// VIRTIO_NET_HDR_F_NEEDS_CSUM: the checksum is partial (see above).
    public static let flagNeedsChecksum: UInt8 = 1
    /// VIRTIO_NET_HDR_F_DATA_VALID: the kernel already verified the checksum.
    public static let flagDataValid: UInt8 = 2
    /// VIRTIO_NET_HDR_GSO_NONE / TCPV4 / UDP / TCPV6, and the ECN bit.
    public static let gsoNone: UInt8 = 0
    public static let gsoTCPv4: UInt8 = 1
    public static let gsoUDP: UInt8 = 3
    public static let gsoTCPv6: UInt8 = 4
    public static let gsoECN: UInt8 = 0x80
    /// The bytes the fields take (`sizeof(struct virtio_net_hdr)`).
    public static let fieldsSize = 10

    public var flags: UInt8
    public var gsoType: UInt8
    /// Bytes of headers (IP + transport) in front of the payload, for GSO.
    public var headerLength: UInt16
    /// Payload bytes per segment, for GSO.
    public var gsoSize: UInt16
    /// Where checksumming starts, from the first byte of the IP header (a TUN has no link header).
    public var checksumStart: UInt16
    /// Where the checksum field is, from `checksumStart` (16 for TCP, 6 for UDP).
    public var checksumOffset: UInt16

    public init(flags: UInt8 = 0, gsoType: UInt8 = 0, headerLength: UInt16 = 0, gsoSize: UInt16 = 0,
                checksumStart: UInt16 = 0, checksumOffset: UInt16 = 0) {
        self.flags = flags
        self.gsoType = gsoType
        self.headerLength = headerLength
        self.gsoSize = gsoSize
        self.checksumStart = checksumStart
        self.checksumOffset = checksumOffset
    }

    /// All zero: a whole packet with every checksum computed (what crafted packets carry).
    public static let zero = VirtioNetHeader()

    /// The checksum is partial (CHECKSUM_PARTIAL): not yet valid, the kernel vouches for it.
    public var needsChecksum: Bool { flags & Self.flagNeedsChecksum != 0 }
    /// The kernel says the checksum is right (CHECKSUM_UNNECESSARY).
    public var dataValid: Bool { flags & Self.flagDataValid != 0 }
    /// Either: the engine need not verify the checksum itself.
    public var kernelVouchesForChecksum: Bool { flags & (Self.flagNeedsChecksum | Self.flagDataValid) != 0 }
    /// More than one segment's worth (GSO).
    public var isGSO: Bool { gsoType & ~Self.gsoECN != Self.gsoNone }

    /// Reads the first 10 bytes at `base` (little-endian).
    public init(reading base: UnsafeRawPointer) {
        func le16(_ offset: Int) -> UInt16 { UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self)) }
        self.init(flags: base.load(as: UInt8.self), gsoType: base.load(fromByteOffset: 1, as: UInt8.self),
                  headerLength: le16(2), gsoSize: le16(4), checksumStart: le16(6), checksumOffset: le16(8))
    }

    /// Writes the 10 field bytes at `base` (little-endian); bytes after them are left alone.
    public func write(to base: UnsafeMutableRawPointer) {
        base.storeBytes(of: flags, as: UInt8.self)
        base.storeBytes(of: gsoType, toByteOffset: 1, as: UInt8.self)
        base.storeBytes(of: headerLength.littleEndian, toByteOffset: 2, as: UInt16.self)
        base.storeBytes(of: gsoSize.littleEndian, toByteOffset: 4, as: UInt16.self)
        base.storeBytes(of: checksumStart.littleEndian, toByteOffset: 6, as: UInt16.self)
        base.storeBytes(of: checksumOffset.littleEndian, toByteOffset: 8, as: UInt16.self)
    }

    /// The header as `size` bytes (10 or 12; bytes past the fields are zero), for tests and
    /// frames built in arrays.
    public func bytes(size: Int = 12) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: max(size, Self.fieldsSize))
        out.withUnsafeMutableBytes { write(to: $0.baseAddress!) }
        return out
    }

    /// `init(reading:)` over an array of at least 10 bytes (tests).
    public init?(_ bytes: [UInt8]) {
        guard bytes.count >= Self.fieldsSize else { return nil }
        self = bytes.withUnsafeBytes { VirtioNetHeader(reading: $0.baseAddress!) }
    }
}

/// How the engine's TUN was opened: with a virtio-net header before every packet and which
/// offloads (TUNSETOFFLOAD) the kernel took, or plain (`IFF_TUN | IFF_NO_PI`, today's mode).
public struct TUNOffload: Sendable, Equatable {
    /// Bytes of virtio-net header before every packet read and written: 0 (plain) or 12
    /// (`struct virtio_net_hdr` plus the 2-byte `num_buffers`, so the IP header that follows
    /// stays 4-byte aligned).
    public var headerSize: Int
    /// The TUN_F_* bits set (TUN_F_CSUM 0x01, TUN_F_TSO4 0x02, TUN_F_TSO6 0x04); 0 when plain.
    public var offloads: UInt32
    /// Why offload is off when it was asked for (one sentence), or nil.
    public var unavailableReason: String?

    public init(headerSize: Int, offloads: UInt32, unavailableReason: String? = nil) {
        self.headerSize = headerSize
        self.offloads = offloads
        self.unavailableReason = unavailableReason
    }

    /// Plain mode: no header, no offloads.
    public static let off = TUNOffload(headerSize: 0, offloads: 0)
    /// The header size tv asks for.
    public static let requestedHeaderSize = 12
    /// A short description for logs and counters' readers: "virtio-net header 12 B, offloads csum tso4 tso6" or "off (…)".
    public var summary: String {
        guard headerSize > 0 else { return "off" + (unavailableReason.map { " (\($0))" } ?? "") }
        var names: [String] = []
        if offloads & 1 != 0 { names.append("csum") }
        if offloads & 2 != 0 { names.append("tso4") }
        if offloads & 4 != 0 { names.append("tso6") }
        return "virtio-net header \(headerSize) B, offloads " + (names.isEmpty ? "none" : names.joined(separator: " "))
    }
}
