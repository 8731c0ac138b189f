import FlowStore
import TVHome

/// Decrypted content at rest, for readers and commands: the turns index in the flow database and
/// the segment files in `$TV_HOME/content/`. A live session writes through a `ContentWriter`;
/// this type reads, sweeps and deletes — from any process, because the segment being written is
/// recognised by its writer's lock, not by asking the session.
///
/// Not `Sendable`: it owns one SQLite connection; use it from one thread.
public final class ContentStore {
    /// The content folder.
    public let directory: ContentDirectory
    private let database: SQLiteDatabase

    /// Opens the index in the flow database at `databasePath` (applying missing migrations) and
    /// the content folder at `directory` (made 0700 if missing).
    /// - Throws: `FlowStoreError` for the database, `TVHomeError.cannotCreate` for the folder.
    public init(databasePath: String, directory: String) throws {
        self.directory = ContentDirectory(path: directory)
        try self.directory.ensureExists()
        database = try SQLiteDatabase(path: databasePath)
        try FlowSchema.migrate(database)
    }

    /// Opens the index for a command that only reads (turns, content status, export): read-only,
    /// so it works on a full disk (see `SQLiteDatabase.init(readingAt:)`); a missing file or an
    /// older schema is opened (created, migrated) as `init(databasePath:directory:)` does. The
    /// folder is not made.
    /// - Throws: `FlowStoreError`.
    public init(readingDatabase databasePath: String, directory: String) throws {
        self.directory = ContentDirectory(path: directory)
        database = try FlowSchema.openForReading(databasePath)
    }

    /// Opens the store of the data folder `home` for a command that only reads.
    /// - Throws: what `init(readingDatabase:directory:)` throws.
    public convenience init(readingHome home: TVHome) throws {
        try self.init(readingDatabase: home.databasePath, directory: home.contentDirectory)
    }

    /// Opens the store of the data folder `home`.
    /// - Throws: what `init(databasePath:directory:)` throws, or `TVHomeError`.
    public convenience init(home: TVHome) throws {
        try home.ensureExists()
        try self.init(databasePath: home.databasePath, directory: home.contentDirectory)
    }

    /// Closes the database connection.
    public func close() { database.close() }

    /// The turns of `flow`, by number (figures and locations; no bytes). Rows holding values
    /// no writer writes are left out; `damagedTurns(flow:)` names them.
    /// - Throws: `FlowStoreError` when the index cannot be read.
    public func turns(flow: Int64) throws -> [IndexedTurn] {
        try TurnIndex(database: database).turns(flow: flow).turns
    }

    /// The rows of `flow` in the turns index that `turns(flow:)` leaves out as damaged.
    /// - Throws: `FlowStoreError` when the index cannot be read.
    public func damagedTurns(flow: Int64) throws -> [DamagedRow] {
        try TurnIndex(database: database).turns(flow: flow).damaged
    }

    /// The kept bytes of one indexed turn.
    /// - Throws: `ContentError.bytesGone` when its segment was deleted, `.segmentShort`,
    ///   `.cannotRead`.
    public func bytes(of turn: IndexedTurn) throws -> [UInt8] {
        guard turn.turn.keptBytes > 0 else { return [] }
        return try directory.read(sequence: turn.segment, offset: turn.segmentOffset, count: turn.turn.keptBytes,
                                   flow: turn.flowID, turn: turn.turn.number)
    }

    /// Every turn of `flow` with its bytes.
    /// - Throws: as `turns(flow:)` and `bytes(of:)`.
    public func recordedTurns(flow: Int64) throws -> [RecordedTurn] {
        try turns(flow: flow).map { RecordedTurn(turn: $0.turn, bytes: try bytes(of: $0)) }
    }

    /// How much is kept of `flow`.
    /// - Throws: `FlowStoreError`.
    public func summary(flow: Int64) throws -> ContentSummary {
        let turns = try TurnIndex(database: database).turns(flow: flow).turns
        var summary = TurnIndex.summary(of: turns)
        let present = Set(directory.segments().map(\.sequence))
        summary.goneBytes = turns.filter { !present.contains($0.segment) }.reduce(0) { $0 + Int64($1.turn.keptBytes) }
        return summary
    }

    /// What content occupies now (rows, flows, kept bytes, files).
    /// - Throws: `FlowStoreError`.
    public func usage() throws -> ContentUsage {
        let index = TurnIndex(database: database)
        let totals = try index.totals()
        let segments = directory.segments()
        // Read only: a database that recorded no range yet gets the one its first sweep would.
        let rows = try index.segmentRows(expiredBefore: 0)
        let range = try SegmentRangeRecord(database: database).read()
            ?? SegmentRange.established(lowestReferenced: rows.keys.min(), highestInFolder: directory.highestSequence())
        let predating = segments.map(\.sequence).filter { !range.contains($0) && rows[$0] == nil }
        var usage = ContentUsage(turns: totals.turns, flows: totals.flows, keptBytes: totals.keptBytes,
                                 segments: segments, predating: predating)
        let present = Set(segments.map(\.sequence))
        usage.goneTurns = rows.filter { !present.contains($0.key) }.reduce(0) { $0 + $1.value.rows }
        let evidence = AuditEvidence.read(from: database).flows
        usage.evidenceFlows = Set(try index.segmentFlows(of: evidence).values.joined()).count
        return usage
    }

    /// Applies retention now: rows past `expiry`, then segments nothing references, then the
    /// oldest segments while the files are over `ceiling`. The segment being written is spared.
    /// Segments holding audit evidence are kept (`ContentRetentionPlanner`).
    /// - Parameters:
    ///   - now: µs since the epoch.
    ///   - evidence: what audit sessions hold; nil reads it from the history now.
    /// - Throws: `FlowStoreError`, `ContentError.cannotDelete`.
    @discardableResult
    public func sweep(now: Int64, expiry: ContentExpiry, ceiling: Int64 = ContentRetentionPlanner.ceilingBytes,
                      evidence: AuditEvidence? = nil) throws -> ContentSweepReport {
        try ContentSweeper(database: database, directory: directory)
            .sweep(now: now, expiry: expiry, ceiling: ceiling, writing: nil, evidence: evidence)
    }

    /// What the retention planner knows of every segment now (`RetentionPlanner`'s content half).
    /// - Parameters:
    ///   - now: µs since the epoch.
    ///   - evidence: whose flows `SegmentFacts.flows` lists.
    /// - Throws: `FlowStoreError`.
    public func segmentFacts(now: Int64, expiry: ContentExpiry, evidence: AuditEvidence = .none) throws -> [SegmentFacts] {
        try ContentSweeper(database: database, directory: directory)
            .facts(expiredBefore: now - expiry.microseconds, writing: nil, evidence: evidence).0
    }

    /// The turns a sweep at `now` with `expiry` would delete for their age (not for the
    /// ceiling), without deleting anything: rows recorded before now − `expiry`, but for
    /// segments kept as audit evidence, as the sweep spares them.
    /// - Throws: `FlowStoreError`.
    public func turnsExpiring(now: Int64, expiry: ContentExpiry, evidence: AuditEvidence) throws -> Int {
        let facts = try segmentFacts(now: now, expiry: expiry, evidence: evidence)
        let plan = ContentRetentionPlanner.plan(segments: facts, now: now, expiry: expiry, evidence: evidence, ceiling: .max)
        return facts.filter { !plan.keptAsEvidence.contains($0.sequence) }.reduce(0) { $0 + $1.expiredRows }
    }

    /// Deletes the index rows of the flows `selection` (a `SELECT` of flow ids) names, inside the
    /// caller's transaction on the flow database: the history's retention takes a flow's content
    /// with its row (the segments, unreferenced, go at the next sweep).
    /// - Returns: turns deleted. - Throws: `FlowStoreError`.
    public static func deleteRows(ofFlowsIn selection: String, database: SQLiteDatabase) throws -> Int {
        try TurnIndex(database: database).deleteRows(ofFlowsIn: selection)
    }

    /// Deletes all decrypted content: every index row, then every segment file except the one a
    /// live session is writing (its bytes become unreferenced and go at a later sweep, once the
    /// session moves to the next segment).
    /// - Parameter evidence: audit evidence to spare (`tv storage delete-everything`); `.none`
    ///   (`tv content delete`) deletes it too.
    /// - Returns: what was deleted and which segment was spared.
    /// - Throws: `FlowStoreError`, `ContentError.cannotDelete`.
    @discardableResult
    /// The files `deleteAll(evidence:)` would delete, deleted now, through a store opened for
    /// reading (which works on a full disk): a full disk gets room for the rows' deletion, which
    /// SQLite's log must grow for (a trial's `tv content delete` on a full disk freed nothing).
    /// Call `deleteAll` next, on a store opened for writing; its report counts the rows.
    /// - Returns: what went (files, bytes; the segment being written in `spared`).
    /// - Throws: `FlowStoreError` when the index cannot be read, `ContentError.cannotDelete`.
    public func deleteFilesFirst(evidence: AuditEvidence = .none) throws -> ContentSweepReport {
        var report = ContentSweepReport()
        _ = try ContentSweeper(database: database, directory: directory).deleteFilesForDeleteAll(writing: nil, evidence: evidence, into: &report)
        return report
    }

    public func deleteAll(evidence: AuditEvidence = .none) throws -> ContentSweepReport {
        // The requests' queries (content) are overwritten where they were, not left in free
        // space (sqlite.org/pragma.html#pragma_secure_delete), and the write-ahead log that
        // held the pages before is emptied when no reader needs it (best effort: a running
        // session's reader may keep it until its next checkpoint).
        try database.execute("PRAGMA secure_delete = ON")
        let report = try ContentSweeper(database: database, directory: directory).deleteAll(writing: nil, evidence: evidence)
        try? database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return report
    }

    /// Deletes the segment files `sequences` (a retention plan's whole drops,
    /// `ContentRetentionPlan.drops`) before their rows: on a full disk the rows' deletion needs
    /// room SQLite's log must grow for, which deleting the files makes. A segment a writer holds
    /// is spared. Rows left pointing into a deleted file read as gone until the sweep deletes
    /// them (it plans them as `fileMissing`).
    /// - Returns: files deleted and bytes freed.
    /// - Throws: `ContentError.cannotDelete`.
    public func deleteSegmentFiles(_ sequences: [Int]) throws -> ContentSweepReport {
        var report = ContentSweepReport()
        for sequence in sequences {
            if let freed = try directory.delete(sequence: sequence) {
                report.filesDeleted += 1
                report.bytesFreed += freed
            }
        }
        return report
    }

    /// Deletes the index rows of `flow` (its bytes are cleared at the next sweep: a whole segment
    /// goes when nothing in it is referenced, and in one still holding other turns its bytes are
    /// made zeros, `SegmentHoles`). - Returns: rows deleted.
    /// - Throws: `FlowStoreError`.
    @discardableResult
    public func forget(flow: Int64) throws -> Int {
        try database.transaction { try TurnIndex(database: database).deleteRows(flow: flow) }
    }
}
