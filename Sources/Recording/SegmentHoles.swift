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
