import Testing
@testable import Tunnel

/// The ICMP errors tv writes into the TUN when an app's datagram does not fit the upstream path.
/// The expected bytes were built independently (a Python script with its own RFC 1071 checksum)
/// and checked with `tcpdump -vvv -r` on a raw-IP pcap of them: "need to frag (mtu 1280)" with
/// no checksum complaint, and "[icmp6 sum ok] ICMP6, packet too big, mtu 1280".
@Suite struct PathMTUSignalTests {
    /// UDP 10.77.0.1:40000 → 10.203.0.2:7007, DF, Identification 0x1234, payload 0…19.
    static let original4: [UInt8] = [
            0x45, 0x00, 0x00, 0x30, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x13, 0x6f, 0x0a, 0x4d, 0x00, 0x01,
            0x0a, 0xcb, 0x00, 0x02, 0x9c, 0x40, 0x1b, 0x5f, 0x00, 0x1c, 0xd8, 0x97, 0x00, 0x01, 0x02, 0x03,
            0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
        ]
    /// ICMP type 3 code 4, MTU 1280, from 10.203.0.2 to 10.77.0.1, IPv4 Identification 7, quoting all of `original4`.
    static let expected4: [UInt8] = [
            0x45, 0x00, 0x00, 0x4c, 0x00, 0x07, 0x00, 0x00, 0x40, 0x01, 0x65, 0x90, 0x0a, 0xcb, 0x00, 0x02,
            0x0a, 0x4d, 0x00, 0x01, 0x03, 0x04, 0x0d, 0x44, 0x00, 0x00, 0x05, 0x00, 0x45, 0x00, 0x00, 0x30,
            0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x13, 0x6f, 0x0a, 0x4d, 0x00, 0x01, 0x0a, 0xcb, 0x00, 0x02,
            0x9c, 0x40, 0x1b, 0x5f, 0x00, 0x1c, 0xd8, 0x97, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
            0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
        ]
    /// UDP [fd77::1]:40000 → [fd03::2]:7007, payload 0…19.
    static let original6: [UInt8] = [
            0x60, 0x00, 0x00, 0x00, 0x00, 0x1c, 0x11, 0x40, 0xfd, 0x77, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xfd, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x9c, 0x40, 0x1b, 0x5f, 0x00, 0x1c, 0xf3, 0x33,
            0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
            0x10, 0x11, 0x12, 0x13,
        ]
    /// ICMPv6 type 2 code 0, MTU 1280, from fd03::2 to fd77::1, quoting all of `original6`.
    static let expected6: [UInt8] = [
            0x60, 0x00, 0x00, 0x00, 0x00, 0x4c, 0x3a, 0x40, 0xfd, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xfd, 0x77, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x8c, 0xcb, 0x00, 0x00, 0x05, 0x00,
            0x60, 0x00, 0x00, 0x00, 0x00, 0x1c, 0x11, 0x40, 0xfd, 0x77, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xfd, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x9c, 0x40, 0x1b, 0x5f, 0x00, 0x1c, 0xf3, 0x33,
            0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
            0x10, 0x11, 0x12, 0x13,
        ]

    static func build(_ original: [UInt8], source: String, mtu: Int, identification: UInt16 = 0, length: Int? = nil) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 2_048)
        let n = out.withUnsafeMutableBytes { buffer in
            original.withUnsafeBytes {
                PacketBuilder.pathTooSmall(into: buffer, original: $0, originalLength: length ?? original.count,
                                           source: PacketAddress(source)!, mtu: mtu, identification: identification)
            }
        }
        return n.map { Array(out.prefix($0)) }
    }

    @Test("IPv4: fragmentation needed (RFC 792 type 3 code 4, RFC 1191 next-hop MTU), byte for byte")
    func fragmentationNeeded() {
        #expect(Self.build(Self.original4, source: "10.203.0.2", mtu: 1280, identification: 7) == Self.expected4)
    }

    @Test("IPv6: packet too big (RFC 4443 §3.2), byte for byte")
    func packetTooBig() {
        #expect(Self.build(Self.original6, source: "fd03::2", mtu: 1280) == Self.expected6)
    }

    @Test("a long datagram is quoted up to 576 (IPv4) / 1,280 (IPv6) bytes in all; the checksums still verify; padding is not quoted")
    func quoteLimits() throws {
        let payload = (0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let big4 = try #require(PacketBuilder.udp(source: PacketEndpoint(PacketAddress("10.77.0.1")!, 40000),
                                                  destination: PacketEndpoint(PacketAddress("10.203.0.2")!, 7007), payload: payload))
        let e4 = try #require(Self.build(big4, source: "10.203.0.2", mtu: 1400))
        #expect(e4.count == 576 && Array(e4[28...]) == Array(big4.prefix(548)))
        #expect(InternetChecksum.finish(InternetChecksum.sum(Array(e4[20...]))) == 0)
        #expect(InternetChecksum.finish(InternetChecksum.sum(Array(e4[..<20]))) == 0)
        #expect(e4[26] == 0x05 && e4[27] == 0x78)   // MTU 1400

        let big6 = try #require(PacketBuilder.udp(source: PacketEndpoint(PacketAddress("fd77::1")!, 40000),
                                                  destination: PacketEndpoint(PacketAddress("fd03::2")!, 7007), payload: payload))
        let e6 = try #require(Self.build(big6, source: "fd03::2", mtu: 1280))
        #expect(e6.count == 1_280 && Array(e6[48...]) == Array(big6.prefix(1_232)))
        let pseudo = InternetChecksum.pseudoHeaderSum(source: PacketAddress("fd03::2")!, destination: PacketAddress("fd77::1")!,
                                                      protocolNumber: 58, length: 1_240)
        #expect(InternetChecksum.finish(InternetChecksum.sum(Array(e6[40...]), initial: pseudo)) == 0)

        // Bytes after the packet's own length (padding) are not part of the quote.
        let padded = Self.original4 + [0xee, 0xee, 0xee, 0xee]
        #expect(Self.build(padded, source: "10.203.0.2", mtu: 1280, identification: 7, length: Self.original4.count) == Self.expected4)
    }

    @Test("nothing is built from a packet shorter than its IP header or of the other family")
    func refusals() {
        #expect(Self.build(Array(Self.original4.prefix(19)), source: "10.203.0.2", mtu: 1280) == nil)
        #expect(Self.build(Self.original4, source: "fd03::2", mtu: 1280) == nil)
        #expect(Self.build(Self.original6, source: "10.203.0.2", mtu: 1280) == nil)
    }

    @Test("which datagrams may be fragmented upstream: only those that came in fragments or, for IPv4, without DF")
    func fragmentationPolicy() {
        #expect(UDPPathMTU.forbidsFragmentation(isIPv6: false, dontFragmentBit: true, reassembled: false))
        #expect(!UDPPathMTU.forbidsFragmentation(isIPv6: false, dontFragmentBit: false, reassembled: false))
        #expect(!UDPPathMTU.forbidsFragmentation(isIPv6: false, dontFragmentBit: false, reassembled: true))
        #expect(UDPPathMTU.forbidsFragmentation(isIPv6: true, dontFragmentBit: false, reassembled: false))
        #expect(!UDPPathMTU.forbidsFragmentation(isIPv6: true, dontFragmentBit: false, reassembled: true))
    }
}
