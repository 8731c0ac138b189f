import Foundation
import TVHome

/// The flows the shared writer gave up during a session (more waited for a server that was away
/// than it keeps, `FlowWriter.defaultRetryLimit`), kept beside the database
/// (`$TV_HOME/store-unsent`, 0600, lines `FIRST LAST` of flow ids) until `tv store backfill`
/// sends them. They lie below the store's largest id for the instance, so the check at each
/// connection for flows past it (`UnsentLocalFlows`) never found them: said once at the stop,
/// then a silent hole in the shared history (a trial's 616 flows).
public enum StoreUnsent {
    public static let fileName = "store-unsent"

    /// The ranges in the data folder at `folder`, merged; empty when there is none.
    public static func ranges(folder: String) -> [ClosedRange<Int64>] {
        StoreKeptLocal.parse((try? String(contentsOfFile: folder + "/" + fileName, encoding: .utf8)) ?? "")
    }

    /// Adds `ids` (any order). A failure to write is left unsaid: the stop's sentence still
    /// counts them.
    public static func add(_ ids: [Int64], folder: String) {
        guard !ids.isEmpty else { return }
        write(StoreKeptLocal.merged(ranges(folder: folder) + runs(ids)), folder: folder)
    }

    /// Takes `ids` out (sent by a backfill); the file goes when nothing is left.
    public static func remove(_ ids: [Int64], folder: String) {
        var left = ranges(folder: folder)
        guard !left.isEmpty, !ids.isEmpty else { return }
        for sent in runs(ids) {
            left = left.flatMap { range -> [ClosedRange<Int64>] in
                guard range.overlaps(sent) else { return [range] }
                var parts: [ClosedRange<Int64>] = []
                if range.lowerBound < sent.lowerBound { parts.append(range.lowerBound ... sent.lowerBound - 1) }
                if range.upperBound > sent.upperBound { parts.append(sent.upperBound + 1 ... range.upperBound) }
                return parts
            }
        }
        write(left, folder: folder)
    }

    /// `ids` as runs of consecutive ids, sorted.
    static func runs(_ ids: [Int64]) -> [ClosedRange<Int64>] {
        var out: [ClosedRange<Int64>] = []
        for id in Set(ids).sorted() where id >= 1 {
            if let last = out.last, last.upperBound &+ 1 == id { out[out.count - 1] = last.lowerBound ... id } else { out.append(id ... id) }
        }
        return out
    }

    private static func write(_ ranges: [ClosedRange<Int64>], folder: String) {
        let path = folder + "/" + fileName
        guard !ranges.isEmpty else { unlink(path); return }
        try? FileModes.writeAtomically(Array(ranges.map { "\($0.lowerBound) \($0.upperBound)\n" }.joined().utf8), to: path, mode: 0o600)
    }
}
