/// What the retention planner knows about one segment: its file and the index rows that point
/// into it.
public struct SegmentFacts: Sendable, Equatable {
    /// The segment's sequence number (lower is older).
    public var sequence: Int
    /// The space the file takes on disk (`SegmentFile.diskBytes`: holes not counted), or nil
    /// when the file is missing (rows point at nothing).
    public var fileBytes: Int64?
    /// Index rows pointing into it.
    public var rows: Int
    /// Of those, rows recorded before the expiry cutoff.
    public var expiredRows: Int
    /// True when a writer holds it: never deleted.
    public var isBeingWritten: Bool
    /// True when the index made it (inside its `SegmentRange`). A segment the index did not make
    /// and holds no row of predates the database: nothing proves it unreferenced, so it is left
    /// alone (neither deleted nor counted against the ceiling).
    public var madeByIndex: Bool
    /// Flows with turns in it, as far as the retention planner needs them: the sweep fills in
    /// only the audit evidence's flows (a segment holds turns of many flows; listing every one
    /// would read the whole index).
    public var flows: Set<Int64>

    public init(sequence: Int, fileBytes: Int64?, rows: Int, expiredRows: Int = 0, isBeingWritten: Bool = false,
                madeByIndex: Bool = true, flows: Set<Int64> = []) {
        self.flows = flows
        self.sequence = sequence
        self.fileBytes = fileBytes
        self.rows = rows
        self.expiredRows = expiredRows
        self.isBeingWritten = isBeingWritten
        self.madeByIndex = madeByIndex
    }
}
