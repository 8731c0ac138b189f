import FlowStore

/// Where a flow database keeps its `SegmentRange`: two rows of its `settings` table
/// (`content.segments.first`, `content.segments.last`, decimal text), written by the content
/// writer before it makes a segment and by the first sweep of a database that has none.
struct SegmentRangeRecord {
    static let firstKey = "content.segments.first"
    static let lastKey = "content.segments.last"
    let database: SQLiteDatabase

    /// The recorded range, or nil when the database has none yet.
    /// - Throws: `FlowStoreError` when it cannot be read.
    func read() throws -> SegmentRange? {
        guard let first = try integer(SegmentRangeRecord.firstKey), let last = try integer(SegmentRangeRecord.lastKey) else {
            return nil
        }
        return SegmentRange(first: first, last: last)
    }

    /// The recorded range, establishing (and recording) it from the index and `directory` when
    /// there is none (`SegmentRange.established`). A connection that may not write (read-only,
    /// on a full disk: a retention pass planning before it can delete, `StorageManager.opening`)
    /// gets the range it would record, and the next writer records it.
    /// - Throws: `FlowStoreError` when it cannot be read, or written for another reason.
    func establish(_ directory: ContentDirectory) throws -> SegmentRange {
        if let range = try read() { return range }
        let lowestReferenced = try TurnIndex(database: database).lowestSegment()
        let range = SegmentRange.established(lowestReferenced: lowestReferenced, highestInFolder: directory.highestSequence())
        do {
            try write(range)
        } catch FlowStoreError.readOnly, FlowStoreError.diskFull {
            // Not recorded now; the same folder gives the same range to the next connection.
        }
        return range
    }

    /// Records `range` (both rows in one transaction).
    /// - Throws: `FlowStoreError` (`.diskFull` …); the old range stays then.
    func write(_ range: SegmentRange) throws {
        try database.transaction {
            let statement = try database.prepare(
                "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
            for (key, value) in [(SegmentRangeRecord.firstKey, range.first), (SegmentRangeRecord.lastKey, range.last)] {
                try statement.bind([.text(key), .text(String(value))])
                _ = try statement.step()
                statement.reset()
            }
        }
    }

    private func integer(_ key: String) throws -> Int? {
        if case let .text(text) = try database.scalar("SELECT value FROM settings WHERE key = ?", [.text(key)]) {
            return Int(text)
        }
        return nil
    }
}
