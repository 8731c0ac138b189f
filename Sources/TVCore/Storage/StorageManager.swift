import Capture
import FlowStore
import Foundation
import Proxy
import Recording
import Synchronization
import TVHome

/// Applies a `RetentionPlan` to rows and files together ("Retention cuts both halves or it
/// lies", seed 000 Settings): old flows go with their packets, exchanges, names and content;
/// capture files go with their packet rows marked; then content's own sweep.
///
/// Crash safety: rows change first, in transactions (SQLite's journal makes each all or
/// nothing); files are unlinked only after the transaction that stopped describing them
/// committed. A `kill -9` between the two leaves a capture file no row describes, which the
/// planner lists as `.unreferenced` and the next pass deletes; never a row pointing at a file
/// that is gone without saying so.
///
/// Not `Sendable`: it owns one SQLite connection; use it from one thread.
public final class StorageManager {
    /// Flows deleted per transaction: a long pass never holds the write lock long enough to make
    /// a live session's writer wait beyond its busy timeout.
    static let flowsPerTransaction = 5_000

    let database: SQLiteDatabase
    let content: ContentStore
    let captures: CaptureFiles
    let decryptedCaptures: DecryptedCaptureFiles
    /// What `opening(home:…)` deleted to make room for the write connection; the next pass's
    /// report starts from it.
    var madeRoom = StorageReport()

    /// Opens the flow database and the content store of `home` (migrating as needed).
    /// - Throws: `FlowStoreError`, `TVHomeError`.
    public init(home: TVHome) throws {
        try home.ensureExists()
        database = try SQLiteDatabase(path: home.databasePath)
        try FlowSchema.migrate(database)
        content = try ContentStore(home: home)
        captures = CaptureFiles(home: home)
        decryptedCaptures = DecryptedCaptureFiles(home: home)
    }

    /// Opens the flow database and the content store of `home` for reading only (nothing is
    /// migrated): on a full disk, where the write connection's `-wal` and `-shm` files cannot
    /// be made (`opening(home:…)`).
    /// - Throws: `FlowStoreError`.
    init(readingHome home: TVHome) throws {
        database = try FlowSchema.openForReading(home.databasePath)
        content = try ContentStore(readingHome: home)
        captures = CaptureFiles(home: home)
        decryptedCaptures = DecryptedCaptureFiles(home: home)
    }

    /// Closes both connections.
    public func close() {
        database.close()
        content.close()
    }

    /// What exists now, for the planner.
    /// - Parameter recording: the capture file a live session writes, when the caller knows it;
    ///   otherwise the file a live writer holds locked.
    /// - Parameter evidence: what audit sessions hold (the content segments' facts name its flows).
    public func inventory(now: Int64, expiry: ContentExpiry, recording: Int?,
                          evidence: AuditEvidence = .none) throws -> StorageInventory {
        let oldest: Int64?
        if case let .integer(t) = try database.scalar("SELECT min(start_time) FROM flows") { oldest = t } else { oldest = nil }
        let rows = try CaptureRowSequences.read(database)
        return StorageInventory(oldestFlowStart: oldest,
                                captures: captures.facts(rows: rows.live, deleted: rows.deleted, recording: recording ?? captures.recording()),
                                contentSegments: try content.segmentFacts(now: now, expiry: expiry, evidence: evidence))
    }

    /// Plans under `limits` and applies: the one pass a session runs at start, periodically and
    /// when a limit changes, and `tv storage apply` runs on request.
    /// - Parameter evidence: what audit sessions hold; nil reads it from the history
    ///   (`auditEvidence()`).
    public func applyLimits(_ limits: StorageLimits, evidence: AuditEvidence? = nil, recording: Int?,
                            now: Int64) throws -> StorageReport {
        let evidence = try evidence ?? auditEvidence()
        let inventory = try inventory(now: now, expiry: limits.contentExpiry, recording: recording, evidence: evidence)
        let plan = RetentionPlanner.plan(inventory: inventory, limits: limits, evidence: evidence, now: now)
        return try applyMakingRoom(plan, limits: limits, evidence: evidence, now: now)
    }

    /// The capture files `limits` would delete now, without deleting anything: the packet
    /// captures' drops and the decrypted captures past them (`tv settings set captures.maxBytes`
    /// and `captures.maxAge` ask before they delete: a re-check's 1MB took a 17.8 MiB capture
    /// without a word). Bytes in all.
    public func captureFilesDoomed(_ limits: StorageLimits, now: Int64) throws -> (files: Int, bytes: Int64) {
        let evidence = try auditEvidence()
        let inventory = try inventory(now: now, expiry: limits.contentExpiry, recording: nil, evidence: evidence)
        var none = limits
        none.historyMaxAge = nil
        let plan = RetentionPlanner.plan(inventory: inventory, limits: none, evidence: evidence, now: now)
        let left = inventory.captures.filter { file in !plan.captureDrops.contains { $0.sequence == file.sequence } }.reduce(Int64(0)) { $0 + $1.bytes }
        let decrypted = decryptedCaptures.onDisk()
        let doomed = decryptedDoomed(decrypted, limits: limits, evidence: evidence, packetCaptureBytes: left, now: now)
        let decryptedBytes = decrypted.filter { doomed.contains($0.name) }.reduce(Int64(0)) { $0 + $1.bytes }
        return (plan.captureDrops.count + doomed.count, plan.captureBytesFreed + decryptedBytes)
    }

    /// The capture files being recorded now that `limits` would delete once they close
    /// (`RetentionPlanner.recordingDoomedOnceClosed`): how many, and their bytes now.
    public func recordingFilesDoomedOnceClosed(_ limits: StorageLimits, now: Int64) throws -> (files: Int, bytes: Int64) {
        let evidence = try auditEvidence()
        let recording = captures.allRecording()
        guard !recording.isEmpty else { return (0, 0) }
        let inventory = try inventory(now: now, expiry: limits.contentExpiry, recording: nil, evidence: evidence)
        let drops = RetentionPlanner.recordingDoomedOnceClosed(inventory: inventory, recording: recording, limits: limits,
                                                               evidence: evidence, now: now)
        return (drops.count, drops.reduce(0) { $0 + $1.bytes })
    }

    /// The decrypted turns `content.expiry` = `expiry` would delete now for their age
    /// (`ContentStore.turnsExpiring`; audit evidence spared).
    public func contentTurnsExpiring(_ expiry: ContentExpiry, now: Int64) throws -> Int {
        try content.turnsExpiring(now: now, expiry: expiry, evidence: try auditEvidence())
    }

    /// The closed flows started before `cutoff` that a history limit would delete now, and how
    /// many closed flows there are: audit evidence is not counted (it stays), as the deletion
    /// spares it (`tv settings set history.maxAge` said it would delete 20 of 20 where it
    /// deleted the 10 outside an audit session: a trial). With evidence unknown, none.
    public func flowsDoomed(startedBefore cutoff: Int64) throws -> (doomed: Int, closed: Int) {
        let evidence = try auditEvidence()
        guard evidence != .unknown else { return (0, 0) }
        func count(_ sql: String) throws -> Int {
            if case let .integer(n) = try database.scalar(sql) { return Int(n) }
            return 0
        }
        let closed = try count("SELECT count(*) FROM flows WHERE duration IS NOT NULL")
        var doomed = try count("SELECT count(*) FROM flows WHERE duration IS NOT NULL AND start_time < \(cutoff)")
        let exempt = evidence.flows
        if !exempt.isEmpty {
            doomed -= try count("SELECT count(*) FROM flows WHERE duration IS NOT NULL AND start_time < \(cutoff) AND id IN (\(exempt.sorted().map(String.init).joined(separator: ",")))")
        }
        return (doomed, closed)
    }

    /// The decrypted captures `limits` delete: past captures.maxAge or content.expiry (whichever
    /// is sooner: they are content), then the oldest while they exceed what captures.maxBytes
    /// leaves after `packetCaptureBytes`; audit evidence kept.
    func decryptedDoomed(_ files: [DecryptedCaptureRetention.File], limits: StorageLimits, evidence: AuditEvidence,
                         packetCaptureBytes: Int64, now: Int64) -> [String] {
        let maxAge = DecryptedCaptureRetention.maxAge(capturesMaxAge: limits.capturesMaxAge, contentExpiry: limits.contentExpiry.microseconds)
        return DecryptedCaptureRetention.doomed(files, evidence: decryptedCaptureEvidence(evidence), maxAge: maxAge,
                                         roomBytes: limits.capturesMaxBytes.map { $0 - packetCaptureBytes }, now: now)
    }

    /// Deletes everything but the file being recorded and audit evidence (`evidence`, or what
    /// the audit sessions hold now when nil), leaving no copy of a deleted row behind: the
    /// deletion overwrites what it frees with zeros (`PRAGMA secure_delete`), then the
    /// write-ahead log, which still holds the rows' earlier pages, is copied into the file and
    /// emptied (`PRAGMA wal_checkpoint(TRUNCATE)`; sqlite.org/pragma.html). The report says what
    /// stayed (`walBytesLeft`, `content.spared`).
    public func deleteEverything(evidence: AuditEvidence? = nil, recording: Int?, now: Int64) throws -> StorageReport {
        try database.execute("PRAGMA secure_delete = ON")
        let evidence = try evidence ?? auditEvidence()
        let inventory = try inventory(now: now, expiry: .default, recording: recording, evidence: evidence)
        let plan = RetentionPlanner.everything(inventory: inventory, evidence: evidence, now: now)
        var report = try applyMakingRoom(plan, limits: StorageLimits(historyMaxAge: nil, capturesMaxBytes: nil, capturesMaxAge: nil),
                                         evidence: evidence, now: now)
        // Every certificate no remaining flow names; this process's loops then send DER again.
        if try existingTables().contains("certificates") {
            let pruned = try CertificatePruning.prune(database, storedBefore: nil)
            report.certificatesDeleted += pruned
            if pruned > 0 { ServerCertificateMemory.forgetAll() }
        }
        // Every decrypted capture but the one a running session writes (said, with its name) and
        // those audit sessions hold (all of them when which cannot be read).
        let spans = decryptedCaptureEvidence(evidence)
        for file in decryptedCaptures.onDisk() {
            if file.isRecording {
                report.sparedDecryptedCapture = file.name
            } else if spans.map({ DecryptedCaptureRetention.isEvidence(file, spans: $0) }) ?? true {
                report.evidenceDecryptedCapturesKept += 1
            } else if let freed = try decryptedCaptures.delete(file.name) {
                report.decryptedCapturesDeleted += 1
                report.decryptedCaptureBytesFreed += freed
            }
        }
        // What `tv pinned` remembers names hosts, client addresses and when: history too (a
        // trial found it after "delete everything").
        for table in ["client_pins", "pinned_hosts"] where try existingTables().contains(table) {
            try database.execute("DELETE FROM \(table)")
            report.pinsForgotten += database.changes
        }
        if case let .integer(open) = try database.scalar("SELECT count(*) FROM flows WHERE duration IS NULL") { report.openFlowsKept = Int(open) }
        // What audit sessions hold stays: said, so nobody takes it for deleted.
        if case .known = evidence {
            // Every closed flow left is one an audit session holds.
            if case let .integer(kept) = try database.scalar("SELECT count(*) FROM flows WHERE duration IS NOT NULL") { report.evidenceFlowsKept = Int(kept) }
            let onDisk = captures.onDisk()
            report.evidenceCapturesKept = evidence.captures.filter { onDisk[$0] != nil }.count
        }
        report.walBytesLeft = try emptyWAL()
        return report
    }

    /// The audit sessions' spans the decrypted captures are evidence by (`DecryptedCaptureRetention`);
    /// nil when the history cannot say (`.unknown`, or the sessions cannot be read): then none
    /// is deleted.
    func decryptedCaptureEvidence(_ evidence: AuditEvidence) -> [DecryptedCaptureRetention.Span]? {
        guard evidence != .unknown else { return nil }
        return try? AuditStore.spans(in: database).map { ($0.from, $0.to) }
    }

    /// Copies the write-ahead log into the database file and truncates it to nothing. It cannot
    /// while another connection reads an older snapshot (SQLite then copies what it can).
    /// - Returns: the bytes the log still holds afterwards (0: emptied, or no log).
    func emptyWAL() throws -> Int64 {
        // A running session's flow writer checkpoints on a thread of its own (`WALCheckpointer`,
        // a PASSIVE checkpoint every 16 MiB of WAL). While one runs it holds the checkpoint lock,
        // and TRUNCATE then answers busy at once: SQLite calls no busy handler for that lock
        // (sqlite3_wal_checkpoint_v2). So a busy answer is tried again 50 ms later, for up to a
        // second (a reader's older snapshot also answers busy, after the busy timeout: then the
        // report says what the WAL still holds).
        let deadline = DispatchTime.now().uptimeNanoseconds + 1_000_000_000
        while case .integer(1) = try database.scalar("PRAGMA wal_checkpoint(TRUNCATE)"),
              DispatchTime.now().uptimeNanoseconds < deadline {
            usleep(50_000)
        }
        var st = stat()
        return stat(database.path + "-wal", &st) == 0 ? Int64(st.st_size) : 0
    }

    /// What audit sessions hold now (issue 23): their flows and the capture files holding those
    /// flows' packets; `.unknown` when the history cannot say (then nothing is deleted that
    /// could be evidence); `.none` when no session holds anything.
    public func auditEvidence() throws -> AuditEvidence {
        AuditEvidence.read(from: database, includingCarried: true)
    }

    /// Applies `plan`: rows first (in transactions), files after; content keeps `evidence`.
    /// Counts into `report` as it goes, so a pass that failed part way (a full disk) and is run
    /// again counts each deletion once.
    func apply(_ plan: RetentionPlan, limits: StorageLimits, evidence: AuditEvidence, now: Int64, into report: inout StorageReport) throws {
        report.sparedRecording = plan.sparedRecording
        report.capturesStillOver = plan.capturesStillOver
        let tables = try existingTables()
        if let cutoff = plan.deleteFlowsStartedBefore {
            try deleteFlows(before: cutoff, exempt: plan.exemptFlows, tables: tables, into: &report)
            // Server certificates only deleted flows named (an hour's grace: `CertificatePruning`).
            if report.flowsDeleted > 0 && tables.contains("certificates") {
                report.certificatesDeleted += try CertificatePruning.prune(database, storedBefore: now - CertificatePruning.grace)
            }
        }
        if !plan.captureDrops.isEmpty {
            try database.transaction {
                for drop in plan.captureDrops {
                    report.packetsMarkedGone += try markBytesGone(sequence: drop.sequence, now: now)
                }
            }
            for drop in plan.captureDrops {
                if let freed = try captures.delete(drop.sequence) {
                    report.captureFilesDeleted += 1
                    report.captureBytesFreed += freed
                }
                // Gone (unlinked now, or before): the deletion is finished (`CaptureDeletion`).
                if !FileManager.default.fileExists(atPath: captures.folder.filePath(Int64(drop.sequence))) {
                    try CaptureCatalog.markUnlinked(Int64(drop.sequence), nowMicros: now, in: database)
                }
            }
        }
        if !plan.deletesAllContent {
            // The decrypted captures, under the captures' limits with what the packet captures left.
            let rows = try CaptureRowSequences.read(database)
            let captureBytes = captures.facts(rows: rows.live, deleted: rows.deleted, recording: nil).reduce(Int64(0)) { $0 + $1.bytes }
            let doomed = decryptedDoomed(decryptedCaptures.onDisk(), limits: limits, evidence: evidence,
                                         packetCaptureBytes: captureBytes, now: now)
            for name in doomed {
                if let freed = try decryptedCaptures.delete(name) {
                    report.decryptedCapturesDeleted += 1
                    report.decryptedCaptureBytesFreed += freed
                }
            }
        }
        report.content.add(plan.deletesAllContent
            ? try content.deleteAll(evidence: evidence)
            : try content.sweep(now: now, expiry: limits.contentExpiry, ceiling: limits.contentCeiling, evidence: evidence))
        report.captureSecretsBlanked = try blankExpiredSecrets(expiry: limits.contentExpiry, evidence: evidence, now: now)
    }

    /// Blanks the TLS secrets of the closed packet captures that ended longer than `expiry` ago
    /// (`CaptureSecretsScrub`), audit evidence spared: with them the inspected connections read
    /// as plainly as the content that expired (a trial's capture decrypted 3,000 requests after
    /// their content and their flows had gone). The packets stay, encrypted, under the captures'
    /// own limits. Files found blank are not read again in this process.
    /// - Returns: how many files were blanked.
    func blankExpiredSecrets(expiry: ContentExpiry, evidence: AuditEvidence, now: Int64) throws -> Int {
        guard evidence != .unknown else { return 0 }
        let rows = try CaptureRowSequences.read(database)
        let cutoff = now - expiry.microseconds
        var blanked = 0
        for (sequence, row) in rows.live.sorted(by: { $0.key < $1.key }) {
            guard let ended = row.endedAt, ended < cutoff, !evidence.captures.contains(sequence) else { continue }
            let path = captures.folder.filePath(Int64(sequence))
            guard !BlankCaptures.known(path) else { continue }
            // Nil: a session records it (a closed row's file is not normally so); tried again later.
            guard let count = try CaptureSecretsScrub.scrub(path: path) else { continue }
            BlankCaptures.remember(path)
            if count > 0 { blanked += 1 }
        }
        return blanked
    }

    /// Deletes flows that started before `cutoff` (closed ones; an open flow's row is upserted
    /// again by its writer, so it goes at a later pass), a block per transaction, with their
    /// packets, exchanges and content; then names last seen before the cutoff.
    func deleteFlows(before cutoff: Int64, exempt: Set<Int64>, tables: Set<String>, into report: inout StorageReport) throws {
        let deletedBefore = report.flowsDeleted
        // The largest id is kept first, so no later flow takes a deleted one's id.
        try database.transaction { try database.execute(FlowIDFloor.rememberSQL) }
        try database.execute("CREATE TEMP TABLE IF NOT EXISTS retention_doomed (id INTEGER PRIMARY KEY)")
        try database.execute("CREATE TEMP TABLE IF NOT EXISTS retention_exempt (id INTEGER PRIMARY KEY)")
        try database.execute("DELETE FROM retention_exempt")
        for id in exempt { try database.execute("INSERT INTO retention_exempt (id) VALUES (\(id))") }
        let doomed = "SELECT id FROM retention_doomed"
        while true {
            let deleted = try database.transaction { () -> Int in
                try database.execute("DELETE FROM retention_doomed")
                let select = try database.prepare("""
                    INSERT INTO retention_doomed (id) SELECT id FROM flows
                    WHERE start_time < ? AND duration IS NOT NULL AND id NOT IN (SELECT id FROM retention_exempt)
                    ORDER BY start_time LIMIT ?
                    """)
                try select.bind([.integer(cutoff), .integer(Int64(StorageManager.flowsPerTransaction))])
                _ = try select.step()
                let count = database.changes
                guard count > 0 else { return 0 }
                report.flowContentRowsDeleted += try ContentStore.deleteRows(ofFlowsIn: doomed, database: database)
                try database.execute("DELETE FROM packets WHERE flow_id IN (\(doomed))")
                report.packetsDeleted += database.changes
                try database.execute("DELETE FROM packet_counts WHERE flow_id IN (\(doomed))")
                // Issue 16's exchange rows go with their flow.
                if tables.contains("exchanges") {
                    report.exchangesDeleted += try StoredExchanges.deleteRows(ofFlowsIn: doomed, database: database)
                }
                try database.execute("DELETE FROM flows WHERE id IN (\(doomed))")
                return database.changes
            }
            report.flowsDeleted += deleted
            if deleted < StorageManager.flowsPerTransaction { break }
        }
        // What stays of the flows older than the cutoff (an index range: only the kept ones):
        // evidence and open flows, said by a pass the user asked for.
        let kept = try database.prepare("SELECT count(*), coalesce(sum(duration IS NULL), 0) FROM flows WHERE start_time < ?")
        try kept.bind([.integer(cutoff)])
        try kept.forEachRow { row in
            report.openFlowsPastAge = Int(row.int64(at: 1))
            report.evidenceFlowsPastAge = Int(row.int64(at: 0) - row.int64(at: 1))
        }
        let names = try database.prepare("DELETE FROM host_names WHERE last_seen < ?")
        try names.bind([.integer(cutoff)])
        try database.transaction { _ = try names.step() }
        report.namesDeleted += database.changes
        if tables.contains("flow_names"), report.flowsDeleted > deletedBefore {
            try database.transaction { try database.execute(StorageManager.unusedFlowNamesSQL) }
        }
    }

    /// Deletes the `--host` search's names (`flow_names`, with their trigrams) that no flow
    /// carries any more, so no name outlives its history. The name indexes lead with the day
    /// (migration 24), so "does any flow carry this name" is no longer one probe: the names
    /// still carried are read once, each column from its smallest covering index, and run only
    /// after a pass deleted flows (a second or so at a million flows).
    static let unusedFlowNamesSQL = """
        DELETE FROM flow_names WHERE name NOT IN (
            SELECT host FROM flows WHERE host IS NOT NULL
            UNION SELECT other_hosts FROM flows WHERE other_hosts <> ''
            UNION SELECT server_address FROM flows WHERE server_address IS NOT NULL
            UNION SELECT client_address FROM flows WHERE client_address IS NOT NULL)
        """

    /// Stops the rows describing capture `sequence` (its file goes after the transaction): its
    /// `captures` row gets `deleted_at` (kept, so the sequence is never given again, and the
    /// packet rows pointing into it read as "bytes gone", issue 17's rule).
    /// - Returns: packet rows (of flows still in the history) that now point at bytes that are gone.
    func markBytesGone(sequence: Int, now: Int64) throws -> Int {
        let mark = try database.prepare("UPDATE captures SET deleted_at = ?, recording = 0 WHERE seq = ? AND deleted_at IS NULL")
        try mark.bind([.integer(now), .integer(Int64(sequence))])
        _ = try mark.step()
        if case let .integer(n) = try database.scalar("SELECT count(*) FROM packets WHERE capture_seq = ?", [.integer(Int64(sequence))]) {
            return Int(n)
        }
        return 0
    }

    func existingTables() throws -> Set<String> {
        var names: Set<String> = []
        let statement = try database.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        try statement.forEachRow { if let name = $0.string(at: 0) { names.insert(name) } }
        return names
    }
}

extension StorageManager {
    /// Whether the file is set for incremental vacuum (`PRAGMA auto_vacuum` 2).
    func isIncremental() throws -> Bool {
        if case let .integer(mode) = try database.scalar("PRAGMA auto_vacuum") { return mode == 2 }
        return false
    }

    /// Gives the free pages of the history back to the file system: `PRAGMA incremental_vacuum`
    /// when the file is set for it (works beside a running session: an ordinary write
    /// transaction); otherwise, with no session running, `auto_vacuum = INCREMENTAL` and one
    /// `VACUUM` (SQLite rewrites the file under its journal, so a crash leaves the old file or
    /// the new one, never half of each; sqlite.org/lang_vacuum.html).
    /// - Parameter sessionRuns: refused with `StorageError.compactWhileRunning` when the file
    ///   needs the whole rewrite.
    /// - Returns: bytes the file shrank by.
    public func compact(sessionRuns: Bool) throws -> Int64 {
        let before = try fileBytes()
        if try isIncremental() {
            try database.execute("PRAGMA incremental_vacuum")
        } else {
            guard !sessionRuns else { throw StorageError.compactWhileRunning }
            try database.execute("PRAGMA auto_vacuum = INCREMENTAL")
            try database.execute("VACUUM")
        }
        try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return max(0, before - (try fileBytes()))
    }

    func fileBytes() throws -> Int64 {
        var total: Int64 = 0
        for suffix in ["", "-wal"] {
            var st = stat()
            if stat(database.path + suffix, &st) == 0 { total += Int64(st.st_size) }
        }
        return total
    }
}

/// The capture files this process found or made blank (`StorageManager.blankExpiredSecrets`),
/// by path, size and change time: a pass every 10 minutes walked every expired file's blocks
/// again. A file that changed since is read again.
enum BlankCaptures {
    private static let seen = Mutex<Set<String>>([])

    static func key(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(path)|\(info.st_size)|\(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)"
    }

    static func known(_ path: String) -> Bool {
        guard let key = key(path) else { return false }
        return seen.withLock { $0.contains(key) }
    }

    static func remember(_ path: String) {
        guard let key = key(path) else { return }
        seen.withLock { _ = $0.insert(key) }
    }
}
