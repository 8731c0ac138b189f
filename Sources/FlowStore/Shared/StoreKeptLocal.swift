import Foundation
import TVHome

/// The flow ids of sessions run with `--store ''` (this session out of the shared store), kept
/// beside the database (`$TV_HOME/store-kept-local`, 0600): one line `FIRST LAST` per session,
/// `LAST` 0 while it runs (or after it was killed, until the next session closes the line at its
/// own first id). Those flows stay here: `tv store backfill` leaves them out and a connection
/// to the store does not call them unsent (`UnsentLocalFlows`). Before, every later start said
/// they were "not in the shared store" with the backfill that sends them, and `backfill --all`,
/// or the `--from` an outage suggested, sent them (a trial).
public enum StoreKeptLocal {
    public static let fileName = "store-kept-local"

    /// The ranges in the folder at `folder` (the data folder's path), merged; a line still open
    /// reaches `Int64.max`. Empty when there is no file or it cannot be read.
    public static func ranges(folder: String) -> [ClosedRange<Int64>] {
        parse((try? String(contentsOfFile: folder + "/" + fileName, encoding: .utf8)) ?? "")
    }

    /// Whether `id` is in one of `ranges`.
    public static func contains(_ ranges: [ClosedRange<Int64>], _ id: Int64) -> Bool {
        ranges.contains { $0.contains(id) }
    }

    /// The ranges of `text` (lines `FIRST LAST`, `LAST` 0 for open), sorted and merged; lines
    /// that are not two numbers with FIRST ≥ 1 and LAST 0 or ≥ FIRST are skipped.
    static func parse(_ text: String) -> [ClosedRange<Int64>] {
        var ranges: [ClosedRange<Int64>] = []
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let first = Int64(parts[0]), let last = Int64(parts[1]), first >= 1, last == 0 || last >= first else { continue }
            ranges.append(first ... (last == 0 ? .max : last))
        }
        return merged(ranges)
    }

    /// `ranges` sorted, overlapping and touching ones joined.
    static func merged(_ ranges: [ClosedRange<Int64>]) -> [ClosedRange<Int64>] {
        var merged: [ClosedRange<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound || range.lowerBound == last.upperBound &+ 1 {
                merged[merged.count - 1] = last.lowerBound ... max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    /// A session starts whose first id will be `first`: lines left open by a killed session are
    /// closed before it (their last id is at most `first - 1`); with `keptLocal`, this session's
    /// own open line is added. A failure to write is said by the caller (nil: written).
    public static func sessionStarts(home: TVHome, first: Int64, keptLocal: Bool) -> Error? {
        let path = home.path + "/" + fileName
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        guard !text.isEmpty || keptLocal else { return nil }
        var lines = text.split(separator: "\n").map { line -> String in
            let parts = line.split(separator: " ")
            guard parts.count == 2, parts[1] == "0", let start = Int64(parts[0]) else { return String(line) }
            // One past this session's ids (a `tv exec`'s range lies 2³² on) stays open.
            return start <= first - 1 ? "\(start) \(first - 1)" : String(line)
        }
        if keptLocal { lines.append("\(first) 0") }
        do { try FileModes.writeAtomically(Array(lines.map { $0 + "\n" }.joined().utf8), to: path, mode: 0o600) } catch { return error }
        return nil
    }

    /// A session kept out of the store that began at `first` stops: its line closes at `last`
    /// (the largest id it handed out), or goes when it made no flow.
    public static func sessionStops(home: TVHome, first: Int64, last: Int64?) {
        let path = home.path + "/" + fileName
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return }
        // Its line by its first id, open or closed since at another writer's first id (a
        // `tv exec` started beside it, `FlowIDRanges`): closed at its own last id now.
        let lines = text.split(separator: "\n").compactMap { line -> String? in
            guard line.split(separator: " ").first == Substring(String(first)) else { return String(line) }
            return last.map { "\(first) \($0)" }
        }
        try? FileModes.writeAtomically(Array(lines.map { $0 + "\n" }.joined().utf8), to: path, mode: 0o600)
    }
}
