/// The few facts a packet row needs from a raw IP packet (LINKTYPE_RAW): whether it is TCP, its
/// flags, and how many payload bytes follow the transport header. Bounded: reads only inside
/// `bytes`, never past a length the packet claims; anything it cannot read is "not TCP, whole
/// packet is payload", which classifies as data.
public struct PacketSummary: Sendable, Equatable {
    /// IP protocol number of the transport (6 TCP, 17 UDP, …); nil when the IP header is unreadable.
    public var transport: UInt8?
    /// The TCP flag byte (RFC 9293 §3.1), nil when not TCP or cut before it.
    public var tcpFlags: UInt8?
    /// Bytes after the transport header (TCP: after its data offset; UDP: after 8 bytes).
    public var payloadLength: Int

    public init(transport: UInt8?, tcpFlags: UInt8?, payloadLength: Int) {
        self.transport = transport
        self.tcpFlags = tcpFlags
        self.payloadLength = payloadLength
    }

    /// What the packet meant (`PacketMeaning.classify`).
    public var meaning: PacketMeaning { PacketMeaning.classify(tcpFlags: tcpFlags, payloadLength: payloadLength) }

    /// Reads `bytes` (the captured part of a packet of `originalLength` bytes on the wire; lengths
    /// come from `originalLength`, so a snap length cut changes nothing).
    /// IPv4: RFC 791 §3.1 (IHL, total length, protocol); IPv6: RFC 8200 §3-§4 (payload length,
    /// next header through hop-by-hop, routing, fragment and destination options headers).
    public static func read(_ bytes: UnsafeRawBufferPointer, originalLength: Int) -> PacketSummary {
        guard bytes.count >= 1 else { return PacketSummary(transport: nil, tcpFlags: nil, payloadLength: originalLength) }
        var offset: Int
        var proto: UInt8
        var total = originalLength
        switch bytes[0] >> 4 {
        case 4:
            guard bytes.count >= 20 else { return PacketSummary(transport: nil, tcpFlags: nil, payloadLength: originalLength) }
            offset = Int(bytes[0] & 0x0F) * 4
            proto = bytes[9]
            let claimed = Int(bytes[2]) << 8 | Int(bytes[3])
            if claimed >= offset && claimed <= originalLength { total = claimed }
            // A fragment other than the first carries no transport header.
            let fragmentOffset = (Int(bytes[6]) << 8 | Int(bytes[7])) & 0x1FFF
            if fragmentOffset != 0 { return PacketSummary(transport: proto, tcpFlags: nil, payloadLength: max(0, total - offset)) }
        case 6:
            guard bytes.count >= 40 else { return PacketSummary(transport: nil, tcpFlags: nil, payloadLength: originalLength) }
            offset = 40
            proto = bytes[6]
            let claimed = 40 + (Int(bytes[4]) << 8 | Int(bytes[5]))
            if claimed <= originalLength { total = claimed }
            var hops = 0
            while [0, 43, 44, 60].contains(proto), hops < 8, offset + 8 <= bytes.count {
                let next = bytes[offset]
                let length = proto == 44 ? 8 : (Int(bytes[offset + 1]) + 1) * 8
                if proto == 44 && (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])) & 0xFFF8 != 0 {
                    return PacketSummary(transport: next, tcpFlags: nil, payloadLength: max(0, total - offset - 8))
                }
                proto = next
                offset += length
                hops += 1
            }
        default:
            return PacketSummary(transport: nil, tcpFlags: nil, payloadLength: originalLength)
        }
        switch proto {
        case 6:
            guard offset + 14 <= bytes.count else { return PacketSummary(transport: proto, tcpFlags: nil, payloadLength: max(0, total - offset)) }
            let dataOffset = Int(bytes[offset + 12] >> 4) * 4
            return PacketSummary(transport: proto, tcpFlags: bytes[offset + 13], payloadLength: max(0, total - offset - dataOffset))
        case 17:
            return PacketSummary(transport: proto, tcpFlags: nil, payloadLength: max(0, total - offset - 8))
        default:
            return PacketSummary(transport: proto, tcpFlags: nil, payloadLength: max(0, total - offset))
        }
    }
}
