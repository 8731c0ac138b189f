/// A snapshot of a flow writer's counters since it started (events, not rows).
public struct FlowWriterCounters: Sendable, Equatable {
    /// Events taken into the queue.
    public var accepted: Int
    /// Events committed to the database.
    public var written: Int
    /// Events refused because the queue was full or the writer was closed.
    public var dropped: Int
    /// Events lost because their batch's transaction failed (see `lastError`).
    public var failed: Int
    /// Events waiting in the queue now.
    public var pending: Int
    /// The error of the most recent failed batch, if any.
    public var lastError: FlowStoreError?
}
