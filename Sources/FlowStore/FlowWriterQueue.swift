import Dispatch
import Synchronization

/// The bounded queue between the threads that report flow events and the one writer thread,
/// and the writer thread's loop.
///
/// Producers never wait: `enqueue` takes the mutex for an append and returns. The writer sleeps
/// on `wake` when it has nothing to do; a producer signals it only when it is asleep. `flush`
/// waits on its own semaphore until the writer has finished every event accepted before it.
final class FlowWriterQueue: Sendable {
    private struct State: Sendable {
        var pending: [FlowEvent] = []
        var dropped = 0
        var failed = 0
        var lastError: FlowStoreError?
        var failedWrites = 0
        var unwrittenFlows = 0
        var flowsNotSaved = 0
        var flowUpdatesNotSaved = 0
        var failing = false
        /// Sleep, linger (the writer, just woken by a first event, waits up to `lingerMillis`
        /// for more, so that a flow's opened/updated/closed events share one transaction and one
        /// upsert), pause, stop and flushes.
        var handshake = WriterHandshake()
    }

    private enum Step {
        case sleep
        case write([FlowEvent])
        case stop([DispatchSemaphore])
    }

    let capacity: Int
    /// How long the writer gathers events after it wakes (see `State.lingering`); 0 = never.
    let lingerMillis: Int
    /// How many flows whose write failed are kept for the next attempt (`UnwrittenFlows`).
    let retryLimit: Int
    /// How long the writer waits before trying again while flows wait and nothing new comes.
    let retryMillis: Int
    /// Told (on the writer thread) when writes start failing and when they resume.
    let onHealthChange: (@Sendable (WriteHealth.Change, FlowWriterCounters) -> Void)?
    /// How the writer is being closed (see `FlowWriter.close(interruptingOpenFlows:)`), for a
    /// connection opened late (a full disk at start).
    let closing: ClosingChoice
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let stoppedSignal = DispatchSemaphore(value: 0)

    init(capacity: Int, lingerMillis: Int = 20, retryLimit: Int = FlowWriter.defaultRetryLimit, retryMillis: Int = 1_000,
         closing: ClosingChoice = ClosingChoice(),
         onHealthChange: (@Sendable (WriteHealth.Change, FlowWriterCounters) -> Void)? = nil) {
        self.closing = closing
        self.capacity = max(capacity, 1)
        self.lingerMillis = max(lingerMillis, 0)
        self.retryLimit = max(retryLimit, 1)
        self.retryMillis = max(retryMillis, 1)
        self.onHealthChange = onHealthChange
    }

    /// Appends `event` unless the queue is full or stopping; then counts it as dropped.
    /// - Returns: true when queued.
    func enqueue(_ event: FlowEvent) -> Bool {
        let (queued, signal) = state.withLock { state -> (Bool, Bool) in
            guard !state.handshake.stopping, state.pending.count < capacity else {
                state.dropped += 1
                return (false, false)
            }
            state.pending.append(event)
            state.handshake.accept()
            return (true, state.handshake.takeSleepingWriter())
        }
        if signal { wake.signal() }
        return queued
    }

    /// Blocks until every event accepted before the call is committed (or failed). Returns at
    /// once after the writer stopped. Never call it while paused (it would wait for `resume`).
    func flush() {
        let (waiter, signal) = state.withLock { $0.handshake.addFlushWaiter() }
        if signal { wake.signal() }
        waiter?.wait()
    }

    /// Test hook: the writer leaves queued events alone until `resume()`.
    func pause() {
        state.withLock { $0.handshake.paused = true }
    }

    func resume() {
        let signal = state.withLock { $0.handshake.resume() }
        if signal { wake.signal() }
    }

    /// Asks the writer to write what is queued (even when paused) and stop; waits until it has.
    /// Later events are dropped. Safe to call more than once and from several threads.
    func stop() {
        let signal = state.withLock { $0.handshake.requestStop() }
        if signal { wake.signal() }
        stoppedSignal.wait()
        stoppedSignal.signal()  // let any other caller of stop() through too
    }

    /// Marks the queue stopped without a writer (the writer could not start).
    func abandon() {
        state.withLock { $0.handshake.abandon() }
        stoppedSignal.signal()
    }

    var counters: FlowWriterCounters {
        state.withLock { state in
            FlowWriterCounters(accepted: state.handshake.accepted, written: state.handshake.finished - state.failed,
                               dropped: state.dropped, failed: state.failed, pending: state.pending.count,
                               lastError: state.lastError, failedWrites: state.failedWrites,
                               unwrittenFlows: state.unwrittenFlows, flowsNotSaved: state.flowsNotSaved,
                               flowUpdatesNotSaved: state.flowUpdatesNotSaved, failing: state.failing)
        }
    }

    /// After a wake-up: gathers the events that follow for up to `lingerMillis` (a flush or a stop
    /// ends it at once), so that a burst costs one transaction and each flow one upsert, and the
    /// writer thread wakes far fewer times than there are events.
    private func linger() {
        guard lingerMillis > 0 else { return }
        let gather = state.withLock { state -> Bool in
            guard !state.handshake.stopping, !state.handshake.paused, !state.handshake.hasFlushWaiters else { return false }
            state.handshake.lingering = true
            return true
        }
        guard gather else { return }
        _ = wake.wait(timeout: .now() + .milliseconds(lingerMillis))
        // A flush or stop that ended the wait cleared `lingering` and signalled; one that came
        // just after the timeout left a signal behind, which only costs one spare turn.
        state.withLock { $0.handshake.lingering = false }
    }

    /// The writer thread's loop: take everything queued, write it (with the flows a failed write
    /// left) as one transaction, wake the flushes it satisfied, sleep when idle — or, while flows
    /// wait to be written again, until the next retry; on stop, one last attempt, then the
    /// connection is closed and what is still unwritten is given up (and counted).
    /// - Parameters:
    ///   - writer: the connection, or nil when it could not be opened yet (`startFailure`, a full
    ///     disk): each attempt then tries to open it first.
    ///   - path: the database file, to open the connection later.
    ///   - started: called once `startFailure` has been reported (before any event is taken).
    func run(_ writer: FlowBatchWriter?, path: String, startFailure: FlowStoreError? = nil, started: () -> Void = {}) {
        var writer = writer
        var unwritten = UnwrittenFlows(limit: retryLimit)
        var health = WriteHealth()
        if let startFailure { report(startFailure, &unwritten, &health) }
        started()
        while true {
            let step = state.withLock { state -> Step in
                if !state.pending.isEmpty && (!state.handshake.paused || state.handshake.stopping) {
                    let batch = state.pending
                    state.pending = []
                    return .write(batch)
                }
                if state.handshake.stopping { return .stop(state.handshake.markStopped()) }
                state.handshake.writerSleeping = true
                return .sleep
            }
            switch step {
            case .sleep:
                if unwritten.isEmpty {
                    wake.wait()
                    linger()
                } else if wake.wait(timeout: .now() + .milliseconds(retryMillis)) == .timedOut {
                    state.withLock { $0.handshake.writerSleeping = false }
                    _ = attempt([], path, &writer, &unwritten, &health)
                } else {
                    linger()
                }
            case let .write(batch):
                let failed = !attempt(batch, path, &writer, &unwritten, &health)
                let satisfied = state.withLock { state -> [DispatchSemaphore] in
                    if failed { state.failed += batch.count }
                    return state.handshake.finish(batch.count)
                }
                satisfied.forEach { $0.signal() }
            case let .stop(waiters):
                if !unwritten.isEmpty, attempt([], path, &writer, &unwritten, &health) == false {
                    giveUp(unwritten.giveUpAll(), writer, path: path)
                    state.withLock { $0.unwrittenFlows = 0 }
                }
                writer?.close()
                waiters.forEach { $0.signal() }
                stoppedSignal.signal()
                return
            }
        }
    }

    /// Writes `batch` after the flows still unwritten, in one transaction (opening the connection
    /// first when it is not open yet); on failure keeps them all for the next attempt (giving up
    /// the oldest past `retryLimit`). Counts, and tells `onHealthChange` when writes start
    /// failing or resume.
    /// - Returns: true when the transaction committed.
    private func attempt(_ batch: [FlowEvent], _ path: String, _ writer: inout FlowBatchWriter?,
                         _ unwritten: inout UnwrittenFlows, _ health: inout WriteHealth) -> Bool {
        let events = unwritten.takeAll() + batch
        guard !events.isEmpty else { return true }
        var failure: FlowStoreError?
        do {
            if writer == nil { writer = try FlowBatchWriter(path: path, closing: closing) }
            try writer!.write(events)
        } catch let error as FlowStoreError {
            failure = error
        } catch {
            failure = .failed(path: path, reason: "\(error)")
        }
        if failure != nil { giveUp(unwritten.keep(events), writer, path: path) }
        report(failure, &unwritten, &health)
        return failure == nil
    }

    /// Records an attempt's outcome in the counters and `health`; tells `onHealthChange` of a
    /// change.
    private func report(_ failure: FlowStoreError?, _ unwritten: inout UnwrittenFlows, _ health: inout WriteHealth) {
        let change = health.record(succeeded: failure == nil)
        state.withLock { state in
            state.unwrittenFlows = unwritten.count
            state.failedWrites = health.failedAttempts
            if let failure { state.lastError = failure }
        }
        // Said before `failing` shows in the counters, so whoever sees it can find the line.
        if let change {
            var counters = self.counters
            counters.failing = health.failing
            onHealthChange?(change, counters)
        }
        let failing = health.failing
        state.withLock { $0.failing = failing }
    }

    /// Counts `flows` as given up: not saved at all when the database has no row of them, saved
    /// without their latest state otherwise (asked of `writer`, or of a read-only connection
    /// when it is not open).
    private func giveUp(_ flows: [FlowRecord], _ writer: FlowBatchWriter?, path: String) {
        guard !flows.isEmpty else { return }
        let ids = flows.map(\.id)
        let missing: Int
        if let writer {
            missing = writer.countMissing(ids)
        } else if let reader = try? SQLiteDatabase(readingAt: path) {
            missing = FlowBatchWriter.countMissing(ids, in: reader)
            reader.close()
        } else {
            missing = ids.count
        }
        state.withLock { state in
            state.flowsNotSaved += missing
            state.flowUpdatesNotSaved += flows.count - missing
        }
    }
}
