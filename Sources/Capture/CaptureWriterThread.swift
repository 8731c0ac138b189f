import Dispatch
import FlowStore
import FlowTerms
import Foundation
import Synchronization
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// The capture writer thread: owns the open capture file, its row in `captures`, the rows of
/// `packets` and `packet_counts`. Runs on its `BoundedWriterQueue`'s thread only.
///
/// A batch arrives as whole blocks (`CaptureBatch`) and is appended with `CaptureFileAppender`
/// (O_DIRECT where the file system allows it); only after the append succeeded are its rows
/// committed (one transaction). The appender holds back the tail past the last whole block:
/// it reaches the file within `configuration.tailInterval` (`CaptureTailSchedule`), at
/// `flush`, rotation and stop, so a row may point up to one block past the file's end for
/// that long (`tv packet` says so: `CaptureRecord.Outcome.notYetWritten`). A failed write is
/// cut back to the last whole block (ftruncate) so the file stays readable.
final class CaptureWriterThread: QueueWriter {
    typealias Batch = CaptureBatch

    let configuration: CaptureConfiguration
    let box: CaptureCountersBox
    var database: SQLiteDatabase?
    /// The packet rows' statements on `database`, prepared at the first commit and kept
    /// (`packetStatements(on:)`).
    private var statements: CapturePacketStatements?
    /// The open file: descriptor, sequence, bytes and packets written, when it started.
    struct OpenFile {
        var output: CaptureFileAppender
        var fd: Int32 { output.descriptor }
        var seq: Int64
        var bytes: Int64
        var packets: Int64
        var startedMicros: Int64
        /// When its first packet was written (wall µs): the age rotation counts from it, so a
        /// file opened on an idle session is not closed at its first packet.
        var firstPacketMicros: Int64?
        var lastSync: DispatchTime
        var unsynced: Bool
        /// When the appender's held-back tail is due in the file.
        var tail: CaptureTailSchedule
    }
    var file: OpenFile?
    /// Packets counted per flow so far (a cache of `packet_counts`; a miss reads the table).
    var flowCounts: [UInt64: Int64] = [:]
    /// Rows a full database could not take yet, in write order (`CaptureRowBacklog`).
    var backlog = CaptureRowBacklog()
    /// The files' fdatasyncs, off this thread.
    private let background = BackgroundSync()
    /// Which flows wait for their client secret, and the packets they hold (`CaptureHoldPolicy`).
    var hold: CaptureHoldPolicy
    var held = CaptureHeldPackets()
    /// Held packets let go in one write, copied together (kept from write to write).
    var scratch: [UInt8] = []
    /// The secrets each new file starts with (`CaptureCarriedSecrets`).
    var carried = CaptureCarriedSecrets()

    init(configuration: CaptureConfiguration, counters: CaptureCountersBox) throws {
        self.configuration = configuration
        box = counters
        hold = CaptureHoldPolicy(limits: configuration.holdLimits)
        // At most a quarter of a file rotated by size: the secrets never crowd out its packets.
        let quarter = configuration.rotation.maximumBytes.map { Int(clamping: max(0, $0 / 4)) } ?? Int.max
        carried = CaptureCarriedSecrets(limitBytes: min(CaptureCarriedSecrets.defaultLimitBytes, quarter))
        try configuration.folder.ensureExists()
        let database = try SQLiteDatabase(path: configuration.databasePath, oneThread: true)
        try FlowSchema.migrate(database)
        self.database = database
        try CaptureRepair.closeAbandoned(database: database, folder: configuration.folder)
        // Files a deletion left under a marked row (it stopped between its steps) go now.
        _ = try? CaptureCatalog(database: database, folder: configuration.folder).sweepDeleted()
        try openFile(nowMicros: EngineClock.wallMicros())
    }

    // MARK: QueueWriter

    func tick() {
        if !backlog.isEmpty, let database { commitBacklog(database) }
        guard file != nil else { return }
        let now = EngineClock.wallMicros()
        if let due = hold.deadlineMicros, now >= due { writeHeld(hold.expire(nowMicros: now)) }
        guard var open = file else { return }
        if configuration.rotation.isDue(bytes: open.bytes, packets: open.packets, startedMicros: open.firstPacketMicros ?? now, nowMicros: now) {
            rotate()
            return
        }
        if open.tail.isDue(nowNanos: DispatchTime.now().uptimeNanoseconds) {
            writeTail()
            guard let updated = file else { return }
            open = updated
        }
        if open.unsynced, DispatchTime.now() >= open.lastSync + configuration.syncInterval, background.sync(open.fd) {
            open.unsynced = false
            open.lastSync = DispatchTime.now()
            file = open
        }
    }

    var idleDeadline: DispatchTime? {
        guard let open = file else { return nil }
        var deadlines: [DispatchTime] = []
        if let due = open.tail.deadlineNanos { deadlines.append(DispatchTime(uptimeNanoseconds: due)) }
        if let due = hold.deadlineMicros { deadlines.append(DispatchTime.now() + max(0, Double(due - EngineClock.wallMicros()) / 1e6)) }
        guard open.packets > 0 else { return deadlines.min() }
        if open.unsynced { deadlines.append(open.lastSync + configuration.syncInterval) }
        if let first = open.firstPacketMicros, let due = configuration.rotation.ageDeadline(startedMicros: first) {
            let wait = max(0, Double(due - EngineClock.wallMicros()) / 1e6)
            deadlines.append(DispatchTime.now() + wait)
        }
        return deadlines.min()
    }

    func idleDeadlinePassed() {}

    /// Places the next batch's first block where the file's end will be, from a block boundary,
    /// once `taken` is written (its secrets, then its blocks, in the open file), so that batch is
    /// written from its store in place (`CaptureFileAppender.append(inPlace:)`). A guess only:
    /// when the file rotates or the batch brings secrets first, it is written by copying.
    func prepare(_ next: inout CaptureBatch, following taken: CaptureBatch) {
        guard let open = file, open.output.inPlaceOffset != nil else {
            next.placeFirstBlock(at: 0)
            return
        }
        let end = open.output.end + Int64(taken.secrets.count + taken.blockBytes)
        next.placeFirstBlock(at: Int(end % Int64(open.output.blockBytes)))
    }

    func write(_ batch: CaptureBatch) -> Int {
        var failed = 0
        var start = 0
        // The batch's secrets go first (`CaptureBatch`), into the file its first packet goes to.
        var secretsPending = !batch.secrets.isEmpty
        // Flows whose client secret this batch brings are let go right after it; so are waits
        // that grew too old (`CaptureHoldPolicy`).
        var released: [UInt64] = []
        // Also the randoms of connections that will log no secret (`CaptureOffer.noSecretWillCome`).
        released = batch.clientRandoms.compactMap { hold.secretWritten($0) }
        if hold.deadlineMicros != nil { released += hold.expire(nowMicros: EngineClock.wallMicros()) }
        // Rotation by size is checked between packets, so a file ends near its limit.
        while start < batch.packets.count || secretsPending {
            if file == nil {
                do { try openFile(nowMicros: EngineClock.wallMicros()) } catch {
                    note(failure: error)
                    // Held packets let go with nowhere to go are lost as well.
                    let lost = released.reduce(0) { $0 + (held.take($1)?.packets.count ?? 0) }
                    countFailed(lost + batch.packets.count - start, &failed)
                    return failed
                }
            }
            start = writeSome(batch, from: start, withSecrets: secretsPending, released: released, failed: &failed)
            // Written: the next file starts with them too (its packets may be theirs).
            if secretsPending { carried.add(batch.secrets) }
            secretsPending = false
            released = []
            if start < batch.packets.count { rotate() }
        }
        return failed
    }

    func stop() {
        let last = closeFile(nowMicros: EngineClock.wallMicros())
        // A last file no packet went into (a session whose programs sent nothing, or one rotated
        // just before the end) is not kept: its row goes, then the file. Every run left one of
        // 164 bytes, and its closing line named it (a trial's folder held dozens).
        if let last, last.packets == 0, let database {
            do {
                // A row marked deleted keeps its number from ever being given again: left to the sweep.
                let remove = try database.prepare("DELETE FROM captures WHERE seq = ? AND packets = 0 AND deleted_at IS NULL")
                try remove.bind([.integer(last.seq)])
                _ = try remove.step()
                if database.changes == 1 {
                    unlink(configuration.folder.filePath(last.seq))
                    box.state.withLock {
                        $0.sequencesOpened.removeAll { $0 == last.seq }
                        $0.emptyFilesRemoved &+= 1
                    }
                }
            } catch {
                note(failure: error)
            }
        }
        // Rows still waiting are tried once more (their figures only raise the closed file's
        // row); what the database still cannot take is lost, and counted.
        if let database { commitBacklog(database) }
        let lost = backlog.drop()
        if lost > 0 { box.state.withLock { $0.packetsFailed &+= UInt64(lost) } }
        background.finish()
        statements = nil
        database?.close()
        database = nil
    }

    // MARK: jobs

    /// Writes the open file's held-back tail now (`CaptureWriter.flush`, and when it is due):
    /// every packet written so far is then in the file. A failure is noted and tried again an
    /// interval later (the tail stays held; the next whole block carries it anyway).
    func writeTail() {
        guard var open = file else { return }
        if let failure = open.output.writeTail() {
            note(failure: "cannot write \(configuration.folder.filePath(open.seq)): \(failure.phrase)")
            open.tail.retryLater(nowNanos: DispatchTime.now().uptimeNanoseconds)
        } else {
            open.tail.wrote()
        }
        file = open
    }

    /// Closes the open file and opens the next (`tv captures rotate`, or a limit reached).
    /// - Returns: the sequence of the file closed and of the one opened.
    @discardableResult
    func rotate() -> (closed: Int64?, opened: Int64?) {
        let now = EngineClock.wallMicros()
        let closed = file?.seq
        closeFile(nowMicros: now)
        do { try openFile(nowMicros: now) } catch { note(failure: error) }
        if closed != nil { configuration.onRotated?() }
        return (closed, file?.seq)
    }

    // MARK: files

    private func openFile(nowMicros: Int64) throws {
        guard let database else { return }
        let folder = configuration.folder
        let known = try database.scalar("SELECT coalesce(max(seq), 0) FROM captures").int64 ?? 0
        var seq = max(known, folder.sequencesPresent().max() ?? 0) + 1
        var output: CaptureFileAppender?
        var lastError = Errno(EEXIST)
        for _ in 0..<64 {
            do throws(Errno) {
                output = try CaptureFileAppender(creating: folder.filePath(seq), direct: configuration.directWrites,
                                                 bufferBytes: configuration.directBufferBytes)
                break
            } catch {
                lastError = error
                if error.code != EEXIST { break }
                seq += 1
            }
        }
        guard let output else {
            throw CaptureError.cannotOpen(path: folder.filePath(seq), reason: lastError.description)
        }
        // The head, then the secrets of the connections that may go on in this file.
        let head = PcapngBlocks.tunnelCaptureHead(snapLength: UInt32(clamping: configuration.snapLength))
            + carried.blocks
        // The head goes into the file at once (an idle capture is a readable file).
        if let failure = head.withUnsafeBytes({ output.append($0) }) ?? output.writeTail() {
            unlink(folder.filePath(seq))
            throw CaptureError.cannotOpen(path: folder.filePath(seq), reason: failure.description)
        }
        do {
            let insert = try database.prepare("""
                INSERT INTO captures (seq, path, started_at, bytes, packets, snaplen, recording) VALUES (?, ?, ?, ?, 0, ?, 1)
                """)
            try insert.bind([.integer(seq), .text(folder.filePath(seq)), .integer(nowMicros), .integer(Int64(head.count)),
                             .integer(Int64(configuration.snapLength))])
            _ = try insert.step()
        } catch {
            unlink(folder.filePath(seq))
            throw error
        }
        file = OpenFile(output: output, seq: seq, bytes: Int64(head.count), packets: 0, startedMicros: nowMicros, firstPacketMicros: nil, lastSync: .now(), unsynced: true,
                        tail: CaptureTailSchedule(interval: configuration.tailInterval))
        box.state.withLock {
            $0.filesOpened &+= 1
            $0.recordingSequence = seq
            $0.recordingPackets = 0
            $0.sequencesOpened.append(seq)
            $0.writeMode = output.mode
        }
    }

    /// Closes the open file and its row.
    /// - Returns: the file's sequence and how many packets it holds (nil: none was open).
    @discardableResult
    private func closeFile(nowMicros: Int64) -> (seq: Int64, packets: Int64)? {
        // What is held goes into this file first (a rotation or the end lets every wait go).
        writeAllHeld()
        guard let open = file else { return nil }
        file = nil
        // The held tail is written first; if it cannot be, the row says what the file holds.
        let fd = open.fd
        let (handed, tailFailure) = open.output.handOver()
        if let tailFailure { note(failure: "cannot write \(configuration.folder.filePath(open.seq)): \(tailFailure.phrase)") }
        do {
            let update = try database?.prepare("UPDATE captures SET ended_at = ?, bytes = ?, packets = ?, recording = 0 WHERE seq = ?")
            try update?.bind([.integer(nowMicros), .integer(tailFailure == nil ? open.bytes : open.output.written), .integer(open.packets),
                              .integer(open.seq)])
            _ = try update?.step()
        } catch {
            note(failure: error)
        }
        _ = flock(fd, LOCK_UN)
        background.syncAndClose(handed)
        box.state.withLock {
            $0.recordingSequence = nil
            $0.recordingPackets = 0
        }
        return (open.seq, open.packets)
    }

    /// The packet rows' statements on `database`: the kept set, or a new one when there is none
    /// yet or it was prepared on another handle.
    /// - Throws: `FlowStoreError` when a statement does not compile.
    func packetStatements(on database: SQLiteDatabase) throws -> CapturePacketStatements {
        if let statements, statements.database === database { return statements }
        let made = try CapturePacketStatements(database: database)
        statements = made
        return made
    }

    func note(failure: String) {
        box.state.withLock {
            $0.lastFailure = failure
            if $0.firstFailure == nil { $0.firstFailure = failure }
        }
    }

    /// Notes `error` as its sentence (`UserFacingError.message`), never as a value dump (a
    /// trial's `tv status` showed `failed(path: "…", reason: "CHECK constraint failed: …")`).
    func note(failure error: any Error) {
        note(failure: (error as? UserFacingError)?.message ?? "\(error)")
    }
}
