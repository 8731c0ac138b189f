/// What the parser learnt about one IP packet read from the TUN: offsets into the packet's bytes
/// and the few header fields the tunnel decides on. A value; the bytes stay where they were read.
public struct IPPacket: Sendable, Equatable {
    /// 4 or 6.
    public var version: UInt8
    public var source: PacketAddress
    public var destination: PacketAddress
    /// Where the transport header starts: after the IPv4 header (IHL × 4) or after the IPv6
    /// header and its extension headers (RFC 8200 §4), the Fragment header included.
    public var transportOffset: Int
    /// The packet's length according to its header (IPv4 Total Length; 40 + IPv6 Payload
    /// Length); at most the bytes read. Bytes beyond it (padding) are ignored.
    public var length: Int
    /// The transport protocol: IPv4 Protocol or the last IPv6 Next Header (6 TCP, 17 UDP,
    /// 1 ICMP, 58 ICMPv6 …). For a fragment it is the protocol of the whole datagram.
    public var transportProtocol: UInt8
    /// Set when the packet is a fragment rather than a whole datagram.
    public var fragment: FragmentInfo?

    /// Bytes from the transport header to the end of the packet.
    public var transportLength: Int { length - transportOffset }
    public var isIPv6: Bool { version == 6 }

    public init(version: UInt8, source: PacketAddress, destination: PacketAddress, transportOffset: Int,
                length: Int, transportProtocol: UInt8, fragment: FragmentInfo? = nil) {
        self.version = version
        self.source = source
        self.destination = destination
        self.transportOffset = transportOffset
        self.length = length
        self.transportProtocol = transportProtocol
        self.fragment = fragment
    }
}

/// The fragmentation fields of a fragment (RFC 791 §3.1; RFC 8200 §4.5).
public struct FragmentInfo: Sendable, Equatable {
    /// IPv4 Identification (16 bits) or IPv6 Fragment header Identification (32 bits).
    public var identification: UInt32
    /// Where this fragment's data sits in the datagram's payload, in bytes (the header's 8-byte
    /// units × 8).
    public var offset: Int
    /// The MF / M flag: more fragments follow.
    public var moreFragments: Bool
    /// IPv6 only: where the Fragment header starts (the unfragmentable part ends there); for
    /// IPv4 the IHL.
    public var headerOffset: Int

    public init(identification: UInt32, offset: Int, moreFragments: Bool, headerOffset: Int) {
        self.identification = identification
        self.offset = offset
        self.moreFragments = moreFragments
        self.headerOffset = headerOffset
    }
}
