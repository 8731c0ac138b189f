import Dispatch

/// The pure part of a `BoundedWriterQueue`'s state: whether the writer sleeps or lingers (so
/// producers know when to signal it), pause and stop, how many events were accepted, finished
/// and failed, and who waits for a flush. Kept inside the queue's mutex-guarded state; every
/// method is called with that mutex held and never blocks. The semaphores it hands back are
/// signalled by the caller after the lock is released.
public struct WriterHandshake: Sendable {
    /// Events accepted by `enqueue` since the queue was made.
    public private(set) var accepted = 0
    /// Events the writer has finished (written or failed).
    public private(set) var finished = 0
    /// Of the finished events, those whose write failed.
    public private(set) var failed = 0
    /// Test hook: the writer leaves queued events alone while set (a stop still writes them).
    public var paused = false
    /// Set by `requestStop`; the queue accepts nothing more.
    public private(set) var stopping = false
    /// Set when the writer has taken its last step (or never started).
    public private(set) var stopped = false
    /// The writer is waiting on its wake semaphore with nothing to do.
    public var writerSleeping = false
    /// The writer, woken by a first event, is gathering more for a short while; a flush, a stop or
    /// anything urgent cuts that short by signalling the wake semaphore while this is set.
    public var lingering = false
    private var flushWaiters: [(target: Int, semaphore: DispatchSemaphore)] = []

    public init() {}

    /// Counts `count` events as accepted.
    public mutating func accept(_ count: Int = 1) { accepted += count }

    /// True (and the writer marked awake) when the writer was asleep and must be signalled.
    public mutating func takeSleepingWriter() -> Bool {
        guard writerSleeping else { return false }
        writerSleeping = false
        return true
    }

    /// True (and the linger ended) when the writer is gathering and must be signalled now.
    public mutating func takeLingeringWriter() -> Bool {
        guard lingering else { return false }
        lingering = false
        return true
    }

    /// True while someone waits for a flush (the writer should not linger then).
    public var hasFlushWaiters: Bool { !flushWaiters.isEmpty }

    /// Registers a flush of everything accepted so far. Returns nil when there is nothing to wait
    /// for (all finished, or the writer stopped); `signal` is true when the caller must signal
    /// the wake semaphore (the writer was lingering).
    public mutating func addFlushWaiter() -> (waiter: DispatchSemaphore?, signal: Bool) {
        guard !stopped, finished < accepted else { return (nil, false) }
        let semaphore = DispatchSemaphore(value: 0)
        flushWaiters.append((accepted, semaphore))
        return (semaphore, takeLingeringWriter())
    }

    /// The writer finished `count` more events, `failed` of them failed; returns the flushes that
    /// are now satisfied.
    public mutating func finish(_ count: Int, failed: Int = 0) -> [DispatchSemaphore] {
        finished += count
        self.failed += failed
        let done = finished
        let ready = flushWaiters.filter { $0.target <= done }.map(\.semaphore)
        flushWaiters.removeAll { $0.target <= done }
        return ready
    }

    /// Ends a pause; true when the caller must signal the (sleeping) writer.
    public mutating func resume() -> Bool {
        paused = false
        return takeSleepingWriter()
    }

    /// Asks the writer to stop; true when the caller must signal it (asleep or lingering).
    public mutating func requestStop() -> Bool {
        stopping = true
        let wasLingering = takeLingeringWriter()
        return takeSleepingWriter() || wasLingering
    }

    /// The writer's last step: marks the queue stopped and hands back every flush still waiting.
    public mutating func markStopped() -> [DispatchSemaphore] {
        stopped = true
        let waiters = flushWaiters.map(\.semaphore)
        flushWaiters = []
        return waiters
    }

    /// The writer could not start: nothing will ever be written.
    public mutating func abandon() {
        stopping = true
        stopped = true
    }
}
