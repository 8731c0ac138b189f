import Wire

/// Every header field `tv packet` shows of one captured IP packet (LINKTYPE_RAW: the bare IPv4 or
/// IPv6 datagram), read without judging it: a display reads what travelled, so checksums are
/// shown, not verified, and a packet the capture cut short (its snaplen) is read as far as its
/// bytes go, with where they ran out said (`cut`).
///
/// Layers: the IP header (RFC 791 §3.1; RFC 8200 §3, its extension headers §4 and Fragment
/// header §4.5), then TCP (RFC 9293 §3.1 with its options), UDP (RFC 768), ICMP (RFC 792) or
/// ICMPv6 (RFC 4443), and for UDP port 53 the DNS message (RFC 1035 §4.1, `DNSReading`).
public struct PacketDissection: Sendable, Equatable {
    public var ip: IPFields
    /// Nil when the bytes ended before the transport header, or for a non-first fragment (its
    /// bytes are the middle of a datagram, not a header).
    public var transport: TransportFields?
    /// For UDP to or from port 53: the DNS message, or why it cannot be read.
    public var dns: DNSReading?
    /// The layer the captured bytes ran out in, when they did (nil: everything that was read was
    /// there).
    public var cut: Layer?

    /// The layers a packet is read in, in order.
    public enum Layer: String, Sendable, Equatable {
        case ip, transport, payload
    }

    public init(ip: IPFields, transport: TransportFields? = nil, dns: DNSReading? = nil, cut: Layer? = nil) {
        self.ip = ip
        self.transport = transport
        self.dns = dns
        self.cut = cut
    }
}

/// The IP header's fields.
public enum IPFields: Sendable, Equatable {
    case v4(IPv4Fields)
    case v6(IPv6Fields)

    public var source: PacketAddress {
        switch self { case .v4(let f): f.source; case .v6(let f): f.source }
    }
    public var destination: PacketAddress {
        switch self { case .v4(let f): f.destination; case .v6(let f): f.destination }
    }
    /// The transport protocol number (IPv4 Protocol; the last IPv6 Next Header walked).
    public var transportProtocol: UInt8 {
        switch self { case .v4(let f): f.protocolNumber; case .v6(let f): f.transportProtocol }
    }
}

/// RFC 791 §3.1.
public struct IPv4Fields: Sendable, Equatable {
    /// IHL × 4, in bytes.
    public var headerLength: Int
    /// The former TOS byte: DSCP (high 6 bits) and ECN (low 2).
    public var trafficClass: UInt8
    public var totalLength: UInt16
    public var identification: UInt16
    public var dontFragment: Bool
    public var moreFragments: Bool
    /// In bytes (the header's 8-byte units × 8).
    public var fragmentOffset: Int
    public var ttl: UInt8
    public var protocolNumber: UInt8
    public var headerChecksum: UInt16
    public var source: PacketAddress
    public var destination: PacketAddress
}

/// RFC 8200 §3, with the Fragment header (§4.5) when there is one.
public struct IPv6Fields: Sendable, Equatable {
    public var trafficClass: UInt8
    /// 20 bits.
    public var flowLabel: UInt32
    public var payloadLength: UInt16
    /// The fixed header's Next Header (an extension header's number when there are some).
    public var nextHeader: UInt8
    public var hopLimit: UInt8
    public var source: PacketAddress
    public var destination: PacketAddress
    /// The protocol after the extension headers walked (what `nextHeader` leads to).
    public var transportProtocol: UInt8
    /// The extension headers walked, by Next Header number, in order.
    public var extensionHeaders: [UInt8]
    public var fragment: IPv6Fragment?
}

/// The transport header's fields.
public enum TransportFields: Sendable, Equatable {
    case tcp(TCPFields)
    case udp(UDPFields)
    /// ICMP (RFC 792) or ICMPv6 (RFC 4443): `isV6` says which numbering `type` follows.
    case icmp(ICMPFields)
}

/// RFC 9293 §3.1.
public struct TCPFields: Sendable, Equatable {
    public var sourcePort: UInt16
    public var destinationPort: UInt16
    public var sequenceNumber: UInt32
    public var acknowledgmentNumber: UInt32
    /// Data Offset × 4, in bytes.
    public var headerLength: Int
    /// Byte 13: CWR ECE URG ACK PSH RST SYN FIN (the names: `TCPFlags.acronyms`).
    public var flags: UInt8
    public var window: UInt16
    public var checksum: UInt16
    public var urgentPointer: UInt16
    /// The options in order (`TCPOption`); empty when there are none or they were cut.
    public var options: [TCPOption]
    /// Payload bytes according to the IP header (not what was captured).
    public var payloadLength: Int
}

/// RFC 768.
public struct UDPFields: Sendable, Equatable {
    public var sourcePort: UInt16
    public var destinationPort: UInt16
    /// The UDP Length field: header + payload, in bytes.
    public var length: UInt16
    public var checksum: UInt16
}

/// RFC 792 (ICMP) / RFC 4443 (ICMPv6).
public struct ICMPFields: Sendable, Equatable {
    public var isV6: Bool
    public var type: UInt8
    public var code: UInt8
    public var checksum: UInt16
    /// The type's name, and the code's where the type has named codes (`ICMPNames`).
    public var name: String { ICMPNames.name(isV6: isV6, type: type, code: code) }
}
