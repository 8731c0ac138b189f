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
    private let sweepInterval: DispatchTimeInterval
    /// The writer's connection; nil while it could not be opened (a full disk at start): every
    /// use tries again (`database()`).
    private var connection: SQLiteDatabase?
    let directory: ContentDirectory
    var expiry: ContentExpiry
    private var segment: SegmentAppender?
    private var openTurns: OpenTurns
    /// Whether turns reach the disk; told to `onHealthChange` when that changes.
    private var health = WriteHealth()
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
        guard DispatchTime.now() >= lastSweep + sweepInterval else { return }
        periodicSweep()
        lastSweep = .now()
    }

    /// The idle writer wakes for the next sweep (`tick` runs it).
    var idleDeadline: DispatchTime? { lastSweep + sweepInterval }

    func idleDeadlinePassed() {}

    /// Handles a batch: buffers chunk bytes, writes the turns that ended. Losses are counted in
    /// `ContentCounters`, not as failed events.
    func write(_ pending: PendingContent) -> Int {
        write(pending.batch)
        return 0
    }

    /// Writes the open turns; closes the segment and the connection.
    func stop() { close() }

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

    /// Where a staged turn's bytes are, in order: bytes carried from earlier batches (in
    /// `carried`) or a range of a block of the batch being written.
    private enum StagedBytes {
        case carried(start: Int, count: Int)
        case piece(OpenTurns.Piece)
    }

    /// What `store` builds up: turns staged for the segment but not yet written to it, and rows
    /// written to the segment but not yet committed. Reused from batch to batch (its arrays keep
    /// their room), and moved into a local while `store` runs (see `write`).
    private struct Staging {
        /// Turns staged for the segment, not yet written to it.
        var turns: [IndexedTurn] = []
        /// Their bytes, in segment order: they reach the segment in one `writev(2)`
        /// (`writeStaged`).
        var bytes: [StagedBytes] = []
        /// Bytes of staged turns that started in an earlier batch, back to back.
        var carried: [UInt8] = []
        /// Bytes staged so far (the offset of the next staged turn past the segment's size).
        var count = 0
        /// `writeStaged`'s list of ranges for the appender.
        var ranges: [UnsafeRawBufferPointer] = []
        /// Turns written to the segment, to commit (`commit`).
        var rows: [IndexedTurn] = []
        /// Their kept bytes.
        var written: Int64 = 0
        var lost = 0
        var lastError: ContentWriteFailure?
    }

    private var staging = Staging()
    /// Staged bytes past which they are written before more are staged (1 MiB).
    private static let stageLimit = 1_048_576

    /// Appends each turn's bytes to the segment and indexes it: the bytes of the batch's turns in
    /// one `writev(2)` (per MiB, and per segment) from where they are (the batch's blocks, or
    /// what open turns carried over), their rows in one transaction. Rows are committed before a
    /// segment is closed, so a closed segment is never without the rows that reference it.
    /// - Parameters:
    ///   - batch: the batch the turns' pieces are in (nil: they have none).
    ///   - pieces: the open turns' ranges of `batch` (`OpenTurns.pieces`), which the turns'
    ///     `firstPiece` chains index.
    func store(_ turns: [OpenTurns.Finished], from batch: ContentBatch?, pieces: [OpenTurns.Piece]) {
        guard !turns.isEmpty else { return }
        let now = clock.now()
        var work = Staging()
        swap(&work, &staging)
        defer { swap(&work, &staging) }
        work.lost = 0
        work.lastError = nil
        work.turns.reserveCapacity(turns.count)
        work.rows.reserveCapacity(turns.count)
        for item in turns {
            do {
                if needsNewSegment(now: now, staged: work.count) {
                    writeStaged(&work, batch)
                    commit(&work)
                    try openNextSegment(now: now)
                }
                guard let segment else { continue }
                work.turns.append(IndexedTurn(flowID: item.flow, turn: item.turn, segment: segment.sequence,
                                              segmentOffset: segment.size + Int64(work.count), recordedAt: now))
                ContentWriterThread.stage(item, pieces: pieces, into: &work)
                if work.count >= ContentWriterThread.stageLimit { writeStaged(&work, batch) }
            } catch {
                work.lost += 1
                work.lastError = ContentWriteFailure(error)
            }
        }
        writeStaged(&work, batch)
        commit(&work)
        let (lostTurns, failure) = (work.lost, work.lastError)
        // A turn lost is a failed attempt; the next turns try again (a new segment when none is
        // open), so recording resumes by itself once there is room.
        let change = health.record(succeeded: lostTurns == 0 && failure == nil)
        let failing = health.failing, attempts = health.failedAttempts
        queue.updateCounters {
            $0.turnsLost += lostTurns
            if let failure { $0.lastError = failure }
            $0.failedWrites = attempts
        }
        // Said before `failing` shows in the counters, so whoever sees it can find the line.
        if let change {
            var counters = queue.counters
            counters.failing = failing
            onHealthChange?(change, counters)
        }
        queue.updateCounters { $0.failing = failing }
    }

    /// Stages the bytes of `item`: what it carried, then its pieces.
    private static func stage(_ item: OpenTurns.Finished, pieces: [OpenTurns.Piece], into work: inout Staging) {
        if !item.carried.isEmpty {
            work.bytes.append(.carried(start: work.carried.count, count: item.carried.count))
            work.carried += item.carried
        }
        var next = item.firstPiece
        while next >= 0 {
            let piece = pieces[next]
            work.bytes.append(.piece(piece))
            next = piece.next
        }
        work.count += item.turn.keptBytes
    }

    /// Writes the staged bytes to the segment in one append; the turns whose bytes all reached
    /// the file become rows to commit, the others are lost (a failed write leaves the file's
    /// size where the bytes stopped, and later offsets follow it).
    private func writeStaged(_ work: inout Staging, _ batch: ContentBatch?) {
        defer {
            work.turns.removeAll(keepingCapacity: work.turns.capacity <= 65_536)
            work.bytes.removeAll(keepingCapacity: work.bytes.capacity <= 65_536)
            work.carried.removeAll(keepingCapacity: work.carried.capacity <= 2 * ContentWriterThread.stageLimit)
            work.count = 0
        }
        guard !work.turns.isEmpty, let segment else { return }
        do {
            var ranges = work.ranges
            work.ranges = []
            defer {
                ranges.removeAll(keepingCapacity: ranges.capacity <= 65_536)
                work.ranges = ranges
            }
            try work.carried.withUnsafeBytes { carried in
                for item in work.bytes {
                    switch item {
                    case let .carried(start, count):
                        ranges.append(UnsafeRawBufferPointer(rebasing: carried[start..<(start + count)]))
                    case let .piece(piece):
                        // A piece is staged only by `store(_:from:pieces:)` with the batch it is in.
                        guard let batch else { continue }
                        ranges.append(batch.bytes(block: piece.block, start: piece.start, count: piece.count))
                    }
                }
                _ = try segment.append(ranges)
            }
        } catch {
            work.lastError = ContentWriteFailure(error)
        }
        let size = segment.size
        for row in work.turns {
            if row.segmentOffset + Int64(row.turn.keptBytes) <= size {
                work.rows.append(row)
                work.written += Int64(row.turn.keptBytes)
            } else {
                work.lost += 1
            }
        }
    }

    /// The turns index's insert statements by row count, compiled once for this connection.
    private var insertStatements: [Int: SQLiteStatement] = [:]
    /// BEGIN and COMMIT compiled once for this connection.
    private var transaction: PreparedTransaction?

    /// Inserts the staged rows in one transaction; on failure counts them as lost (their bytes
    /// stay in the segment unreferenced, for the sweep).
    private func commit(_ work: inout Staging) {
        guard !work.rows.isEmpty else { return }
        let count = work.rows.count
        let bytes = work.written
        defer {
            work.rows.removeAll(keepingCapacity: work.rows.capacity <= 65_536)
            work.written = 0
        }
        do {
            var statements = insertStatements
            defer { insertStatements = statements }
            let database = try database()
            let prepared: PreparedTransaction
            if let cached = transaction, cached.database === database {
                prepared = cached
            } else {
                prepared = try PreparedTransaction(database)
                transaction = prepared
            }
            let rows = work.rows
            try prepared.run { try TurnIndex(database: database).insert(rows, statements: &statements) }
            queue.updateCounters {
                $0.turnsWritten += count
                $0.bytesWritten += bytes
            }
        } catch {
            work.lost += count
            work.lastError = ContentWriteFailure(error)
        }
    }

    /// Whether the next turn goes to a new segment: none is open, or the one open (with what is
    /// staged for it) is full or old.
    private func needsNewSegment(now: Int64, staged: Int) -> Bool {
        guard let segment else { return true }
        return segment.size + Int64(staged) >= configuration.segmentBytes
            || now - segment.createdAt >= configuration.segmentAge
    }

    /// Closes the segment being written and makes the next, recording it in the index's
    /// `SegmentRange` first (so a sweep never takes it for one that predates the database).
    private func openNextSegment(now: Int64) throws {
        let next = max(directory.highestSequence(), segment?.sequence ?? 0) + 1
        segment?.close()
        segment = nil
        let record = SegmentRangeRecord(database: try database())
        try record.write(try record.establish(directory).including(next))
        segment = try SegmentAppender(directory: directory, sequence: next, createdAt: now)
    }

    /// Sweeps with the current expiry. A segment past its age is closed first, so content that
    /// expired in it can go; the segment being written is otherwise spared.
    func sweep() throws -> ContentSweepReport {
        if let segment, clock.now() - segment.createdAt >= configuration.segmentAge {
            segment.close()
            self.segment = nil
        }
        let report = try ContentSweeper(database: try database(), directory: directory)
            .sweep(now: clock.now(), expiry: expiry, ceiling: configuration.ceiling, writing: segment?.sequence)
        queue.updateCounters {
            $0.sweeps += 1
            $0.lastSweep = report
        }
        return report
    }

    /// The periodic sweep: failures are counted, not thrown.
    func periodicSweep() {
        do {
            _ = try sweep()
        } catch {
            let failure = ContentWriteFailure(error)
            queue.updateCounters { $0.lastError = failure }
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
    func deleteEverything() throws -> ContentSweepReport {
        segment?.close()
        segment = nil
        return try ContentSweeper(database: try database(), directory: directory).deleteAll(writing: nil, evidence: nil)
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
