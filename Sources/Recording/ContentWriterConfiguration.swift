import FlowStore

/// Where and how a `ContentWriter` writes: paths, retention, queue and segment limits.
public struct ContentWriterConfiguration: Sendable {
    /// The flow database holding the turns index.
    public var databasePath: String
    /// The content folder (`$TV_HOME/content`).
    public var directory: String
    /// The expiry applied by sweeps (`content.expiry`).
    public var expiry: ContentExpiry
    /// The ceiling on segment files, bytes (fixed at 512 MiB; tests pass less).
    public var ceiling: Int64 = ContentRetentionPlanner.ceilingBytes
    /// Chunk bytes the queue holds before chunks are dropped (16 MiB).
    public var queueBytes: Int64 = 16 * 1_048_576
    /// Chunk events the queue holds before chunks are dropped.
    public var queueChunks = 65_536
    /// Turn-end events the queue holds (a reserve apart from chunks, so the final figures of a
    /// turn get through when its bytes could not).
    public var queueTurnEnds = 65_536
    /// How long the writer gathers events before it writes them, milliseconds (100): a burst
    /// then costs one transaction and one segment write, and the index pages a transaction
    /// dirties are shared by many rows. A queue half full, a flush, a sweep or a stop cuts it
    /// short; content becomes readable at most this much later.
    public var lingerMillis = 100
    /// Bytes of open (not yet ended) turns the writer buffers before it discards chunk bytes.
    public var openTurnBytes: Int64 = 64 * 1_048_576
    /// A segment is closed and a new one started once it holds this many bytes (16 MiB).
    public var segmentBytes: Int64 = 16 * 1_048_576
    /// … or once it is this old, µs (5 min), so expired bytes do not wait long in a shared file.
    public var segmentAge: Int64 = 300_000_000
    /// Seconds between periodic sweeps while the writer runs.
    public var sweepInterval: Double = 60
    /// About how many stored requests one slice of a periodic sweep's query removal reads; the
    /// rest goes on a slice at a time while the queue is empty (2,000: ~30 ms of the writer's
    /// time at the ~16 µs a request measured, where the queue holds ~80 ms of a 200 MB/s stream).
    public var querySlice = 2_000
    /// The flows carried into audit sessions, as the session's retention pass publishes them;
    /// the sweeps spare their content as they spare the tagged flows' (nil: none published).
    public var carried: CarriedEvidence?
    /// The flow writer's standing on the same disk (`FlowWriter.historyFirst`): turns take no
    /// room while it holds them (`HistoryFirst`), and are counted as not saved. Nil: never held
    /// (the content folder on a disk of its own, or no flow writer).
    public var historyFirst: HistoryFirstSignal?

    public init(databasePath: String, directory: String, expiry: ContentExpiry = .default) {
        self.databasePath = databasePath
        self.directory = directory
        self.expiry = expiry
    }
}
