import FlowStore

/// The content writer thread's way to disk for finished turns: staged bytes written to the
/// segment in one `writev(2)` per MiB, their rows committed in one transaction, and the next
/// segment opened when one is full or old. Runs on the writer thread only (`ContentWriterThread`).
extension ContentWriterThread {
    /// Where a staged turn's bytes are, in order: bytes carried from earlier batches (in
    /// `carried`) or a range of a block of the batch being written.
    enum StagedBytes {
        case carried(start: Int, count: Int)
        case piece(OpenTurns.Piece)
    }

    /// What `store` builds up: turns staged for the segment but not yet written to it, and rows
    /// written to the segment but not yet committed. Reused from batch to batch (its arrays keep
    /// their room), and moved into a local while `store` runs (see `write`).
    struct Staging {
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

    /// Staged bytes past which they are written before more are staged (1 MiB).
    static let stageLimit = 1_048_576

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
        // The flow history first (`HistoryFirst`): while flows wait for room, or when the turns
        // would leave less than its reserve free, they take none and are counted as not saved
        // (one statvfs per batch).
        if let signal = configuration.historyFirst,
           case let .hold(hold) = signal.permission(writingIn: directory.path,
                                                    bytes: turns.reduce(Int64(0)) { $0 + ($1.deleted ? 0 : Int64($1.turn.keptBytes)) },
                                                    held: health.failing) {
            let held = turns.reduce(0) { $0 + ($1.deleted ? 0 : 1) }
            guard held > 0 else { return }
            told(health.recordHeld(), lost: held, failure: .heldForHistory(hold))
            return
        }
        let now = clock.now()
        var work = Staging()
        swap(&work, &staging)
        defer { swap(&work, &staging) }
        work.lost = 0
        work.lastError = nil
        work.turns.reserveCapacity(turns.count)
        work.rows.reserveCapacity(turns.count)
        for item in turns where !item.deleted {
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
        told(health.record(succeeded: lostTurns == 0 && failure == nil), lost: lostTurns, failure: failure)
    }

    /// Counts `lost` turns and `failure` after `health` recorded a write (or a hold), and tells
    /// `onHealthChange` of `change`.
    private func told(_ change: WriteHealth.Change?, lost lostTurns: Int, failure: ContentWriteFailure?) {
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
            bytesSinceSweep += Int64(bytes)
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
}
