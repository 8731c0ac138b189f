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
    /// The MTU an ICMP "fragmentation needed" (type 3 code 4: the low 16 bits of the second
    /// word, RFC 1191 §4) or ICMPv6 "packet too big" (type 2: the second word, RFC 4443 §3.2)
    /// carries; nil for every other message, or when it was not captured.
    public var mtu: UInt32?
    /// The packet an error message is about, as far as it quotes it (RFC 792: its IP header and
    /// at least 8 bytes more; RFC 4443 §2.4 (c): as much as fits 1,280 bytes); nil for messages
    /// that are not errors, or when too little of it was captured.
    public var quoted: QuotedPacket?

    public init(isV6: Bool, type: UInt8, code: UInt8, checksum: UInt16, mtu: UInt32? = nil, quoted: QuotedPacket? = nil) {
        self.isV6 = isV6
        self.type = type
        self.code = code
        self.checksum = checksum
        self.mtu = mtu
        self.quoted = quoted
    }

    /// The type's name, and the code's where the type has named codes (`ICMPNames`).
    public var name: String { ICMPNames.name(isV6: isV6, type: type, code: code) }

    /// Whether `type` is an error message, which quotes the packet it is about: ICMP destination
    /// unreachable, source quench, redirect, time exceeded, parameter problem (RFC 792); ICMPv6
    /// types below 128 (RFC 4443 §2.1).
    public static func isError(isV6: Bool, type: UInt8) -> Bool {
        isV6 ? type < 128 : [3, 4, 5, 11, 12].contains(type)
    }
}

/// What an ICMP error quotes of the packet it is about: its IP header's addresses, protocol and
/// length, and its ports (and UDP's length) when quoted.
public struct QuotedPacket: Sendable, Equatable {
    public var source: PacketAddress
    public var destination: PacketAddress
    /// IPv4 Protocol; the Next Header an IPv6 walk ended on.
    public var protocolNumber: UInt8
    /// The length its IP header gives the whole packet (IPv4 Total Length; IPv6 40 + Payload
    /// Length), which a router's quote keeps however little of the packet it carries.
    public var length: Int
    /// TCP's or UDP's ports, when the quote reaches them.
    public var sourcePort: UInt16?
    public var destinationPort: UInt16?
    /// UDP's Length field, when the quote reaches it.
    public var udpLength: UInt16?
    /// How many bytes of the packet the error carries (as captured).
    public var bytesQuoted: Int

    public init(source: PacketAddress, destination: PacketAddress, protocolNumber: UInt8, length: Int, sourcePort: UInt16? = nil,
                destinationPort: UInt16? = nil, udpLength: UInt16? = nil, bytesQuoted: Int) {
        self.source = source
        self.destination = destination
        self.protocolNumber = protocolNumber
        self.length = length
        self.sourcePort = sourcePort
        self.destinationPort = destinationPort
        self.udpLength = udpLength
        self.bytesQuoted = bytesQuoted
    }
}
