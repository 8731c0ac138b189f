/// A snapshot of the content writer's counters since it started. The diagnostics read them.
public struct ContentCounters: Sendable, Equatable {
    /// Chunk events taken into the queue.
    public var chunksQueued = 0
    /// Chunks dropped from the recording because the queue was full (their turns are marked
    /// incomplete); forwarding was never held up for them.
    public var chunksDropped = 0
    /// The kept bytes those dropped chunks carried.
    public var bytesDropped: Int64 = 0
    /// Turn ends dropped because even their reserve was full (the turn is then written as
    /// incomplete when the writer next hears of its flow, or at close).
    public var turnEndsDropped = 0
    /// Chunk bytes the writer discarded because its open-turn buffers were full.
    public var bytesDiscardedByWriter: Int64 = 0
    /// Turns written (bytes in a segment, row in the index).
    public var turnsWritten = 0
    /// Kept bytes written to segments.
    public var bytesWritten: Int64 = 0
    /// Turns lost to a write or index failure, or held for the flow history while the disk had
    /// no room for both (`HistoryFirst`; see `lastError`).
    public var turnsLost = 0
    /// The most recent failure (its sentence: `message`).
    public var lastError: ContentWriteFailure?
    /// Attempts to store turns (segment writes and index transactions) that failed.
    public var failedWrites = 0
    /// True while storing turns fails or is held (from a failed or held attempt until the next
    /// successful one).
    public var failing = false
    /// Events waiting in the queue now.
    public var pendingEvents = 0
    /// Chunk bytes waiting in the queue now.
    public var pendingBytes: Int64 = 0
    /// Sweeps run.
    public var sweeps = 0
    /// What the most recent sweep did.
    public var lastSweep: ContentSweepReport?

    public init() {}
}
