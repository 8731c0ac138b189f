import Dispatch
import Foundation
import CTVShims
import Synchronization

/// What waits in a `BoundedWriterQueue` between the producers and the writer thread: the user's
/// own storage, bound and drop counts. The queue calls every member with its mutex held.
public protocol WriterBatch: Sendable {
    /// What one `enqueue` hands in (read during the call only: the batch copies what it keeps).
    associatedtype Offer
    /// What `enqueue` answers the producer (whether its offer was taken).
    associatedtype Outcome: Sendable
    /// The user's counters, kept beside the batch under the queue's mutex.
    associatedtype Counters: Sendable

    /// Events in the batch.
    var count: Int { get }
    /// True when the batch should be written before the writer's linger ends (it is half full).
    var isWorthWritingNow: Bool { get }
    /// Takes what of `offer` fits and counts what does not (dropped) in `counters`; takes nothing
    /// when `refusing` (the queue is stopping) but still counts it.
    /// - Returns: how many events were added (each is accepted, and finished by a write), and the
    ///   producer's answer.
    /// `offer` is consumed: a batch that keeps it moves it in (a flow event is one copy less
    /// per `enqueue`, ~450 instructions of its enum's copy witness; callgrind, h1 row).
    mutating func add(_ offer: consuming Offer, refusing: Bool, counters: inout Counters) -> (added: Int, outcome: Outcome)
    /// Empties the batch after a write, keeping what storage the type sees fit (the queue swaps
    /// it back in for the next batch).
    mutating func removeAll()
}

/// The writer thread's side of a `BoundedWriterQueue`: what a batch write is, what it does
/// between batches and when it stops. Called on the writer thread only.
public protocol QueueWriter: AnyObject {
    associatedtype Batch: WriterBatch

    /// Called at the top of every turn of the loop, busy or idle (periodic work that is due).
    func tick()
    /// When the writer must wake although nothing was queued (a retry, a sweep); nil: only when
    /// signalled. Read each time the writer goes to sleep or lingers.
    var idleDeadline: DispatchTime? { get }
    /// `idleDeadline` passed while the writer slept.
    func idleDeadlinePassed()
    /// Writes one batch.
    /// - Returns: how many of its events failed (they still count as finished for flushes).
    func write(_ batch: Batch) -> Int
    /// The queue is stopping and its batch is written: last work, then close.
    func stop()
    /// Called under the queue's mutex right after `taken` was swapped out for writing, with the
    /// empty batch producers fill next (nothing is in it yet): a writer that knows where the next
    /// batch's bytes will land sets it up here (the capture writer: `CaptureBatch.firstBlockOffset`).
    /// Default: nothing.
    func prepare(_ next: inout Batch, following taken: Batch)
}

extension QueueWriter {
    public func prepare(_ next: inout Batch, following taken: Batch) {}
}

/// The bounded queue between threads that report events and one writer thread, and that
/// thread's loop; the flow writer and the content writer each run one.
///
/// - Producers never wait: `enqueue` takes the mutex, lets the batch take the offer (or count
///   it as dropped when it does not fit, or when the queue is stopping) and returns; it signals
///   the writer only when the writer sleeps, or lingers while the batch is worth writing now.
/// - The writer, woken by a first event, lingers up to `lingerMillis` for more (cut short by a
///   flush, a stop, a job, `expedite` or a half-full batch), so a burst costs one write; then
///   it takes the whole batch (swapping in the emptied storage of the previous one, so each
///   batch's storage is allocated once and reused: no fresh pages for producers to fault in).
/// - `flush` waits until every event accepted before it is finished; `pause` (tests) holds
///   events back; `stop` writes the rest (even when paused), stops the writer and waits for it.
/// - `perform` runs a job on the writer thread between batches and waits for it.
public final class BoundedWriterQueue<Writer: QueueWriter>: Sendable {
    public typealias Batch = Writer.Batch
    /// Work run on the writer thread with its writer.
    public typealias Job = @Sendable (Writer) -> Void

    @usableFromInline
    struct State: Sendable {
        @usableFromInline var batch: Batch
        @usableFromInline var counters: Batch.Counters
        /// Sleep, linger, pause, stop and flushes.
        @usableFromInline var handshake = WriterHandshake()
        var jobs: [Job] = []
        /// `expedite` was called since the batch was taken: no linger for it.
        var expedited = false

        @usableFromInline
        init(batch: Batch, counters: Batch.Counters) {
            self.batch = batch
            self.counters = counters
        }
    }

    private enum Step {
        case sleep
        /// The batch was swapped into the writer's `taken` storage.
        case write
        case jobs([Job])
        case stop([DispatchSemaphore])
    }

    /// How long the writer gathers events after it wakes, milliseconds (0: never).
    public let lingerMillis: Int
    /// Whether the writer also lingers after a write (so a busy writer writes batches at least a
    /// linger long), or only after a wake-up.
    public let lingerAfterWrite: Bool
    @usableFromInline let state: Mutex<State>
    @usableFromInline let wake = DispatchSemaphore(value: 0)
    private let stoppedSignal = DispatchSemaphore(value: 0)
    /// A timed stop gave up on the writer (`stop(waitingAtMost:)`): later stops (a deinit's)
    /// do not wait for it either.
    private let gaveUpWaiting = Atomic<Bool>(false)
    /// An empty batch like the first, the storage the writer swaps in when it takes one.
    private let emptyBatch: Batch

    /// - Parameters:
    ///   - batch: the empty batch (with its bounds) that producers fill.
    ///   - counters: the counters' starting values.
    public init(batch: Batch, counters: Batch.Counters, lingerMillis: Int, lingerAfterWrite: Bool) {
        emptyBatch = batch
        state = Mutex(State(batch: batch, counters: counters))
        self.lingerMillis = max(lingerMillis, 0)
        self.lingerAfterWrite = lingerAfterWrite
    }

    /// Offers `offer` to the batch; never blocks. Inlinable so that the user's batch is
    /// specialized into its producers (no generic dispatch per event).
    /// - Returns: the batch's answer.
    @inlinable
    public func enqueue(_ offer: consuming Batch.Offer) -> Batch.Outcome {
        // Moved into the lock's closure through an optional (a captured value cannot be consumed).
        var slot = Optional(offer)
        let (outcome, signal) = state.withLock { state -> (Batch.Outcome, Bool) in
            let (added, outcome) = state.batch.add(slot.take()!, refusing: state.handshake.stopping, counters: &state.counters)
            guard added > 0 else { return (outcome, false) }
            state.handshake.accept(added)
            if state.handshake.takeSleepingWriter() { return (outcome, true) }
            return (outcome, state.batch.isWorthWritingNow && state.handshake.takeLingeringWriter())
        }
        if signal { wake.signal() }
        return outcome
    }

    /// What is queued is written without waiting out the linger (it is cut short if it is
    /// running). Never blocks.
    public func expedite() {
        let signal = state.withLock { state -> Bool in
            guard state.batch.count > 0 else { return false }
            state.expedited = true
            return state.handshake.takeLingeringWriter()
        }
        if signal { wake.signal() }
    }

    /// Runs `job` on the writer thread (between batches) and waits for it. Returns false without
    /// running it when the queue is stopping or stopped.
    public func perform(_ job: @escaping Job) -> Bool {
        perform(job, waitingUntil: .distantFuture)
    }

    /// `perform` that waits no later than `deadline`: false when the queue is stopping (the job
    /// is not run) or the deadline passed first (the job still runs, later).
    public func perform(_ job: @escaping Job, waitingUntil deadline: DispatchTime) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let (accepted, signal) = state.withLock { state -> (Bool, Bool) in
            guard !state.handshake.stopping else { return (false, false) }
            state.jobs.append { writer in
                job(writer)
                done.signal()
            }
            let lingering = state.handshake.takeLingeringWriter()
            return (true, state.handshake.takeSleepingWriter() || lingering)
        }
        guard accepted else { return false }
        if signal { wake.signal() }
        return done.wait(timeout: deadline) == .success
    }

    /// Blocks until every event accepted before the call is finished (written or failed).
    /// Returns at once after the writer stopped. Never call it while paused (it would wait for
    /// `resume`).
    public func flush() {
        _ = flush(waitingUntil: .distantFuture)
    }

    /// `flush()` that waits no later than `deadline`: true when everything accepted before the
    /// call is finished, false when the deadline passed first (the writer goes on; the waiter it
    /// signals later is simply dropped). Never call it while paused.
    public func flush(waitingUntil deadline: DispatchTime) -> Bool {
        let (waiter, signal) = state.withLock { $0.handshake.addFlushWaiter() }
        if signal { wake.signal() }
        guard let waiter else { return true }
        return waiter.wait(timeout: deadline) == .success
    }

    /// Test hook: the writer leaves queued events alone until `resume()` (jobs still run).
    public func pause() {
        state.withLock { $0.handshake.paused = true }
    }

    /// Undoes `pause()`.
    public func resume() {
        let signal = state.withLock { $0.handshake.resume() }
        if signal { wake.signal() }
    }

    /// Asks the writer to write what is queued (even when paused) and stop; waits until it has.
    /// Later offers are refused (and counted by the batch). Safe to call more than once and from
    /// several threads.
    public func stop() {
        let signal = state.withLock { $0.handshake.requestStop() }
        if signal { wake.signal() }
        guard !gaveUpWaiting.load(ordering: .relaxed) else { return }
        stoppedSignal.wait()
        stoppedSignal.signal()  // let any other caller of stop() through too
    }

    /// `stop`, waiting at most `seconds` for the writer; false when it had not finished by then
    /// (a write blocked on a server that does not answer: the thread is left to it, and the
    /// process may exit without it).
    public func stop(waitingAtMost seconds: Double) -> Bool {
        let signal = state.withLock { $0.handshake.requestStop() }
        if signal { wake.signal() }
        guard stoppedSignal.wait(timeout: .now() + seconds) == .success else {
            gaveUpWaiting.store(true, ordering: .relaxed)
            return false
        }
        stoppedSignal.signal()
        return true
    }

    /// Starts the writer's thread, named `name`: `make` builds the writer on that thread (a
    /// SQLite connection or a file belongs to the thread that opened it), then the thread runs
    /// the queue. Returns once the writer is made.
    /// - Throws: what `make` threw; the queue is abandoned then, and no thread is left running.
    public func startThread(named name: String, making make: @escaping @Sendable () throws -> Writer) throws {
        let startup = Mutex<(any Error)?>(nil)
        let started = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = tv_set_thread_name(name)
            let writer: Writer
            do {
                writer = try make()
            } catch {
                startup.withLock { $0 = error }
                started.signal()
                return
            }
            started.signal()
            self.run(writer)
        }
        thread.name = name
        thread.start()
        started.wait()
        if let error = startup.withLock({ $0 }) {
            abandon()
            throw error
        }
    }

    /// Marks the queue stopped without a writer (the writer could not start).
    public func abandon() {
        state.withLock { $0.handshake.abandon() }
        stoppedSignal.signal()
    }

    /// Lets the writer change the counters.
    public func updateCounters(_ body: (inout Batch.Counters) -> Void) {
        state.withLock { body(&$0.counters) }
    }

    /// Reads the counters with the batch waiting now and the handshake's figures (accepted,
    /// finished, failed), under one lock.
    public func read<T: Sendable>(_ body: (Batch.Counters, Batch, WriterHandshake) -> T) -> T {
        state.withLock { body($0.counters, $0.batch, $0.handshake) }
    }

    /// After a wake-up or a write: gathers what follows for up to the linger (or until
    /// `deadline`), unless the batch is empty or already worth writing, or someone waits.
    private func linger(until deadline: DispatchTime?) {
        guard lingerMillis > 0 else { return }
        let gather = state.withLock { state -> Bool in
            guard !state.handshake.stopping, !state.handshake.paused, !state.expedited, !state.handshake.hasFlushWaiters,
                  state.jobs.isEmpty, state.batch.count > 0, !state.batch.isWorthWritingNow else { return false }
            state.handshake.lingering = true
            return true
        }
        guard gather else { return }
        let end = DispatchTime.now() + .milliseconds(lingerMillis)
        _ = wake.wait(timeout: deadline.map { min($0, end) } ?? end)
        // Whoever ended the wait cleared `lingering` and signalled; one that came just after the
        // timeout left a signal behind, which only costs one spare turn of the loop.
        state.withLock { $0.handshake.lingering = false }
    }

    /// The writer thread's loop: jobs first, then the whole batch (unless paused), else sleep
    /// until signalled or `writer.idleDeadline`; on stop, the rest is written, `writer.stop()`
    /// runs, flushes still waiting are released, and the loop returns.
    ///
    /// Two batches' storage take turns: the full batch is swapped with `taken` (emptied after its
    /// write, its capacity kept) under the mutex, and no other copy of either is held, so the
    /// producers append into storage that is uniquely referenced and already grown: no
    /// copy-on-write, no fresh allocation (and no page faults) per batch on the data path.
    public func run(_ writer: Writer) {
        var taken = emptyBatch
        while true {
            writer.tick()
            let step = state.withLock { state -> Step in
                if !state.jobs.isEmpty {
                    let jobs = state.jobs
                    state.jobs = []
                    return .jobs(jobs)
                }
                if state.batch.count > 0 && (!state.handshake.paused || state.handshake.stopping) {
                    swap(&taken, &state.batch)
                    writer.prepare(&state.batch, following: taken)
                    state.expedited = false
                    return .write
                }
                if state.handshake.stopping { return .stop(state.handshake.markStopped()) }
                state.handshake.writerSleeping = true
                return .sleep
            }
            switch step {
            case .sleep:
                let deadline = writer.idleDeadline
                if let deadline {
                    if wake.wait(timeout: deadline) == .timedOut {
                        // A signal sent between the timeout and clearing the flag only makes a
                        // later sleep return early, which is harmless.
                        state.withLock { $0.handshake.writerSleeping = false }
                        writer.idleDeadlinePassed()
                        continue
                    }
                } else {
                    wake.wait()
                }
                linger(until: deadline)
            case let .jobs(jobs):
                jobs.forEach { $0(writer) }
            case .write:
                let failed = writer.write(taken)
                let written = taken.count
                taken.removeAll()
                let satisfied = state.withLock { $0.handshake.finish(written, failed: failed) }
                satisfied.forEach { $0.signal() }
                if lingerAfterWrite { linger(until: writer.idleDeadline) }
            case let .stop(waiters):
                writer.stop()
                waiters.forEach { $0.signal() }
                stoppedSignal.signal()
                return
            }
        }
    }
}
