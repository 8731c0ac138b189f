import Testing
@testable import Tunnel

/// The datagrams a flow that may not fragment sent lately, found again from the part of the
/// payload a router's ICMP quotes, so tv's copy of the error quotes the program's own headers.
@Suite struct SentDatagramsTests {
    static let app = PacketEndpoint(PacketAddress("10.77.0.1")!, 40000)
    static let remote = PacketEndpoint(PacketAddress("10.42.3.2")!, 21101)

    /// A DF datagram of `size` payload bytes, its first four bytes `tag` and the rest `fill`.
    static func datagram(tag: UInt32, size: Int, fill: UInt8 = 0x78) -> [UInt8] {
        let payload = withUnsafeBytes(of: tag.bigEndian) { Array($0) } + [UInt8](repeating: fill, count: size - 4)
        return PacketBuilder.udp(source: app, destination: remote, payload: payload, identification: 0, dontFragment: true)!
    }

    static func note(_ sent: inout SentDatagrams, _ packet: [UInt8]) {
        packet.withUnsafeBytes { sent.note($0, payloadOffset: 28, payloadLength: packet.count - 28) }
    }

    static func headers(_ sent: SentDatagrams, quoting payload: [UInt8], largerThan mtu: Int? = nil) -> [UInt8]? {
        payload.withUnsafeBytes { sent.headers(quoting: $0, largerThan: mtu) }
    }

    @Test("the router's 520 quoted bytes find the 1,428-byte datagram they began: its headers as the program sent them (Total Length 1,428, UDP Length 1,408)")
    func findsByPrefix() throws {
        var sent = SentDatagrams()
        let big = Self.datagram(tag: 1, size: 1_400)
        let small = Self.datagram(tag: 2, size: 100)
        Self.note(&sent, big)
        Self.note(&sent, small)
        let found = try #require(Self.headers(sent, quoting: Array(big[28..<548])))
        #expect(found == Array(big.prefix(28)))
        #expect(found[2] == 0x05 && found[3] == 0x94 && found[24] == 0x05 && found[25] == 0x80)   // 1,428 and 1,408
        #expect(Self.headers(sent, quoting: Array(small[28...])) == Array(small.prefix(28)))
    }

    @Test("the newest of datagrams alike; an MTU passes over those that fit it; a quote longer than a datagram's payload or unlike it finds nothing")
    func choice() {
        var sent = SentDatagrams()
        let first = Self.datagram(tag: 7, size: 1_400)
        let second = Self.datagram(tag: 7, size: 1_300)
        Self.note(&sent, first)
        Self.note(&sent, second)
        #expect(Self.headers(sent, quoting: Array(first[28..<548])) == Array(second.prefix(28)))
        #expect(Self.headers(sent, quoting: Array(first[28..<548]), largerThan: 1_328) == Array(first.prefix(28)))
        #expect(Self.headers(sent, quoting: Array(first[28..<548]), largerThan: 1_428) == nil)
        #expect(Self.headers(sent, quoting: Array(first[28..<(28 + 1_301)])) == Array(first.prefix(28)))
        #expect(Self.headers(sent, quoting: Array(Self.datagram(tag: 8, size: 600)[28...])) == nil)
        // RFC 792's 8 bytes quote no payload: the newest datagram the MTU allows.
        #expect(Self.headers(sent, quoting: [], largerThan: 1_280) == Array(second.prefix(28)))
        #expect(Self.headers(SentDatagrams(), quoting: []) == nil)
    }

    @Test("eight are kept, the oldest overwritten first; a header longer than 64 bytes is not kept")
    func capacity() {
        var sent = SentDatagrams()
        let packets = (0..<9).map { Self.datagram(tag: UInt32($0), size: 200) }
        for p in packets { Self.note(&sent, p) }
        #expect(Self.headers(sent, quoting: Array(packets[0][28..<60])) == nil)
        for p in packets.dropFirst() { #expect(Self.headers(sent, quoting: Array(p[28..<60])) == Array(p.prefix(28))) }
        var long = SentDatagrams()
        let odd = [UInt8](repeating: 0, count: 200)
        odd.withUnsafeBytes { long.note($0, payloadOffset: 65, payloadLength: 135) }
        #expect(Self.headers(long, quoting: []) == nil)
    }
}
