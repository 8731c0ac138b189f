import Wire
import Testing
@testable import Tunnel

@Suite("PacketParser, TCPHeader, UDPHeader on captured packets and malformed ones")
struct PacketParserTests {
    @Test("curl's IPv4 SYN: addresses, ports, sequence number, options length, as tcpdump read them")
    func ipv4SYN() throws {
        let syn = CapturedPackets.first("Flags [S],", "10.203.9.1", ".8080")
        let p = try #require(parse(syn.bytes))
        #expect(p.version == 4 && p.transportOffset == 20 && p.length == 60 && p.fragment == nil)
        #expect(p.source.description == "10.203.9.1" && p.destination.description == "10.203.9.2")
        guard case .success(let t) = tcp(syn.bytes) else { Issue.record("no TCP"); return }
        #expect(syn.summary.contains("\(p.source).\(t.sourcePort) > \(p.destination).\(t.destinationPort):"))
        #expect(syn.summary.contains("seq \(t.sequenceNumber),"))
        #expect(t.isConnectionRequest && !t.isACK && t.headerLength == 40 && t.payloadLength == 0 && t.segmentLength == 1)
    }

    @Test("IPv6 TCP request: payload length from the header, flags, ports")
    func ipv6Data() throws {
        let push = CapturedPackets.first("IP6", "Flags [P.]", "fd03::1.")
        let p = try #require(parse(push.bytes))
        #expect(p.version == 6 && p.transportOffset == 40 && p.length == 40 + 120)
        #expect(p.source.description == "fd03::1" && p.destination.description == "fd03::2")
        guard case .success(let t) = tcp(push.bytes) else { Issue.record("no TCP"); return }
        #expect(t.destinationPort == 8081 && t.payloadLength == 88 && t.isACK && t.flags & TCPFlags.psh != 0)
    }

    @Test("UDP over IPv4 and IPv6: the 100-byte datagram's payload is the pattern sent")
    func udpDatagrams() throws {
        for family in ["IP (", "IP6 ("] {
            let d = CapturedPackets.every(family, "7007:", "(100)").first!
            let p = try #require(parse(d.bytes))
            guard case .success(let u) = udp(d.bytes) else { Issue.record("no UDP"); return }
            #expect(u.destinationPort == 7007 && u.payloadLength == 100)
            #expect(Array(d.bytes[u.payloadOffset..<(u.payloadOffset + 100)]) == capturePattern(100))
            #expect(p.fragment == nil)
        }
    }

    @Test("fragments: IPv4 offsets 0/1480/2960 and MF; IPv6 Fragment header id, offsets 0/1448/2896")
    func fragments() throws {
        let v4 = CapturedPackets.every("IP (", "proto UDP", "length 1500").prefix(2) + CapturedPackets.every("IP (", "offset 2960").prefix(1)
        let info4 = v4.compactMap { parse($0.bytes)?.fragment }
        #expect(info4.map(\.offset) == [0, 1480, 2960])
        #expect(info4.map(\.moreFragments) == [true, true, false])
        #expect(Set(info4.map(\.identification)).count == 1)
        let v6 = CapturedPackets.every("IP6", "frag (").prefix(3)
        let parsed6 = v6.compactMap { parse($0.bytes) }
        #expect(parsed6.map { $0.fragment!.offset } == [0, 1448, 2896])
        #expect(parsed6.allSatisfy { $0.transportProtocol == IPProtocolNumber.udp && $0.transportOffset == 48 })
        let id = parsed6[0].fragment!.identification
        #expect(v6.first!.summary.contains("frag (0x" + String(id, radix: 16).leftPadded(8) + ":0|1448)"))
    }

    @Test("ICMP, ICMPv6 and MLD behind a hop-by-hop header are recognised (and will be dropped)")
    func icmp() throws {
        #expect(parse(CapturedPackets.first("ICMP echo request").bytes)?.transportProtocol == IPProtocolNumber.icmp)
        #expect(parse(CapturedPackets.first("ICMP6, echo request").bytes)?.transportProtocol == IPProtocolNumber.icmpv6)
        let mld = try #require(parse(CapturedPackets.first("multicast listener report").bytes))
        #expect(mld.transportProtocol == IPProtocolNumber.icmpv6 && mld.transportOffset == 48)
    }

    @Test("every truncation of every captured packet is refused or parsed, never a crash")
    func truncations() {
        for packet in CapturedPackets.all {
            for cut in 0..<packet.bytes.count {
                let prefix = Array(packet.bytes[0..<cut])
                if case .success(let p) = PacketParser.parse(prefix) {
                    #expect(p.length <= cut)
                    if p.transportProtocol == 6 { _ = prefix.withUnsafeBytes { TCPHeader.parse($0, p) } }
                    if p.transportProtocol == 17 { _ = prefix.withUnsafeBytes { UDPHeader.parse($0, p) } }
                }
            }
        }
    }

    @Test("malformed: bad version, short header, IHL and total length lies, bad checksums, data offset past the end")
    func malformed() {
        let syn = CapturedPackets.first("Flags [S],", "10.203.9.1").bytes
        func drop(_ bytes: [UInt8]) -> PacketDrop? {
            switch PacketParser.parse(bytes) {
            case .failure(let d): return d
            case .success(let p):
                if p.transportProtocol == 6, case .failure(let d) = bytes.withUnsafeBytes({ TCPHeader.parse($0, p) }) { return d }
                if p.transportProtocol == 17, case .failure(let d) = bytes.withUnsafeBytes({ UDPHeader.parse($0, p) }) { return d }
                return nil
            }
        }
        var b = syn; b[0] = 0x55
        #expect(drop(b) == .badVersion)
        #expect(drop(Array(syn[0..<19])) == .truncated)
        b = syn; b[0] = 0x44
        #expect(drop(b) == .badLength)                    // IHL 16 bytes
        b = syn; b[3] = 61
        #expect(drop(b) == .truncated)                    // total length past the bytes
        b = syn; b[8] = 63
        #expect(drop(b) == .badChecksum)                  // TTL changed, header checksum not
        b = syn; b[40] ^= 0xff
        #expect(drop(b) == .badChecksum)                  // an option byte changed
        b = syn; b[32] = 0xf0
        #expect(drop(b) == .badLength)                    // data offset 60 > 40
        let udpPacket = CapturedPackets.every("IP (", "7007:", "(100)").first!.bytes
        b = udpPacket; b[25] = 200
        #expect(drop(b) == .badLength)                    // UDP length past the IP payload
        b = udpPacket; b[60] ^= 1
        #expect(drop(b) == .badChecksum)
        let v6 = CapturedPackets.every("IP6", "7007:", "(100)").first!.bytes
        b = v6; b[46] = 0; b[47] = 0
        #expect(drop(b) == .badChecksum)                  // IPv6 UDP checksum 0 is not allowed
        b = v6; b[4] = 0; b[5] = 0
        #expect(drop(b) == .badLength)                    // payload length 0 (jumbo) refused
    }

    @Test("an IPv6 chain of nine hop-by-hop headers is refused")
    func longChain() {
        var b = [UInt8](repeating: 0, count: 40 + 9 * 8)
        b[0] = 0x60
        b[5] = UInt8(9 * 8)
        b[6] = 0   // hop-by-hop, and each points at another
        for i in 0..<9 { b[40 + i * 8] = 0; b[41 + i * 8] = 0 }
        #expect(PacketParser.parse(b) == .failure(.badExtensionHeaders))
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}

@Suite("The kernel's own ICMPv6 told from a program's")
struct ICMPv6LinkControlTests {
    @Test("MLD (130–132, 143), router and neighbour discovery (133–137), inverse ND (141–142), multicast router discovery (151–153) are link control; echo, errors and the rest are not")
    func types() {
        let link: [UInt8] = [130, 131, 132, 133, 134, 135, 136, 137, 141, 142, 143, 151, 152, 153]
        for type in 0...255 {
            #expect(ICMPv6LinkControl.isLinkControl(type: UInt8(type)) == link.contains(UInt8(type)), "type \(type)")
        }
    }

    @Test("tcpdump's captured MLDv2 report (behind a hop-by-hop header) reads as link control; its echo request does not")
    func captured() throws {
        for (name, expected) in [("multicast listener report v2", true), ("echo request, id 9478", false)] {
            let bytes = try #require(CapturedPackets.all.first { $0.summary.contains(name) }?.bytes, "\(name)")
            let packet = try #require(parse(bytes))
            #expect(packet.transportProtocol == IPProtocolNumber.icmpv6)
            #expect(ICMPv6LinkControl.isLinkControl(type: bytes[packet.transportOffset]) == expected, "\(name)")
        }
    }
}
