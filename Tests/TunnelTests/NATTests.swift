import FlowTerms
import Wire
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Tunnel

@Suite("FakeEndpointPool and TCPNATTable: allocation, quarantine, ISN-aware reuse, lifetimes, bounds")
struct NATTests {
    let second: UInt64 = 1_000_000_000

    func pool(start: UInt64 = 0, addresses: UInt64 = 2, ports: ClosedRange<UInt16> = 10_000...10_002) -> FakeEndpointPool {
        FakeEndpointPool(firstAddress: PacketAddress("10.77.0.129")!, addressCount: addresses, ports: ports, startSlot: start)
    }

    @Test("slots walk addresses first, then ports; the walk starts where it is told (a random slot in the engine)")
    func slots() {
        var p = pool(start: 3)
        #expect(p.size == 6)
        #expect(p.endpoint(atSlot: 0) == endpoint("10.77.0.129", 10_000))
        #expect(p.endpoint(atSlot: 1) == endpoint("10.77.0.130", 10_000))
        #expect(p.endpoint(atSlot: 5) == endpoint("10.77.0.130", 10_002))
        #expect(p.allocate(now: 0) == endpoint("10.77.0.130", 10_001))   // slot 3
        #expect(p.allocate(now: 0) == endpoint("10.77.0.129", 10_002))   // slot 4
        #expect(p.contains(endpoint("10.77.0.130", 10_002)) && !p.contains(endpoint("10.77.0.131", 10_000)) && !p.contains(endpoint("10.77.0.129", 9_999)))
    }

    @Test("a released endpoint sits out the 60 s quarantine; a full pool says nil")
    func quarantine() {
        var p = pool(addresses: 1, ports: 10_000...10_001)
        let a = p.allocate(now: 0)!, b = p.allocate(now: 0)!
        #expect(a != b)
        let v1 = p.allocate(now: 0)
        #expect(v1 == nil)
        p.release(a, now: 5 * second)
        #expect(p.quarantinedCount == 1)
        let v2 = p.allocate(now: 64 * second)
        #expect(v2 == nil)
        let v3 = p.allocate(now: 65 * second)
        #expect(v3 == a)
        #expect(p.inUseCount == 2 && p.quarantinedCount == 0)
    }

    func table(capacity: Int = 8) -> TCPNATTable {
        TCPNATTable(capacity: capacity, pool4: pool(addresses: 4, ports: 10_000...10_099), pool6: nil)
    }

    let app = endpoint("10.77.0.1", 40_000)
    let remote = endpoint("10.203.0.2", 443)

    @Test("SYN → connect first; the same SYN while connecting is a retransmission; after connect it is forwarded")
    func synLifecycle() throws {
        var t = table()
        guard case .connectFirst(let entry, nil) = t.appSYN(app: app, remote: remote, isn: 1000, now: 0) else { Issue.record("expected connectFirst"); return }
        #expect(entry.state == .connecting && t.isFake(entry.fake))
        let v4 = t.appSYN(app: app, remote: remote, isn: 1000, now: 1)
        #expect(v4 == .retransmitWhileConnecting)
        t.connected(entry.id)
        guard case .forward(let same) = t.appSYN(app: app, remote: remote, isn: 1000, now: 2) else { Issue.record("expected forward"); return }
        #expect(same.id == entry.id && same.state == .open)
        #expect(t.forward(app: app, remote: remote)?.id == entry.id)
        #expect(t.reverse(fake: entry.fake)?.id == entry.id)
    }

    @Test("a SYN with another ISN on the same four-tuple is a new connection: the old entry goes, a fresh fake endpoint comes")
    func isnReuse() {
        var t = table()
        guard case .connectFirst(let old, nil) = t.appSYN(app: app, remote: remote, isn: 1000, now: 0) else { return }
        t.connected(old.id)
        guard case .connectFirst(let new, let replaced) = t.appSYN(app: app, remote: remote, isn: 5000, now: second) else {
            Issue.record("expected a new entry"); return
        }
        #expect(replaced?.id == old.id && new.id != old.id && new.fake != old.fake && new.isn == 5000)
        #expect(t.reverse(fake: old.fake) == nil && t.count == 1)
    }

    @Test("FIN both ways closes; the entry lingers 10 s, then goes; a RST closes at once; open entries never expire")
    func closing() {
        var t = table()
        guard case .connectFirst(let a, nil) = t.appSYN(app: app, remote: remote, isn: 1, now: 0) else { return }
        t.connected(a.id)
        let v5 = t.note(a.id, fromApp: true, flags: TCPFlags.fin | TCPFlags.ack, now: second)
        #expect(!v5)
        let v6 = t.note(a.id, fromApp: false, flags: TCPFlags.fin | TCPFlags.ack, now: 2 * second)
        #expect(v6)
        let v7 = t.expire(now: 11 * second)
        #expect(v7.isEmpty)
        let v8 = t.expire(now: 12 * second)
        #expect(v8.map(\.id) == [a.id])
        guard case .connectFirst(let b, nil) = t.appSYN(app: endpoint("10.77.0.1", 40_001), remote: remote, isn: 2, now: 0) else { return }
        t.connected(b.id)
        let v9 = t.note(b.id, fromApp: false, flags: TCPFlags.rst, now: 20 * second)
        #expect(v9)
        let v10 = t.expire(now: 30 * second)
        #expect(v10.map(\.id) == [b.id])
        guard case .connectFirst(let c, nil) = t.appSYN(app: endpoint("10.77.0.1", 40_002), remote: remote, isn: 3, now: 0) else { return }
        t.connected(c.id)
        let v11 = t.expire(now: 100_000 * second)
        #expect(v11.isEmpty && t.entry(c.id)?.state == .open)
    }

    /// A trial's flake: a SYN retransmitted by the program's kernel before tv's reset (for a
    /// connect that failed when ARP gave up, ~3 s) reached it opened a second flow.
    @Test("a failed connect's SYN is remembered 10 s: the same ISN is refused again as the failed flow, another ISN is a new connection")
    func failedSYNRemembered() throws {
        var t = table(capacity: 2)
        guard case .connectFirst(let a, nil) = t.appSYN(app: app, remote: remote, isn: 1000, now: 0) else { Issue.record("expected connectFirst"); return }
        t.assignFlowID(a.id, 77)
        #expect(t.fail(a.id, now: 3 * second)?.id == a.id)
        #expect(t.count == 0 && t.failedCount == 1 && t.forward(app: app, remote: remote) == nil && t.reverse(fake: a.fake) == nil)
        #expect(t.appSYN(app: app, remote: remote, isn: 1000, now: 3 * second + 1) == .failedAgain(flowID: 77, answer: .reset))
        #expect(t.appSYN(app: app, remote: remote, isn: 1000, now: 12 * second) == .failedAgain(flowID: 77, answer: .reset))
        #expect(t.count == 0 && t.failedCount == 1)
        // The memory lapses at fail + 10 s (expire runs on the engine's housekeeping).
        #expect(t.expire(now: 12 * second + 999_999_999).isEmpty && t.failedCount == 1)
        #expect(t.expire(now: 13 * second).isEmpty && t.failedCount == 0)
        guard case .connectFirst(let b, nil) = t.appSYN(app: app, remote: remote, isn: 1000, now: 13 * second) else {
            Issue.record("expected a new connection after the memory lapsed"); return
        }
        // Another ISN on the tuple is a new socket: a new connection, and the failure is forgotten.
        t.fail(b.id, now: 14 * second)
        guard case .connectFirst(let c, nil) = t.appSYN(app: app, remote: remote, isn: 2000, now: 14 * second) else {
            Issue.record("expected a new connection for another ISN"); return
        }
        #expect(t.failedCount == 0 && c.id != b.id)
        // An older failure's deadline does not forget a newer one on the same tuple.
        t.fail(c.id, now: 15 * second)
        guard case .connectFirst(let d, nil) = t.appSYN(app: app, remote: remote, isn: 3000, now: 16 * second) else { return }
        t.fail(d.id, now: 20 * second)
        _ = t.expire(now: 25 * second)   // c's deadline: 25 s
        #expect(t.appSYN(app: app, remote: remote, isn: 3000, now: 25 * second) == .failedAgain(flowID: 0, answer: .reset))
        // At most `capacity` failures are remembered; beyond them a failure is simply removed.
        for port in 0..<3 {
            let other = endpoint("10.77.0.1", UInt16(41_000 + port))
            guard case .connectFirst(let e, nil) = t.appSYN(app: other, remote: remote, isn: 5, now: 26 * second) else { return }
            t.fail(e.id, now: 26 * second)
        }
        #expect(t.failedCount == 2)
        guard case .connectFirst = t.appSYN(app: endpoint("10.77.0.1", 41_002), remote: remote, isn: 5, now: 26 * second) else {
            Issue.record("a failure past the bound is not remembered"); return
        }
    }

    @Test("a connecting entry expires after 180 s, past the kernel's own 133 s of SYN retries (a backstop: the engine follows the program's SYNs)")
    func synTimeout() {
        var t = table()
        guard case .connectFirst(let a, nil) = t.appSYN(app: app, remote: remote, isn: 1, now: 0) else { return }
        let v12 = t.expire(now: 179 * second)
        #expect(v12.isEmpty)
        let v13 = t.expire(now: 180 * second)
        #expect(v13.map(\.id) == [a.id])
    }

    /// A run's packet list: a SYN resent after tv's host unreachable was answered with a reset
    /// (ECONNREFUSED to the program, had it read it).
    @Test("a failed connect's answer is remembered with its SYN: an ICMP destination unreachable is given again for 10 s")
    func failedAnswerRemembered() {
        var t = table(capacity: 2)
        guard case .connectFirst(let a, nil) = t.appSYN(app: app, remote: remote, isn: 1000, now: 0) else { Issue.record("expected connectFirst"); return }
        t.assignFlowID(a.id, 5)
        let unreachable = FailedConnectAnswer.unreachable(code: 1, programSees: Errno(EHOSTUNREACH))
        t.fail(a.id, now: 3 * second, answer: unreachable)
        #expect(t.appSYN(app: app, remote: remote, isn: 1000, now: 4 * second) == .failedAgain(flowID: 5, answer: unreachable))
        #expect(t.appSYN(app: app, remote: remote, isn: 1000, now: 12 * second) == .failedAgain(flowID: 5, answer: unreachable))
        _ = t.expire(now: 13 * second)
        #expect(t.failedCount == 0)
    }

    /// A trial: a blackholed server's connect answered with a reset read ECONNREFUSED; answered
    /// with nothing, the program's retransmissions must go unanswered too, not start new connects.
    @Test("a connect the server never answered: its SYN is remembered 140 s and taken in silence as the failed flow; another ISN is a new connection")
    func unansweredSYNRemembered() {
        var t = table(capacity: 4)
        guard case .connectFirst(let a, nil) = t.appSYN(app: app, remote: remote, isn: 1000, now: 0) else { Issue.record("expected connectFirst"); return }
        t.assignFlowID(a.id, 81)
        #expect(t.fail(a.id, now: 3 * second, answer: .nothing)?.id == a.id)
        #expect(t.count == 0 && t.failedCount == 1)
        #expect(t.appSYN(app: app, remote: remote, isn: 1000, now: 4 * second) == .failedAgain(flowID: 81, answer: .nothing))
        // Past the 10 s a refused one is kept, up to the program kernel's last retransmission (67 s).
        #expect(t.expire(now: 67 * second).isEmpty && t.failedCount == 1)
        #expect(t.appSYN(app: app, remote: remote, isn: 1000, now: 67 * second) == .failedAgain(flowID: 81, answer: .nothing))
        #expect(t.expire(now: 142 * second) .isEmpty && t.failedCount == 1)
        #expect(t.expire(now: 143 * second).isEmpty && t.failedCount == 0)
        guard case .connectFirst = t.appSYN(app: app, remote: remote, isn: 1000, now: 143 * second) else {
            Issue.record("expected a new connection after the memory lapsed"); return
        }
        // A refused connect on another tuple keeps its 10 s, in its own queue.
        let other = endpoint("10.77.0.1", 40_001)
        guard case .connectFirst(let b, nil) = t.appSYN(app: other, remote: remote, isn: 7, now: 150 * second) else { return }
        t.fail(b.id, now: 150 * second)
        #expect(t.appSYN(app: other, remote: remote, isn: 7, now: 151 * second) == .failedAgain(flowID: 0, answer: .reset))
        _ = t.expire(now: 160 * second)
        guard case .connectFirst = t.appSYN(app: other, remote: remote, isn: 7, now: 160 * second) else {
            Issue.record("expected the refused one forgotten after 10 s"); return
        }
    }

    /// A trial: at `tv exec`'s cap tv connected upstream, completed the program's handshake and
    /// reset it (the server saw 20 SYNs, 15 resets, 5 requests).
    @Test("no room (the proxy's cap): a new connection's SYN is .noRoom and nothing is made; known connections' SYNs are decided as ever")
    func noRoom() {
        var t = table(capacity: 4)
        #expect(t.appSYN(app: app, remote: remote, isn: 1000, now: 0, room: false) == .noRoom)
        #expect(t.count == 0 && t.pool4?.inUseCount == 0 && t.forward(app: app, remote: remote) == nil)
        guard case .connectFirst(let a, nil) = t.appSYN(app: app, remote: remote, isn: 1000, now: second) else { Issue.record("expected connectFirst"); return }
        #expect(t.appSYN(app: app, remote: remote, isn: 1000, now: 2 * second, room: false) == .retransmitWhileConnecting)
        t.connected(a.id)
        #expect(t.appSYN(app: app, remote: remote, isn: 1000, now: 3 * second, room: false) == .forward(t.entry(a.id)!))
        // Another ISN on the tuple would replace the entry: without room, the entry stays.
        #expect(t.appSYN(app: app, remote: remote, isn: 2000, now: 4 * second, room: false) == .noRoom)
        #expect(t.entry(a.id)?.state == .open && t.count == 1 && t.pool4?.inUseCount == 1)
        // A remembered failure's retransmission is answered as before; another ISN there is new.
        let other = endpoint("10.77.0.1", 40_001)
        guard case .connectFirst(let b, nil) = t.appSYN(app: other, remote: remote, isn: 5, now: 5 * second) else { return }
        t.assignFlowID(b.id, 9)
        t.fail(b.id, now: 5 * second)
        #expect(t.appSYN(app: other, remote: remote, isn: 5, now: 6 * second, room: false) == .failedAgain(flowID: 9, answer: .reset))
        #expect(t.appSYN(app: other, remote: remote, isn: 6, now: 6 * second, room: false) == .noRoom)
        #expect(t.failedCount == 1)
    }

    @Test("the table is bounded: beyond capacity SYNs get .full, and room comes back when entries go")
    func bounded() {
        var t = table(capacity: 3)
        var ids: [UInt64] = []
        for port in 0..<3 {
            guard case .connectFirst(let e, nil) = t.appSYN(app: endpoint("10.77.0.1", UInt16(30_000 + port)), remote: remote, isn: 1, now: 0) else { return }
            ids.append(e.id)
        }
        let v14 = t.appSYN(app: endpoint("10.77.0.1", 31_000), remote: remote, isn: 1, now: 0)
        #expect(v14 == .full(replaced: nil))
        t.remove(ids[0], now: 0)
        guard case .connectFirst = t.appSYN(app: endpoint("10.77.0.1", 31_000), remote: remote, isn: 1, now: 0) else { Issue.record("room expected"); return }
        #expect(t.count == 3)
    }

    /// A helper's report: the entry a reused four-tuple pushed out was removed before the pool
    /// was found empty, and `.full` did not say so (its upstream stayed open, its flow unrecorded).
    @Test("a SYN with another ISN when the fake pool is empty: .full names the entry it pushed out")
    func fullAfterReplacing() {
        var t = TCPNATTable(capacity: 8, pool4: pool(addresses: 1, ports: 10_000...10_001), pool6: nil)
        guard case .connectFirst(let a, nil) = t.appSYN(app: app, remote: remote, isn: 1, now: 0),
              case .connectFirst(_, nil) = t.appSYN(app: endpoint("10.77.0.1", 40_001), remote: remote, isn: 1, now: 0) else {
            Issue.record("expected two connections"); return
        }
        // a's fake endpoint sits out its quarantine, so the pool has none for the new socket.
        #expect(t.appSYN(app: app, remote: remote, isn: 2, now: second) == .full(replaced: a))
        #expect(t.count == 1 && t.forward(app: app, remote: remote) == nil)
    }
}
