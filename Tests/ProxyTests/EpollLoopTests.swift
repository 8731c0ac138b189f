import CTVShims
import Foundation
@testable import Proxy
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Records what the loop delivers to it, in order.
private final class Recorder: LoopHandler {
    enum Delivery: Equatable {
        case event(side: Int, readable: Bool)
        case timer(UInt64)
        case runAgain
        case shutdown
    }
    var deliveries: [Delivery] = []
    /// Called after each delivery (the test stops the loop from here).
    var after: (Recorder) -> Void = { _ in }

    func loopEvent(side: Int, events: UInt32) {
        deliveries.append(.event(side: side, readable: events & tv_EPOLLIN != 0))
        after(self)
    }
    func loopTimer(deadline: UInt64) {
        deliveries.append(.timer(deadline))
        after(self)
    }
    func loopRunAgain() {
        deliveries.append(.runAgain)
        after(self)
    }
    func loopShutdown() {
        deliveries.append(.shutdown)
        after(self)
    }
}

/// Ends a loop under test after 5 s, so a delivery that never comes fails the test instead of
/// hanging it.
final class LoopWatchdog: LoopHandler {
    private unowned let loop: EpollLoop
    private(set) var fired = false

    init(_ loop: EpollLoop) {
        self.loop = loop
        loop.armTimer(loop.register(self), at: loop.now + 5_000_000_000)
    }

    func loopEvent(side: Int, events: UInt32) {}
    func loopTimer(deadline: UInt64) {
        fired = true
        loop.stop()
    }
}

/// The inbox's target in these tests.
private final class Target {
    var received: [Int] = []
    unowned let loop: EpollLoop
    init(loop: EpollLoop) { self.loop = loop }
}

@Suite("EpollLoop")
struct EpollLoopTests {
    @Test("tokens: generation << 32 | slot << 2; a freed slot is reused with the next generation and the old token reaches no one")
    func tokens() throws {
        let loop = try EpollLoop()
        let a = Recorder(), b = Recorder(), c = Recorder()
        let ta = loop.register(a)
        let tb = loop.register(b)
        #expect(ta == 0x1_0000_0000)
        #expect(tb == 0x1_0000_0004)
        #expect(loop.liveHandlers == 2)
        loop.unregister(ta)
        loop.unregister(ta)
        #expect(loop.liveHandlers == 1)
        let tc = loop.register(c)
        #expect(tc == 0x2_0000_0000)
        #expect(loop.handler(for: ta) == nil)
        #expect(loop.handler(for: tc | 3) === c)
        #expect(loop.handler(for: tb | 1) === b)
        #expect(loop.liveHandlers == 2)
    }

    @Test("timers fire in deadline order, whatever the order they were armed in; a freed token's timer is dropped")
    func timersInOrder() throws {
        let loop = try EpollLoop()
        let recorder = Recorder()
        let gone = Recorder()
        let token = loop.register(recorder)
        let goneToken = loop.register(gone)
        let base = loop.now
        loop.armTimer(token, at: base + 3_000_000)
        loop.armTimer(token, at: base + 1_000_000)
        loop.armTimer(goneToken, at: base + 1_500_000)
        loop.armTimer(token, at: base + 2_000_000)
        loop.unregister(goneToken)
        recorder.after = { r in if r.deliveries.count == 3 { loop.stop() } }
        let watchdog = LoopWatchdog(loop)
        #expect(loop.run() == nil)
        #expect(!watchdog.fired)
        #expect(recorder.deliveries == [.timer(base + 1_000_000), .timer(base + 2_000_000), .timer(base + 3_000_000)])
        #expect(gone.deliveries == [])
        #expect(loop.now >= base + 3_000_000)
    }

    @Test("inbox: jobs posted from another thread run on the loop's thread, in posting order, with the target")
    func inboxDelivery() throws {
        let loop = try EpollLoop()
        let inbox = LoopInbox<Target>()
        #expect(inbox.wakeFD >= 0)
        let target = Target(loop: loop)
        loop.attach(inbox, to: target)
        let loopThread = pthread_self()
        let poster = Thread {
            for i in 1...3 { inbox.post { $0.received.append(i) } }
            inbox.post { t in
                t.received.append(pthread_equal(pthread_self(), loopThread) != 0 ? 100 : -100)
                t.loop.stop()
            }
        }
        let watchdog = LoopWatchdog(loop)
        poster.start()
        #expect(loop.run() == nil)
        #expect(!watchdog.fired)
        #expect(target.received == [1, 2, 3, 100])
        // A job posted after the loop ended waits in the inbox; nothing runs it.
        inbox.post { $0.received.append(4) }
        #expect(target.received == [1, 2, 3, 100])
        #expect(inbox.take().count == 1)
    }

    @Test("readiness goes to the token's handler with the side it was watched with; run-again turns follow the events")
    func eventsAndSides() throws {
        let loop = try EpollLoop()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let recorder = Recorder()
        let token = loop.register(recorder)
        #expect(loop.watch(fds[0], token: token, side: 2, events: tv_EPOLLIN))
        var byte: UInt8 = 7
        #expect(write(fds[1], &byte, 1) == 1)
        recorder.after = { r in
            if r.deliveries.count == 1 { loop.runAgain(token) } else { loop.stop() }
        }
        let watchdog = LoopWatchdog(loop)
        #expect(loop.run() == nil)
        #expect(!watchdog.fired)
        #expect(recorder.deliveries == [.event(side: 2, readable: true), .runAgain])
    }

    @Test("a drain tells the handlers still registered to shut down once the grace is over, then the loop ends")
    func drain() throws {
        let loop = try EpollLoop()
        let open = Recorder(), closed = Recorder()
        _ = loop.register(open)
        loop.unregister(loop.register(closed))
        loop.beginDrain(graceNanos: 0)
        #expect(loop.run() == nil)
        #expect(open.deliveries == [.shutdown])
        #expect(closed.deliveries == [])
    }

    @Test("TimerHeap pops due entries earliest first and keeps later ones")
    func timerHeap() {
        var heap = TimerHeap()
        for (deadline, token) in [(50, 5), (10, 1), (40, 4), (20, 2), (30, 3)] as [(UInt64, UInt64)] { heap.push(deadline, token) }
        var popped: [UInt64] = []
        while let (_, token) = heap.popDue(35) { popped.append(token) }
        #expect(popped == [1, 2, 3])
        #expect(heap.count == 2)
        #expect(heap.nextDeadline == 40)
    }
}
