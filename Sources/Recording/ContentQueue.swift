import Dispatch
import FlowStore
import Synchronization

/// The bounded queue between the flows' recorders and the content writer thread, and the thread's
/// loop. Producers never wait: `enqueue` takes the mutex, copies the chunk's kept bytes into the
/// pending batch and returns; a chunk or turn end that does not fit (`ContentBatchPolicy`) is
/// dropped and counted. The writer, woken by the first event, gathers for the policy's linger
/// before it takes the whole batch, so a burst costs it one transaction and one segment write.
/// Work that needs the writer's connection (sweeps, deletion) is handed over as a job and waited
/// for.
final class ContentQueue: Sendable {
    /// Work run on the writer thread with its state.
    typealias Job = @Sendable (ContentWriterThread) -> Void

    private struct State: Sendable {
        var batch = ContentBatch()
        var pendingBytes: Int64 = 0
        var pendingChunks = 0
        var pendingEnds = 0
        var jobs: [Job] = []
        var counters = ContentCounters()
        /// Sleep, linger (the writer, woken by a first event, waits up to the linger for more; a
        /// half-full queue, a flush, a job or a stop cuts the wait short), pause, stop, flushes.
        var handshake = WriterHandshake()
        /// A flow ended since the batch was taken: its turns are written without a linger, so a
        /// closed flow's content is readable about as soon as the flow's own row.
        var expedited = false

        /// Whom to wake after an event was queued: a sleeping writer always, a gathering one once
        /// the queue is half full.
        mutating func wakeAfterEnqueue(_ policy: ContentBatchPolicy) -> Bool {
            if handshake.takeSleepingWriter() { return true }
            guard handshake.lingering, policy.writeNow(pendingBytes: pendingBytes, pendingChunks: pendingChunks,
                                                       pendingEnds: pendingEnds) else { return false }
            return handshake.takeLingeringWriter()
        }
    }

    private enum Step {
        case sleep
        case write(ContentBatch)
        case jobs([Job])
        case stop([DispatchSemaphore])
    }

    let policy: ContentBatchPolicy
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let stoppedSignal = DispatchSemaphore(value: 0)

    init(policy: ContentBatchPolicy) {
        self.policy = policy
    }

    /// Queues, under one lock, the end of a turn (`ended`) and then a chunk of `turn` whose kept
    /// bytes are `kept` (copied); either may be absent. Counts what does not fit as dropped.
    /// - Returns: false when the chunk was dropped (true when there was none).
    func enqueue(flow: Int64, ended: Turn?, chunkOf turn: Turn?, _ kept: UnsafeRawBufferPointer) -> Bool {
        let (queued, signal) = state.withLock { state -> (Bool, Bool) in
            var added = false
            if let ended {
                if !state.handshake.stopping, policy.admitsEnd(pendingEnds: state.pendingEnds) {
                    state.pendingEnds += 1
                    state.batch.events.append(.turnEnded(flow: flow, turn: ended))
                    state.handshake.accept()
                    added = true
                } else {
                    state.counters.turnEndsDropped += 1
                }
            }
            var queued = true
            if let turn {
                if !state.handshake.stopping, policy.admitsChunk(count: kept.count, pendingBytes: state.pendingBytes,
                                                                 pendingChunks: state.pendingChunks) {
                    state.pendingChunks += 1
                    state.pendingBytes += Int64(kept.count)
                    state.counters.chunksQueued += 1
                    state.batch.appendChunk(flow: flow, turn: turn, kept)
                    state.handshake.accept()
                    added = true
                } else {
                    state.counters.chunksDropped += 1
                    state.counters.bytesDropped += Int64(kept.count)
                    queued = false
                }
            }
            return (queued, added && state.wakeAfterEnqueue(policy))
        }
        if signal { wake.signal() }
        return queued
    }

    /// A flow ended: what is queued is written without waiting out the linger (it is cut short
    /// if it is running). Never blocks.
    func expedite() {
        let signal = state.withLock { state -> Bool in
            guard !state.batch.isEmpty else { return false }
            state.expedited = true
            return state.handshake.takeLingeringWriter()
        }
        if signal { wake.signal() }
    }

    /// Runs `job` on the writer thread and waits for it. Returns false (without running it) when
    /// the writer has stopped.
    func perform(_ job: @escaping Job) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let (accepted, signal) = state.withLock { state -> (Bool, Bool) in
            guard !state.handshake.stopping else { return (false, false) }
            state.jobs.append { thread in
                job(thread)
                done.signal()
            }
            let lingering = state.handshake.takeLingeringWriter()
            return (true, state.handshake.takeSleepingWriter() || lingering)
        }
        guard accepted else { return false }
        if signal { wake.signal() }
        done.wait()
        return true
    }

    /// Blocks until every event accepted before the call is written (or failed). Returns at once
    /// after the writer stopped. Never call it while paused.
    func flush() {
        let (waiter, signal) = state.withLock { $0.handshake.addFlushWaiter() }
        if signal { wake.signal() }
        waiter?.wait()
    }

    /// Test hook: the writer leaves queued events alone until `resume()`.
    func pause() { state.withLock { $0.handshake.paused = true } }

    func resume() {
        let signal = state.withLock { $0.handshake.resume() }
        if signal { wake.signal() }
    }

    /// Asks the writer to write what is queued and stop; waits until it has. Idempotent.
    func stop() {
        let signal = state.withLock { $0.handshake.requestStop() }
        if signal { wake.signal() }
        stoppedSignal.wait()
        stoppedSignal.signal()
    }

    /// Marks the queue stopped without a writer (it could not start).
    func abandon() {
        state.withLock { $0.handshake.abandon() }
        stoppedSignal.signal()
    }

    /// Lets the writer change its counters (written, lost, sweeps).
    func updateCounters(_ body: (inout ContentCounters) -> Void) {
        state.withLock { body(&$0.counters) }
    }

    var counters: ContentCounters {
        state.withLock { state in
            var counters = state.counters
            counters.pendingEvents = state.batch.events.count
            counters.pendingBytes = state.pendingBytes
            return counters
        }
    }

    /// After a wake-up: gathers what follows for up to the linger (or until `deadline`, the next
    /// sweep), unless the queue is already worth writing or someone waits.
    private func linger(until deadline: DispatchTime) {
        guard policy.lingerMillis > 0 else { return }
        let gather = state.withLock { state -> Bool in
            guard !state.handshake.stopping, !state.handshake.paused, !state.expedited, !state.handshake.hasFlushWaiters,
                  state.jobs.isEmpty,
                  !state.batch.isEmpty,
                  !policy.writeNow(pendingBytes: state.pendingBytes, pendingChunks: state.pendingChunks,
                                   pendingEnds: state.pendingEnds) else { return false }
            state.handshake.lingering = true
            return true
        }
        guard gather else { return }
        _ = wake.wait(timeout: min(deadline, .now() + .milliseconds(policy.lingerMillis)))
        // Whoever ended the wait cleared `lingering` and signalled; one that came just after the
        // timeout left a signal behind, which only costs one spare turn of the loop.
        state.withLock { $0.handshake.lingering = false }
    }

    /// The writer thread's loop: events in batches, jobs between batches, a sweep every
    /// `sweepInterval` seconds (busy or idle); on stop, the rest is written and the thread ends.
    func run(_ thread: ContentWriterThread, sweepInterval: Double) {
        var lastSweep = DispatchTime.now()
        let interval = DispatchTimeInterval.nanoseconds(Int(sweepInterval * 1_000_000_000))
        // The emptied storage of the last batch, swapped in for the next one (no reallocation).
        var spare = ContentBatch()
        while true {
            // Due even when the writer never goes idle (a busy session still expires content).
            if DispatchTime.now() >= lastSweep + interval {
                thread.periodicSweep()
                lastSweep = .now()
            }
            let step = state.withLock { state -> Step in
                if !state.jobs.isEmpty {
                    let jobs = state.jobs
                    state.jobs = []
                    return .jobs(jobs)
                }
                if !state.batch.isEmpty && (!state.handshake.paused || state.handshake.stopping) {
                    var batch = spare
                    swap(&batch, &state.batch)
                    state.expedited = false
                    state.pendingBytes = 0
                    state.pendingChunks = 0
                    state.pendingEnds = 0
                    return .write(batch)
                }
                if state.handshake.stopping { return .stop(state.handshake.markStopped()) }
                state.handshake.writerSleeping = true
                return .sleep
            }
            switch step {
            case .sleep:
                if wake.wait(timeout: lastSweep + interval) == .timedOut {
                    // The sweep runs at the top of the loop. A signal sent between the timeout and
                    // clearing the flag only makes a later sleep return early, which is harmless.
                    state.withLock { $0.handshake.writerSleeping = false }
                } else {
                    linger(until: lastSweep + interval)
                }
            case let .jobs(jobs):
                jobs.forEach { $0(thread) }
            case var .write(batch):
                thread.write(batch)
                let written = batch.events.count
                batch.clear()
                spare = batch
                let satisfied = state.withLock { $0.handshake.finish(written) }
                satisfied.forEach { $0.signal() }
                // What arrived during the write gathers for a linger too, so a busy writer still
                // writes batches at least a linger long, not one per write's duration.
                linger(until: lastSweep + interval)
            case let .stop(waiters):
                thread.close()
                waiters.forEach { $0.signal() }
                stoppedSignal.signal()
                return
            }
        }
    }
}
