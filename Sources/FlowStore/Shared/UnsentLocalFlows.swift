import Foundation

/// Closed flows an earlier session of this data folder recorded that the shared store never got:
/// those with ids past the store's largest for the instance and before this session's first id,
/// started since the instance first wrote to the store (a session killed while its shared writer
/// still held them, or one run while no store was set; not a session run with `--store ''`,
/// whose flows stay here (`StoreKeptLocal`), nor the history from before the folder was first
/// pointed at a store, nor a copied folder's rows of the folder it came from). Found at each connection of the shared writer (`PostgresBatchWriter`) and said
/// with the `tv store backfill` that sends them: before, a `kill -9` while the store was down
/// lost them from the store with nothing said (a trial).
public struct UnsentLocalFlows: Sendable, Equatable {
    /// How many closed flows.
    public var count: Int
    /// The earliest and latest start among them (µs since the epoch, UTC).
    public var firstStart: Int64
    public var lastStart: Int64

    public init(count: Int, firstStart: Int64, lastStart: Int64) {
        self.count = count
        self.firstStart = firstStart
        self.lastStart = lastStart
    }

    /// The closed flows of `localPath` with `above < id < below`, or among those a session's
    /// shared writer gave up (`StoreUnsent`), started at or after `since` (µs); nil when there
    /// are none or the file cannot be read (nothing is said then).
    static func find(localPath: String, above: Int64, below: Int64, since: Int64) -> UnsentLocalFlows? {
        let folder = (localPath as NSString).deletingLastPathComponent
        let givenUp = StoreUnsent.ranges(folder: folder)
        guard above < below || !givenUp.isEmpty, let local = try? SQLiteDatabase(readingAt: localPath, busyTimeout: 1_000) else { return nil }
        defer { local.close() }
        // Flows of sessions run with `--store ''` are not unsent: they were kept here.
        let kept = StoreKeptLocal.ranges(folder: folder)
        guard let select = try? local.prepare("""
            SELECT count(*), min(start_time), max(start_time) FROM flows WHERE duration IS NOT NULL AND start_time >= ? AND ((id > ? AND id < ?)
            """ + String(repeating: " OR id BETWEEN ? AND ?", count: givenUp.count) + ")"
            + String(repeating: " AND id NOT BETWEEN ? AND ?", count: kept.count)) else { return nil }
        var found: UnsentLocalFlows?
        try? select.bind([.integer(since), .integer(above), .integer(below)] + (givenUp + kept).flatMap { [.integer($0.lowerBound), .integer($0.upperBound)] })
        try? select.forEachRow { row in
            let count = Int(row.int64(at: 0))
            if count > 0 { found = UnsentLocalFlows(count: count, firstStart: row.int64(at: 1), lastStart: row.int64(at: 2)) }
        }
        return found
    }
}
