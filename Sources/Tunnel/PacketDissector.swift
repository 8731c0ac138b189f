import Wire

/// Reads a captured IP packet into a `PacketDissection`, field by field, as far as its bytes go.
///
/// Unlike `PacketParser` (which decides what the tunnel does with a packet and drops what does
/// not verify), this reads for display: nothing is verified, lengths are taken from the headers
/// and compared with the captured bytes only to say where a snaplen cut the packet. Bounded: at
/// most `IPDatagramLayout.maximumExtensionHeaders` IPv6 extension headers, at most 40 option bytes.
/// The IP layer is `IPDatagramLayout`'s reading (Wire), the same one the capture's packet rows use.
public enum PacketDissector {
    /// The port DNS runs on, over UDP and TCP (RFC 1035 §4.2).
    public static let dnsPort: UInt16 = 53

    public static func dissect(_ bytes: [UInt8]) -> Result<PacketDissection, PacketDissectionFailure> {
        IPDatagramLayout.read(bytes).map { layout in
            layout.version == 4 ? dissectIPv4(bytes, layout) : dissectIPv6(bytes, layout)
        }
    }

    static func u16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) << 8 | UInt16(b[i + 1]) }
    static func u32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }
    static func address(_ b: [UInt8], _ i: Int, v6: Bool) -> PacketAddress {
        PacketAddress(bytes: Array(b[i..<(i + (v6 ? 16 : 4))]))!
    }

    /// The IPv4 header's fields; the layout says where the transport header is.
    private static func dissectIPv4(_ b: [UInt8], _ layout: IPDatagramLayout) -> PacketDissection {
        let flags = u16(b, 6)
        let fields = IPv4Fields(headerLength: layout.transportOffset, trafficClass: b[1], totalLength: u16(b, 2), identification: u16(b, 4),
                                dontFragment: flags & 0x4000 != 0, moreFragments: flags & 0x2000 != 0,
                                fragmentOffset: layout.fragmentOffset, ttl: b[8], protocolNumber: b[9],
                                headerChecksum: u16(b, 10), source: address(b, 12, v6: false), destination: address(b, 16, v6: false))
        return dissectTransport(b, layout, PacketDissection(ip: .v4(fields)))
    }

    /// The IPv6 fixed header's fields and the extension headers the layout walked.
    private static func dissectIPv6(_ b: [UInt8], _ layout: IPDatagramLayout) -> PacketDissection {
        let word = u32(b, 0)
        let fields = IPv6Fields(trafficClass: UInt8((word >> 20) & 0xff), flowLabel: word & 0xf_ffff, payloadLength: u16(b, 4),
                                nextHeader: b[6], hopLimit: b[7], source: address(b, 8, v6: true),
                                destination: address(b, 24, v6: true), transportProtocol: layout.transportProtocol,
                                extensionHeaders: layout.extensionHeaders, fragment: layout.fragment)
        return dissectTransport(b, layout, PacketDissection(ip: .v6(fields)))
    }

    /// The transport header after the IP layer, unless the bytes ran out before it or the packet
    /// is a later fragment.
    private static func dissectTransport(_ b: [UInt8], _ layout: IPDatagramLayout, _ dissection: PacketDissection) -> PacketDissection {
        var out = dissection
        guard !layout.headersCut else { out.cut = .ip; return out }
        guard layout.carriesTransportHeader else { return finishCut(out, captured: b.count, end: layout.end) }
        readTransport(b, start: layout.transportOffset, end: max(layout.transportOffset, layout.end),
                      protocolNumber: layout.transportProtocol, isV6: layout.version == 6, into: &out)
        return out
    }

    /// A packet whose bytes after the IP header are not read as a header: cut only in its payload.
    private static func finishCut(_ dissection: PacketDissection, captured: Int, end: Int) -> PacketDissection {
        var out = dissection
        if captured < end { out.cut = .payload }
        return out
    }

    /// The quoted packet of an ICMP error (`quote`: the bytes after its 8-byte header), nil when
    /// it is not an IP packet of the error's family or too short for its IP header.
    static func quotedPacket(_ quote: [UInt8], isV6: Bool) -> QuotedPacket? {
        guard case .success(let layout) = IPDatagramLayout.read(quote), layout.version == (isV6 ? 6 : 4), !layout.headersCut else { return nil }
        let v6 = layout.version == 6
        var out = QuotedPacket(source: address(quote, v6 ? 8 : 12, v6: v6), destination: address(quote, v6 ? 24 : 16, v6: v6),
                               protocolNumber: layout.transportProtocol, length: v6 ? 40 + Int(u16(quote, 4)) : Int(u16(quote, 2)),
                               bytesQuoted: quote.count)
        let t = layout.transportOffset
        guard layout.carriesTransportHeader,
              layout.transportProtocol == IPProtocolNumber.tcp || layout.transportProtocol == IPProtocolNumber.udp else { return out }
        if t + 4 <= quote.count {
            out.sourcePort = u16(quote, t)
            out.destinationPort = u16(quote, t + 2)
        }
        if layout.transportProtocol == IPProtocolNumber.udp, t + 6 <= quote.count { out.udpLength = u16(quote, t + 4) }
        return out
    }

    private static func readTransport(_ b: [UInt8], start: Int, end: Int, protocolNumber: UInt8, isV6: Bool,
                                      into out: inout PacketDissection) {
        let available = min(b.count, end) - start
        switch protocolNumber {
        case IPProtocolNumber.tcp:
            guard available >= 20 else { out.cut = .transport; return }
            let headerLength = Int(b[start + 12] >> 4) * 4
            let declaredEnd = min(start + max(headerLength, 20), end)
            let optionsEnd = min(declaredEnd, b.count)
            let options = TCPOptionReader.read(Array(b[min(start + 20, optionsEnd)..<optionsEnd]), truncated: optionsEnd < declaredEnd)
            out.transport = .tcp(TCPFields(sourcePort: u16(b, start), destinationPort: u16(b, start + 2),
                                           sequenceNumber: u32(b, start + 4), acknowledgmentNumber: u32(b, start + 8),
                                           headerLength: headerLength, flags: b[start + 13], window: u16(b, start + 14),
                                           checksum: u16(b, start + 16), urgentPointer: u16(b, start + 18), options: options,
                                           payloadLength: max(0, end - start - max(headerLength, 20))))
            if start + headerLength > b.count { out.cut = .transport } else if b.count < end { out.cut = .payload }
            let payloadStart = start + max(headerLength, 20)
            if payloadStart < end, u16(b, start) == dnsPort || u16(b, start + 2) == dnsPort {
                out.dns = b.count < end ? .captureKeptTooLittle : DNSReading.read(tcpPayload: Array(b[payloadStart..<end]))
            }
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
            var icmp = ICMPFields(isV6: isV6, type: b[start], code: b[start + 1], checksum: u16(b, start + 2))
            if available >= 8 {
                switch (isV6, icmp.type, icmp.code) {
                case (false, 3, 4): icmp.mtu = UInt32(u16(b, start + 6))
                case (true, 2, _): icmp.mtu = u32(b, start + 4)
                default: break
                }
            }
            if ICMPFields.isError(isV6: isV6, type: icmp.type), available > 8 {
                icmp.quoted = quotedPacket(Array(b[(start + 8)..<(start + available)]), isV6: isV6)
            }
            out.transport = .icmp(icmp)
            if b.count < end { out.cut = .payload }
        default:
            if b.count < end { out.cut = .payload }
        }
    }
}
