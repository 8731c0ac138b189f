#if canImport(Glibc)
import Glibc
#endif

/// One segment file as found in the content folder.
public struct SegmentFile: Sendable, Equatable {
    /// The sequence number in its name.
    public var sequence: Int
    /// Its size in bytes.
    public var bytes: Int64
    /// True when a writer holds its lock: it is the segment being written and is never deleted.
    public var isBeingWritten: Bool

    public init(sequence: Int, bytes: Int64, isBeingWritten: Bool) {
        self.sequence = sequence
        self.bytes = bytes
        self.isBeingWritten = isBeingWritten
    }
}
