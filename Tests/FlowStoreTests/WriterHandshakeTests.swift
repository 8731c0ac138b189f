import Dispatch
@testable import FlowStore
import Testing

@Suite struct WriterHandshakeTests {
    @Test func producersSignalOnlyASleepingOrLingeringWriter() {
        var h = WriterHandshake()
        #expect(h.takeSleepingWriter() == false)
        h.writerSleeping = true
        #expect(h.takeSleepingWriter() == true)
        #expect(h.writerSleeping == false)
        #expect(h.takeSleepingWriter() == false)
        h.lingering = true
        #expect(h.takeLingeringWriter() == true)
        #expect(h.lingering == false)
        #expect(h.takeLingeringWriter() == false)
    }

    @Test func aFlushWaitsForWhatWasAcceptedBeforeIt() {
        var h = WriterHandshake()
        #expect(h.addFlushWaiter().waiter == nil, "nothing accepted: nothing to wait for")
        h.accept(3)
        h.lingering = true
        let first = h.addFlushWaiter()
        #expect(first.waiter != nil)
        #expect(first.signal == true, "a lingering writer is cut short")
        #expect(h.hasFlushWaiters)
        h.accept(2)
        let second = h.addFlushWaiter()
        #expect(second.signal == false)
        #expect(h.finish(2).isEmpty, "2 of the first 3: no flush is satisfied")
        #expect(h.finish(1).count == 1, "3 finished: the first flush")
        #expect(h.finish(2).count == 1, "5 finished: the second")
        #expect(!h.hasFlushWaiters)
        #expect(h.accepted == 5)
        #expect(h.finished == 5)
        #expect(h.addFlushWaiter().waiter == nil, "everything finished")
    }

    @Test func stopWakesASleepingOrLingeringWriterAndReleasesWaiters() {
        var asleep = WriterHandshake()
        asleep.writerSleeping = true
        #expect(asleep.requestStop() == true)
        #expect(asleep.stopping)
        var lingering = WriterHandshake()
        lingering.lingering = true
        #expect(lingering.requestStop() == true)
        var busy = WriterHandshake()
        #expect(busy.requestStop() == false, "a busy writer sees `stopping` on its next step")

        var h = WriterHandshake()
        h.accept()
        _ = h.addFlushWaiter()
        #expect(h.markStopped().count == 1)
        #expect(h.stopped)
        #expect(h.addFlushWaiter().waiter == nil, "after the stop a flush returns at once")
    }

    @Test func resumeAndAbandon() {
        var h = WriterHandshake()
        h.paused = true
        h.writerSleeping = true
        #expect(h.resume() == true)
        #expect(h.paused == false)
        #expect(h.resume() == false)
        h.abandon()
        #expect(h.stopping && h.stopped)
    }
}
