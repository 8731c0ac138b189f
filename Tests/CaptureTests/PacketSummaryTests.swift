import Capture
import Testing

/// Real packets captured with tcpdump (Tests/TunnelTests/CapturedPackets.swift, from
/// Scripts/fixtures/capture_tunnel_packets.sh); the expected values are tcpdump's own reading,
/// quoted beside each.
@Suite("A packet's flags and payload, read for its row")
struct PacketSummaryTests {
    static func hex(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            out.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    static func summary(_ hexText: String, cutTo snap: Int? = nil) -> PacketSummary {
        let bytes = hex(hexText)
        let kept = snap.map { Array(bytes.prefix($0)) } ?? bytes
        return kept.withUnsafeBytes { PacketSummary.read($0, originalLength: bytes.count) }
    }

    @Test("IPv4 TCP: Flags [S] length 0, [S.], [P.] length 89, [.] length 0, [F.], [R.]")
    func ipv4TCP() {
        // Flags [S], length 0
        #expect(Self.summary("4500003ccfc04000400643630acb09010acb0902e9fe1f90a143fc4900000000a002faf0c90a0000020405b40402080aa1b0139c000000000103030a")
            == PacketSummary(transport: 6, tcpFlags: 0x02, payloadLength: 0))
        // Flags [S.]
        #expect(Self.summary("4500003c00004000400613240acb09020acb09011f90e9fe31af8c50a143fc4aa012fe8888770000020405b40402080a23215bc9a1b0139c0103030a").meaning == .accepted)
        // Flags [P.], length 89
        let data = Self.summary("4500008dcfc24000400643100acb09010acb0902e9fe1f90a143fc4a31af8c518018003f14b400000101080aa1b0139d23215bc947455420"
            + "2f696e6465782e68746d6c20485454502f312e310d0a486f73743a2031302e3230332e392e323a383038300d0a557365722d4167656e743a"
            + "206375726c2f372e38382e310d0a4163636570743a202a2f2a0d0a0d0a")
        #expect(data == PacketSummary(transport: 6, tcpFlags: 0x18, payloadLength: 89))
        #expect(data.meaning == .data)
        // Flags [.], length 0
        #expect(Self.summary("45000034cfc140004006436a0acb09010acb0902e9fe1f90a143fc4a31af8c518010003fb59000000101080aa1b0139c23215bc9").meaning
            == .deliveryConfirmed)
        // Flags [F.]
        #expect(Self.summary("4500003467a240004006ab890acb09020acb09011f90e9fe31af8d0fa143fca380110040b46900000101080a23215bd0a1b013a3").meaning
            == .finishedSending)
        // Flags [R.]: ACK set too, still cut off
        #expect(Self.summary("4500002800004000400613380acb09020acb09010009e28e00000000952e78605014000098110000")
            == PacketSummary(transport: 6, tcpFlags: 0x14, payloadLength: 0))
    }

    @Test("The snap length's cut changes no length: [P.] length 89 cut to 54 bytes still has 89 of payload")
    func snapCut() {
        let data = Self.summary("4500008dcfc24000400643100acb09010acb0902e9fe1f90a143fc4a31af8c518018003f14b400000101080aa1b0139d23215bc947455420"
            + "2f696e6465782e68746d6c20485454502f312e310d0a486f73743a2031302e3230332e392e323a383038300d0a557365722d4167656e743a"
            + "206375726c2f372e38382e310d0a4163636570743a202a2f2a0d0a0d0a", cutTo: 54)
        #expect(data == PacketSummary(transport: 6, tcpFlags: 0x18, payloadLength: 89))
        // Cut inside the TCP header: the flags are unknown, the packet reads as data.
        #expect(Self.summary("4500002800004000400613380acb09020acb09010009e28e00000000952e78605014000098110000", cutTo: 24)
            == PacketSummary(transport: 6, tcpFlags: nil, payloadLength: 20))
    }

    @Test("IPv6 TCP Flags [S]; IPv4 UDP length 128 carries 100; IPv6 hop-by-hop then ICMPv6 (58)")
    func otherShapes() {
        #expect(Self.summary("60084a6400280640fd030000000000000000000000000001fd030000000000000000000000000002af021f9146e9e93700000000a002fd20"
            + "ef5d0000020405a00402080a857fdd53000000000103030a") == PacketSummary(transport: 6, tcpFlags: 0x02, payloadLength: 0))
        let udp = Self.hex("450000807710400040119bc40acb09010acb0902e1851b5f006c2f8f") + [UInt8](repeating: 0, count: 100)
        #expect(udp.withUnsafeBytes { PacketSummary.read($0, originalLength: 128) } == PacketSummary(transport: 17, tcpFlags: nil, payloadLength: 100))
        let icmp6 = Self.summary("600000000038000100000000000000000000000000000000ff0200000000000000000000000000163a000502000001008f00854f00000002"
            + "04000000ff0200000000000000000001ff71e7ad04000000ff0200000000000000000001ff000002")
        #expect(icmp6 == PacketSummary(transport: 58, tcpFlags: nil, payloadLength: 48))
        #expect(icmp6.meaning == .data)
    }

    @Test("ICMP and ICMPv6 port unreachable (the kernel's answers to a UDP datagram to port 9 on lo, captured by dumpcap) are titled cut off, as a reset is; an echo is data")
    func destinationUnreachable() {
        let v4 = Self.summary("45c0003d024a0000400179b47f0000017f0000010303038e0000000045000021584240004011e4877f0000017f000001b7650009000dfe2068656c6c6f")
        #expect(v4 == PacketSummary(transport: 1, tcpFlags: nil, payloadLength: 41, destinationUnreachable: true))
        #expect(v4.meaning == .cutOff)
        let v6 = Self.summary("600e7d86003d3a4000000000000000000000000000000001000000000000000000000000000000010104dc5200000000600abeec000d11400000000000000000000000000000000100000000000000000000000000000001ade10009000d002068656c6c6f")
        #expect(v6 == PacketSummary(transport: 58, tcpFlags: nil, payloadLength: 61, destinationUnreachable: true))
        #expect(v6.meaning == .cutOff)
        #expect(PacketMeaning.classify(tcpFlags: nil, payloadLength: 8) == .data)
    }

    /// ICMP type 3 code 4 from 10.203.0.2 (MTU 1280) and ICMPv6 type 2 from fd03::2 (MTU 1280),
    /// each quoting a UDP datagram (`PathMTUSignalTests`' bytes, independently built).
    @Test("fragmentation needed and packet too big are titled too big for the path (IPv4's read cut off, IPv6's data: a trial); another unreachable stays cut off")
    func tooBigForPath() {
        let v4 = Self.summary("4500004c000700004001659" + "00acb00020a4d000103040d44000005004500003012344000401113"
            + "6f0a4d00010acb00029c401b5f001cd897000102030405060708090a0b0c0d0e0f10111213")
        #expect(v4 == PacketSummary(transport: 1, tcpFlags: nil, payloadLength: 56, destinationUnreachable: true, pathTooSmall: true))
        #expect(v4.meaning == .tooBigForPath)
        let v6 = Self.summary("60000000004c3a40fd030000000000000000000000000002fd770000000000000000000000000001"
            + "02008ccb0000050060000000001c1140fd770000000000000000000000000001fd030000000000000000000000000002"
            + "9c401b5f001cf333000102030405060708090a0b0c0d0e0f10111213")
        #expect(v6 == PacketSummary(transport: 58, tcpFlags: nil, payloadLength: 76, pathTooSmall: true))
        #expect(v6.meaning == .tooBigForPath)
        #expect(PacketMeaning.tooBigForPath.words == "too big for the path" && PacketMeaning.tooBigForPath.rawValue == "too_big_for_path")
        #expect(PacketMeaning.classify(tcpFlags: nil, payloadLength: 8, destinationUnreachable: true) == .cutOff)
    }

    @Test("Unreadable: empty, not IP, a 10-byte IPv4 stub")
    func unreadable() {
        #expect([UInt8]().withUnsafeBytes { PacketSummary.read($0, originalLength: 0) } == PacketSummary(transport: nil, tcpFlags: nil, payloadLength: 0))
        #expect([UInt8]([0x10, 0, 0]).withUnsafeBytes { PacketSummary.read($0, originalLength: 3) } == PacketSummary(transport: nil, tcpFlags: nil, payloadLength: 3))
        #expect([UInt8](repeating: 0x45, count: 10).withUnsafeBytes { PacketSummary.read($0, originalLength: 10) }
            == PacketSummary(transport: nil, tcpFlags: nil, payloadLength: 10))
    }
}
