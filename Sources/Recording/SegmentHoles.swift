/// The bytes of a segment that no index row references any more, and clearing them.
///
/// Bytes went only with a whole segment, when none of its rows was left: the turns a flow's
/// deletion, history retention or content expiry removed stayed readable in a segment that
/// still held other flows' turns (a trial's `strings` read a request deleted by
/// `history.maxAge` twelve minutes later, in the segment being written). Each sweep now clears
/// what nothing references: on the writer's own sweep between its batches, every byte it
/// appended is indexed, so an unreferenced byte is one whose row was deleted (or never made, a
/// write the index then refused).
public enum SegmentHoles {
    /// The stretches of [0, `size`) that none of `referenced` covers, in order, adjacent and
    /// overlapping references merged. Offsets in bytes.
    public static func gaps(referenced: [Range<Int64>], size: Int64) -> [Range<Int64>] {
        var gaps: [Range<Int64>] = []
        var covered: Int64 = 0
        for range in referenced.sorted(by: { $0.lowerBound < $1.lowerBound }) where !range.isEmpty {
            if range.lowerBound > covered { gaps.append(covered..<min(range.lowerBound, size)) }
            covered = max(covered, range.upperBound)
            if covered >= size { break }
        }
        if covered < size { gaps.append(covered..<size) }
        return gaps.filter { !$0.isEmpty }
    }
}

/// What each segment's rows referenced (kept bytes, summed) and its size when its unreferenced
/// bytes were last cleared, so a sweep that finds both the same, or every byte referenced, reads
/// no row of it (each run's text would be parsed every minute otherwise). A closed segment's size
/// stays, and its sum only falls as rows go; the segment being written grows, and is read again.
/// Held by the content writer's thread across its sweeps; a command's sweep starts empty. Not
/// `Sendable`: one thread uses it.
final class SegmentClearing {
    private var clearedAt: [Int: (referenced: Int64, bytes: Int64)] = [:]

    /// Whether segment `sequence` of `bytes`, its rows referencing `referenced` kept bytes, may
    /// hold bytes to clear: some are unreferenced, and it changed since it was last cleared.
    func needs(_ sequence: Int, bytes: Int64, referenced: Int64) -> Bool {
        guard referenced < bytes else { return false }
        guard let last = clearedAt[sequence] else { return true }
        return last.referenced != referenced || last.bytes != bytes
    }

    func cleared(_ sequence: Int, referenced: Int64, bytes: Int64) { clearedAt[sequence] = (referenced, bytes) }
}
