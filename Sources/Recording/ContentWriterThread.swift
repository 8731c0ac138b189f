import FlowStore

/// What the content writer thread owns: its SQLite connection, the segment being written, the
/// open-turn buffers and the retention settings. Everything here runs on that one thread.
final class ContentWriterThread {
    let configuration: ContentWriterConfiguration
    let clock: any ContentClock
    let queue: ContentQueue
    let database: SQLiteDatabase
    let directory: ContentDirectory
    var expiry: ContentExpiry
    private var segment: SegmentAppender?
    private var openTurns: OpenTurns

    /// Opens the connection (applying migrations) and the folder.
    /// - Throws: `FlowStoreError`, `TVHomeError.cannotCreate`.
    init(configuration: ContentWriterConfiguration, clock: any ContentClock, queue: ContentQueue) throws {
        self.configuration = configuration
        self.clock = clock
        self.queue = queue
        directory = ContentDirectory(path: configuration.directory)
        try directory.ensureExists()
        database = try SQLiteDatabase(path: configuration.databasePath)
        try FlowSchema.migrate(database)
        expiry = configuration.expiry
        openTurns = OpenTurns(limit: configuration.openTurnBytes)
    }

    /// The sequence of the segment being written, if one is open.
    var writingSegment: Int? { segment?.sequence }

    /// Handles a batch: buffers chunk bytes, writes the turns that ended.
    func write(_ batch: [ContentEvent]) {
        var finished: [OpenTurns.Finished] = []
        var discarded: Int64 = 0
        for event in batch {
            switch event {
            case let .chunk(flow, turn, bytes):
                let result = openTurns.append(flow: flow, turn: turn, bytes: bytes)
                discarded += Int64(result.discarded)
                if let orphan = result.orphan { finished.append(orphan) }
            case let .turnEnded(flow, turn):
                finished += openTurns.end(flow: flow, turn: turn)
            }
        }
        if discarded > 0 { queue.updateCounters { $0.bytesDiscardedByWriter += discarded } }
        store(finished)
    }

    /// Appends each turn's bytes to the segment and indexes it. Rows are committed before a
    /// segment is closed, so a closed segment is never without the rows that reference it.
    func store(_ turns: [OpenTurns.Finished]) {
        guard !turns.isEmpty else { return }
        var rows: [IndexedTurn] = []
        var written: Int64 = 0
        var lost = 0
        var lastError: String?
        for item in turns {
            do {
                if needsNewSegment() {
                    commit(&rows, written: &written, lost: &lost, lastError: &lastError)
                    try openNextSegment()
                }
                guard let segment else { continue }
                let offset = try segment.append(item.bytes)
                rows.append(IndexedTurn(flowID: item.flow, turn: item.turn, segment: segment.sequence,
                                        segmentOffset: offset, recordedAt: clock.now()))
                written += Int64(item.bytes.count)
            } catch {
                lost += 1
                lastError = (error as? ContentError)?.message ?? (error as? FlowStoreError)?.message ?? "\(error)"
            }
        }
        commit(&rows, written: &written, lost: &lost, lastError: &lastError)
        let (lostTurns, failure) = (lost, lastError)
        if lostTurns > 0 {
            queue.updateCounters {
                $0.turnsLost += lostTurns
                $0.lastError = failure
            }
        }
    }

    /// Inserts `rows` in one transaction; on failure counts them as lost (their bytes stay in the
    /// segment unreferenced, for the sweep).
    private func commit(_ rows: inout [IndexedTurn], written: inout Int64, lost: inout Int, lastError: inout String?) {
        guard !rows.isEmpty else { return }
        let batch = rows
        let bytes = written
        rows = []
        written = 0
        do {
            try database.transaction { try TurnIndex(database: database).insert(batch) }
            queue.updateCounters {
                $0.turnsWritten += batch.count
                $0.bytesWritten += bytes
            }
        } catch {
            lost += batch.count
            lastError = (error as? FlowStoreError)?.message ?? "\(error)"
        }
    }

    private func needsNewSegment() -> Bool {
        guard let segment else { return true }
        return segment.size >= configuration.segmentBytes || clock.now() - segment.createdAt >= configuration.segmentAge
    }

    private func openNextSegment() throws {
        let next = max(directory.highestSequence(), segment?.sequence ?? 0) + 1
        segment?.close()
        segment = nil
        segment = try SegmentAppender(directory: directory, sequence: next, createdAt: clock.now())
    }

    /// Sweeps with the current expiry. A segment past its age is closed first, so content that
    /// expired in it can go; the segment being written is otherwise spared.
    func sweep() throws -> ContentSweepReport {
        if let segment, clock.now() - segment.createdAt >= configuration.segmentAge {
            segment.close()
            self.segment = nil
        }
        let report = try ContentSweeper(database: database, directory: directory)
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
            let text = (error as? ContentError)?.message ?? (error as? FlowStoreError)?.message ?? "\(error)"
            queue.updateCounters { $0.lastError = text }
        }
    }

    /// Deletes all rows and every segment but the one being written.
    func deleteAll() throws -> ContentSweepReport {
        try ContentSweeper(database: database, directory: directory).deleteAll(writing: segment?.sequence)
    }

    /// Writes the open turns (as incomplete: their ends never came), closes the segment and the
    /// connection.
    func close() {
        store(openTurns.drain())
        segment?.close()
        segment = nil
        database.close()
    }
}
