import Wire
import Testing
@testable import Tunnel

@Suite("PacketRewriter: the NAT rewrite with RFC 1624 checksums, checked against recomputation")
struct PacketRewriterTests {
    /// Recomputes the TCP checksum from scratch.
    func recomputedTCPChecksum(_ bytes: [UInt8]) -> UInt16 {
        let p = parse(bytes)!
        var copy = bytes
        copy[p.transportOffset + 16] = 0
        copy[p.transportOffset + 17] = 0
        let pseudo = InternetChecksum.pseudoHeaderSum(source: p.source, destination: p.destination, protocolNumber: 6, length: p.transportLength)
        return InternetChecksum.finish(InternetChecksum.sum(Array(copy[p.transportOffset..<p.length]), initial: pseudo))
    }

    func rewrite(_ bytes: [UInt8], _ source: PacketEndpoint, _ destination: PacketEndpoint) -> [UInt8] {
        var out = bytes
        let p = parse(bytes)!
        out.withUnsafeMutableBytes { PacketRewriter.rewriteTCP($0, p, source: source, destination: destination) }
        return out
    }

    @Test("every captured TCP segment (v4 and v6) rewritten app → listener and back: checksums equal a full recomputation, the original bytes return")
    func roundTrips() throws {
        let segments = CapturedPackets.all.filter { $0.summary.contains("Flags [") }
        #expect(segments.count >= 26)
        for segment in segments {
            let p = try #require(parse(segment.bytes))
            let t = try #require(try tcp(segment.bytes)?.get())
            let fake = p.isIPv6 ? endpoint("fd77::f:2a", 41_234) : endpoint("10.77.0.177", 41_234)
            let listener = p.isIPv6 ? endpoint("fd77::1", 33_001) : endpoint("10.77.0.1", 33_001)
            let there = rewrite(segment.bytes, fake, listener)
            let q = try #require(parse(there))
            #expect(q.source == fake.address && q.destination == listener.address)
            let tq = try #require(try tcp(there)?.get(), "rewritten segment fails verification: \(segment.summary)")
            #expect(tq.sequenceNumber == t.sequenceNumber && tq.acknowledgmentNumber == t.acknowledgmentNumber && tq.flags == t.flags)
            let stored = UInt16(there[q.transportOffset + 16]) << 8 | UInt16(there[q.transportOffset + 17])
            #expect(stored == recomputedTCPChecksum(there))
            // Options and payload untouched.
            #expect(Array(there[(q.transportOffset + 18)...]) == Array(segment.bytes[(p.transportOffset + 18)...]))
            let back = rewrite(there, PacketEndpoint(p.source, t.sourcePort), PacketEndpoint(p.destination, t.destinationPort))
            #expect(back == segment.bytes, "\(segment.summary)")
        }
    }

    @Test("rewriting a captured SYN to the tunnel's endpoints gives exactly these checksums")
    func exactValues() throws {
        let syn = CapturedPackets.first("Flags [S],", "10.203.9.1", ".8080")
        let out = rewrite(syn.bytes, endpoint("10.77.0.129", 10_000), endpoint("10.77.0.1", 40_000))
        let p = try #require(parse(out))
        // IPv4 header checksum recomputed over the 20 bytes, TCP checksum updated: both verify.
        #expect(InternetChecksum.finish(InternetChecksum.sum(Array(out[0..<20]))) == 0)
        #expect(UInt16(out[36]) << 8 | UInt16(out[37]) == recomputedTCPChecksum(out))
        #expect(p.source.description == "10.77.0.129" && p.destination.description == "10.77.0.1")
        #expect(out[20] == 0x27 && out[21] == 0x10 && out[22] == 0x9c && out[23] == 0x40)
    }

    @Test("a corrupted captured segment stays corrupted through the rewrite (so the kernel drops what the engine forwards unverified)")
    func wrongChecksumStaysWrong() throws {
        let segments = CapturedPackets.all.filter { $0.summary.contains("Flags [") }
        for segment in segments {
            let p = try #require(parse(segment.bytes))
            let fake = p.isIPv6 ? endpoint("fd77::f:2a", 41_234) : endpoint("10.77.0.177", 41_234)
            let listener = p.isIPv6 ? endpoint("fd77::1", 33_001) : endpoint("10.77.0.1", 33_001)
            // One bit flipped in the last byte of the segment (payload or, for bare segments, header).
            var corrupted = segment.bytes
            corrupted[p.length - 1] ^= 0x01
            let before = corrupted.withUnsafeBytes { TCPHeader.checksumIsValid($0, p) }
            let there = rewrite(corrupted, fake, listener)
            let q = try #require(parse(there))
            let after = there.withUnsafeBytes { TCPHeader.checksumIsValid($0, q) }
            let good = rewrite(segment.bytes, fake, listener)
            let valid = good.withUnsafeBytes { TCPHeader.checksumIsValid($0, q) }
            #expect(before == false && after == false && valid == true, "\(segment.summary)")
        }
    }
}

@Suite("TCPChecksumPolicy: which segments the engine verifies itself")
struct TCPChecksumPolicyTests {
    @Test("forwarded segments without SYN, FIN or RST are left to the kernel; everything else is verified")
    func decisions() {
        let ack = TCPFlags.ack, psh = TCPFlags.psh
        #expect(TCPChecksumPolicy.mustVerify(flags: ack, action: .forward) == false)
        #expect(TCPChecksumPolicy.mustVerify(flags: ack | psh, action: .forward) == false)
        #expect(TCPChecksumPolicy.mustVerify(flags: 0, action: .forward) == false)
        #expect(TCPChecksumPolicy.mustVerify(flags: 0xC0 | ack, action: .forward) == false)   // CWR ECE ACK
        #expect(TCPChecksumPolicy.mustVerify(flags: TCPFlags.syn, action: .forward) == true)
        #expect(TCPChecksumPolicy.mustVerify(flags: TCPFlags.syn | ack, action: .forward) == true)
        #expect(TCPChecksumPolicy.mustVerify(flags: TCPFlags.fin | ack, action: .forward) == true)
        #expect(TCPChecksumPolicy.mustVerify(flags: TCPFlags.rst, action: .forward) == true)
        #expect(TCPChecksumPolicy.mustVerify(flags: TCPFlags.rst | ack, action: .forward) == true)
        #expect(TCPChecksumPolicy.mustVerify(flags: ack, action: .act) == true)
        #expect(TCPChecksumPolicy.mustVerify(flags: ack | psh, action: .act) == true)
        #expect(TCPChecksumPolicy.mustVerify(flags: TCPFlags.syn, action: .act) == true)
    }
}
