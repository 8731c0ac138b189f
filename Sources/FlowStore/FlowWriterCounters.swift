/// A snapshot of a flow writer's counters since it started (events, unless a name says flows).
public struct FlowWriterCounters: Sendable, Equatable {
    /// Events taken into the queue.
    public var accepted: Int
    /// Events committed to the database at their first attempt.
    public var written: Int
    /// Events refused because the queue was full or the writer was closed.
    public var dropped: Int
    /// Events whose first attempt failed (see `lastError`); their flows are kept and retried
    /// (`unwrittenFlows`), so they are not lost until given up (`flowsNotSaved`).
    public var failed: Int
    /// Events waiting in the queue now.
    public var pending: Int
    /// The error of the most recent failed attempt, if any.
    public var lastError: FlowStoreError?
    /// Events whose first attempt failed and a later one committed (the backlog written once
    /// the database or the shared store's server was back); `written + writtenOnRetry` is
    /// every event committed.
    public var writtenOnRetry = 0
    /// Transactions that failed, retries included.
    public var failedWrites = 0
    /// Flows whose latest state waits in memory for the next attempt now.
    public var unwrittenFlows = 0
    /// Flows given up (too many waited, or the writer stopped while writes failed) that have no
    /// row in the database at all: lost from the record.
    public var flowsNotSaved = 0
    /// Flows given up whose row is in the database, but without its latest state (its end, its
    /// final byte counts).
    public var flowUpdatesNotSaved = 0
    /// Exchange rows given up while writes failed (too many waited, or the writer stopped).
    public var exchangesNotSaved = 0
    /// Programs the lookup named (or said why not) that were given up while writes failed, so
    /// their flows' rows, where they exist, lack them: with their flows, past the retry limit,
    /// or at the stop.
    public var programsNotSaved = 0
    /// True while writes fail (from a failed attempt until the next successful one).
    public var failing = false
    /// When the write in progress began (µs since the epoch); nil between writes. A write that
    /// has waited long is a server that stopped answering (`tv status` says so: it said
    /// "connected" while a trial's server hung).
    public var writingSince: Int64?

    public init(accepted: Int, written: Int, dropped: Int, failed: Int, pending: Int, lastError: FlowStoreError?,
                failedWrites: Int = 0, unwrittenFlows: Int = 0, flowsNotSaved: Int = 0, flowUpdatesNotSaved: Int = 0,
                failing: Bool = false) {
        self.accepted = accepted
        self.written = written
        self.dropped = dropped
        self.failed = failed
        self.pending = pending
        self.lastError = lastError
        self.failedWrites = failedWrites
        self.unwrittenFlows = unwrittenFlows
        self.flowsNotSaved = flowsNotSaved
        self.flowUpdatesNotSaved = flowUpdatesNotSaved
        self.failing = failing
    }
}
