import Capture
import FlowTerms
import Foundation
import Testing
import Wire
@testable import Tunnel

/// The decrypted capture writer's gather list (runs of its own header bytes and ranges of the
/// batch's plaintext, in file order) and the headers-only segment builder it uses.
@Suite("DecryptedCaptureGather and TCPSegmentBuilder.appendHeaders: the plaintext is summed where it is, never copied first")
struct DecryptedCaptureGatherTests {
    @Test("adjacent runs of heads join; plaintext ranges stand alone; empty ones are left out; removeAll starts over")
    func pieces() {
        var gather = DecryptedCaptureGather()
        gather.heads(upTo: 10)
        gather.plaintext(5..<9)
        gather.heads(upTo: 10)  // nothing new
        gather.heads(upTo: 20)
        gather.heads(upTo: 30)
        gather.plaintext(9..<9)
        gather.plaintext(100..<200)
        gather.plaintext(200..<300)
        gather.heads(upTo: 31)
        #expect(gather.pieces == [.head(0..<10), .plaintext(5..<9), .head(10..<30), .plaintext(100..<200), .plaintext(200..<300),
                                  .head(30..<31)])
        #expect(gather.headsEnd == 31)
        gather.removeAll()
        #expect(gather.pieces == [] && gather.headsEnd == 0)
        gather.heads(upTo: 4)
        #expect(gather.pieces == [.head(0..<4)])
    }

    @Test("withParts: the bytes of heads and plaintext in the list's order")
    func parts() {
        var gather = DecryptedCaptureGather()
        gather.heads(upTo: 2)
        gather.plaintext(1..<4)
        gather.heads(upTo: 5)
        let heads: [UInt8] = [0xA0, 0xA1, 0xA2, 0xA3, 0xA4]
        let plaintext: [UInt8] = [0x10, 0x11, 0x12, 0x13, 0x14]
        let joined = heads.withUnsafeBytes { h in
            plaintext.withUnsafeBytes { p in
                gather.withParts(heads: h, plaintext: p) { parts in parts.flatMap { Array($0) } }
            }
        }
        #expect(joined == [0xA0, 0xA1, 0x11, 0x12, 0x13, 0xA2, 0xA3, 0xA4])
    }

    /// RFC 1071 §1 (3): the receiver's check, the sum over the pseudo-header and the whole
    /// segment (its checksum field included) is all ones.
    func receiverSum(_ packet: [UInt8], v6: Bool) -> UInt32 {
        let ipLength = v6 ? 40 : 20
        let source = PacketAddress(bytes: Array(packet[(v6 ? 8 : 12)..<(v6 ? 24 : 16)]))!
        let destination = PacketAddress(bytes: Array(packet[(v6 ? 24 : 16)..<(v6 ? 40 : 20)]))!
        let segment = Array(packet[ipLength...])
        let pseudo = InternetChecksum.pseudoHeaderSum(source: source, destination: destination, protocolNumber: IPProtocolNumber.tcp,
                                                      length: segment.count)
        return InternetChecksum.sum(segment, initial: pseudo)
    }

    @Test("appendHeaders then the payload is the whole packet; the checksum covers the payload (odd lengths, the MSS option, IPv4 and IPv6)",
          arguments: [("192.0.2.1", "198.51.100.7"), ("2001:db8::1", "2001:db8::2")])
    func headersThenPayload(addresses: (String, String)) throws {
        let v6 = addresses.0.contains(":")
        for (payload, mss) in [([UInt8](), UInt16?(1_460)), (Array("hello".utf8), nil), (Array("GET / HTTP/1.1\r\n\r\n".utf8), nil),
                               ((0..<65_495).map { UInt8(truncatingIfNeeded: $0 &* 31) }, nil)] {
            let fields = TCPSegmentBuilder.Segment(
                source: PacketEndpoint(PacketAddress(addresses.0)!, 50_000), destination: PacketEndpoint(PacketAddress(addresses.1)!, 443),
                sequence: 0xDEAD_BEEF, acknowledgment: 0x0102_0304, flags: TCPFlags.ack | TCPFlags.psh, window: 65_535,
                identification: 7, maximumSegmentSize: mss)
            var out: [UInt8] = [0xEE]  // what a block header before it would be
            payload.withUnsafeBytes { TCPSegmentBuilder.appendHeaders(fields, payload: $0, to: &out) }
            let headerLength = (v6 ? 40 : 20) + (mss == nil ? 20 : 24)
            #expect(out.count == 1 + headerLength)
            let packet = Array(out.dropFirst()) + payload
            #expect(packet.count == TCPSegmentBuilder.length(fields, payloadCount: payload.count))
            #expect(receiverSum(packet, v6: v6) == 0xFFFF, "\(payload.count) bytes")
            // The dissector reads the same segment back.
            let dissected = try PacketDissector.dissect(packet).get()
            guard case .tcp(let tcp)? = dissected.transport else { Issue.record("not TCP"); continue }
            #expect(tcp.sequenceNumber == 0xDEAD_BEEF && tcp.acknowledgmentNumber == 0x0102_0304 && tcp.payloadLength == payload.count)
        }
    }
}
