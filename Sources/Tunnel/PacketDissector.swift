/// Reads a captured IP packet into a `PacketDissection`, field by field, as far as its bytes go.
///
/// Unlike `PacketParser` (which decides what the tunnel does with a packet and drops what does
/// not verify), this reads for display: nothing is verified, lengths are taken from the headers
/// and compared with the captured bytes only to say where a snaplen cut the packet. Bounded: at
/// most `PacketParser.maximumExtensionHeaders` IPv6 extension headers, at most 40 option bytes.
public enum PacketDissector {
    /// The UDP port DNS runs on (RFC 1035 §4.2.1).
    public static let dnsPort: UInt16 = 53

    public static func dissect(_ bytes: [UInt8]) -> Result<PacketDissection, PacketDissectionFailure> {
        let b = bytes
        guard let first = b.first else { return .failure(.tooShortForIP(count: 0)) }
        switch first >> 4 {
        case 4: return dissectIPv4(b)
        case 6: return dissectIPv6(b)
        default: return .failure(.notIP(version: first >> 4))
        }
    }

    static func u16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) << 8 | UInt16(b[i + 1]) }
    static func u32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }
    static func address(_ b: [UInt8], _ i: Int, v6: Bool) -> PacketAddress {
        PacketAddress(bytes: Array(b[i..<(i + (v6 ? 16 : 4))]))!
    }

    private static func dissectIPv4(_ b: [UInt8]) -> Result<PacketDissection, PacketDissectionFailure> {
        guard b.count >= 20 else { return .failure(.tooShortForIP(count: b.count)) }
        let ihl = Int(b[0] & 0x0f) * 4
        guard ihl >= 20 else { return .failure(.badHeaderLength(ihl)) }
        let flags = u16(b, 6)
        let fields = IPv4Fields(headerLength: ihl, trafficClass: b[1], totalLength: u16(b, 2), identification: u16(b, 4),
                                dontFragment: flags & 0x4000 != 0, moreFragments: flags & 0x2000 != 0,
                                fragmentOffset: Int(flags & 0x1fff) * 8, ttl: b[8], protocolNumber: b[9],
                                headerChecksum: u16(b, 10), source: address(b, 12, v6: false), destination: address(b, 16, v6: false))
        var out = PacketDissection(ip: .v4(fields))
        guard ihl <= b.count else { out.cut = .ip; return .success(out) }
        // The end of the datagram by its header (padding after it is not the packet's).
        let end = max(ihl, Int(fields.totalLength))
        if fields.fragmentOffset != 0 { return .success(finishCut(out, captured: b.count, end: end)) }
        readTransport(b, start: ihl, end: end, protocolNumber: fields.protocolNumber, isV6: false, into: &out)
        return .success(out)
    }

    private static func dissectIPv6(_ b: [UInt8]) -> Result<PacketDissection, PacketDissectionFailure> {
        guard b.count >= 40 else { return .failure(.tooShortForIP(count: b.count)) }
        let word = u32(b, 0)
        var fields = IPv6Fields(trafficClass: UInt8((word >> 20) & 0xff), flowLabel: word & 0xf_ffff, payloadLength: u16(b, 4),
                                nextHeader: b[6], hopLimit: b[7], source: address(b, 8, v6: true),
                                destination: address(b, 24, v6: true), transportProtocol: b[6], extensionHeaders: [], fragment: nil)
        let end = 40 + Int(fields.payloadLength)
        var next = b[6]
        var offset = 40
        var cut = false
        walk: while fields.extensionHeaders.count < PacketParser.maximumExtensionHeaders {
            switch next {
            case IPProtocolNumber.hopByHop, IPProtocolNumber.routing, IPProtocolNumber.destinationOptions:
                guard offset + 2 <= b.count else { cut = true; break walk }
                fields.extensionHeaders.append(next)
                next = b[offset]
                offset += (Int(b[offset + 1]) + 1) * 8
            case IPProtocolNumber.fragment:
                guard offset + 8 <= b.count else { cut = true; break walk }
                fields.extensionHeaders.append(next)
                let field = u16(b, offset + 2)
                fields.fragment = IPv6Fragment(identification: u32(b, offset + 4), offset: Int(field >> 3) * 8,
                                               moreFragments: field & 1 != 0)
                next = b[offset]
                offset += 8
            default:
                break walk
            }
        }
        fields.transportProtocol = next
        var out = PacketDissection(ip: .v6(fields))
        if cut || offset > b.count { out.cut = .ip; return .success(out) }
        if let fragment = fields.fragment, fragment.offset != 0 { return .success(finishCut(out, captured: b.count, end: end)) }
        readTransport(b, start: offset, end: max(offset, end), protocolNumber: next, isV6: true, into: &out)
        return .success(out)
    }

    /// A packet whose bytes after the IP header are not read as a header: cut only in its payload.
    private static func finishCut(_ dissection: PacketDissection, captured: Int, end: Int) -> PacketDissection {
        var out = dissection
        if captured < end { out.cut = .payload }
        return out
    }

    private static func readTransport(_ b: [UInt8], start: Int, end: Int, protocolNumber: UInt8, isV6: Bool,
                                      into out: inout PacketDissection) {
        let available = min(b.count, end) - start
        switch protocolNumber {
        case IPProtocolNumber.tcp:
            guard available >= 20 else { out.cut = .transport; return }
            let headerLength = Int(b[start + 12] >> 4) * 4
            let optionsEnd = min(start + max(headerLength, 20), min(b.count, end))
            let options = TCPOptionReader.read(Array(b[min(start + 20, optionsEnd)..<optionsEnd]))
            out.transport = .tcp(TCPFields(sourcePort: u16(b, start), destinationPort: u16(b, start + 2),
                                           sequenceNumber: u32(b, start + 4), acknowledgmentNumber: u32(b, start + 8),
                                           headerLength: headerLength, flags: b[start + 13], window: u16(b, start + 14),
                                           checksum: u16(b, start + 16), urgentPointer: u16(b, start + 18), options: options,
                                           payloadLength: max(0, end - start - max(headerLength, 20))))
            if start + headerLength > b.count { out.cut = .transport } else if b.count < end { out.cut = .payload }
        case IPProtocolNumber.udp:
            guard available >= 8 else { out.cut = .transport; return }
            let udp = UDPFields(sourcePort: u16(b, start), destinationPort: u16(b, start + 2), length: u16(b, start + 4),
                                checksum: u16(b, start + 6))
            out.transport = .udp(udp)
            let payloadEnd = min(end, start + max(8, Int(udp.length)))
            if b.count < payloadEnd { out.cut = .payload }
            if udp.sourcePort == dnsPort || udp.destinationPort == dnsPort {
                out.dns = b.count < payloadEnd ? .captureKeptTooLittle
                                               : DNSReading.read(Array(b[(start + 8)..<payloadEnd]))
            }
        case IPProtocolNumber.icmp where !isV6, IPProtocolNumber.icmpv6 where isV6:
            guard available >= 4 else { out.cut = .transport; return }
            out.transport = .icmp(ICMPFields(isV6: isV6, type: b[start], code: b[start + 1], checksum: u16(b, start + 2)))
            if b.count < end { out.cut = .payload }
        default:
            if b.count < end { out.cut = .payload }
        }
    }
}
