import Wire
import Testing
@testable import Tunnel

@Suite("InternetChecksum: RFC 1071 sums, RFC 1624 incremental updates, real packets")
struct InternetChecksumTests {
    @Test("RFC 1071 §3 example: 00 01 f2 03 f4 f5 f6 f7 sums to 0xddf2, checksum 0x220d")
    func rfc1071Example() {
        let bytes: [UInt8] = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]
        #expect(InternetChecksum.sum(bytes) == 0xddf2)
        #expect(InternetChecksum.finish(InternetChecksum.sum(bytes)) == 0x220d)
        // Every split into two sums gives the same (associativity, RFC 1071 §2(A)), odd splits
        // included when the second part starts on an even offset.
        for cut in stride(from: 0, through: 8, by: 2) {
            let first = InternetChecksum.sum(Array(bytes[..<cut]))
            #expect(InternetChecksum.sum(Array(bytes[cut...]), initial: first) == 0xddf2)
        }
        // An odd length pads with a zero byte on the right (RFC 1071 §4.1).
        #expect(InternetChecksum.sum([0x12]) == 0x1200)
        #expect(InternetChecksum.sum([0x12, 0x34, 0x56]) == 0x1234 + 0x5600)
    }

    @Test("joined: the sums of two runs give the sum of both together, at every split (odd first runs swap the second's bytes)")
    func joinedSums() {
        #expect(InternetChecksum.joined(0x1200, 0x3456, firstCount: 1) == InternetChecksum.sum([0x12, 0x34, 0x56]))
        #expect(InternetChecksum.joined(0x1234, 0x5600, firstCount: 2) == InternetChecksum.sum([0x12, 0x34, 0x56]))
        let runs: [[UInt8]] = [(0..<257).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }, [UInt8](repeating: 0xff, count: 33),
                               [UInt8](repeating: 0, count: 9) + [1, 2, 3], [0xff, 0xff, 0x00, 0x01]]
        for bytes in runs {
            let whole = InternetChecksum.sum(bytes)
            for cut in 0...bytes.count {
                let first = Array(bytes[..<cut]), second = Array(bytes[cut...])
                #expect(InternetChecksum.joined(InternetChecksum.sum(first), InternetChecksum.sum(second), firstCount: cut) == whole,
                        "cut \(cut) of \(bytes.count)")
            }
        }
    }

    @Test("RFC 1624 §4 example: HC 0xDD2F, m 0x5555 → m' 0x3285 gives HC' 0x0000 (Eqn. 3), not 0xFFFF")
    func rfc1624Example() {
        #expect(InternetChecksum.adjust(0xdd2f, oldSum: 0x5555, newSum: 0x3285) == 0x0000)
        // The recomputation it must agree with: ~(0xCD7A + 0x3285).
        #expect(InternetChecksum.finish(0xcd7a + 0x3285) == 0x0000)
        #expect(InternetChecksum.finish(0xcd7a + 0x5555) == 0xdd2f)
        // Erratum 4782: an unchanged field leaves the checksum alone.
        #expect(InternetChecksum.adjust(0x0000, oldSum: 0x5555, newSum: 0x5555) == 0x0000)
    }

    @Test("every captured IPv4 header and TCP/UDP segment verifies, as tcpdump said", arguments: CapturedPackets.all.indices)
    func capturedVerify(_ index: Int) throws {
        let packet = CapturedPackets.all[index]
        let parsed = try #require(parse(packet.bytes), "\(packet.summary)")
        if parsed.version == 4 {
            #expect(InternetChecksum.finish(InternetChecksum.sum(Array(packet.bytes[0..<parsed.transportOffset]))) == 0)
        }
        if parsed.fragment == nil && parsed.transportProtocol == IPProtocolNumber.tcp {
            #expect(packet.summary.contains("(correct)"))
            guard case .success = tcp(packet.bytes) else { Issue.record("TCP checksum: \(packet.summary)"); return }
        }
        if parsed.fragment == nil && parsed.transportProtocol == IPProtocolNumber.udp {
            #expect(packet.summary.contains("udp sum ok"))
            guard case .success = udp(packet.bytes) else { Issue.record("UDP checksum: \(packet.summary)"); return }
        }
    }

    @Test("the pseudo-header sum of a captured SYN plus its segment is all ones")
    func pseudoHeader() throws {
        let syn = CapturedPackets.first("Flags [S],", "10.203.9.1")
        let p = try #require(parse(syn.bytes))
        #expect(p.transportLength == 40)
        let pseudo = InternetChecksum.pseudoHeaderSum(source: p.source, destination: p.destination, protocolNumber: 6, length: 40)
        // 10.203.9.1 + 10.203.9.2 + 6 + 40, folded.
        #expect(pseudo == InternetChecksum.fold(0x0acb + 0x0901 + 0x0acb + 0x0902 + 6 + 40))
        #expect(InternetChecksum.sum(Array(syn.bytes[20...]), initial: pseudo) == 0xffff)
    }
}
