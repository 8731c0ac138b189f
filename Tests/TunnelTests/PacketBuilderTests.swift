import Wire
import Testing
@testable import Tunnel

@Suite("PacketBuilder: crafted packets equal the kernel's own, byte for byte")
struct PacketBuilderTests {
    @Test("the UDP echo reply over IPv4: same bytes as the kernel sent (id, DF, TTL 64, checksum)")
    func udpV4() throws {
        let reply = CapturedPackets.first("IP (", "10.203.9.2.7007 >", "(100)")
        let p = try #require(parse(reply.bytes))
        let u = try #require(try udp(reply.bytes)?.get())
        let identification = UInt16(reply.bytes[4]) << 8 | UInt16(reply.bytes[5])
        let built = try #require(PacketBuilder.udp(source: PacketEndpoint(p.source, u.sourcePort), destination: PacketEndpoint(p.destination, u.destinationPort),
                                                   payload: capturePattern(100), identification: identification, dontFragment: true))
        #expect(built == reply.bytes)
    }

    @Test("the UDP echo reply over IPv6: same bytes as the kernel sent except the flow label")
    func udpV6() throws {
        let reply = CapturedPackets.first("IP6 (", "fd03::2.7007 >", "(100)")
        let p = try #require(parse(reply.bytes))
        let u = try #require(try udp(reply.bytes)?.get())
        let built = try #require(PacketBuilder.udp(source: PacketEndpoint(p.source, u.sourcePort), destination: PacketEndpoint(p.destination, u.destinationPort),
                                                   payload: capturePattern(100)))
        var expected = reply.bytes
        expected[1] &= 0xf0; expected[2] = 0; expected[3] = 0   // flow label: ours is 0
        #expect(built == expected)
    }

    @Test("the reset for a refused connect: same bytes as the kernel's RST|ACK to curl's SYN")
    func resetForRefused() throws {
        let syn = CapturedPackets.first("Flags [S],", ".9: ")
        let rst = CapturedPackets.first("Flags [R.]")
        let p = try #require(parse(syn.bytes))
        let t = try #require(try tcp(syn.bytes)?.get())
        let built = PacketBuilder.array { buffer in
            PacketBuilder.tcp(into: buffer, source: PacketEndpoint(p.destination, t.destinationPort), destination: PacketEndpoint(p.source, t.sourcePort),
                              sequence: 0, acknowledgment: t.sequenceNumber &+ 1, flags: TCPFlags.rst | TCPFlags.ack, dontFragment: true)
        }
        #expect(built == rst.bytes)
        // `reset(answering:)` picks the same form for a SYN (no ACK): seq 0, ack = seq + 1.
        let answer = PacketBuilder.array { PacketBuilder.reset(into: $0, answering: t, from: PacketEndpoint(p.destination, t.destinationPort), to: PacketEndpoint(p.source, t.sourcePort)) }
        #expect(Array(answer[20...]) == Array(rst.bytes[20...]))
    }

    @Test("a reset answering a segment with ACK uses its ack as the sequence number (RFC 9293 §3.10.7.1)")
    func resetForACK() throws {
        let ack = CapturedPackets.first("Flags [.],", "10.203.9.1.")
        let t = try #require(try tcp(ack.bytes)?.get())
        let answer = PacketBuilder.array { PacketBuilder.reset(into: $0, answering: t, from: endpoint("10.203.9.2", 8080), to: endpoint("10.203.9.1", t.sourcePort)) }
        let r = try #require(try tcp(answer)?.get())
        #expect(r.flags == TCPFlags.rst && r.sequenceNumber == t.acknowledgmentNumber && r.acknowledgmentNumber == 0)
    }

    @Test("a crafted UDP checksum that computes to 0 is sent as 0xFFFF (RFC 768)")
    func zeroChecksum() throws {
        // Find a payload whose checksum is 0: adjust two bytes until the sum is all ones.
        let s = endpoint("10.0.0.1", 1000), d = endpoint("10.0.0.2", 2000)
        var payload: [UInt8] = [0, 0]
        let probe = PacketBuilder.udp(source: s, destination: d, payload: payload)!
        let checksum = UInt16(probe[26]) << 8 | UInt16(probe[27])
        // Adding the checksum's value to the data makes the sum 0xFFFF, i.e. a computed 0.
        payload = [UInt8(checksum >> 8), UInt8(checksum & 0xff)]
        let built = PacketBuilder.udp(source: s, destination: d, payload: payload)!
        #expect(built[26] == 0xff && built[27] == 0xff)
        guard case .success = udp(built) else { Issue.record("0xFFFF must verify"); return }
    }

    @Test("payloads too large for one packet are refused")
    func tooLarge() {
        #expect(PacketBuilder.udp(source: endpoint("10.0.0.1", 1), destination: endpoint("10.0.0.2", 2), payload: [UInt8](repeating: 0, count: 65_508)) == nil)
        #expect(PacketBuilder.udp(source: endpoint("10.0.0.1", 1), destination: endpoint("10.0.0.2", 2), payload: [UInt8](repeating: 0, count: 65_507)) != nil)
    }
}
