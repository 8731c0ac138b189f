import Wire

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
    /// An ICMP (type 3) or ICMPv6 (type 1) destination unreachable.
    public var destinationUnreachable: Bool
    /// An ICMP fragmentation needed (type 3 code 4) or ICMPv6 packet too big (type 2).
    public var pathTooSmall: Bool

    public init(transport: UInt8?, tcpFlags: UInt8?, payloadLength: Int, destinationUnreachable: Bool = false, pathTooSmall: Bool = false) {
        self.transport = transport
        self.tcpFlags = tcpFlags
        self.payloadLength = payloadLength
        self.destinationUnreachable = destinationUnreachable
        self.pathTooSmall = pathTooSmall
    }

    /// What the packet meant (`PacketMeaning.classify`).
    public var meaning: PacketMeaning {
        PacketMeaning.classify(tcpFlags: tcpFlags, payloadLength: payloadLength, destinationUnreachable: destinationUnreachable,
                               pathTooSmall: pathTooSmall)
    }

    /// Reads `bytes` (the captured part of a packet of `originalLength` bytes on the wire; lengths
    /// come from the headers, bounded by `originalLength`, so a snap length cut changes nothing).
    /// The IP layer is `IPDatagramLayout`'s reading (the one `tv packet`'s dissector uses); then
    /// the TCP flag byte and data offset (RFC 9293 §3.1) or UDP's 8-byte header (RFC 768).
    public static func read(_ bytes: UnsafeRawBufferPointer, originalLength: Int) -> PacketSummary {
        guard case .success(let layout) = IPDatagramLayout.read(bytes) else {
            return PacketSummary(transport: nil, tcpFlags: nil, payloadLength: originalLength)
        }
        let proto = layout.transportProtocol
        let offset = layout.transportOffset
        let total = min(layout.end, originalLength)
        guard layout.carriesTransportHeader, !layout.headersCut else {
            return PacketSummary(transport: proto, tcpFlags: nil, payloadLength: max(0, total - offset))
        }
        switch proto {
        case IPProtocolNumber.tcp:
            guard offset + 14 <= bytes.count else { return PacketSummary(transport: proto, tcpFlags: nil, payloadLength: max(0, total - offset)) }
            let dataOffset = Int(bytes[offset + 12] >> 4) * 4
            return PacketSummary(transport: proto, tcpFlags: bytes[offset + 13], payloadLength: max(0, total - offset - dataOffset))
        case IPProtocolNumber.udp:
            return PacketSummary(transport: proto, tcpFlags: nil, payloadLength: max(0, total - offset - 8))
        case IPProtocolNumber.icmp, IPProtocolNumber.icmpv6:
            let v4 = proto == IPProtocolNumber.icmp
            let type = offset < bytes.count ? bytes[offset] : nil
            let unreachable = type == (v4 ? 3 : 1)
            let tooBig = v4 ? unreachable && offset + 1 < bytes.count && bytes[offset + 1] == 4 : type == 2
            return PacketSummary(transport: proto, tcpFlags: nil, payloadLength: max(0, total - offset), destinationUnreachable: unreachable,
                                 pathTooSmall: tooBig)
        default:
            return PacketSummary(transport: proto, tcpFlags: nil, payloadLength: max(0, total - offset))
        }
    }
}
