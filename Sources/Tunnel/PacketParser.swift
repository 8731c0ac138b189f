import Wire

/// Reads the IP header of a packet (RFC 791 §3.1 for IPv4; RFC 8200 §3–4 for IPv6 and its
/// extension headers) and says where the transport header starts, or why the packet is dropped.
///
/// Checks what the tunnel relies on: version, header and total lengths against the bytes read,
/// the IPv4 header checksum. The transport header is read by `TCPHeader` / `UDPHeader`.
public enum PacketParser {
    /// At most this many IPv6 extension headers are walked before the packet is dropped.
    public static let maximumExtensionHeaders = IPDatagramLayout.maximumExtensionHeaders

    /// Parses the packet in `bytes` (exactly what one TUN read returned).
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> Result<IPPacket, PacketDrop> {
        guard let base = bytes.baseAddress, bytes.count >= 1 else { return .failure(.truncated) }
        switch base.load(as: UInt8.self) >> 4 {
        case 4: return parseIPv4(base, count: bytes.count)
        case 6: return parseIPv6(base, count: bytes.count)
        default: return .failure(.badVersion)
        }
    }

    /// `parse` over an array (tests).
    public static func parse(_ bytes: [UInt8]) -> Result<IPPacket, PacketDrop> {
        bytes.withUnsafeBytes { parse($0) }
    }

    @inline(__always)
    static func u16(_ base: UnsafeRawPointer, _ offset: Int) -> UInt16 {
        UInt16(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    private static func parseIPv4(_ base: UnsafeRawPointer, count: Int) -> Result<IPPacket, PacketDrop> {
        guard count >= 20 else { return .failure(.truncated) }
        let ihl = Int(base.load(as: UInt8.self) & 0x0f) * 4
        guard ihl >= 20 else { return .failure(.badLength) }
        guard ihl <= count else { return .failure(.truncated) }
        let total = Int(u16(base, 2))
        guard total >= ihl else { return .failure(.badLength) }
        guard total <= count else { return .failure(.truncated) }
        guard InternetChecksum.finish(InternetChecksum.sum(UnsafeRawBufferPointer(start: base, count: ihl))) == 0 else {
            return .failure(.badChecksum)
        }
        let flagsOffset = u16(base, 6)
        let fragmentOffset = Int(flagsOffset & 0x1fff) * 8
        let more = flagsOffset & 0x2000 != 0
        var packet = IPPacket(version: 4,
                              source: PacketAddress(reading: base + 12, isIPv6: false),
                              destination: PacketAddress(reading: base + 16, isIPv6: false),
                              transportOffset: ihl, length: total,
                              transportProtocol: base.load(fromByteOffset: 9, as: UInt8.self))
        if more || fragmentOffset != 0 {
            packet.fragment = FragmentInfo(identification: UInt32(u16(base, 4)), offset: fragmentOffset,
                                           moreFragments: more, headerOffset: ihl)
        }
        return .success(packet)
    }

    private static func parseIPv6(_ base: UnsafeRawPointer, count: Int) -> Result<IPPacket, PacketDrop> {
        guard count >= 40 else { return .failure(.truncated) }
        let payload = Int(u16(base, 4))
        // Payload Length 0 means a Jumbo Payload option (RFC 2675), which a TUN never carries.
        guard payload > 0 else { return .failure(.badLength) }
        let length = 40 + payload
        guard length <= count else { return .failure(.truncated) }
        var next = base.load(fromByteOffset: 6, as: UInt8.self)
        var offset = 40
        var fragment: FragmentInfo?
        var walked = 0
        walk: while true {
            switch next {
            case IPProtocolNumber.hopByHop, IPProtocolNumber.routing, IPProtocolNumber.destinationOptions:
                guard walked < maximumExtensionHeaders else { return .failure(.badExtensionHeaders) }
                walked += 1
                guard offset + 8 <= length else { return .failure(.badExtensionHeaders) }
                let headerLength = (Int(base.load(fromByteOffset: offset + 1, as: UInt8.self)) + 1) * 8
                next = base.load(fromByteOffset: offset, as: UInt8.self)
                offset += headerLength
                guard offset <= length else { return .failure(.badExtensionHeaders) }
            case IPProtocolNumber.fragment:
                guard fragment == nil else { return .failure(.badExtensionHeaders) }
                guard offset + 8 <= length else { return .failure(.badExtensionHeaders) }
                let field = u16(base, offset + 2)
                fragment = FragmentInfo(identification: UInt32(bigEndian: base.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)),
                                        offset: Int(field >> 3) * 8, moreFragments: field & 1 != 0, headerOffset: offset)
                next = base.load(fromByteOffset: offset, as: UInt8.self)
                offset += 8
                // What follows is fragmentable data: its headers are read after reassembly.
                break walk
            default:
                break walk
            }
        }
        // A Fragment header with offset 0 and M 0 is an "atomic fragment" (RFC 6946): a whole datagram.
        if let f = fragment, f.offset == 0, !f.moreFragments { fragment = nil }
        return .success(IPPacket(version: 6,
                                 source: PacketAddress(reading: base + 8, isIPv6: true),
                                 destination: PacketAddress(reading: base + 24, isIPv6: true),
                                 transportOffset: offset, length: length, transportProtocol: next, fragment: fragment))
    }
}
