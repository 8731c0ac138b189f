#if canImport(Glibc)
import Glibc
#endif

/// One segment file as found in the content folder.
public struct SegmentFile: Sendable, Equatable {
    /// The sequence number in its name.
    public var sequence: Int
    /// Its length in bytes (turns are read at offsets below it).
    public var bytes: Int64
    /// The space it takes on disk: its length less the holes punched where deleted turns were
    /// (the smaller of `bytes` and stat(2)'s `st_blocks` × 512). "On disk" and the content
    /// ceiling count this: with the length, a file holding 1.3 MiB read 10.7 (a trial).
    public var diskBytes: Int64
    /// True when a writer holds its lock: it is the segment being written and is never deleted.
    public var isBeingWritten: Bool

    public init(sequence: Int, bytes: Int64, isBeingWritten: Bool, diskBytes: Int64? = nil) {
        self.sequence = sequence
        self.bytes = bytes
        self.diskBytes = diskBytes ?? bytes
        self.isBeingWritten = isBeingWritten
    }
}
