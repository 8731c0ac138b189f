import Dispatch
import FlowStore

/// What the content writer thread owns, and what one batch write is: its SQLite connection, the
/// segment being written, the open-turn buffers and the retention settings. Everything here runs
/// on that one thread, driven by its `BoundedWriterQueue`: events in batches, jobs (sweeps,
/// deletion) between batches, a sweep every `sweepInterval` seconds busy or idle; on stop, the
/// open turns are written and the thread ends.
final class ContentWriterThread: QueueWriter {
    typealias Queue = BoundedWriterQueue<ContentWriterThread>

    let configuration: ContentWriterConfiguration
    let clock: any ContentClock
    let queue: Queue
    /// When the last periodic sweep ran (`tick`).
    private var lastSweep = DispatchTime.now()
    /// The segment files' bytes as the last sweep left them, and the bytes written since: a
    /// sweep runs as soon as they pass the ceiling by `ceilingSlack`, not only once a minute
    /// (a trial's busy session grew the folder to 6.5 times the 512 MiB ceiling between sweeps).
    private var bytesAfterSweep: Int64 = 0
    var bytesSinceSweep: Int64 = 0
    /// The segments whose deleted turns' bytes its sweeps already cleared (`SegmentClearing`).
    private let clearing = SegmentClearing()
    private let sweepInterval: DispatchTimeInterval
    /// The writer's connection; nil while it could not be opened (a full disk at start): every
    /// use tries again (`database()`).
    private var connection: SQLiteDatabase?
    let directory: ContentDirectory
    var expiry: ContentExpiry
    var segment: SegmentAppender?
    private var openTurns: OpenTurns
    /// Whether turns reach the disk; told to `onHealthChange` when that changes.
    var health = WriteHealth()
    let onHealthChange: (@Sendable (WriteHealth.Change, ContentCounters) -> Void)?

    /// Opens the connection (applying migrations) and the folder. A full disk is not thrown: the
    /// connection is opened at the first use that finds room (the turns before are lost and
    /// counted, as any failed write).
    /// - Throws: `FlowStoreError`, `TVHomeError.cannotCreate`.
    init(configuration: ContentWriterConfiguration, clock: any ContentClock, queue: Queue,
         onHealthChange: (@Sendable (WriteHealth.Change, ContentCounters) -> Void)? = nil) throws {
        self.onHealthChange = onHealthChange
        sweepInterval = .nanoseconds(Int(configuration.sweepInterval * 1_000_000_000))
        self.configuration = configuration
        self.clock = clock
        self.queue = queue
        directory = ContentDirectory(path: configuration.directory)
        try directory.ensureExists()
        do {
            connection = try ContentWriterThread.open(configuration.databasePath)
        } catch FlowStoreError.diskFull {
            connection = nil
        }
        expiry = configuration.expiry
        openTurns = OpenTurns(limit: configuration.openTurnBytes)
    }

    /// The connection, opened (with migrations) when it is not yet.
    /// - Throws: `FlowStoreError` when it cannot be opened.
    func database() throws -> SQLiteDatabase {
        if let connection { return connection }
        let opened = try ContentWriterThread.open(configuration.databasePath)
        connection = opened
        return opened
    }

    private static func open(_ path: String) throws -> SQLiteDatabase {
        // Created, used and closed on the writer thread only.
        let database = try SQLiteDatabase(path: path, oneThread: true)
        try FlowSchema.migrate(database)
        return database
    }

    /// The sequence of the segment being written, if one is open.
    var writingSegment: Int? { segment?.sequence }

    /// The sweep at start; the periodic ones count from its end.
    func start() {
        periodicSweep()
        lastSweep = .now()
    }

    /// A periodic sweep when one is due: even when the writer never goes idle (a busy session
    /// still expires content).
    func tick() {
        guard DispatchTime.now() >= lastSweep + sweepInterval || isOverCeiling else { return }
        periodicSweep()
        lastSweep = .now()
    }

    /// The cutoff of the query removal the last sweep left to do (`ContentSweepReport
    /// .queriesLeftBefore`), done `configuration.querySlice` requests at a time whenever the
    /// queue is empty (`idleDeadlinePassed`): a slice between every two batches still cost a
    /// burst's content (measured: 200 MB/s of kept content on two busy CPUs, the writer waiting
    /// 1.1 s for a CPU in 3.5 s, dropped 1,754 chunks with those slices 28 % of its time).
    private var queriesLeftBefore: Int64?

    /// One slice of the query removal a sweep left, in its own transaction; a failure is counted
    /// and the rest waits for the next sweep.
    private func removeQuerySlice(before cutoff: Int64) {
        do {
            let database = try database()
            let sweeper = ContentSweeper(database: database, directory: directory, clearing: clearing)
            let removal = try database.transaction {
                try sweeper.removeQueries(before: cutoff, evidence: evidence(database), budget: configuration.querySlice)
            }
            let left = removal?.reachedCutoff == false ? cutoff : nil
            queriesLeftBefore = left
            queue.updateCounters {
                $0.lastSweep?.queriesRemoved += removal?.removed ?? 0
                $0.lastSweep?.queriesLeftBefore = left
            }
        } catch {
            let failure = ContentWriteFailure(error)
            queue.updateCounters { $0.lastError = failure }
            queriesLeftBefore = nil
        }
    }

    /// Written past the ceiling by more than `ceilingSlack` since the last sweep (what a sweep
    /// could not take, such as audit evidence, does not make every batch sweep again).
    var isOverCeiling: Bool {
        bytesSinceSweep >= ceilingSlack && bytesAfterSweep + bytesSinceSweep > configuration.ceiling
    }

    /// How far past the ceiling the files may grow before a sweep runs early: 1/16 of it (32 MiB
    /// of the 512), about two segments.
    var ceilingSlack: Int64 { max(1, configuration.ceiling / 16) }

    /// The idle writer wakes for the next sweep (`tick` runs it), or at once while query removal
    /// is left (`idleDeadlinePassed` takes a slice).
    var idleDeadline: DispatchTime? { queriesLeftBefore != nil ? .now() : lastSweep + sweepInterval }

    /// The queue is empty: one slice of the query removal a sweep left, if any.
    func idleDeadlinePassed() {
        if let cutoff = queriesLeftBefore { removeQuerySlice(before: cutoff) }
    }

    /// Handles a batch: buffers chunk bytes, writes the turns that ended. Losses are counted in
    /// `ContentCounters`, not as failed events.
    func write(_ pending: PendingContent) -> Int {
        write(pending.batch)
        return 0
    }

    /// Writes the open turns; closes the segment and the connection.
    func stop() { close() }

    /// What `store` stages between batches (`Staging`, `ContentWriterThread+Segments.swift`).
    var staging = Staging()
    /// The turns index's insert statements by row count, compiled once for this connection.
    var insertStatements: [Int: SQLiteStatement] = [:]
    /// BEGIN and COMMIT compiled once for this connection.
    var transaction: PreparedTransaction?
    /// The turns that ended in the batch being written (reused from batch to batch).
    private var finished: [OpenTurns.Finished] = []

    /// Handles a batch: notes where each chunk's bytes are, writes the turns that ended straight
    /// from the batch's blocks, then copies what the turns still open hold of it.
    ///
    /// The open turns and the list of finished ones are moved into locals for the batch (and
    /// back after): every access to a stored property of this class is checked for exclusivity
    /// at run time (`swift_beginAccess`), which cost ~450 instructions a request in the event
    /// loop alone (callgrind h1 row, i25-rec); a local's accesses are checked at compile time.
    func write(_ batch: ContentBatch) {
        var open = OpenTurns(limit: configuration.openTurnBytes)
        var done: [OpenTurns.Finished] = []
        swap(&open, &openTurns)
        swap(&done, &finished)
        defer {
            swap(&open, &openTurns)
            swap(&done, &finished)
        }
        done.removeAll(keepingCapacity: done.capacity <= 4_096)
        var discarded: Int64 = 0
        for event in batch.events {
            switch event {
            case let .chunk(flow, turn, block, start, count):
                let result = open.append(flow: flow, turn: turn, block: block, start: start, count: count)
                discarded += Int64(result.discarded)
                if let orphan = result.orphan { done.append(orphan) }
            case let .turnEnded(flow, turn):
                let (earlier, ended) = open.end(flow: flow, turn: turn)
                if let earlier { done.append(earlier) }
                done.append(ended)
            }
        }
        if discarded > 0 { queue.updateCounters { $0.bytesDiscardedByWriter += discarded } }
        store(done, from: batch, pieces: open.pieces)
        open.endBatch(batch)
    }

    /// Sweeps with the current expiry. A segment past its age is closed first, so content that
    /// expired in it can go; the segment being written is otherwise spared.
    /// - Parameter queryBudget: the periodic sweep's slice of query removal (the rest goes on a
    ///   slice at a time while the queue is empty); nil, as a sweep asked for (a setting change,
    ///   the session's end), for all of it.
    func sweep(queryBudget: Int? = nil) throws -> ContentSweepReport {
        if let segment, clock.now() - segment.createdAt >= configuration.segmentAge {
            segment.close()
            self.segment = nil
        }
        let database = try database()
        let report = try ContentSweeper(database: database, directory: directory, clearing: clearing)
            .sweep(now: clock.now(), expiry: expiry, ceiling: configuration.ceiling, writing: segment?.sequence,
                   evidence: evidence(database), queryBudget: queryBudget)
        queriesLeftBefore = report.queriesLeftBefore
        bytesAfterSweep = directory.segments().reduce(0) { $0 + $1.diskBytes }
        bytesSinceSweep = 0
        queue.updateCounters {
            $0.sweeps += 1
            $0.lastSweep = report
        }
        return report
    }

    /// What the sweeps spare: the tagged flows read now, and the carried ones the retention
    /// pass last published (`CarriedEvidence`).
    private func evidence(_ database: SQLiteDatabase) -> AuditEvidence {
        AuditEvidence.read(from: database).adding(flows: configuration.carried?.current ?? [])
    }

    /// The periodic sweep: failures are counted, not thrown.
    func periodicSweep() {
        do {
            _ = try sweep(queryBudget: configuration.querySlice)
        } catch {
            let failure = ContentWriteFailure(error)
            queue.updateCounters { $0.lastError = failure }
            // A failed sweep (a full disk) waits for the next slack or minute, not every batch.
            bytesSinceSweep = 0
        }
    }

    /// Deletes all rows and every segment but the one being written.
    func deleteAll() throws -> ContentSweepReport {
        try ContentSweeper(database: try database(), directory: directory).deleteAll(writing: segment?.sequence, evidence: AuditEvidence.none)
    }

    /// Deletes all rows and every segment, the one being written too: it is closed first, and
    /// the next turn opens a new one (`tv storage delete-everything` inside a live session).
    /// Turns still open stay in memory and are written when they end. Audit evidence stays
    /// (read from the history now; its segments kept whole).
    /// - Parameter evidence: audit evidence to spare; nil reads it from the history now
    ///   (`tv storage delete-everything`), `.none` deletes it too (`tv content delete`).
    func deleteEverything(evidence: AuditEvidence? = nil) throws -> ContentSweepReport {
        segment?.close()
        segment = nil
        // `tv content delete`: what open turns hold so far goes too; their later bytes make
        // turns of their own (a re-check found a response pending at the delete written after
        // it). Kept under delete-everything, whose audit evidence may be among them.
        if evidence == AuditEvidence.none { openTurns.forgetHeld() }
        let database = try database()
        // The requests' queries (content) are overwritten where they were, not left in free pages.
        try database.execute("PRAGMA secure_delete = ON")
        defer { try? database.execute("PRAGMA secure_delete = OFF") }
        let report = try ContentSweeper(database: database, directory: directory).deleteAll(writing: nil, evidence: evidence)
        // …nor in the write-ahead log's older copies of those pages (best effort: a reader on an
        // older snapshot keeps it until the session's next checkpoint; a re-check found one).
        try? database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return report
    }

    /// Writes the open turns (as incomplete: their ends never came), closes the segment and the
    /// connection.
    private func close() {
        store(openTurns.drain(), from: nil, pieces: [])
        segment?.close()
        segment = nil
        insertStatements = [:]
        transaction = nil
        connection?.close()
    }
}

extension BoundedWriterQueue where Writer == ContentWriterThread {
    /// The content writer's counters, with what waits in the queue now.
    var counters: ContentCounters {
        read { counters, pending, _ in
            var snapshot = counters
            snapshot.pendingEvents = pending.count
            snapshot.pendingBytes = pending.pendingBytes
            return snapshot
        }
    }
}
