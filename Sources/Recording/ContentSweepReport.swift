/// What a sweep (or a deletion) did.
public struct ContentSweepReport: Sendable, Equatable {
    /// Index rows deleted (expired, or in dropped segments).
    public var rowsDeleted: Int
    /// Segment files deleted.
    public var filesDeleted: Int
    /// Bytes those files held.
    public var bytesFreed: Int64
    /// The segment spared because a writer holds it, if any.
    public var spared: SegmentFile?
    /// Segment files left alone because they predate the database (see `SegmentRange`).
    public var leftAlone: Int
    /// Request rows whose query string went with the content (`StoredExchanges.removeQueries`).
    public var queriesRemoved = 0
    /// The cutoff (µs) of query removal a budget stopped short of: the content writer goes on
    /// with it a slice at a time while its queue is empty (`ContentWriterThread.idleDeadlinePassed`);
    /// nil when done.
    public var queriesLeftBefore: Int64?

    public init(rowsDeleted: Int = 0, filesDeleted: Int = 0, bytesFreed: Int64 = 0, spared: SegmentFile? = nil,
                leftAlone: Int = 0) {
        self.rowsDeleted = rowsDeleted
        self.filesDeleted = filesDeleted
        self.bytesFreed = bytesFreed
        self.spared = spared
        self.leftAlone = leftAlone
    }
}
