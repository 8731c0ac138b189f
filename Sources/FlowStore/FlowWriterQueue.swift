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
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let stoppedSignal = DispatchSemaphore(value: 0)

    init(capacity: Int, lingerMillis: Int = 20) {
        self.capacity = max(capacity, 1)
        self.lingerMillis = max(lingerMillis, 0)
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
                               lastError: state.lastError)
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

    /// The writer thread's loop: take everything queued, write it as one transaction, wake the
    /// flushes it satisfied, sleep when idle; on stop, write the rest and close the connection.
    func run(_ writer: FlowBatchWriter) {
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
                wake.wait()
                linger()
            case let .write(batch):
                var failure: FlowStoreError?
                do {
                    try writer.write(batch)
                } catch let error as FlowStoreError {
                    failure = error
                } catch {
                    failure = .failed(path: "", reason: "\(error)")
                }
                let satisfied = state.withLock { state -> [DispatchSemaphore] in
                    if let failure {
                        state.failed += batch.count
                        state.lastError = failure
                    }
                    return state.handshake.finish(batch.count)
                }
                satisfied.forEach { $0.signal() }
            case let .stop(waiters):
                writer.close()
                waiters.forEach { $0.signal() }
                stoppedSignal.signal()
                return
            }
        }
    }
}
