import Capture
import FlowStore
import Recording
import TVHome

/// A retention pass on a full disk (`tv storage apply`, `tv storage delete-everything`, a
/// session's passes). Rows go first (`StorageManager`'s crash rule), but deleting a row needs
/// room: SQLite writes the pages it changes to its log first. A trial's `tv storage apply` on a
/// full disk answered "the disk is full" and deleted nothing, though 40.6 MiB of decrypted
/// captures were doomed by its limits. So when a pass fails for a full disk, the files it
/// deletes that no row describes go first (decrypted captures; content segments dropped whole,
/// whose rows then read as gone until they go), and the pass runs again in the room they made.
extension StorageManager {
    /// `StorageManager(home:)`, on a full disk too. A history stopped cleanly has no `-wal` or
    /// `-shm` file, and SQLite cannot make them without room, so not even the connection that
    /// would delete opens: then the files the pass will delete that need no row change (under
    /// `limits`, or all of them for delete-everything) are deleted first through stores opened
    /// for reading, and it opens in the room they made. What went is counted in the manager's
    /// next report.
    /// - Throws: what `init(home:)` throws; `FlowStoreError.diskFull` again when no such file
    ///   was there to delete.
    public static func opening(home: TVHome, limits: StorageLimits, everything: Bool = false, now: Int64) throws -> StorageManager {
        do {
            return try StorageManager(home: home)
        } catch FlowStoreError.diskFull(let path) {
            let reader = try StorageManager(readingHome: home)
            defer { reader.close() }
            let evidence = try reader.auditEvidence()
            let inventory = try reader.inventory(now: now, expiry: limits.contentExpiry, recording: nil, evidence: evidence)
            let plan = everything ? RetentionPlanner.everything(inventory: inventory, evidence: evidence, now: now)
                : RetentionPlanner.plan(inventory: inventory, limits: limits, evidence: evidence, now: now)
            var made = StorageReport()
            guard try reader.deleteFilesFirst(plan, limits: limits, evidence: evidence, now: now, into: &made) else {
                throw FlowStoreError.diskFull(path: path)
            }
            let manager = try StorageManager(home: home)
            manager.madeRoom = made
            return manager
        }
    }

    /// `tv storage apply`: the limits applied, on a full disk too (`opening`, `applyLimits`). A
    /// pass that still fails for a full disk when nothing is over the limits is no failure:
    /// there was nothing to delete under them (it exited 1 with the disk-full error: trial 44),
    /// and the outcome carries what the data folder holds for the way on.
    /// - Throws: what `opening` and `applyLimits` throw; `FlowStoreError.diskFull` when
    ///   something over the limits could not be deleted for it.
    public static func applyingLimits(home: TVHome, limits: StorageLimits, now: Int64) throws -> StorageApplyOutcome {
        do {
            let manager = try opening(home: home, limits: limits, now: now)
            defer { manager.close() }
            return .applied(try manager.applyLimits(limits, recording: nil, now: now))
        } catch FlowStoreError.diskFull(let path) {
            let reader = try StorageManager(readingHome: home)
            defer { reader.close() }
            guard try !reader.deletesAnything(under: limits, now: now) else { throw FlowStoreError.diskFull(path: path) }
            return .nothingOverLimitsOnFullDisk(DataFolderHoldings.read(home: home))
        }
    }

    /// Whether a pass under `limits` now would delete anything: flows past history.maxAge,
    /// capture files, content segments or turns past content.expiry, decrypted captures.
    func deletesAnything(under limits: StorageLimits, now: Int64) throws -> Bool {
        let evidence = try auditEvidence()
        let inventory = try inventory(now: now, expiry: limits.contentExpiry, recording: nil, evidence: evidence)
        let plan = RetentionPlanner.plan(inventory: inventory, limits: limits, evidence: evidence, now: now)
        if plan.deleteFlowsStartedBefore != nil || !plan.captureDrops.isEmpty || !plan.content.drops.isEmpty { return true }
        if try content.turnsExpiring(now: now, expiry: limits.contentExpiry, evidence: evidence) > 0 { return true }
        return !decryptedDoomed(decryptedCaptures.onDisk(), limits: limits, evidence: evidence,
                                packetCaptureBytes: plan.capturesBytesAfter, now: now).isEmpty
    }

    /// `apply(plan…)`; failed for a full disk, the files that need no row change are deleted
    /// first and the pass runs again (its counts carried over).
    /// - Throws: what `apply` throws; `FlowStoreError.diskFull` again when deleting those files
    ///   freed nothing.
    func applyMakingRoom(_ plan: RetentionPlan, limits: StorageLimits, evidence: AuditEvidence, now: Int64) throws -> StorageReport {
        var report = madeRoom
        madeRoom = StorageReport()
        do {
            try apply(plan, limits: limits, evidence: evidence, now: now, into: &report)
        } catch FlowStoreError.diskFull(let path) {
            guard try deleteFilesFirst(plan, limits: limits, evidence: evidence, now: now, into: &report) else {
                throw FlowStoreError.diskFull(path: path)
            }
            try apply(plan, limits: limits, evidence: evidence, now: now, into: &report)
        }
        return report
    }

    /// Deletes the files `plan` deletes that no row has to stop describing first: the decrypted
    /// captures it dooms (all but the one being written and evidence, for delete-everything) and
    /// the content segments it drops whole (every one but the one being written, for
    /// delete-everything), counting them in `report`.
    /// - Returns: whether any was deleted.
    func deleteFilesFirst(_ plan: RetentionPlan, limits: StorageLimits, evidence: AuditEvidence, now: Int64,
                          into report: inout StorageReport) throws -> Bool {
        let decrypted = decryptedCaptures.onDisk()
        let doomed: [String]
        if plan.deletesAllContent {
            let spans = decryptedCaptureEvidence(evidence)
            doomed = decrypted.filter { file in
                !file.isRecording && !(spans.map { DecryptedCaptureRetention.isEvidence(file, spans: $0) } ?? true)
            }.map(\.name)
        } else {
            // What the pass would find after its capture drops: the plan's bytes after them.
            doomed = decryptedDoomed(decrypted, limits: limits, evidence: evidence, packetCaptureBytes: plan.capturesBytesAfter, now: now)
        }
        var freed = false
        for name in doomed {
            if let bytes = try decryptedCaptures.delete(name) {
                report.decryptedCapturesDeleted += 1
                report.decryptedCaptureBytesFreed += bytes
                freed = true
            }
        }
        let segments = plan.deletesAllContent
            ? try content.deleteFilesFirst(evidence: evidence)
            : try content.deleteSegmentFiles(plan.content.drops.map(\.sequence))
        report.content.add(segments)
        return freed || segments.filesDeleted > 0
    }
}

extension ContentSweepReport {
    /// Adds what `other` (a later part of the same pass) deleted.
    mutating func add(_ other: ContentSweepReport) {
        rowsDeleted += other.rowsDeleted
        filesDeleted += other.filesDeleted
        bytesFreed += other.bytesFreed
        spared = other.spared ?? spared
        leftAlone = other.leftAlone
        queriesRemoved += other.queriesRemoved
        queriesLeftBefore = other.queriesLeftBefore
    }
}
