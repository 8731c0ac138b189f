import Dispatch
import Synchronization

/// The bounded queue between the flows' recorders and the content writer thread, and the thread's
/// loop. Producers never wait: `enqueue` takes the mutex for an append and returns false when the
/// queue is full. Work that needs the writer's connection (sweeps, deletion) is handed over as a
/// job and waited for.
final class ContentQueue: Sendable {
    /// Work run on the writer thread with its state.
    typealias Job = @Sendable (ContentWriterThread) -> Void

    private struct State: Sendable {
        var pending: [ContentEvent] = []
        var pendingBytes: Int64 = 0
        var pendingChunks = 0
        var pendingEnds = 0
        var jobs: [Job] = []
        var accepted = 0
        var finished = 0
        var counters = ContentCounters()
        var paused = false
        var stopping = false
        var stopped = false
        var writerSleeping = false
        var flushWaiters: [(target: Int, semaphore: DispatchSemaphore)] = []

        mutating func takeSleepingWriter() -> Bool {
            guard writerSleeping else { return false }
            writerSleeping = false
            return true
        }
    }

    private enum Step {
        case sleep
        case write([ContentEvent])
        case jobs([Job])
        case stop([DispatchSemaphore])
    }

    let limits: (bytes: Int64, chunks: Int, ends: Int)
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let stoppedSignal = DispatchSemaphore(value: 0)

    init(bytes: Int64, chunks: Int, ends: Int) {
        limits = (max(bytes, 1), max(chunks, 1), max(ends, 1))
    }

    /// Queues `event` unless its kind's room is used up (or the writer stopped); counts drops.
    /// - Returns: true when queued.
    func enqueue(_ event: ContentEvent) -> Bool {
        let (queued, signal) = state.withLock { state -> (Bool, Bool) in
            switch event {
            case let .chunk(_, _, bytes):
                guard !state.stopping, state.pendingChunks < limits.chunks,
                      state.pendingBytes + Int64(bytes.count) <= limits.bytes else {
                    state.counters.chunksDropped += 1
                    state.counters.bytesDropped += Int64(bytes.count)
                    return (false, false)
                }
                state.pendingChunks += 1
                state.pendingBytes += Int64(bytes.count)
                state.counters.chunksQueued += 1
            case .turnEnded:
                guard !state.stopping, state.pendingEnds < limits.ends else {
                    state.counters.turnEndsDropped += 1
                    return (false, false)
                }
                state.pendingEnds += 1
            }
            state.pending.append(event)
            state.accepted += 1
            return (true, state.takeSleepingWriter())
        }
        if signal { wake.signal() }
        return queued
    }

    /// Runs `job` on the writer thread and waits for it. Returns false (without running it) when
    /// the writer has stopped.
    func perform(_ job: @escaping Job) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let (accepted, signal) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopping else { return (false, false) }
            state.jobs.append { thread in
                job(thread)
                done.signal()
            }
            return (true, state.takeSleepingWriter())
        }
        guard accepted else { return false }
        if signal { wake.signal() }
        done.wait()
        return true
    }

    /// Blocks until every event accepted before the call is written (or failed). Returns at once
    /// after the writer stopped. Never call it while paused.
    func flush() {
        let waiter = state.withLock { state -> DispatchSemaphore? in
            guard !state.stopped, state.finished < state.accepted else { return nil }
            let semaphore = DispatchSemaphore(value: 0)
            state.flushWaiters.append((state.accepted, semaphore))
            return semaphore
        }
        waiter?.wait()
    }

    /// Test hook: the writer leaves queued events alone until `resume()`.
    func pause() { state.withLock { $0.paused = true } }

    func resume() {
        let signal = state.withLock { state -> Bool in
            state.paused = false
            return state.takeSleepingWriter()
        }
        if signal { wake.signal() }
    }

    /// Asks the writer to write what is queued and stop; waits until it has. Idempotent.
    func stop() {
        let signal = state.withLock { state -> Bool in
            state.stopping = true
            return state.takeSleepingWriter()
        }
        if signal { wake.signal() }
        stoppedSignal.wait()
        stoppedSignal.signal()
    }

    /// Marks the queue stopped without a writer (it could not start).
    func abandon() {
        state.withLock { state in
            state.stopping = true
            state.stopped = true
        }
        stoppedSignal.signal()
    }

    /// Lets the writer change its counters (written, lost, sweeps).
    func updateCounters(_ body: (inout ContentCounters) -> Void) {
        state.withLock { body(&$0.counters) }
    }

    var counters: ContentCounters {
        state.withLock { state in
            var counters = state.counters
            counters.pendingEvents = state.pending.count
            counters.pendingBytes = state.pendingBytes
            return counters
        }
    }

    /// The writer thread's loop: events in batches, jobs between batches, a sweep every
    /// `sweepInterval` seconds (busy or idle); on stop, the rest is written and the thread ends.
    func run(_ thread: ContentWriterThread, sweepInterval: Double) {
        var lastSweep = DispatchTime.now()
        let interval = DispatchTimeInterval.nanoseconds(Int(sweepInterval * 1_000_000_000))
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
                if !state.pending.isEmpty && (!state.paused || state.stopping) {
                    let batch = state.pending
                    state.pending = []
                    state.pendingBytes = 0
                    state.pendingChunks = 0
                    state.pendingEnds = 0
                    return .write(batch)
                }
                if state.stopping {
                    state.stopped = true
                    let waiters = state.flushWaiters.map(\.semaphore)
                    state.flushWaiters = []
                    return .stop(waiters)
                }
                state.writerSleeping = true
                return .sleep
            }
            switch step {
            case .sleep:
                if wake.wait(timeout: lastSweep + interval) == .timedOut {
                    // The sweep runs at the top of the loop. A signal sent between the timeout and
                    // clearing the flag only makes a later sleep return early, which is harmless.
                    state.withLock { $0.writerSleeping = false }
                }
            case let .jobs(jobs):
                jobs.forEach { $0(thread) }
            case let .write(batch):
                thread.write(batch)
                let satisfied = state.withLock { state -> [DispatchSemaphore] in
                    state.finished += batch.count
                    let finished = state.finished
                    let ready = state.flushWaiters.filter { $0.target <= finished }.map(\.semaphore)
                    state.flushWaiters.removeAll { $0.target <= finished }
                    return ready
                }
                satisfied.forEach { $0.signal() }
            case let .stop(waiters):
                thread.close()
                waiters.forEach { $0.signal() }
                stoppedSignal.signal()
                return
            }
        }
    }
}
