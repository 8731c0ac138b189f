import Wire
import Testing
@testable import Tunnel

@Suite("VirtioNetHeader: the virtio-net header codec (little-endian, 10 field bytes)")
struct VirtioNetHeaderTests {
    @Test("a GSO TCPv4 header with NEEDS_CSUM encodes to exactly these bytes and decodes back")
    func exactBytes() throws {
        let header = VirtioNetHeader(flags: VirtioNetHeader.flagNeedsChecksum, gsoType: VirtioNetHeader.gsoTCPv4,
                                     headerLength: 66, gsoSize: 65_483, checksumStart: 20, checksumOffset: 16)
        #expect(header.bytes() == [0x01, 0x01, 0x42, 0x00, 0xcb, 0xff, 0x14, 0x00, 0x10, 0x00, 0x00, 0x00])
        #expect(header.bytes(size: 10).count == 10)
        #expect(VirtioNetHeader(header.bytes()) == header)
        #expect(header.needsChecksum && !header.dataValid && header.kernelVouchesForChecksum && header.isGSO)
    }

    @Test("IPv6 GSO with the ECN bit, DATA_VALID alone, and the zero header")
    func otherHeaders() throws {
        let v6 = try #require(VirtioNetHeader([0x01, 0x84, 0x56, 0x00, 0xa0, 0x05, 0x28, 0x00, 0x10, 0x00, 0x7f, 0x7f]))
        #expect(v6 == VirtioNetHeader(flags: 1, gsoType: VirtioNetHeader.gsoTCPv6 | VirtioNetHeader.gsoECN, headerLength: 86,
                                      gsoSize: 1_440, checksumStart: 40, checksumOffset: 16))
        #expect(v6.isGSO)
        let valid = try #require(VirtioNetHeader([0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0]))
        #expect(valid.dataValid && !valid.needsChecksum && valid.kernelVouchesForChecksum && !valid.isGSO)
        #expect(VirtioNetHeader.zero.bytes() == [UInt8](repeating: 0, count: 12))
        #expect(!VirtioNetHeader.zero.kernelVouchesForChecksum)
        #expect(VirtioNetHeader([1, 2, 3]) == nil)
        // The ECN bit alone is not GSO.
        #expect(!VirtioNetHeader(gsoType: VirtioNetHeader.gsoECN).isGSO)
    }

    @Test("the TCP checksum policy never verifies what the kernel vouches for")
    func policy() {
        #expect(TCPChecksumPolicy.mustVerify(flags: TCPFlags.syn, action: .act, kernelVouches: true) == false)
        #expect(TCPChecksumPolicy.mustVerify(flags: TCPFlags.syn, action: .act, kernelVouches: false) == true)
        #expect(TCPChecksumPolicy.mustVerify(flags: TCPFlags.ack, action: .forward, kernelVouches: false) == false)
    }

    @Test("TUNOffload summaries")
    func summaries() {
        #expect(TUNOffload(headerSize: 12, offloads: 7).summary == "virtio-net header 12 B, offloads csum tso4 tso6")
        #expect(TUNOffload.off.summary == "off")
        #expect(TUNOffload(headerSize: 0, offloads: 0, unavailableReason: "TUNSETOFFLOAD failed: Invalid argument").summary
                == "off (TUNSETOFFLOAD failed: Invalid argument)")
    }
}

@Suite("PacketRewriter: the NAT rewrite of CHECKSUM_PARTIAL segments (pseudo-header sum in the field)")
struct PartialChecksumRewriteTests {
    /// A TCP segment (20-byte header, `payload` bytes of a pattern) from `source` to
    /// `destination`, its checksum field holding what the kernel writes for CHECKSUM_PARTIAL:
    /// the folded pseudo-header sum, uncomplemented (`~tcp_v4_check(len, s, d, 0)`).
    static func partialSegment(_ source: PacketEndpoint, _ destination: PacketEndpoint, payload: Int, sequence: UInt32 = 1_000) -> [UInt8] {
        var bytes = PacketBuilder.array(capacity: 40 + 20) {
            PacketBuilder.tcp(into: $0, source: source, destination: destination, sequence: sequence, acknowledgment: 77,
                              flags: TCPFlags.ack | TCPFlags.psh, window: 512)
        }
        let t = bytes.count - 20
        bytes += (0..<payload).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        setLengths(&bytes, transportOffset: t)
        let pseudo = InternetChecksum.pseudoHeaderSum(source: source.address, destination: destination.address,
                                                      protocolNumber: 6, length: bytes.count - t)
        bytes[t + 16] = UInt8(pseudo >> 8); bytes[t + 17] = UInt8(pseudo & 0xff)
        return bytes
    }

    /// Fixes the IP length fields (and the IPv4 header checksum) after the payload changed.
    static func setLengths(_ bytes: inout [UInt8], transportOffset t: Int) {
        if bytes[0] >> 4 == 6 {
            let n = bytes.count - 40
            bytes[4] = UInt8(n >> 8); bytes[5] = UInt8(n & 0xff)
        } else {
            bytes[2] = UInt8(bytes.count >> 8); bytes[3] = UInt8(bytes.count & 0xff)
            bytes[10] = 0; bytes[11] = 0
            let sum = InternetChecksum.finish(InternetChecksum.sum(Array(bytes[0..<20])))
            bytes[10] = UInt8(sum >> 8); bytes[11] = UInt8(sum & 0xff)
        }
    }

    /// What the kernel (or a NIC) does to a CHECKSUM_PARTIAL packet at the end: sums from
    /// csum_start (the TCP header) to the end, the field included, and stores the complement.
    static func finishAsKernel(_ bytes: [UInt8], transportOffset t: Int) -> [UInt8] {
        var out = bytes
        let sum = InternetChecksum.finish(InternetChecksum.sum(Array(bytes[t...])))
        out[t + 16] = UInt8(sum >> 8); out[t + 17] = UInt8(sum & 0xff)
        return out
    }

    /// The TCP checksum computed from scratch (field zeroed) over the packet's own addresses.
    static func fullChecksum(_ bytes: [UInt8]) -> UInt16 {
        let p = parse(bytes)!
        var copy = bytes
        copy[p.transportOffset + 16] = 0; copy[p.transportOffset + 17] = 0
        let pseudo = InternetChecksum.pseudoHeaderSum(source: p.source, destination: p.destination, protocolNumber: 6, length: p.transportLength)
        return InternetChecksum.finish(InternetChecksum.sum(Array(copy[p.transportOffset..<p.length]), initial: pseudo))
    }

    static func field(_ bytes: [UInt8], _ t: Int) -> UInt16 { UInt16(bytes[t + 16]) << 8 | UInt16(bytes[t + 17]) }

    static func rewritePartial(_ bytes: [UInt8], _ source: PacketEndpoint, _ destination: PacketEndpoint) -> [UInt8] {
        var out = bytes
        let p = parse(bytes)!
        out.withUnsafeMutableBytes { PacketRewriter.rewriteTCP($0, p, source: source, destination: destination, checksumIsPartial: true) }
        return out
    }

    @Test("IPv4: the partial field changes by the addresses only (exact values), and finishing it gives the full checksum")
    func ipv4() throws {
        let app = endpoint("10.77.0.2", 40_000), remote = endpoint("93.184.216.34", 443)
        let fake = endpoint("10.77.0.177", 41_234), listener = endpoint("10.77.0.1", 33_001)
        let segment = Self.partialSegment(app, remote, payload: 100)
        #expect(Self.field(segment, 20) == 0x40a8)   // pseudo-header sum of 10.77.0.2 → 93.184.216.34, 120 bytes
        let out = Self.rewritePartial(segment, fake, listener)
        #expect(Self.field(out, 20) == 0x15ca)       // the same for 10.77.0.177 → 10.77.0.1
        #expect(out[20] == 0xa1 && out[21] == 0x12 && out[22] == 0x80 && out[23] == 0xe9)   // 41234, 33001
        #expect(InternetChecksum.finish(InternetChecksum.sum(Array(out[0..<20]))) == 0)
        let finished = Self.finishAsKernel(out, transportOffset: 20)
        #expect(Self.field(finished, 20) == Self.fullChecksum(finished))
        // The full-checksum rewrite would have been wrong here: it also folds the ports in.
        var wrong = segment
        wrong.withUnsafeMutableBytes { PacketRewriter.rewriteTCP($0, parse(segment)!, source: fake, destination: listener) }
        #expect(Self.field(Self.finishAsKernel(wrong, transportOffset: 20), 20) != Self.fullChecksum(Self.finishAsKernel(wrong, transportOffset: 20)))
        // And back: the original bytes return.
        #expect(Self.rewritePartial(out, app, remote) == segment)
    }

    @Test("IPv6: exact values and the finished checksum")
    func ipv6() throws {
        let app = endpoint("fd77::2", 40_000), remote = endpoint("2606:2800:220:1::1", 443)
        let fake = endpoint("fd77::f:2a", 41_234), listener = endpoint("fd77::1", 33_001)
        let segment = Self.partialSegment(app, remote, payload: 100)
        #expect(Self.field(segment, 40) == 0x4e20)
        let out = Self.rewritePartial(segment, fake, listener)
        #expect(Self.field(out, 40) == 0xfba7)
        let finished = Self.finishAsKernel(out, transportOffset: 40)
        #expect(Self.field(finished, 40) == Self.fullChecksum(finished))
        #expect(Self.rewritePartial(out, app, remote) == segment)
    }

    @Test("many address pairs and payload sizes, v4 and v6: the rewritten field is the new pseudo-header sum; finished, the full checksum")
    func sweep() throws {
        let pairs: [(PacketEndpoint, PacketEndpoint, PacketEndpoint, PacketEndpoint)] = [
            (endpoint("10.77.0.2", 1), endpoint("255.255.255.254", 65_535), endpoint("10.77.0.129", 10_000), endpoint("10.77.0.1", 40_000)),
            (endpoint("10.77.0.1", 33_001), endpoint("10.77.0.177", 41_234), endpoint("1.2.3.4", 80), endpoint("10.77.0.2", 51_000)),
            (endpoint("0.0.0.1", 0), endpoint("128.0.0.0", 1), endpoint("255.255.255.255", 65_535), endpoint("10.77.0.1", 2)),
            (endpoint("fd77::2", 1), endpoint("ffff:ffff::ffff", 65_535), endpoint("fd77::f:1", 10_000), endpoint("fd77::1", 40_000)),
            (endpoint("fd77::1", 33_001), endpoint("fd77::f:ffff", 9), endpoint("2001:db8::1", 443), endpoint("fd77::2", 51_000)),
        ]
        for (from, to, newFrom, newTo) in pairs {
            for payload in [0, 1, 2, 3, 100, 1_459, 8_191] {
                let segment = Self.partialSegment(from, to, payload: payload)
                let t = from.address.isIPv6 ? 40 : 20
                let out = Self.rewritePartial(segment, newFrom, newTo)
                let expected = InternetChecksum.pseudoHeaderSum(source: newFrom.address, destination: newTo.address, protocolNumber: 6,
                                                                length: segment.count - t)
                #expect(UInt32(Self.field(out, t)) == expected, "\(from) → \(newFrom), \(payload) B")
                let finished = Self.finishAsKernel(out, transportOffset: t)
                #expect(Self.field(finished, t) == Self.fullChecksum(finished), "\(from) → \(newFrom), \(payload) B")
            }
        }
    }

    /// What tcp_gso_segment does with a partial GSO packet: cuts the payload into `gsoSize`
    /// pieces, each with a copy of the headers (sequence advanced, IP lengths set) and the
    /// pseudo-header sum's length changed from the whole packet's to the piece's
    /// (`~csum_fold(csum_add(csum_unfold(th->check), delta))`); each piece stays partial.
    static func segmentAsKernel(_ bytes: [UInt8], transportOffset t: Int, gsoSize: Int) -> [[UInt8]] {
        let headers = t + 20
        let payload = Array(bytes[headers...])
        let oldLength = UInt32(bytes.count - t)
        let sequence = UInt32(bytes[t + 4]) << 24 | UInt32(bytes[t + 5]) << 16 | UInt32(bytes[t + 6]) << 8 | UInt32(bytes[t + 7])
        var out: [[UInt8]] = []
        var offset = 0
        while offset < payload.count {
            let piece = Array(payload[offset..<min(payload.count, offset + gsoSize)])
            var s = Array(bytes[0..<headers]) + piece
            Self.setLengths(&s, transportOffset: t)
            let seq = sequence &+ UInt32(offset)
            s[t + 4] = UInt8(seq >> 24); s[t + 5] = UInt8((seq >> 16) & 0xff); s[t + 6] = UInt8((seq >> 8) & 0xff); s[t + 7] = UInt8(seq & 0xff)
            let newLength = UInt32(20 + piece.count)
            let adjusted = InternetChecksum.fold(UInt32(Self.field(bytes, t)) &+ UInt32(~UInt16(oldLength)) &+ newLength)
            s[t + 16] = UInt8(adjusted >> 8); s[t + 17] = UInt8(adjusted & 0xff)
            out.append(s)
            offset += gsoSize
        }
        return out
    }

    @Test("GSO packets (v4 and v6): rewritten, then cut into segments and finished as the kernel does, every segment's checksum is the full one")
    func gso() throws {
        let cases: [(PacketEndpoint, PacketEndpoint, PacketEndpoint, PacketEndpoint)] = [
            (endpoint("10.77.0.2", 40_000), endpoint("93.184.216.34", 443), endpoint("10.77.0.177", 41_234), endpoint("10.77.0.1", 33_001)),
            (endpoint("fd77::2", 40_000), endpoint("2606:2800:220:1::1", 443), endpoint("fd77::f:2a", 41_234), endpoint("fd77::1", 33_001)),
        ]
        for (app, remote, fake, listener) in cases {
            let t = app.address.isIPv6 ? 40 : 20
            let gso = Self.partialSegment(app, remote, payload: 4_000)
            let out = Self.rewritePartial(gso, fake, listener)
            let segments = Self.segmentAsKernel(out, transportOffset: t, gsoSize: 1_448)
            #expect(segments.count == 3)
            for segment in segments {
                let finished = Self.finishAsKernel(segment, transportOffset: t)
                #expect(Self.field(finished, t) == Self.fullChecksum(finished), "\(app) segment of \(segment.count) B")
                let p = try #require(parse(finished))
                #expect(p.source == fake.address && p.destination == listener.address)
                #expect(finished.withUnsafeBytes { TCPHeader.checksumIsValid($0, p) })
            }
        }
    }

    @Test("adjustPartial: no change keeps the field; the difference is added without complements")
    func arithmetic() {
        #expect(InternetChecksum.adjustPartial(0x1234, oldSum: 0xabcd, newSum: 0xabcd) == 0x1234)
        #expect(InternetChecksum.adjustPartial(0x0001, oldSum: 0x0000, newSum: 0x0001) == 0x0002)
        #expect(InternetChecksum.adjustPartial(0xffff, oldSum: 0x0000, newSum: 0x0001) == 0x0001)   // end-around carry
        #expect(InternetChecksum.adjustPartial(0x0005, oldSum: 0x0003, newSum: 0x0001) == 0x0003)
        #expect(InternetChecksum.adjustPartial(0x1000, oldSum: 0x1_0000, newSum: 0x0002) == 0x1001)  // sums are folded first
    }
}
