import Dispatch
import FlowStore
import FlowTerms
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What the capture writer did, for `tv status` (read under a mutex from any thread).
public struct CaptureWriterCounters: Sendable, Equatable {
    /// Packets written to a file (and counted for their flow).
    public var packetsWritten: UInt64 = 0
    /// Packets that reached the writer but could not be written (the file or the database failed).
    public var packetsFailed: UInt64 = 0
    /// Files opened by this writer.
    public var filesOpened: UInt64 = 0
    /// The file being written now, nil when none is open.
    public var recordingSequence: Int64?
    /// The last failure, one sentence; nil when the last write succeeded.
    public var lastFailure: String?
    /// How the file being written (else the last one) is written: O_DIRECT or buffered.
    public var writeMode: CaptureWriteMode?

    public init() {}
}

/// The writer's counters, shared by the writer thread (which writes them) and `CaptureWriter`
/// (which reads them for `tv status`).
final class CaptureCountersBox: Sendable {
    let state = Mutex(CaptureWriterCounters())
}

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
    private let box: CaptureCountersBox
    private var database: SQLiteDatabase?
    /// The open file: descriptor, sequence, bytes and packets written, when it started.
    private struct OpenFile {
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
    private var file: OpenFile?
    /// Packets counted per flow so far (a cache of `packet_counts`; a miss reads the table).
    private var flowCounts: [UInt64: Int64] = [:]
    /// The files' fdatasyncs, off this thread.
    private let background = BackgroundSync()

    init(configuration: CaptureConfiguration, counters: CaptureCountersBox) throws {
        self.configuration = configuration
        box = counters
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
        guard var open = file else { return }
        let now = EngineClock.wallMicros()
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
        // Rotation by size is checked between packets, so a file ends near its limit.
        while start < batch.packets.count || secretsPending {
            if file == nil {
                do { try openFile(nowMicros: EngineClock.wallMicros()) } catch {
                    note(failure: "\(error)")
                    return failed + batch.packets.count - start
                }
            }
            start = writeSome(batch, from: start, withSecrets: secretsPending, failed: &failed)
            secretsPending = false
            if start < batch.packets.count { rotate() }
        }
        return failed
    }

    func stop() {
        closeFile(nowMicros: EngineClock.wallMicros())
        background.finish()
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
        do { try openFile(nowMicros: now) } catch { note(failure: "\(error)") }
        return (closed, file?.seq)
    }

    // MARK: writing

    /// A packet row waiting for the batch's transaction.
    private struct Row {
        var flow: UInt64
        var n: Int64
        var offset: Int64
        var time: Int64
        var direction: Direction
        var originalLength: Int
        var includedLength: Int
        var summary: PacketSummary
    }

    /// Writes the packets from `start` (after the batch's secrets when `withSecrets`) until the
    /// batch ends or the file reaches its size limit: their blocks are a run of the batch's blocks,
    /// written as they are with one writev(2). Past `rowsPerFlow` a packet costs its flow's count
    /// only (the last flow's is kept aside: a bulk transfer is long runs of one flow).
    /// - Returns: the index of the first packet not written.
    private func writeSome(_ batch: CaptureBatch, from start: Int, withSecrets: Bool, failed: inout Int) -> Int {
        guard var open = file, let database else { return batch.packets.count }
        let secretsLength = withSecrets ? batch.secrets.count : 0
        var rows: [Row] = []
        var touched: [UInt64: Int64] = [:]
        var lastFlow: UInt64 = 0
        var lastCount: Int64 = 0
        let runStart = start < batch.packets.count ? batch.packets[start].block.lowerBound : 0
        var runEnd = runStart
        var index = start
        let limit = configuration.rotation.maximumBytes ?? 0
        batch.withBlocks { raw in
            while index < batch.packets.count {
                let written = Int64(secretsLength + runEnd - runStart)
                if limit > 0, open.packets + Int64(index - start) > 0, open.bytes + written >= limit { break }
                let packet = batch.packets[index]
                if packet.flow != 0 {
                    if packet.flow != lastFlow {
                        if lastFlow != 0 { touched[lastFlow] = lastCount }
                        lastFlow = packet.flow
                        lastCount = touched[packet.flow] ?? count(of: packet.flow, in: database)
                    }
                    lastCount += 1
                    if lastCount <= configuration.rowsPerFlow {
                        let bytes = UnsafeRawBufferPointer(rebasing: raw[packet.bytes])
                        rows.append(Row(flow: packet.flow, n: lastCount, offset: open.bytes + written, time: packet.timeMicros,
                                        direction: packet.direction, originalLength: packet.originalLength,
                                        includedLength: packet.includedLength,
                                        summary: PacketSummary.read(bytes, originalLength: packet.originalLength)))
                    }
                }
                runEnd = packet.block.upperBound
                index += 1
            }
        }
        if lastFlow != 0 { touched[lastFlow] = lastCount }
        let packets = index - start
        let total = secretsLength + runEnd - runStart
        guard total > 0 else { return index }
        let failure: Errno?
        if secretsLength == 0, let store = batch.storeMemory, runStart == batch.firstBlockOffset,
           open.output.inPlaceOffset == runStart {
            // The usual bulk batch: `prepare` placed its first block where the file's end is
            // from a block boundary, so its blocks go to the disk from the store itself.
            failure = open.output.append(inPlace: store.base, leading: runStart, count: runEnd - runStart)
        } else {
            failure = batch.secrets.withUnsafeBytes { secrets in
                batch.withBlocks { blocks in
                    open.output.append([UnsafeRawBufferPointer(rebasing: secrets[0..<secretsLength]),
                                        UnsafeRawBufferPointer(rebasing: blocks[runStart..<runEnd])])
                }
            }
        }
        if let failure {
            // The appender cut the file back to its last whole block: it stays readable.
            failed += packets
            note(failure: "cannot write \(configuration.folder.filePath(open.seq)): \(failure.phrase)")
            return index
        }
        open.bytes += Int64(total)
        open.packets += Int64(packets)
        if packets > 0, open.firstPacketMicros == nil { open.firstPacketMicros = EngineClock.wallMicros() }
        open.unsynced = true
        open.tail.appended(pending: open.output.pending, nowNanos: DispatchTime.now().uptimeNanoseconds)
        file = open
        for (flow, n) in touched { flowCounts[flow] = n }
        if flowCounts.count > 200_000 { flowCounts = touched }
        do {
            try commit(rows: rows, counts: touched, file: open, database: database)
            box.state.withLock {
                $0.packetsWritten &+= UInt64(packets)
                $0.lastFailure = nil
                $0.writeMode = open.output.mode
            }
        } catch {
            // The packets are in the file; their rows are not. Counted as failed for the list.
            note(failure: "\(error)")
            flowCounts = [:]
            failed += packets
        }
        return index
    }

    /// The packets counted for `flow` so far (cache, else the table, else 0).
    private func count(of flow: UInt64, in database: SQLiteDatabase) -> Int64 {
        if let known = flowCounts[flow] { return known }
        let value = try? database.scalar("SELECT packets FROM packet_counts WHERE flow_id = ?", [.integer(Int64(bitPattern: flow))])
        if case .integer(let n)? = value { return n }
        return 0
    }

    private func commit(rows: [Row], counts: [UInt64: Int64], file open: OpenFile, database: SQLiteDatabase) throws {
        try database.transaction {
            if !rows.isEmpty {
                let insert = try database.prepare("""
                    INSERT OR REPLACE INTO packets (flow_id, n, capture_seq, file_offset, time_us, direction, orig_len, incl_len, tcp_flags, meaning)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                for row in rows {
                    insert.reset()
                    try insert.bind([
                        .integer(Int64(bitPattern: row.flow)), .integer(row.n), .integer(open.seq), .integer(row.offset), .integer(row.time),
                        .text(row.direction.rawValue), .integer(Int64(row.originalLength)), .integer(Int64(row.includedLength)),
                        .integerOrNull(row.summary.tcpFlags.map { Int64($0) }), .text(row.summary.meaning.rawValue),
                    ])
                    _ = try insert.step()
                }
            }
            if !counts.isEmpty {
                let upsert = try database.prepare("""
                    INSERT INTO packet_counts (flow_id, packets) VALUES (?, ?)
                    ON CONFLICT (flow_id) DO UPDATE SET packets = max(packets, excluded.packets)
                    """)
                for (flow, n) in counts {
                    upsert.reset()
                    try upsert.bind([.integer(Int64(bitPattern: flow)), .integer(n)])
                    _ = try upsert.step()
                }
            }
            let update = try database.prepare("UPDATE captures SET bytes = ?, packets = ? WHERE seq = ?")
            try update.bind([.integer(open.bytes), .integer(open.packets), .integer(open.seq)])
            _ = try update.step()
        }
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
        let fd = output.descriptor
        _ = flock(fd, LOCK_EX | LOCK_NB)
        let head = PcapngBlocks.sectionHeader() + PcapngBlocks.interfaceDescription(snapLength: UInt32(clamping: configuration.snapLength))
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
            $0.writeMode = output.mode
        }
    }

    private func closeFile(nowMicros: Int64) {
        guard let open = file else { return }
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
            note(failure: "\(error)")
        }
        _ = flock(fd, LOCK_UN)
        background.syncAndClose(handed)
        box.state.withLock { $0.recordingSequence = nil }
    }

    private func note(failure: String) {
        box.state.withLock { $0.lastFailure = failure }
    }
}

/// The capture files' fdatasync(2)s, run off the writer thread, in order: a disk slower than
/// the packets for a while (a sync waits for every dirty page of a file, and a bulk transfer
/// fills a 64 MB file in a fraction of a second) would otherwise stall the writer while its
/// queue fills and drops. The writer hands over a closed file's descriptor (synced, then
/// closed) and asks for periodic syncs of the open one (on a dup(2) of its descriptor; skipped
/// while the last periodic one still runs); `finish` waits for all of them (the writer's stop).
final class BackgroundSync: Sendable {
    private let queue = DispatchQueue(label: "tv capture sync", qos: .utility)
    private let periodicRunning = Atomic<Bool>(false)

    /// Starts an fdatasync of `fd`'s file; false (nothing started) while the last one still runs
    /// or when the descriptor cannot be duplicated.
    func sync(_ fd: Int32) -> Bool {
        guard periodicRunning.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return false }
        let copy = dup(fd)
        guard copy >= 0 else {
            periodicRunning.store(false, ordering: .releasing)
            return false
        }
        queue.async {
            _ = fdatasync(copy)
            close(copy)
            self.periodicRunning.store(false, ordering: .releasing)
        }
        return true
    }

    /// Takes `fd`, a closed capture file's descriptor: synced, then closed.
    func syncAndClose(_ fd: Int32) {
        queue.async {
            _ = fdatasync(fd)
            close(fd)
        }
    }

    /// Waits until every sync handed over so far is done.
    func finish() { queue.sync {} }
}
