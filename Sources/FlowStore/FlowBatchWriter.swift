import Foundation
import FlowTerms
import Synchronization
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// The writer thread's own connection and upsert statement. It is created, used and closed on
/// that one thread only (the one-connection-per-thread rule), so it need not be `Sendable`.
final class FlowBatchWriter: FlowBatchStore {
    private let database: SQLiteDatabase
    private let upsert: SQLiteStatement
    /// The exchanges' rows and runs (migration 22).
    private var exchanges: ExchangeRowWriter
    /// The flow row's texts, bound without a copy (its buffer reused row after row; `FlowRecordColumns.write`).
    private var flowTexts = SQLiteTextRow()
    /// `UPDATE flows SET program_* … WHERE id = ?` (`FlowEvent.program` for a flow whose record
    /// is not in the batch).
    private let setProgram: SQLiteStatement
    /// The upsert with the program's columns, for a flow whose record and program share a batch.
    private let upsertWithProgram: SQLiteStatement
    /// `BEGIN IMMEDIATE`, `COMMIT` and `ROLLBACK`, compiled once: a batch of a few rows spent as
    /// much compiling them each time (`SQLiteDatabase.transaction`) as writing a row.
    private let transactions: PreparedTransaction
    /// Certificates inserted, or their `stored_at` refreshed (`FlowRecord.newCertificates`, i21-audit-chain).
    private let insertCertificate: SQLiteStatement
    /// The largest flow id in the file when it was opened (0 for none).
    let maxID: Int64
    /// The first of this writer's flow ids (`FlowIDRanges`, taken at registration).
    var firstID: Int64 { registration.firstFlowID }
    /// This writer's row in `flow_writers`, stamped on every flow it writes, and its held lock.
    private let registration: FlowWriterRegistry.Registration
    /// What registering found: writers that had died and the flows they left open, now closed.
    let recovery: FlowWriterRegistry.Recovery
    private let closing: ClosingChoice
    /// `flow_activity`'s upsert for a batch's buckets (`FlowActivityTally`, migration 21).
    private let activityUpsert: SQLiteStatement
    /// `flow_names`' upsert for a name new to this writer (`FlowNameCache`, migration 21).
    private let nameUpsert: SQLiteStatement
    /// `PRAGMA data_version`, read at each batch's start (`FlowNameCache.begin`).
    private let dataVersion: SQLiteStatement
    /// The live audit session, read once per batch (`LiveAuditSession.selectSQL`).
    private let liveAuditSession: SQLiteStatement
    /// The batch's new flows per minute and hour.
    private var tally = FlowActivityTally()
    /// The names this writer knows `flow_names` holds.
    private var names = FlowNameCache()
    /// `flow_activity_move`'s UPDATE for a batch's moved rows (`FlowActivityTally.removalRows`).
    private let activityRemoval: SQLiteStatement
    /// A row's start time before the writer rewrites it (`FlowTriggerWork.oldStartSQL`).
    private let oldStart: SQLiteStatement
    /// A new name's trigram row (`flow_names_text_insert`'s work).
    private let nameTextInsert: SQLiteStatement
    /// Which rows may exist already (`FlowTriggerWork`): the writer runs no triggers.
    private var triggerWork: FlowTriggerWork
    /// A test's writer whose connection keeps the triggers (`FlowStore.makeWriterKeepingTriggersForTesting`):
    /// they then do their own work and the writer does not repeat it.
    private let runsTriggers: Bool
    /// The WAL's frames after the last commit (`SQLiteDatabase.watchWAL`).
    private let walFrames = WALFrameCount()
    /// When to ask `checkpointer` for a checkpoint, and when to wait for one.
    private var walSchedule: WALCheckpointSchedule
    /// The WAL's checkpoints, on a thread of their own.
    private(set) var checkpointer: WALCheckpointer?
    /// The WAL's frames after the last commit (tests).
    var walFramesAfterLastCommit: Int { walFrames.frames }

    /// Opens `path`, applies migrations, registers the writer (closing flows a dead writer left
    /// open), reads max(id). `keepingTriggers` is a test hook (false for every real writer): the
    /// connection keeps the triggers and leaves their work to them, so a test can make writes
    /// fail or count them with a trigger of its own.
    /// - Throws: `FlowStoreError` (`.corrupt`, `.newerSchema`, `.cannotOpen` …).
    init(path: String, closing: ClosingChoice = ClosingChoice(), keepingTriggers: Bool = false,
         walSchedule: WALCheckpointSchedule = .flowWriter) throws {
        self.closing = closing
        // Born, used and closed on the writer thread (`FlowWriter`'s thread; `SQLiteFlowBackend`
        // opens it there too): no SQLite mutex on each bind and step (callgrind: ~4 k instructions
        // an exchange row, a sixth of its cost).
        database = try SQLiteDatabase(path: path, oneThread: true)
        try FlowSchema.migrate(database)
        (registration, recovery) = try FlowWriterRegistry(database: database)
            .register(pid: getpid(), now: Int64(Date().timeIntervalSince1970 * 1_000_000))
        // Above every id ever used here, deleted flows' included (`FlowIDFloor`).
        if case let .integer(max) = try database.scalar(FlowIDFloor.highestSQL) {
            maxID = max
        } else {
            maxID = 0
        }
        // The schema's CHECK (status IN (…)) lists are compiled into every upsert as two
        // ephemeral b-trees (lists of more than two values), built again for each row: ~0.2 M
        // instructions a row, about a third of the writer's cost per proxied connection
        // (callgrind). This connection writes only the raw values of `FlowStatus`, `HostOrigin`
        // and `FlowTransport`, which `FlowSchemaCheckTests` proves the CHECKs accept; the CHECKs
        // stay in the schema for every other connection (and the sqlite3 shell).
        try database.execute("PRAGMA ignore_check_constraints=ON")
        // A page cache of up to 32 MiB (SQLite's default is 2 MiB): each flow adds an entry to
        // six indexes, and the name indexes' entries go to the last leaf of each distinct host
        // and address (about 4,000 leaves at a million flows, 16 MiB). With the default cache
        // those leaves were read again, and spilled to the WAL mid-batch, flow after flow. The
        // cache grows only as pages are read: a small history costs what it is.
        try database.execute("PRAGMA cache_size=-32768")
        // No autocheckpoint on the writer's commits (the hook replaces it): its `WALCheckpointer`
        // copies the WAL on another thread and core, asked every 4,096 frames (16 MiB), and the
        // writer waits for a whole one only past 16,384 frames (64 MiB), so the WAL starts over
        // there (`WALCheckpointSchedule`). With SQLite's checkpoint on this thread (after 8,192
        // frames) its fdatasync and copy were ~15 % of the writer's samples (perf, i27-hist).
        self.walSchedule = walSchedule
        database.watchWAL(walFrames)
        // Statement journals in memory, not in a temporary file (sqlite.org/tempfiles.html §2.5,
        // §5). The flow upsert may abort after writing (NOT NULL, the triggers' statements), so
        // SQLite keeps each page it changes, before the change, in a statement journal: about
        // nine 4 KiB pages a flow (the row and its six index entries). In a file (/var/tmp)
        // that was two pwrite calls a page, ~18 a flow, a fifth of the writer's CPU (strace,
        // perf: i24-hist); in memory it is a copy. A batch's journal lives only while one
        // statement runs, so the memory is a few pages at a time.
        try database.execute("PRAGMA temp_store=MEMORY")
        // No triggers on this connection from here on (migrations and registration ran with
        // them): it does their work for its own rows (`FlowTriggerWork`), and SQLite then keeps
        // no statement journal for the flow upsert (above: ~9 page copies a flow, 8.5 % of the
        // writer's samples in memcpy, i25-hist).
        runsTriggers = keepingTriggers
        database.triggersEnabled = runsTriggers
        triggerWork = FlowTriggerWork(maxIDAtOpen: maxID)
        activityRemoval = try database.prepare(FlowActivityTally.removalSQL)
        oldStart = try database.prepare(FlowTriggerWork.oldStartSQL)
        nameTextInsert = try database.prepare(FlowTriggerWork.nameTextInsertSQL)
        upsert = try database.prepare(FlowRecordColumns.upsertSQL)
        exchanges = try ExchangeRowWriter(database: database)
        setProgram = try database.prepare(FlowRecordColumns.programUpdateSQL)
        upsertWithProgram = try database.prepare(FlowRecordColumns.upsertWithProgramSQL)
        activityUpsert = try database.prepare(FlowActivityTally.upsertSQL)
        nameUpsert = try database.prepare(FlowNameCache.upsertSQL)
        dataVersion = try database.prepare("PRAGMA data_version")
        liveAuditSession = try database.prepare(LiveAuditSession.selectSQL)
        transactions = try PreparedTransaction(database)
        insertCertificate = try database.prepare("""
            INSERT INTO certificates (sha256, der, stored_at) VALUES (?, ?, ?)
            ON CONFLICT(sha256) DO UPDATE SET stored_at = excluded.stored_at
            """)
        checkpointer = WALCheckpointer(path: path)
    }

    /// Writes `events` in one transaction. Several events for one flow collapse into its latest
    /// record, written once, in the order flows first appear; a flow's program (it arrives after
    /// its opening; the last one of the batch) is written with its record when both are in the
    /// batch, else set after the records.
    /// - Throws: `FlowStoreError`; nothing of the batch is written then.
    func write(_ events: [FlowEvent]) throws {
        let batch = CollapsedFlowBatch(events)
        tally.removeAll()
        try transaction {
            // Rewound before the commit: a statement left on its row keeps a read transaction
            // open, and SQLite then never checkpoints the WAL.
            defer { dataVersion.rewind() }
            if try dataVersion.step() { names.begin(dataVersion: dataVersion.int64(at: 0)) }
            let storedAt = batch.certificates.isEmpty ? 0 : EngineClock.wallMicros()
            for (sha256, der) in batch.certificates {
                try insertCertificate.bind([.text(sha256), .blob(der), .integer(storedAt)])
                try insertCertificate.step()
                insertCertificate.reset()
            }
            let auditSession = try readLiveAuditSession()
            let programs = batch.programs.isEmpty ? [:] : Dictionary(batch.programs, uniquingKeysWith: { _, last in last })
            for flow in batch.latestFlows {
                let id = flow.id
                let previousStart = !runsTriggers && triggerWork.mayExist(id) ? try startTime(of: id) : nil
                triggerWork.writing(id)
                // The upsert's update path leaves the last insert rowid alone: it equals the id
                // only when the row is new (migration 21: the writer counts its new rows).
                database.lastInsertRowID = 0
                let program = programs[id]
                try FlowRecordColumns.write(flow, writer: registration.id, program: program, auditSession: auditSession?.id(for: flow),
                                            with: program == nil ? upsert : upsertWithProgram, texts: &flowTexts)
                if database.lastInsertRowID == id {
                    tally.add(startTime: flow.startTime)
                } else if let previousStart {
                    tally.move(from: previousStart, to: flow.startTime)
                }
                try writeNames(of: flow)
            }
            // Moved rows leave their old buckets first, as the trigger's UPDATE did before its insert.
            for (bucket, flows) in tally.removalRows {
                try activityRemoval.bind([.integer(flows), .integer(bucket.span), .integer(bucket.bucket)])
                try activityRemoval.step()
            }
            for (bucket, flows) in tally.rows {
                try activityUpsert.bind([.integer(bucket.span), .integer(bucket.bucket), .integer(flows)])
                try activityUpsert.step()
            }
            try exchanges.write(batch.exchanges.inOrder)
            for (id, program) in batch.programs where !batch.hasRecord(of: id) {
                try setProgram.bind(FlowRecordColumns.programBindings(program) + [.integer(id)])
                try setProgram.step()
            }
        }
        switch walSchedule.committed(frames: walFrames.frames) {
        case .nothing: break
        case .ask: checkpointer?.ask()
        case .waitForAll: checkpointer?.askAndWait()
        }
        // Rewound, not cleared: each is bound afresh before its next step (clearing the flow
        // upsert's bindings after every batch cost as much as binding an exchange).
        upsert.rewind()
        upsertWithProgram.rewind()
        exchanges.rewind()
        setProgram.rewind()
        activityUpsert.rewind()
        nameUpsert.rewind()
        activityRemoval.rewind()
        nameTextInsert.rewind()
    }

    /// The live audit session, nil when none is recording. Read inside the batch's write
    /// transaction, so it holds for every row of the batch.
    private func readLiveAuditSession() throws -> LiveAuditSession? {
        defer { liveAuditSession.rewind() }
        return try liveAuditSession.step() ? LiveAuditSession(id: liveAuditSession.int64(at: 0), startedMicros: liveAuditSession.int64(at: 1)) : nil
    }

    /// The start time of flow `id`'s row (µs since the epoch), nil when there is none.
    private func startTime(of id: Int64) throws -> Int64? {
        defer { oldStart.rewind() }
        try oldStart.bind(integer: id, at: 1)
        return try oldStart.step() ? oldStart.int64(at: 0) : nil
    }

    /// Upserts the names of `flow`'s four searched columns that this writer has not written
    /// yet (`FlowNameCache`).
    private func writeNames(of flow: FlowRecord) throws {
        let otherHosts = flow.otherHosts.isEmpty ? "" : TextList.encode(flow.otherHosts)
        try FlowNameCache.forEachName(host: flow.host, otherHosts: otherHosts, serverAddress: flow.serverAddress,
                                      clientAddress: flow.clientAddress) { name, bit in
            guard names.needs(name, bit: bit) else { return }
            database.lastInsertRowID = 0
            try nameUpsert.bind([.text(name), .integer(bit)])
            try nameUpsert.step()
            // Inserted (an update leaves the rowid alone): its trigrams, `flow_names_text_insert`'s work.
            let nameID = database.lastInsertRowID
            if nameID != 0 && !runsTriggers {
                try nameTextInsert.bind([.integer(nameID), .text(name)])
                try nameTextInsert.step()
            }
        }
    }

    /// One batch inside `transactions`; the name cache learns whether the batch's names landed.
    private func transaction(_ body: () throws -> Void) throws {
        do {
            try transactions.run(body)
        } catch {
            names.rolledBack()
            throw error
        }
        names.committed()
        exchanges.committed()
    }

    /// Where ids go on when the writer cannot open its connection yet (a full disk), read
    /// read-only: past the largest flow id ever used in the file at `path` (`FlowIDFloor`) and
    /// every live writer's range (`FlowIDRanges`; such a writer registers no range of its own).
    /// - Throws: `FlowStoreError` when the file cannot be read either.
    static func firstID(readingAt path: String) throws -> Int64 {
        let database = try SQLiteDatabase(readingAt: path)
        defer { database.close() }
        var highest: Int64 = 0
        if case let .integer(max) = try database.scalar(FlowIDFloor.highestSQL) { highest = max }
        var liveEnds: [Int64?] = []
        if let live = try? database.prepare("SELECT id, flow_id_end FROM flow_writers WHERE ended IS NULL") {
            try live.forEachRow { row in
                guard !FlowWriterRegistry.isGone(lockPath: FlowWriterRegistry.lockPath(database: path, writer: row.int64(at: 0))) else { return }
                liveEnds.append(row.isNull(at: 1) ? nil : row.int64(at: 1))
            }
        }
        return FlowIDRanges.first(highestUsed: highest, liveEnds: liveEnds)
    }

    /// An SQLite file is never lost: a failed write is retried on the same connection.
    var isLost: Bool { false }

    /// `wal_checkpoint(TRUNCATE)` on the writer's own connection, waiting at most 250 ms for
    /// readers and for a checkpoint of the `WALCheckpointer`'s that runs (`FullDiskWrites`).
    func emptyJournal() -> FlowStoreError? {
        database.checkpointTruncating(waitingAtMost: 250)
    }

    /// The room left on the database's disk (statvfs(3) of its folder).
    var freeBytes: Int64? {
        let folder = database.path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return DiskSpace.freeBytes(at: folder.isEmpty ? (database.path.hasPrefix("/") ? "/" : ".") : folder)
    }

    /// How many of `ids` have no row in the file (a read: it works on a full disk).
    func countMissing(_ ids: [Int64]) -> Int {
        FlowBatchWriter.countMissing(ids, in: database)
    }

    /// How many of `ids` have no row in `database`. When it cannot be read, every id counts as
    /// missing (nothing shows it was saved).
    static func countMissing(_ ids: [Int64], in database: SQLiteDatabase) -> Int {
        guard let statement = try? database.prepare("SELECT 1 FROM flows WHERE id = ?") else { return ids.count }
        var missing = 0
        for id in ids {
            defer { statement.reset() }
            guard (try? statement.bind([.integer(id)])) != nil, let found = try? statement.step() else {
                missing += 1
                continue
            }
            if !found { missing += 1 }
        }
        return missing
    }

    /// Ends the registration (with `closing` set, this writer's flows still open become
    /// interrupted; see `FlowWriterRegistry.unregister`) and closes the connection.
    func close() {
        // The registry's statements are not the writer's rows: they run with the triggers.
        database.triggersEnabled = true
        _ = try? FlowWriterRegistry(database: database).unregister(
            registration, interruptingOpenFlows: closing.interruptOpenFlows.load(ordering: .relaxed),
            now: Int64(Date().timeIntervalSince1970 * 1_000_000))
        checkpointer?.stop()
        database.close()
    }
}

/// How a writer is being closed, shared between `FlowWriter.close` and the writer thread.
final class ClosingChoice: Sendable {
    /// See `FlowWriter.close(interruptingOpenFlows:)`.
    let interruptOpenFlows = Atomic<Bool>(false)
}
