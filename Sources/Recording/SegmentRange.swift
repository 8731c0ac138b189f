/// The segment sequences one flow database's content index made: `first` through `last` (empty
/// while `last < first`). A sweep deletes a segment for having no rows only inside this range;
/// a segment outside it predates the database (a database moved aside, or a 0-byte one, was
/// replaced by a new one) or was made under another database, so nothing proves it unreferenced
/// and it is left alone.
public struct SegmentRange: Sendable, Equatable {
    /// The first sequence this index made (or vouches for).
    public var first: Int
    /// The last sequence this index made; `first - 1` while it made none.
    public var last: Int

    public init(first: Int, last: Int) {
        self.first = first
        self.last = last
    }

    /// The range of an index that kept no record of one.
    /// - Parameters:
    ///   - lowestReferenced: the lowest segment its rows name (nil when it has no rows).
    ///   - highestInFolder: the highest sequence in the content folder (0 when none).
    /// - Returns: with rows (a database from before the range was recorded), from its lowest
    ///   referenced segment to the highest in the folder; without rows (a new database, or one
    ///   started after the old was moved aside), an empty range after the highest in the folder:
    ///   every segment present predates it.
    public static func established(lowestReferenced: Int?, highestInFolder: Int) -> SegmentRange {
        if let lowest = lowestReferenced {
            return SegmentRange(first: lowest, last: max(lowest, highestInFolder))
        }
        return SegmentRange(first: highestInFolder + 1, last: highestInFolder)
    }

    /// Whether this index made segment `sequence`.
    public func contains(_ sequence: Int) -> Bool { sequence >= first && sequence <= last }

    /// The range once this index makes segment `sequence` (a new segment is always past the
    /// highest in the folder, so the range only grows at its end).
    public func including(_ sequence: Int) -> SegmentRange {
        SegmentRange(first: min(first, sequence), last: max(last, sequence))
    }
}
