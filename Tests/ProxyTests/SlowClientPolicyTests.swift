import LocalCA
@testable import Proxy
import Testing

/// The pure decisions about slow and greedy clients: the head deadline, the per-address limit,
/// the notice throttle and the descriptor budget (issue 12 §5, §6).
@Suite("Slow clients and descriptors: policies")
struct SlowClientPolicyTests {
    @Test("HeadDeadline: the clock starts with a head's first byte, trickling bytes do not move it, completion stops it")
    func headDeadline() {
        var d = HeadDeadline(limitMillis: 1_500)
        #expect(d.limitNanos == 1_500_000_000)
        #expect(d.deadline == nil)
        #expect(!d.passed(at: 99_000_000_000))
        d.headBegan(at: 1_000)
        #expect(d.deadline == 1_500_001_000)
        d.headBegan(at: 900_000_000)          // another byte of the same head
        #expect(d.deadline == 1_500_001_000)
        #expect(!d.passed(at: 1_500_000_999))
        #expect(d.passed(at: 1_500_001_000))
        d.headCompleted()
        #expect(d.deadline == nil)
        #expect(!d.passed(at: 2_000_000_000))
        d.headBegan(at: 5_000_000_000)        // the next head on the keep-alive connection
        #expect(d.deadline == 6_500_000_000)
        #expect(HeadDeadline(limitMillis: 0).limitNanos == 1_000_000)
    }

    @Test("HeadDeadline: 408 unless a response is under way; the reason and the response name the limit")
    func headDeadlineEnding() {
        #expect(HeadDeadline.ending(responseUnderWay: false) == .requestTimeout)
        #expect(HeadDeadline.ending(responseUnderWay: true) == .close)
        #expect(HeadDeadline.reason(limitMillis: 10_000) == "the client sent no complete request head within 10 s (tv closed the connection)")
        #expect(HeadDeadline.seconds(1_500) == "1.5 s")
        #expect(HeadDeadline.seconds(250) == "250 ms")
        let body = "tv: the request head did not arrive within 2 s; send it again\n"
        #expect(String(decoding: HeadDeadline.requestTimeoutResponse(limitMillis: 2_000), as: UTF8.self)
                == "HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
    }

    @Test("NoticeThrottle: the first event is said, the next ones within the interval are not, the next notice counts them all")
    func throttle() {
        var t = NoticeThrottle(intervalNanos: 100)
        #expect(t.note(at: 1_000) == 1)
        #expect(t.note(at: 1_050) == nil)
        #expect(t.note(at: 1_099) == nil)
        #expect(t.unsaid == 2)
        #expect(!t.isStale(at: 1_099))
        #expect(t.note(at: 1_100) == 3)
        #expect(t.unsaid == 0)
        #expect(t.isStale(at: 1_200))
        #expect(NoticeThrottle().intervalNanos == 60_000_000_000)
        // Two loops: the second read the clock a little before the first said its notice.
        var loops = NoticeThrottle(intervalNanos: 100)
        #expect(loops.note(at: 5_000) == 1)
        #expect(loops.note(at: 4_990) == nil)
        #expect(!loops.isStale(at: 4_990))
        #expect(loops.note(at: 5_100) == 2)
    }

    static let a = IPAddress("192.0.2.1")!
    static let b = IPAddress("2001:db8::1")!

    @Test("ClientAddressLimit: N per address, the N+1th refused and said once per interval, released connections make room")
    func perAddress() {
        var limit = ClientAddressLimit(maximum: 2, noticeIntervalNanos: 1_000)
        #expect(limit.admit(Self.a, now: 10) == .admitted)
        #expect(limit.admit(Self.a, now: 11) == .admitted)
        #expect(limit.admit(Self.b, now: 12) == .admitted)
        #expect(limit.admit(Self.a, now: 13) == .refused(notice: 1))
        #expect(limit.admit(Self.a, now: 14) == .refused(notice: nil))
        #expect(limit.admit(Self.a, now: 1_012) == .refused(notice: nil))
        #expect(limit.admit(Self.a, now: 1_013) == .refused(notice: 3))
        #expect(limit.openConnections(Self.a) == 2)
        #expect(limit.addresses == 2)
        limit.release(Self.a)
        #expect(limit.admit(Self.a, now: 1_100) == .admitted)
        limit.release(Self.b)
        #expect(limit.openConnections(Self.b) == 0)
        #expect(limit.addresses == 1)
        limit.release(Self.b)               // not held: nothing to release
        #expect(limit.openConnections(Self.b) == 0)
    }

    @Test("ClientAddressLimit: loopback (127.0.0.0/8, ::1, ::ffff:127.x) is every local program, not one client: never counted; every other address is")
    func loopbackIsNotCounted() {
        var limit = ClientAddressLimit(maximum: 2, noticeIntervalNanos: 1_000)
        for text in ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"] {
            let address = IPAddress(text)!
            #expect(!ClientAddressLimit.counts(address))
            for i in 0..<1_100 { #expect(limit.admit(address, now: UInt64(i)) == .admitted) }
            #expect(limit.openConnections(address) == 0)
        }
        #expect(limit.addresses == 0)
        for text in ["192.0.2.2", "::ffff:10.0.0.1", "fe80::1", "2001:db8::1", "0.0.0.0", "128.0.0.1"] {
            #expect(ClientAddressLimit.counts(IPAddress(text)!))
        }
        #expect(limit.admit(Self.a, now: 10) == .admitted)
        #expect(limit.admit(Self.a, now: 11) == .admitted)
        #expect(limit.admit(Self.a, now: 12) == .refused(notice: 1))
    }

    @Test("ClientAddressLimit: 0 is no limit; the default is a quarter of the cap within 64…1024")
    func noLimitAndDefault() {
        var none = ClientAddressLimit(maximum: 0)
        for i in 0..<5_000 { #expect(none.admit(Self.a, now: UInt64(i)) == .admitted) }
        #expect(none.addresses == 0)
        #expect(ClientAddressLimit.defaultMaximum(connectionCap: 10_000) == 1_024)
        #expect(ClientAddressLimit.defaultMaximum(connectionCap: 2_000) == 500)
        #expect(ClientAddressLimit.defaultMaximum(connectionCap: 100) == 64)
    }

    @Test("DescriptorBudget: the soft limit goes up to the hard one (at most 2^20); the cap is what the rest allows (the loops, what opens after the proxy, room while running), at least 1")
    func descriptorBudget() {
        #expect(DescriptorBudget.raisedSoftLimit(soft: 1_024, hard: 524_288) == 524_288)
        #expect(DescriptorBudget.raisedSoftLimit(soft: 64, hard: 4_096) == 4_096)
        #expect(DescriptorBudget.raisedSoftLimit(soft: 64, hard: 64) == nil)
        #expect(DescriptorBudget.raisedSoftLimit(soft: 1_024, hard: UInt64.max) == 1_048_576)
        #expect(DescriptorBudget.raisedSoftLimit(soft: 1_048_576, hard: UInt64.max) == nil)
        // Besides connections: open + 2 per loop + 13 after the proxy + 16 while running.
        #expect(DescriptorBudget.besidesConnections(inUse: 17, loops: 2) == 50)
        #expect(DescriptorBudget.besidesConnections(inUse: 17, loops: 0) == 48)
        #expect(DescriptorBudget.connectionCap(configured: 10_000, limit: 1_048_576, inUse: 17, loops: 2) == 10_000)
        // (4096 - 50) / 3
        #expect(DescriptorBudget.connectionCap(configured: 10_000, limit: 4_096, inUse: 17, loops: 2) == 1_348)
        #expect(DescriptorBudget.connectionCap(configured: 10_000, limit: 4_097, inUse: 17, loops: 2) == 1_349)
        // 64 loops (one per core of a large host): (4096 - 17 - 128 - 29) / 3
        #expect(DescriptorBudget.connectionCap(configured: 10_000, limit: 4_096, inUse: 17, loops: 64) == 1_307)
        // The default soft limit: (1024 - 12 - 2 - 29) / 3
        #expect(DescriptorBudget.connectionCap(configured: 10_000, limit: 1_024, inUse: 12, loops: 1) == 327)
        // A trial's `ulimit -n 64`, 17 open when the proxy started, 2 loops: (64 - 50) / 3
        #expect(DescriptorBudget.connectionCap(configured: 10_000, limit: 64, inUse: 17, loops: 2) == 4)
        #expect(DescriptorBudget.connectionCap(configured: 10_000, limit: 32, inUse: 20, loops: 2) == 1)
        #expect(DescriptorBudget.connectionCap(configured: 2, limit: 4_096, inUse: 20, loops: 2) == 2)
        #expect(DescriptorBudget.connectionCap(configured: 10_000, limit: 0, inUse: 20, loops: 2) == 10_000)
    }

    @Test("DescriptorBudget.start: what a session needs before it makes anything (open + 14 of its wiring + 2 per loop + 13 + 16, and 3 for each of 4 connections), and the cap that leaves")
    func descriptorBudgetAtStart() {
        // The three standard streams, 2 loops: 3 + 14 + 4 + 13 + 16 = 50 besides connections, 62 with 4 of them.
        #expect(DescriptorBudget.start(configured: 10_000, limit: 64, inUse: 3, loops: 2) == .start(cap: 4))
        #expect(DescriptorBudget.start(configured: 10_000, limit: 62, inUse: 3, loops: 2) == .start(cap: 4))
        #expect(DescriptorBudget.start(configured: 10_000, limit: 61, inUse: 3, loops: 2) == .refuse(needed: 62))
        // The trial's limits, all under it (SIGILL at 24, the banner and then an exit at 28, …).
        for limit: UInt64 in [16, 20, 24, 28, 32, 40, 48] {
            #expect(DescriptorBudget.start(configured: 10_000, limit: limit, inUse: 3, loops: 2) == .refuse(needed: 62))
        }
        // One loop needs 2 fewer; 64 loops 124 more.
        #expect(DescriptorBudget.start(configured: 10_000, limit: 60, inUse: 3, loops: 1) == .start(cap: 4))
        #expect(DescriptorBudget.start(configured: 10_000, limit: 59, inUse: 3, loops: 1) == .refuse(needed: 60))
        #expect(DescriptorBudget.start(configured: 10_000, limit: 185, inUse: 3, loops: 64) == .refuse(needed: 186))
        // Descriptors inherited from the parent count against the limit as much as tv's own.
        #expect(DescriptorBudget.start(configured: 10_000, limit: 64, inUse: 40, loops: 2) == .refuse(needed: 99))
        // Room for more: the cap grows by one per 3 descriptors, up to the configured cap.
        #expect(DescriptorBudget.start(configured: 10_000, limit: 1_024, inUse: 3, loops: 2) == .start(cap: 324))
        #expect(DescriptorBudget.start(configured: 10_000, limit: 1_048_576, inUse: 3, loops: 2) == .start(cap: 10_000))
        #expect(DescriptorBudget.start(configured: 10_000, limit: UInt64.max, inUse: 3, loops: 2) == .start(cap: 10_000))
        // An unknown limit (getrlimit failed) refuses nothing.
        #expect(DescriptorBudget.start(configured: 10_000, limit: 0, inUse: 3, loops: 2) == .start(cap: 10_000))
    }

    @Test("the refusal at start names the limit, what tv needs and `ulimit -n`, in one sentence")
    func descriptorLimitTooLowSentence() {
        #expect(ProxyError.descriptorLimitTooLow(limit: 28, needed: 62, connections: 4).message
                == "tv needs at least 62 open files (to start, and to take 4 connections at once), and this process may have only 28 (the hard limit, `ulimit -Hn`); raise it (`ulimit -n 1024` in the shell that starts tv; above the hard limit, as root or with a nofile line in /etc/security/limits.conf) and start tv again.")
        #expect(ProxyError.descriptorLimitTooLow(limit: 28, needed: 62, connections: 4).exitCode == 1)
    }

    @Test("ProxyNotice: one sentence each, saying what happened and what to do")
    func notices() {
        #expect(ProxyNotice.clientAddressLimit(address: "127.0.0.1", limit: 3, refused: 1).message
                == "refused a connection from 127.0.0.1, which already holds 3 (the most one client address may open; raise it with --max-per-client)")
        #expect(ProxyNotice.clientAddressLimit(address: "::1", limit: 3, refused: 4).message
                == "refused 4 connections from ::1, which already holds 3 (the most one client address may open; raise it with --max-per-client)")
        #expect(ProxyNotice.connectionCap(cap: 4, descriptorLimit: 64, refused: 2).message
                == "refused 2 connections: 4 are open, the most tv takes at once (sized from the file-descriptor limit of 64; raise it with ulimit -n)")
        #expect(ProxyNotice.connectionCap(cap: 10_000, descriptorLimit: nil, refused: 1).message
                == "refused a connection: 10000 are open, the most tv takes at once")
        #expect(ProxyNotice.outOfDescriptors(systemWide: false, limit: 64, failures: 7).message
                == "could not accept 7 connections: tv ran out of file descriptors (its limit is 64; raise it with ulimit -n); clients wait in the listen queue until some close")
        #expect(ProxyNotice.outOfDescriptors(systemWide: true, limit: 64, failures: 1).message
                == "could not accept a connection: the system ran out of file descriptors (fs.file-max); clients wait in the listen queue until some close")
    }
}
