import FlowStore

/// Applies retention to the index and the files together, over one connection (the writer's own
/// on its thread, or a command's). Rows go first, in one transaction; then the files nothing
/// references any more. A failed unlink leaves an unreferenced file, which the next sweep takes.
struct ContentSweeper {
    let database: SQLiteDatabase
    let directory: ContentDirectory

    /// Gathers the facts, plans, applies.
    /// - Parameters:
    ///   - now: µs since the epoch.
    ///   - writing: the sequence this process is writing (also spared by its lock; named so the
    ///     writer's own sweep does not depend on probing its own file).
    /// - Throws: `FlowStoreError` from the index, `ContentError.cannotDelete` from unlink.
    func sweep(now: Int64, expiry: ContentExpiry, ceiling: Int64, writing: Int?) throws -> ContentSweepReport {
        let index = TurnIndex(database: database)
        directory.removeAbandonedNewFiles()
        let (facts, files) = try self.facts(expiredBefore: now - expiry.microseconds, writing: writing)
        let plan = ContentRetentionPlanner.plan(segments: facts, now: now, expiry: expiry, ceiling: ceiling)
        var report = ContentSweepReport(spared: files.last { $0.isBeingWritten })
        report.leftAlone = plan.leftAlone.count
        report.rowsDeleted = try database.transaction {
            let expiring = facts.filter { $0.expiredRows > 0 }.map(\.sequence)
            var deleted = try index.deleteRecorded(before: plan.expireBefore, inSegments: expiring)
            for drop in plan.drops { deleted += try index.deleteRows(inSegment: drop.sequence) }
            return deleted
        }
        for drop in plan.drops where drop.reason != .fileMissing {
            if let freed = try directory.delete(sequence: drop.sequence) {
                report.filesDeleted += 1
                report.bytesFreed += freed
            }
        }
        return report
    }

    /// What the planner knows of every segment (files and rows), as a sweep would plan over it.
    /// - Parameter expiredBefore: rows recorded before this moment (µs) count as expired.
    /// - Throws: `FlowStoreError` from the index.
    func facts(expiredBefore cutoff: Int64, writing: Int?) throws -> ([SegmentFacts], [SegmentFile]) {
        let index = TurnIndex(database: database)
        // Established before listing: a new database's range starts after every segment present.
        let range = try SegmentRangeRecord(database: database).establish(directory)
        let files = directory.segments().map { file -> SegmentFile in
            var file = file
            if file.sequence == writing { file.isBeingWritten = true }
            return file
        }
        let rows = try index.segmentRows(expiredBefore: cutoff)
        var facts: [SegmentFacts] = files.map { file in
            let r = rows[file.sequence] ?? (0, 0)
            return SegmentFacts(sequence: file.sequence, fileBytes: file.bytes, rows: r.rows, expiredRows: r.expired,
                                isBeingWritten: file.isBeingWritten, madeByIndex: range.contains(file.sequence))
        }
        let present = Set(files.map(\.sequence))
        for (sequence, r) in rows where !present.contains(sequence) {
            facts.append(SegmentFacts(sequence: sequence, fileBytes: nil, rows: r.rows, expiredRows: r.expired,
                                      isBeingWritten: sequence == writing))
        }
        return (facts, files)
    }

    /// Deletes every row, then every segment file but the one being written (those that predate
    /// the database too: the user asked for all content to go).
    func deleteAll(writing: Int?) throws -> ContentSweepReport {
        let index = TurnIndex(database: database)
        var report = ContentSweepReport()
        report.rowsDeleted = try database.transaction { try index.deleteAll() }
        directory.removeAbandonedNewFiles()
        for file in directory.segments() {
            if file.isBeingWritten || file.sequence == writing {
                report.spared = file
                continue
            }
            if let freed = try directory.delete(sequence: file.sequence) {
                report.filesDeleted += 1
                report.bytesFreed += freed
            }
        }
        return report
    }
}
