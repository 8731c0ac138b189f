import Dispatch
@testable import FlowStore
import Foundation
import Synchronization
import Testing

/// The generic queue with a batch of numbers and a writer that logs what it is given: exact
/// counters for drops, flushes, pause, stop, failures, jobs and the linger's cut-offs.
@Suite struct BoundedWriterQueueTests {
    struct Drops: Sendable, Equatable {
        var dropped = 0
    }

    /// At most `capacity` numbers; worth writing at once from `worthAt` numbers.
    struct Numbers: WriterBatch {
        var capacity: Int
        var worthAt = Int.max
        var items: [Int] = []

        var count: Int { items.count }
        var isWorthWritingNow: Bool { items.count >= worthAt }

        mutating func add(_ offer: Int, refusing: Bool, counters: inout Drops) -> (added: Int, outcome: Bool) {
            guard !refusing, items.count < capacity else {
                counters.dropped += 1
                return (0, false)
            }
            items.append(offer)
            return (1, true)
        }

        mutating func removeAll() { items.removeAll(keepingCapacity: true) }
    }

    /// Logs batches, ticks, deadlines and the stop; a batch holding a negative number fails.
    final class LogWriter: QueueWriter, Sendable {
        struct Log {
            var batches: [[Int]] = []
            var jobs = 0
            var ticks = 0
            var deadlinesPassed = 0
            var stopped = false
            /// Idle wake-ups still wanted (each 5 ms after the writer goes to sleep).
            var wakeUps = 0
        }

        let log = Mutex(Log())
        /// Signalled after each batch is logged.
        let wrote = DispatchSemaphore(value: 0)

        init(wakeUps: Int = 0) { log.withLock { $0.wakeUps = wakeUps } }

        func tick() { log.withLock { $0.ticks += 1 } }

        var idleDeadline: DispatchTime? {
            log.withLock { $0.wakeUps > 0 } ? .now() + .milliseconds(5) : nil
        }

        func idleDeadlinePassed() {
            log.withLock {
                $0.deadlinesPassed += 1
                $0.wakeUps -= 1
            }
        }

        func write(_ batch: Numbers) -> Int {
            log.withLock { $0.batches.append(batch.items) }
            wrote.signal()
            return batch.items.contains { $0 < 0 } ? batch.count : 0
        }

        func stop() { log.withLock { $0.stopped = true } }

        var batches: [[Int]] { log.withLock { $0.batches } }
    }

    typealias Queue = BoundedWriterQueue<LogWriter>

    /// Starts the writer thread; returns once it sleeps (so the next event wakes it).
    static func start(_ queue: Queue, _ writer: LogWriter) {
        let thread = Thread { queue.run(writer) }
        thread.start()
        waitUntil { queue.read { _, _, handshake in handshake.writerSleeping } }
    }

    static func waitUntil(_ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(10)
        while !condition(), Date() < deadline { usleep(1_000) }
    }

    struct Figures: Equatable {
        var accepted, finished, failed, pending, dropped: Int
    }

    static func figures(_ queue: Queue) -> Figures {
        queue.read { counters, batch, handshake in
            Figures(accepted: handshake.accepted, finished: handshake.finished, failed: handshake.failed,
                    pending: batch.count, dropped: counters.dropped)
        }
    }

    @Test func aFullQueueDropsAndCountsWhilePausedThenResumeWritesOneBatch() {
        let queue = Queue(batch: Numbers(capacity: 3), counters: Drops(), lingerMillis: 0, lingerAfterWrite: false)
        let writer = LogWriter()
        Self.start(queue, writer)
        queue.pause()
        #expect([1, 2, 3, 4, 5].map { queue.enqueue($0) } == [true, true, true, false, false])
        #expect(Self.figures(queue) == Figures(accepted: 3, finished: 0, failed: 0, pending: 3, dropped: 2))
        #expect(writer.batches == [], "paused: nothing is written")
        queue.resume()
        queue.flush()
        #expect(writer.batches == [[1, 2, 3]])
        #expect(Self.figures(queue) == Figures(accepted: 3, finished: 3, failed: 0, pending: 0, dropped: 2))
        #expect(queue.enqueue(6), "room again after the write")
        queue.stop()
        #expect(writer.batches == [[1, 2, 3], [6]])
    }

    /// A flush cuts a long linger short and returns once what came before it is written.
    @Test func aFlushEndsTheLingerAndWaitsForTheWrite() {
        let queue = Queue(batch: Numbers(capacity: 10), counters: Drops(), lingerMillis: 60_000, lingerAfterWrite: false)
        let writer = LogWriter()
        Self.start(queue, writer)
        let started = Date()
        #expect(queue.enqueue(1))
        #expect(queue.enqueue(2))
        queue.flush()
        #expect(Date().timeIntervalSince(started) < 30, "the linger did not run out")
        #expect(writer.batches == [[1, 2]])
        #expect(Self.figures(queue) == Figures(accepted: 2, finished: 2, failed: 0, pending: 0, dropped: 0))
        queue.flush()  // nothing pending: returns at once
        queue.stop()
    }

    /// Stop writes what is queued although paused, stops the writer, and refuses (and counts)
    /// what comes after; flush and perform return at once then.
    @Test func stopWritesTheRestEvenWhenPausedAndRefusesLaterEvents() {
        let queue = Queue(batch: Numbers(capacity: 10), counters: Drops(), lingerMillis: 0, lingerAfterWrite: false)
        let writer = LogWriter()
        Self.start(queue, writer)
        queue.pause()
        #expect(queue.enqueue(1))
        #expect(queue.enqueue(2))
        queue.stop()
        #expect(writer.batches == [[1, 2]])
        #expect(writer.log.withLock { $0.stopped })
        #expect(queue.enqueue(3) == false)
        #expect(Self.figures(queue) == Figures(accepted: 2, finished: 2, failed: 0, pending: 0, dropped: 1))
        queue.flush()
        #expect(queue.perform { _ in Issue.record("a job ran after stop") } == false)
        queue.stop()  // idempotent
    }

    /// The writer's failed events count as finished (flushes return) and as failed.
    @Test func failedEventsAreFinishedAndCounted() {
        let queue = Queue(batch: Numbers(capacity: 10), counters: Drops(), lingerMillis: 0, lingerAfterWrite: false)
        let writer = LogWriter()
        Self.start(queue, writer)
        queue.pause()
        #expect(queue.enqueue(-1))
        #expect(queue.enqueue(2))
        queue.resume()
        queue.flush()
        #expect(queue.enqueue(3))
        queue.flush()
        #expect(writer.batches == [[-1, 2], [3]])
        #expect(Self.figures(queue) == Figures(accepted: 3, finished: 3, failed: 2, pending: 0, dropped: 0))
        queue.stop()
    }

    /// A half-full batch (worth writing now) or `expedite` ends the linger without a flush.
    @Test func aBatchWorthWritingOrExpeditedEndsTheLinger() {
        let queue = Queue(batch: Numbers(capacity: 10, worthAt: 3), counters: Drops(), lingerMillis: 60_000,
                          lingerAfterWrite: true)
        let writer = LogWriter()
        Self.start(queue, writer)
        #expect(queue.enqueue(1))
        #expect(queue.enqueue(2))
        #expect(queue.enqueue(3))
        #expect(writer.wrote.wait(timeout: .now() + 30) == .success)
        #expect(writer.batches == [[1, 2, 3]])
        // Lingering after the write: one event waits until it is expedited.
        #expect(queue.enqueue(4))
        queue.expedite()
        #expect(writer.wrote.wait(timeout: .now() + 30) == .success)
        #expect(writer.batches == [[1, 2, 3], [4]])
        queue.stop()
    }

    /// Jobs run on the writer thread between batches; an idle writer wakes at its deadline.
    @Test func jobsRunOnTheWriterAndIdleDeadlinesWakeIt() {
        let queue = Queue(batch: Numbers(capacity: 10), counters: Drops(), lingerMillis: 0, lingerAfterWrite: false)
        let writer = LogWriter(wakeUps: 2)
        Thread { queue.run(writer) }.start()
        Self.waitUntil { writer.log.withLock { $0.deadlinesPassed == 2 } }
        #expect(queue.perform { writer in writer.log.withLock { $0.jobs += 1 } })
        let log = writer.log.withLock { ($0.deadlinesPassed, $0.jobs, $0.ticks) }
        #expect(log.0 == 2)
        #expect(log.1 == 1)
        #expect(log.2 >= 4, "a tick at every turn: start, two deadlines, the job")
        queue.stop()
        #expect(writer.batches == [])
    }
}
