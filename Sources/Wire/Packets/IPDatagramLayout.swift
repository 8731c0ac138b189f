/// Where the layers of one captured IP packet lie (LINKTYPE_RAW: the bare IPv4 or IPv6 datagram),
/// read for display without judging it: the one reading of the IP layer behind the capture's
/// packet rows (`PacketSummary`) and `tv packet`'s header grid (`PacketDissector`).
///
/// Checksums are not verified and a packet a snap length cut short is read as far as its bytes
/// go (`headersCut` says the IP headers themselves ran out). Lengths come from the headers.
/// Bounded: at most `maximumExtensionHeaders` IPv6 extension headers are walked, and the walk
/// stops at a Fragment header of a fragment other than the first (what follows it is the middle
/// of a datagram). Allocates nothing unless the packet has IPv6 extension headers.
///
/// IPv4: RFC 791 §3.1 (IHL, total length, protocol, fragment offset); IPv6: RFC 8200 §3, its
/// extension headers §4 (hop-by-hop, routing, destination options) and the Fragment header §4.5.
public struct IPDatagramLayout: Sendable, Equatable {
    /// IPv6 extension headers walked at most (the tunnel's parser drops a packet with more).
    public static let maximumExtensionHeaders = 8

    /// 4 or 6.
    public var version: UInt8
    /// Where the transport header starts: IPv4 IHL × 4; IPv6 40 plus the extension headers walked.
    public var transportOffset: Int
    /// The transport protocol number: IPv4 Protocol; the Next Header the IPv6 walk ended on.
    public var transportProtocol: UInt8
    /// The end of the datagram by its header, in bytes from its start: IPv4 max(IHL × 4, total
    /// length); IPv6 40 + payload length. Bytes captured past it are not the packet's.
    public var end: Int
    /// IPv6: the extension headers walked, by Next Header number, in order (empty for IPv4).
    public var extensionHeaders: [UInt8] = []
    /// IPv6: the Fragment header, when one was walked.
    public var fragment: IPv6Fragment?
    /// The fragment's offset in bytes (IPv4 header or IPv6 Fragment header; 0 for a whole
    /// datagram or a first fragment).
    public var fragmentOffset: Int = 0
    /// The captured bytes ended inside the IP header or its extension headers.
    public var headersCut = false

    public init(version: UInt8, transportOffset: Int, transportProtocol: UInt8, end: Int, extensionHeaders: [UInt8] = [],
                fragment: IPv6Fragment? = nil, fragmentOffset: Int = 0, headersCut: Bool = false) {
        self.version = version
        self.transportOffset = transportOffset
        self.transportProtocol = transportProtocol
        self.end = end
        self.extensionHeaders = extensionHeaders
        self.fragment = fragment
        self.fragmentOffset = fragmentOffset
        self.headersCut = headersCut
    }

    /// Whether a transport header follows `transportOffset`: not for a fragment other than the
    /// first, whose bytes are the middle of a datagram.
    public var carriesTransportHeader: Bool { fragmentOffset == 0 }

    /// Reads the IP layer of `bytes` (what was captured of the packet).
    /// - Returns: `.tooShortForIP` below 20 (IPv4) or 40 (IPv6) bytes, `.notIP` for another
    ///   version nibble, `.badHeaderLength` for an IPv4 IHL below 5 words.
    public static func read(_ bytes: UnsafeRawBufferPointer) -> Result<IPDatagramLayout, PacketDissectionFailure> {
        guard bytes.count >= 1 else { return .failure(.tooShortForIP(count: 0)) }
        switch bytes[0] >> 4 {
        case 4: return readIPv4(bytes)
        case 6: return readIPv6(bytes)
        default: return .failure(.notIP(version: bytes[0] >> 4))
        }
    }

    /// `read` over an array.
    public static func read(_ bytes: [UInt8]) -> Result<IPDatagramLayout, PacketDissectionFailure> {
        bytes.withUnsafeBytes { read($0) }
    }

    @inline(__always)
    static func u16(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt16 { UInt16(b[i]) << 8 | UInt16(b[i + 1]) }

    private static func readIPv4(_ b: UnsafeRawBufferPointer) -> Result<IPDatagramLayout, PacketDissectionFailure> {
        guard b.count >= 20 else { return .failure(.tooShortForIP(count: b.count)) }
        let ihl = Int(b[0] & 0x0f) * 4
        guard ihl >= 20 else { return .failure(.badHeaderLength(ihl)) }
        return .success(IPDatagramLayout(version: 4, transportOffset: ihl, transportProtocol: b[9],
                                         end: max(ihl, Int(u16(b, 2))), fragmentOffset: Int(u16(b, 6) & 0x1fff) * 8,
                                         headersCut: ihl > b.count))
    }

    private static func readIPv6(_ b: UnsafeRawBufferPointer) -> Result<IPDatagramLayout, PacketDissectionFailure> {
        guard b.count >= 40 else { return .failure(.tooShortForIP(count: b.count)) }
        var layout = IPDatagramLayout(version: 6, transportOffset: 40, transportProtocol: b[6], end: 40 + Int(u16(b, 4)))
        var offset = 40
        walk: while layout.extensionHeaders.count < maximumExtensionHeaders {
            let next = layout.transportProtocol
            switch next {
            case IPProtocolNumber.hopByHop, IPProtocolNumber.routing, IPProtocolNumber.destinationOptions:
                guard offset + 2 <= b.count else { layout.headersCut = true; break walk }
                layout.extensionHeaders.append(next)
                layout.transportProtocol = b[offset]
                offset += (Int(b[offset + 1]) + 1) * 8
            case IPProtocolNumber.fragment:
                guard offset + 8 <= b.count else { layout.headersCut = true; break walk }
                layout.extensionHeaders.append(next)
                let field = u16(b, offset + 2)
                let identification = UInt32(u16(b, offset + 4)) << 16 | UInt32(u16(b, offset + 6))
                let fragment = IPv6Fragment(identification: identification, offset: Int(field >> 3) * 8, moreFragments: field & 1 != 0)
                layout.fragment = fragment
                layout.fragmentOffset = fragment.offset
                layout.transportProtocol = b[offset]
                offset += 8
                if fragment.offset != 0 { break walk }
            default:
                break walk
            }
        }
        layout.transportOffset = offset
        if offset > b.count { layout.headersCut = true }
        return .success(layout)
    }
}

/// The IPv6 Fragment header (RFC 8200 §4.5).
public struct IPv6Fragment: Sendable, Equatable {
    public var identification: UInt32
    /// In bytes (the header's 8-byte units × 8).
    public var offset: Int
    public var moreFragments: Bool

    public init(identification: UInt32, offset: Int, moreFragments: Bool) {
        self.identification = identification
        self.offset = offset
        self.moreFragments = moreFragments
    }
}

/// Why captured bytes are not an IP packet that can be read at all.
public enum PacketDissectionFailure: Error, Sendable, Equatable {
    /// Fewer bytes than the smallest IP header (20 IPv4, 40 IPv6): the capture kept too little.
    case tooShortForIP(count: Int)
    /// The version nibble is neither 4 nor 6 (RFC 791 §3.1, RFC 8200 §3): not an IP packet.
    case notIP(version: UInt8)
    /// The IPv4 IHL is below 5 words (RFC 791 §3.1): not a valid header.
    case badHeaderLength(Int)
}
