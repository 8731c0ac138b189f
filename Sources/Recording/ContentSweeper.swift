import FlowStore

/// Applies retention to the index and the files together, over one connection (the writer's own
/// on its thread, or a command's). Rows go first, in one transaction; then the files nothing
/// references any more. A failed unlink leaves an unreferenced file, which the next sweep takes.
struct ContentSweeper {
    let database: SQLiteDatabase
    let directory: ContentDirectory
    /// Which segments' unreferenced bytes were already cleared (the writer's, across sweeps).
    var clearing = SegmentClearing()

    /// Gathers the facts, plans, applies.
    /// - Parameters:
    ///   - now: µs since the epoch.
    ///   - writing: the sequence this process is writing (also spared by its lock; named so the
    ///     writer's own sweep does not depend on probing its own file).
    ///   - evidence: what audit sessions hold; nil reads it from the database now.
    ///   - queryBudget: about how many stored requests' queries to read at most
    ///     (`StoredExchanges.removeExpiredQueries`); nil for all. When it stops short,
    ///     `ContentSweepReport.queriesLeftBefore` says the cutoff for `removeQueries(before:budget:)`.
    /// - Throws: `FlowStoreError` from the index, `ContentError.cannotDelete` from unlink.
    func sweep(now: Int64, expiry: ContentExpiry, ceiling: Int64, writing: Int?,
               evidence: AuditEvidence? = nil, queryBudget: Int? = nil) throws -> ContentSweepReport {
        let index = TurnIndex(database: database)
        let evidence = evidence ?? AuditEvidence.read(from: database)
        directory.removeAbandonedNewFiles()
        let (facts, files) = try self.facts(expiredBefore: now - expiry.microseconds, writing: writing, evidence: evidence)
        let plan = ContentRetentionPlanner.plan(segments: facts, now: now, expiry: expiry, evidence: evidence, ceiling: ceiling)
        var report = ContentSweepReport(spared: files.last { $0.isBeingWritten })
        report.leftAlone = plan.leftAlone.count
        report.rowsDeleted = try database.transaction {
            let expiring = facts.filter { $0.expiredRows > 0 && !plan.keptAsEvidence.contains($0.sequence) }.map(\.sequence)
            var deleted = try index.deleteRecorded(before: plan.expireBefore, inSegments: expiring)
            // A segment kept as evidence (the planner keeps the file) keeps its evidence flows'
            // rows; the other flows' expired rows go, and their bytes are cleared below
            // (`clearUnreferenced`): other traffic's content sharing a file with evidence
            // outlived content.expiry without a word (an audit trial).
            if case let .known(_, flows) = evidence {
                let shared = facts.filter { $0.expiredRows > 0 && plan.keptAsEvidence.contains($0.sequence) }.map(\.sequence)
                deleted += try index.deleteRecorded(before: plan.expireBefore, inSegments: shared, sparing: flows)
            }
            // Segments dropped over the ceiling hold the oldest content: the requests made up to
            // their last record lose their queries too (a trial's api_key stayed in `tv request`
            // after the ceiling took its content).
            let droppedUpTo = try index.latestRecorded(inSegments: plan.drops.map(\.sequence))
            for drop in plan.drops { deleted += try index.deleteRows(inSegment: drop.sequence) }
            // The requests' queries expire with the content (they are content); audit evidence keeps them.
            let cutoff = max(plan.expireBefore, droppedUpTo.map { $0 + 1 } ?? plan.expireBefore)
            if let removal = try removeQueries(before: cutoff, evidence: evidence, budget: queryBudget) {
                report.queriesRemoved = removal.removed
                if !removal.reachedCutoff { report.queriesLeftBefore = cutoff }
            }
            return deleted
        }
        for drop in plan.drops where drop.reason != .fileMissing {
            if let freed = try directory.delete(sequence: drop.sequence) {
                report.filesDeleted += 1
                report.bytesFreed += freed
            }
        }
        let dropped = Set(plan.drops.map(\.sequence)), leftAlone = Set(plan.leftAlone)
        try clearUnreferenced(files.filter { !dropped.contains($0.sequence) && !leftAlone.contains($0.sequence) }, writing: writing)
        return report
    }

    /// Removes the queries of stored requests made before `cutoff` that earlier calls left
    /// (`StoredExchanges.removeExpiredQueries`), sparing audit evidence, inside the caller's
    /// transaction; nil when what is evidence cannot be read (nothing is removed then).
    /// - Parameter budget: about how many stored requests to read at most; nil for all.
    func removeQueries(before cutoff: Int64, evidence: AuditEvidence, budget: Int?) throws -> StoredExchanges.QueryRemoval? {
        switch evidence {
        case .none: try StoredExchanges.removeExpiredQueries(before: cutoff, sparing: [], database: database, budget: budget)
        case let .known(_, flows): try StoredExchanges.removeExpiredQueries(before: cutoff, sparing: flows, database: database, budget: budget)
        case .unknown: nil
        }
    }

    /// Clears what no row references in `files` (`SegmentHoles`): the bytes of turns deleted
    /// while others in their segment stay. Only segments nobody else writes: this writer's own
    /// (`writing`: on its thread between batches, every byte it appended is indexed) and closed
    /// ones; a segment with a row that cannot be read is left whole.
    private func clearUnreferenced(_ files: [SegmentFile], writing: Int?) throws {
        let index = TurnIndex(database: database)
        let sums = try index.keptBytesBySegment()
        for file in files where file.sequence == writing || !file.isBeingWritten {
            let sum = sums[file.sequence] ?? 0
            guard clearing.needs(file.sequence, bytes: file.bytes, referenced: sum),
                  let referenced = try index.referencedRanges(inSegment: file.sequence) else { continue }
            try directory.clear(sequence: file.sequence, gaps: SegmentHoles.gaps(referenced: referenced, size: file.bytes))
            clearing.cleared(file.sequence, referenced: sum, bytes: file.bytes)
        }
    }

    /// What the planner knows of every segment (files and rows), as a sweep would plan over it.
    /// - Parameters:
    ///   - expiredBefore: rows recorded before this moment (µs) count as expired.
    ///   - evidence: whose flows `SegmentFacts.flows` lists.
    /// - Throws: `FlowStoreError` from the index.
    func facts(expiredBefore cutoff: Int64, writing: Int?, evidence: AuditEvidence) throws -> ([SegmentFacts], [SegmentFile]) {
        let index = TurnIndex(database: database)
        // Established before listing: a new database's range starts after every segment present.
        let range = try SegmentRangeRecord(database: database).establish(directory)
        let files = directory.segments().map { file -> SegmentFile in
            var file = file
            if file.sequence == writing { file.isBeingWritten = true }
            return file
        }
        let rows = try index.segmentRows(expiredBefore: cutoff)
        let held = try index.segmentFlows(of: evidence.flows)
        var facts: [SegmentFacts] = files.map { file in
            let r = rows[file.sequence] ?? (0, 0)
            return SegmentFacts(sequence: file.sequence, fileBytes: file.diskBytes, rows: r.rows, expiredRows: r.expired,
                                isBeingWritten: file.isBeingWritten, madeByIndex: range.contains(file.sequence),
                                flows: held[file.sequence] ?? [])
        }
        let present = Set(files.map(\.sequence))
        for (sequence, r) in rows where !present.contains(sequence) {
            facts.append(SegmentFacts(sequence: sequence, fileBytes: nil, rows: r.rows, expiredRows: r.expired,
                                      isBeingWritten: sequence == writing, flows: held[sequence] ?? []))
        }
        return (facts, files)
    }

    /// Deletes every segment file but the one being written (those that predate the database
    /// too: the user asked for all content to go), then every row, except audit evidence: the
    /// rows of evidence flows stay, and so do the segments they point into (whole: a segment
    /// holds turns of many flows; the other flows' rows go, and their bytes are cleared). With
    /// `.unknown` evidence every row stays and only files no row points into go. Files go first
    /// so a full disk gets room for the rows' deletion (SQLite's log must grow for it: a trial's
    /// `tv content delete` on a full disk failed and freed nothing); rows left pointing into a
    /// deleted file are said to be gone by every reader.
    /// - Parameter evidence: what audit sessions hold; nil reads it from the database now.
    func deleteAll(writing: Int?, evidence: AuditEvidence?) throws -> ContentSweepReport {
        let index = TurnIndex(database: database)
        let evidence = evidence ?? AuditEvidence.read(from: database)
        var report = ContentSweepReport()
        let evidenceFiles = try deleteFilesForDeleteAll(writing: writing, evidence: evidence, into: &report)
        report.rowsDeleted = try database.transaction { () -> Int in
            switch evidence {
            case .none:
                report.queriesRemoved = try StoredExchanges.removeQueries(sparing: [], database: database)
                return try index.deleteAll()
            case let .known(_, flows):
                report.queriesRemoved = try StoredExchanges.removeQueries(sparing: flows, database: database)
                return try index.deleteAll(except: flows)
            case .unknown: return 0
            }
        }
        // Kept for audit evidence: the other flows' turns in them are cleared.
        if evidence != .unknown { try clearUnreferenced(evidenceFiles, writing: writing) }
        return report
    }

    /// The file half of `deleteAll`, which needs the index only to read (a read-only connection
    /// on a full disk will do): deletes every segment file but the one being written and those
    /// audit evidence points into, adding them to `report`.
    /// - Returns: the files kept for evidence (their other flows' bytes are cleared once the rows go).
    func deleteFilesForDeleteAll(writing: Int?, evidence: AuditEvidence, into report: inout ContentSweepReport) throws -> [SegmentFile] {
        let index = TurnIndex(database: database)
        // The segments that stay: those evidence flows point into (every referenced one when
        // what is evidence cannot be read).
        let kept: Set<Int>
        switch evidence {
        case .none: kept = []
        case let .known(_, flows): kept = Set(try index.segmentFlows(of: flows).keys)
        case .unknown: kept = try index.referencedSegments()
        }
        directory.removeAbandonedNewFiles()
        var evidenceFiles: [SegmentFile] = []
        for file in directory.segments() {
            if file.isBeingWritten || file.sequence == writing {
                report.spared = file
                continue
            }
            if kept.contains(file.sequence) {
                evidenceFiles.append(file)
                continue
            }
            if let freed = try directory.delete(sequence: file.sequence) {
                report.filesDeleted += 1
                report.bytesFreed += freed
            }
        }
        return evidenceFiles
    }
}
