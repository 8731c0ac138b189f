import Dispatch
import FlowStore
import FlowTerms
import Foundation
import Synchronization
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
    /// Which flows wait for their client secret, and the packets they hold (`CaptureHoldPolicy`).
    private var hold: CaptureHoldPolicy
    private var held = CaptureHeldPackets()
    /// Held packets let go in one write, copied together (kept from write to write).
    private var scratch: [UInt8] = []

    init(configuration: CaptureConfiguration, counters: CaptureCountersBox) throws {
        self.configuration = configuration
        box = counters
        hold = CaptureHoldPolicy(limits: configuration.holdLimits)
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
        if secretsPending {
            let randoms = batch.secrets.withUnsafeBytes { TLSClientRandom.clientFinishedSecrets(inBlocks: $0) }
            released = randoms.compactMap { hold.secretWritten($0) }
        }
        if hold.deadlineMicros != nil { released += hold.expire(nowMicros: EngineClock.wallMicros()) }
        // Rotation by size is checked between packets, so a file ends near its limit.
        while start < batch.packets.count || secretsPending {
            if file == nil {
                do { try openFile(nowMicros: EngineClock.wallMicros()) } catch {
                    note(failure: "\(error)")
                    // Held packets let go with nowhere to go are lost as well.
                    let lost = released.reduce(0) { $0 + (held.take($1)?.packets.count ?? 0) }
                    countFailed(lost + batch.packets.count - start, &failed)
                    return failed
                }
            }
            start = writeSome(batch, from: start, withSecrets: secretsPending, released: released, failed: &failed)
            secretsPending = false
            released = []
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

    /// A part of one append, in file order: the batch's secrets, a run of the batch's blocks, or
    /// bytes copied into `scratch` (held packets let go).
    private enum Piece {
        case secrets(Int)
        case batch(Range<Int>)
        case copied(Range<Int>)
    }

    /// Writes the packets from `start` (after the batch's secrets when `withSecrets`, then the
    /// held packets of `released`, in that order) until the batch ends or the file reaches its
    /// size limit, with one writev(2): the batch's blocks as they are, except the packets of a
    /// flow waiting for its secret (`CaptureHoldPolicy`), which are copied aside. Rows are made
    /// in file order (`CapturePacketRows`).
    /// - Returns: the index of the first packet not written.
    private func writeSome(_ batch: CaptureBatch, from start: Int, withSecrets: Bool, released: [UInt64], failed: inout Int) -> Int {
        guard var open = file, let database else { return batch.packets.count }
        let secretsLength = withSecrets ? batch.secrets.count : 0
        var tally = CapturePacketRows(rowsPerFlow: configuration.rowsPerFlow)
        var pieces: [Piece] = []
        var length = secretsLength
        var packets = 0
        scratch.removeAll(keepingCapacity: true)
        if secretsLength > 0 { pieces.append(.secrets(secretsLength)) }
        let known = { (flow: UInt64) in self.count(of: flow, in: database) }
        /// Puts `flow`'s held packets into the write (copied into `scratch`), in order.
        func letGo(_ flow: UInt64) {
            guard let held = held.take(flow) else { return }
            let base = scratch.count
            scratch.append(contentsOf: held.blocks)
            held.blocks.withUnsafeBytes { blocks in
                for packet in held.packets {
                    _ = tally.add(packet, bytes: UnsafeRawBufferPointer(rebasing: blocks[packet.bytes]), offset: open.bytes + Int64(length), known: known)
                    length += packet.block.count
                }
            }
            packets += held.packets.count
            pieces.append(.copied(base..<scratch.count))
        }
        released.forEach(letGo)
        var index = start
        let limit = configuration.rotation.maximumBytes ?? 0
        batch.withBlocks { raw in
            var run = 0..<0
            func closeRun() {
                if !run.isEmpty { pieces.append(.batch(run)) }
                run = 0..<0
            }
            while index < batch.packets.count {
                if limit > 0, open.packets + Int64(packets) > 0, open.bytes + Int64(length) >= limit { break }
                let packet = batch.packets[index]
                index += 1
                if hold.isWaiting(packet.flow) {
                    if hold.offer(flow: packet.flow, bytes: packet.block.count) == .hold {
                        closeRun()
                        held.hold(packet, block: UnsafeRawBufferPointer(rebasing: raw[packet.block]))
                        continue
                    }
                    closeRun()
                    letGo(packet.flow)
                }
                let bytes = UnsafeRawBufferPointer(rebasing: raw[packet.bytes])
                if let summary = tally.add(packet, bytes: bytes, offset: open.bytes + Int64(length), known: known),
                   packet.direction == .clientToServer, summary.payloadLength >= 43,
                   let random = TLSClientRandom.ofClientHello(in: bytes) {
                    // Its later packets wait for the client's secret (the ClientHello itself is written).
                    _ = hold.clientHello(flow: packet.flow, random: random, timeMicros: packet.timeMicros)
                }
                run = run.isEmpty ? packet.block : run.lowerBound..<packet.block.upperBound
                length += packet.block.count
                packets += 1
            }
            closeRun()
        }
        let counts = tally.finish()
        let heldNow = UInt64(held.packets)
        box.state.withLock { $0.packetsHeld = heldNow }
        guard length > 0 else { return index }
        let failure: Errno?
        if pieces.count == 1, case .batch(let run) = pieces[0], let store = batch.storeMemory, run.lowerBound == batch.firstBlockOffset,
           open.output.inPlaceOffset == run.lowerBound {
            // The usual bulk batch: `prepare` placed its first block where the file's end is
            // from a block boundary, so its blocks go to the disk from the store itself.
            failure = open.output.append(inPlace: store.base, leading: run.lowerBound, count: run.count)
        } else {
            failure = batch.secrets.withUnsafeBytes { secrets in
                batch.withBlocks { blocks in
                    scratch.withUnsafeBytes { copied in
                        open.output.append(pieces.map { piece in
                            switch piece {
                            case .secrets(let n): UnsafeRawBufferPointer(rebasing: secrets[0..<n])
                            case .batch(let run): UnsafeRawBufferPointer(rebasing: blocks[run])
                            case .copied(let range): UnsafeRawBufferPointer(rebasing: copied[range])
                            }
                        })
                    }
                }
            }
        }
        if let failure {
            // The appender cut the file back to its last whole block: it stays readable.
            countFailed(packets, &failed)
            note(failure: "cannot write \(configuration.folder.filePath(open.seq)): \(failure.phrase)")
            return index
        }
        open.bytes += Int64(length)
        open.packets += Int64(packets)
        if packets > 0, open.firstPacketMicros == nil { open.firstPacketMicros = EngineClock.wallMicros() }
        open.unsynced = true
        open.tail.appended(pending: open.output.pending, nowNanos: DispatchTime.now().uptimeNanoseconds)
        file = open
        for (flow, n) in counts { flowCounts[flow] = n }
        if flowCounts.count > 200_000 { flowCounts = counts }
        do {
            try tally.commit(seq: open.seq, bytes: open.bytes, packets: open.packets, database: database)
            box.state.withLock {
                $0.packetsWritten &+= UInt64(packets)
                $0.lastFailure = nil
                $0.writeMode = open.output.mode
            }
        } catch {
            // The packets are in the file; their rows are not. Counted as failed for the list.
            note(failure: "\(error)")
            flowCounts = [:]
            countFailed(packets, &failed)
        }
        return index
    }

    /// Writes the held packets of `flows` (their waits ended: `CaptureHoldPolicy.expire`,
    /// `releaseAll`) into the open file, in that order.
    private func writeHeld(_ flows: [UInt64]) {
        guard !flows.isEmpty, file != nil else { return }
        var failed = 0
        _ = writeSome(CaptureBatch(), from: 0, withSecrets: false, released: flows, failed: &failed)
    }

    /// Writes every held packet now (a flush: everything queued is then in the file).
    func writeAllHeld() { writeHeld(hold.releaseAll()) }

    private func countFailed(_ packets: Int, _ failed: inout Int) {
        failed += packets
        box.state.withLock { $0.packetsFailed &+= UInt64(packets) }
    }

    /// The packets counted for `flow` so far (cache, else the table, else 0).
    private func count(of flow: UInt64, in database: SQLiteDatabase) -> Int64 {
        if let known = flowCounts[flow] { return known }
        let value = try? database.scalar("SELECT packets FROM packet_counts WHERE flow_id = ?", [.integer(Int64(bitPattern: flow))])
        if case .integer(let n)? = value { return n }
        return 0
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
        // What is held goes into this file first (a rotation or the end lets every wait go).
        writeAllHeld()
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
