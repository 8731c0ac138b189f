import Testing
@testable import Tunnel

@Suite("FragmentReassembler: the kernel's own fragments back into datagrams; overlaps, limits, timeouts")
struct FragmentReassemblerTests {
    let second: UInt64 = 1_000_000_000

    func fragments(_ family: String) -> [CapturedPacket] {
        family == "v4"
            ? Array(CapturedPackets.every("IP (", "10.203.9.1", "proto UDP", "length 1500").prefix(2) + CapturedPackets.every("IP (", "10.203.9.1 >", "offset 2960").prefix(1))
            : Array(CapturedPackets.every("IP6", "fd03::1 > fd03::2: frag").prefix(3))
    }

    func add(_ r: inout FragmentReassembler, _ bytes: [UInt8], now: UInt64 = 0) -> FragmentReassembler.Outcome {
        let p = parse(bytes)!
        return bytes.withUnsafeBytes { r.add($0, p, now: now) }
    }

    @Test("IPv4 and IPv6, in every order: one UDP datagram of 3,000 pattern bytes whose checksum verifies", arguments: ["v4", "v6"])
    func reassembles(_ family: String) throws {
        let parts = fragments(family)
        #expect(parts.count == 3)
        for order in [[0, 1, 2], [2, 1, 0], [1, 0, 2], [2, 0, 1]] {
            var r = FragmentReassembler()
            var outcome = FragmentReassembler.Outcome.incomplete
            for (i, index) in order.enumerated() {
                outcome = add(&r, parts[index].bytes)
                if i < 2 { #expect(outcome == .incomplete) }
            }
            guard case .complete(let whole) = outcome else { Issue.record("not complete: \(outcome)"); return }
            let u = try #require(try udp(whole)?.get(), "the reassembled UDP checksum must verify")
            #expect(u.destinationPort == 7007 && u.payloadLength == 3000)
            #expect(Array(whole[u.payloadOffset...]) == capturePattern(3000))
            #expect(r.pendingCount == 0 && r.bufferedBytes == 0)
        }
    }

    @Test("an overlapping or duplicate fragment drops the datagram (RFC 5722)")
    func overlap() {
        var r = FragmentReassembler()
        let parts = fragments("v4")
        let v101 = add(&r, parts[0].bytes)
        #expect(v101 == .incomplete)
        let v102 = add(&r, parts[0].bytes)
        #expect(v102 == .dropped(.badFragment))
        #expect(r.pendingCount == 0 && r.bufferedBytes == 0)
        // A fragment whose offset lands inside the first one's data.
        var shifted = parts[1].bytes
        shifted[6] = 0x20; shifted[7] = 100   // MF, offset 100 × 8 = 800 < 1480
        shifted[10] = 0; shifted[11] = 0
        let sum = InternetChecksum.finish(InternetChecksum.sum(Array(shifted[0..<20])))
        shifted[10] = UInt8(sum >> 8); shifted[11] = UInt8(sum & 0xff)
        let v103 = add(&r, parts[0].bytes)
        #expect(v103 == .incomplete)
        let v104 = add(&r, shifted)
        #expect(v104 == .dropped(.badFragment))
    }

    @Test("a last fragment that contradicts the data already held is refused")
    func contradictingEnd() {
        var r = FragmentReassembler()
        let parts = fragments("v4")
        #expect(add(&r, parts[1].bytes) == .incomplete)   // bytes 1480..<2960
        var last = parts[0].bytes                          // offset 0 … made the last: ends at 1480
        last[6] = 0; last[7] = 0
        last[10] = 0; last[11] = 0
        let sum = InternetChecksum.finish(InternetChecksum.sum(Array(last[0..<20])))
        last[10] = UInt8(sum >> 8); last[11] = UInt8(sum & 0xff)
        let v105 = add(&r, last)
        #expect(v105 == .dropped(.badFragment))
    }

    @Test("unfinished datagrams time out after 30 s")
    func timeout() {
        var r = FragmentReassembler()
        let v106 = add(&r, fragments("v6")[0].bytes, now: 0)
        #expect(v106 == .incomplete)
        let v107 = r.expire(now: 29 * second)
        #expect(v107 == 0)
        let v108 = r.expire(now: 30 * second)
        #expect(v108 == 1)
        #expect(r.pendingCount == 0 && r.bufferedBytes == 0 && r.timedOut == 1)
    }

    @Test("bounded: past the byte or datagram limit the oldest datagram is dropped")
    func limits() {
        var r = FragmentReassembler(maximumDatagrams: 1, maximumBytes: 4 << 20)
        let v109 = add(&r, fragments("v4")[0].bytes)
        #expect(v109 == .incomplete)
        let v110 = add(&r, fragments("v6")[0].bytes)
        #expect(v110 == .incomplete)
        #expect(r.pendingCount == 1 && r.evicted == 1)
        var small = FragmentReassembler(maximumDatagrams: 8, maximumBytes: 2000)
        #expect(add(&small, fragments("v4")[0].bytes) == .incomplete)   // 1480 held
        #expect(add(&small, fragments("v6")[0].bytes) == .incomplete)   // evicts the first
        #expect(small.bufferedBytes == 1448 && small.evicted == 1)
        var tiny = FragmentReassembler(maximumDatagrams: 8, maximumBytes: 1000)
        let v111 = add(&tiny, fragments("v4")[0].bytes)
        #expect(v111 == .dropped(.fragmentLimit))
    }
}
