/// Decides what a sweep removes (pure): the expiry first, then the fixed ceiling, oldest
/// segments first, and never the segment being written.
///
/// Bytes are removed a whole segment at a time, and only when nothing the sweep keeps references
/// them: rows past the expiry are deleted one by one, and a segment goes when none of its rows is
/// left. The ceiling counts every segment file, the one being written too; when the files are over
/// it, the oldest segments go (rows and file) until they are not, or until only the one being
/// written is left.
///
/// A segment the index did not make (`SegmentFacts.madeByIndex` false) and holds no row of is
/// left alone: it predates the database (one moved aside and replaced by a new one), so having no
/// row here proves nothing. It is listed in `ContentRetentionPlan.leftAlone`, never dropped and
/// not counted against the ceiling.
///
/// Audit evidence (issue 23) is exempt from retention until its session is deleted: a segment
/// holding any turn of an evidence flow is neither expired nor dropped over the ceiling (it still
/// counts towards it). A segment holds turns of many flows, so its file is kept; the other
/// flows' expired rows still go and their bytes are cleared (`ContentSweeper`); once no live
/// session holds its flows, the next sweep takes it as usual. When the evidence is `.unknown`,
/// every segment with a row is kept so.
public enum ContentRetentionPlanner {
    /// The fixed ceiling on decrypted content across all flows: 536,870,912 bytes (512 MiB). The
    /// user chooses the expiry; this is not a setting.
    public static let ceilingBytes: Int64 = 512 * 1_048_576

    /// The plan for `segments` (any order) at `now` (µs since the epoch).
    /// - Parameter ceiling: bytes the files may occupy (tests pass a small one).
    /// - Parameter evidence: what audit sessions hold (their flows); `SegmentFacts.flows` says
    ///   which of them a segment holds turns of.
    public static func plan(segments: [SegmentFacts], now: Int64, expiry: ContentExpiry,
                            evidence: AuditEvidence = .none, ceiling: Int64 = ceilingBytes) -> ContentRetentionPlan {
        let cutoff = now - expiry.microseconds
        var drops: [ContentRetentionPlan.Drop] = []
        var kept: [SegmentFacts] = []
        var leftAlone: [Int] = []
        var keptAsEvidence: [Int] = []
        for segment in segments.sorted(by: { $0.sequence < $1.sequence }) {
            if segment.isBeingWritten {
                kept.append(segment)
                continue
            }
            if !segment.madeByIndex && segment.rows == 0 {
                if segment.fileBytes != nil { leftAlone.append(segment.sequence) }
                continue
            }
            guard let bytes = segment.fileBytes else {
                if segment.rows > 0 { drops.append(.init(sequence: segment.sequence, reason: .fileMissing, bytes: 0)) }
                continue
            }
            let holdsEvidence = evidence == .unknown ? segment.rows > 0 : !segment.flows.isDisjoint(with: evidence.flows)
            if holdsEvidence {
                keptAsEvidence.append(segment.sequence)
                kept.append(segment)
            } else if segment.rows == 0 {
                drops.append(.init(sequence: segment.sequence, reason: .unreferenced, bytes: bytes))
            } else if segment.expiredRows >= segment.rows {
                drops.append(.init(sequence: segment.sequence, reason: .expired, bytes: bytes))
            } else {
                kept.append(segment)
            }
        }
        var total = kept.reduce(Int64(0)) { $0 + ($1.fileBytes ?? 0) }
        var index = 0
        while total > ceiling, index < kept.count {
            let segment = kept[index]
            index += 1
            guard !segment.isBeingWritten, !keptAsEvidence.contains(segment.sequence) else { continue }
            let bytes = segment.fileBytes ?? 0
            drops.append(.init(sequence: segment.sequence, reason: .overCeiling, bytes: bytes))
            total -= bytes
        }
        drops.sort { $0.sequence < $1.sequence }
        return ContentRetentionPlan(expireBefore: cutoff, drops: drops, bytesAfter: total, leftAlone: leftAlone,
                                    keptAsEvidence: keptAsEvidence)
    }
}
