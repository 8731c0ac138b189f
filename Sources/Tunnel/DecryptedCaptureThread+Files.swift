import Capture
import Dispatch
import FlowStore
import FlowTerms
#if canImport(Glibc)
import Glibc
#endif

/// The decrypted capture writer's files: opening one (with the streams still open reopened),
/// closing one whole, a failed write and the retry, the tail, rotation and the stop.
extension DecryptedCaptureThread {
    // MARK: QueueWriter

    func tick() {
        // While writes fail with streams open, a new file is tried when the backoff allows, also
        // with no packet coming (an idle download's connection): recording resumes, and is said,
        // as soon as there is room.
        if file == nil, figures.failing, !streams.isEmpty, let retryAtNanos, DispatchTime.now().uptimeNanoseconds >= retryAtNanos {
            askHistoryFirst(bytes: 0)
            openFile(at: EngineClock.wallMicros())
            publish()
        }
        guard let open = file else { return }
        let now = EngineClock.wallMicros()
        if configuration.rotation.isDue(bytes: open.output.end, packets: open.packets, startedMicros: open.firstPacketMicros ?? now,
                                        nowMicros: now) {
            closeFile(rotated: true)
            publish()
            return
        }
        if open.tail.isDue(nowNanos: DispatchTime.now().uptimeNanoseconds) { writeTail() }
    }

    var idleDeadline: DispatchTime? {
        guard let open = file else {
            guard figures.failing, !streams.isEmpty, let retryAtNanos else { return nil }
            return DispatchTime(uptimeNanoseconds: retryAtNanos)
        }
        var deadlines: [DispatchTime] = []
        if let due = open.tail.deadlineNanos { deadlines.append(DispatchTime(uptimeNanoseconds: due)) }
        if let first = open.firstPacketMicros, let due = configuration.rotation.ageDeadline(startedMicros: first) {
            deadlines.append(DispatchTime.now() + max(0, Double(due - EngineClock.wallMicros()) / 1e6))
        }
        return deadlines.min()
    }

    func idleDeadlinePassed() {}

    func stop() {
        // Flows still open when the session stops end in order, in the file being written (none
        // is opened for them alone).
        if file != nil {
            let now = EngineClock.wallMicros()
            heads.removeAll(keepingCapacity: true)
            var packets = 0
            for flow in streams.keys.sorted() {
                let planned = streams[flow]!.synthesizer.ending(.closedByClient)
                build(planned, comment: nil, at: now)
                packets += planned.count
            }
            appendHeads(packets: packets)
        }
        streams.removeAll()
        closeFile(rotated: false)
        publish()
    }

    // MARK: jobs

    /// Writes the held-back tail now (`DecryptedCapture.flush`, and when it is due): every packet
    /// built so far is then in the file. A failure closes the file whole (`fail`).
    func writeTail() {
        guard var open = file else { return }
        if let failure = open.output.writeTail() {
            fail(DecryptedCaptureFailure(path: open.path, error: failure))
            publish()
            return
        }
        open.tail.wrote()
        open.ledger.settle(written: open.output.written)
        file = open
    }

    /// `tv captures rotate`: closes the file being written; the next opens with the next packet.
    /// - Returns: the name of the file closed (nil: none was open).
    func rotate() -> String? {
        let closed = file?.name
        closeFile(rotated: true)
        publish()
        return closed
    }

    // MARK: files

    /// Opens the next file at `micros` (the time of the packet it opens for): the session's first
    /// name for the first, else the name of the time now (`-2`, `-3` … when taken); its head and
    /// a handshake for every stream still open go in at once. Nothing while a failed write's
    /// backoff runs. A file that cannot take its head is removed, and that is a failed write.
    func openFile(at micros: Int64) {
        if let retryAtNanos, DispatchTime.now().uptimeNanoseconds < retryAtNanos { return }
        guard heldFor == nil else { return }
        let base = firstPath ?? configuration.folder + "/" + DecryptedCapture.fileName(startMicros: EngineClock.wallMicros())
        var n = 1
        var made: (output: CaptureFileAppender, path: String)?
        while made == nil {
            let candidate = DecryptedCapture.numbered(base, n)
            do throws(Errno) {
                made = (try CaptureFileAppender(creating: candidate, direct: configuration.directWrites,
                                                bufferBytes: configuration.directBufferBytes), candidate)
            } catch {
                guard error.code == EEXIST, n < DecryptedCapture.mostNumbered else {
                    fail(DecryptedCaptureFailure(path: candidate, error: error))
                    return
                }
                n += 1
            }
        }
        guard let (output, path) = made else { return }
        heads.removeAll(keepingCapacity: true)
        heads += DecryptedCapture.heads
        let headLength = heads.count
        var reopened = 0
        for flow in streams.keys.sorted() {
            let planned = streams[flow]!.synthesizer.reopening()
            build(planned, comment: flow, at: micros)
            reopened += planned.count
        }
        // The head goes into the file at once: a file that cannot hold it is none.
        let failure = heads.withUnsafeBytes { output.append($0) } ?? output.writeTail()
        heads.removeAll(keepingCapacity: true)
        if let failure {
            let (fd, _) = output.handOver()
            unlink(path)
            close(fd)
            fail(DecryptedCaptureFailure(path: path, error: failure))
            return
        }
        var open = OpenFile(output: output, path: path, tail: CaptureTailSchedule(interval: configuration.tailInterval))
        open.ledger.appended(.init(end: Int64(headLength), packets: 0, bytes: 0, flow: nil))
        if reopened > 0 {
            open.ledger.appended(.init(end: output.end, packets: reopened, bytes: 0, flow: nil))
            open.packets = Int64(reopened)
            open.firstPacketMicros = EngineClock.wallMicros()
            figures.packetsWritten &+= UInt64(reopened)
        }
        open.ledger.settle(written: output.written)
        file = open
        firstPath = nil
        figures.filesOpened += 1
        figures.recording = open.name
        figures.writeMode = output.mode
        succeeded()
    }

    /// Appends `heads` (the ends at stop: `packets` of them) by copying; a failure is a failed
    /// write (they are not counted as lost: they carry no plaintext).
    func appendHeads(packets: Int) {
        defer { heads.removeAll(keepingCapacity: true) }
        guard var open = file, !heads.isEmpty else { return }
        if let failure = heads.withUnsafeBytes({ open.output.append($0) }) {
            fail(DecryptedCaptureFailure(path: open.path, error: failure))
            return
        }
        open.ledger.appended(.init(end: open.output.end, packets: packets, bytes: 0, flow: nil))
        open.packets += Int64(packets)
        figures.packetsWritten &+= UInt64(packets)
        file = open
    }

    /// Closes the file being written, whole: its held tail is written; when that fails (a full
    /// disk) the file is cut back to its last whole block on disk (`DecryptedCaptureLedger`) and
    /// what was past it is counted as not saved. A file left with no packet is removed.
    /// - Parameter rotated: closed before the session's end (a rotation, a failed write): said
    ///   through `hooks.closed`, for a retention pass.
    func closeFile(rotated: Bool) {
        guard let open = file else { return }
        file = nil
        figures.recording = nil
        let (fd, tailFailure) = open.output.handOver()
        var ledger = open.ledger
        var packets = open.packets
        if let tailFailure {
            ledger.settle(written: open.output.written)
            _ = ftruncate(fd, off_t(ledger.wholeOnDisk))
            let lost = ledger.unwritten
            for flow in lost.flows { noteLost(packets: 0, bytes: 0, flow: flow) }
            noteLost(packets: lost.packets, bytes: lost.bytes, flow: nil)
            packets -= Int64(lost.packets)
            noteFailure(DecryptedCaptureFailure(path: open.path, error: tailFailure))
        }
        // Only its head (every packet past it lost): no capture to keep.
        if packets <= 0 { unlink(open.path) }
        _ = fdatasync(fd)
        _ = flock(fd, LOCK_UN)
        close(fd)
        if rotated { hooks.closed() }
    }

    /// A write failed: the file being written is closed whole, the failure is counted (and said
    /// when writes were working), and no new file is tried before the backoff's delay.
    func fail(_ failure: DecryptedCaptureFailure) {
        noteFailure(failure)
        failuresInARow += 1
        let delay = RetryBackoff.delay(failures: failuresInARow, base: configuration.retryBaseMillis, cap: configuration.retryCapMillis)
        retryAtNanos = DispatchTime.now().uptimeNanoseconds + UInt64(delay) * 1_000_000
        closeFile(rotated: true)
        if health.record(succeeded: false) == .startedFailing {
            figures.failing = true
            hooks.health(.startedFailing, publish())
        }
    }

    /// Asks whether the capture may take room now, about to write `bytes` (`HistoryFirst`): when
    /// it may not, the file being written is closed whole (what comes is counted as not saved,
    /// as after a failed write) and that is said when writes were working; `heldFor` keeps the
    /// reason, so no file opens until a later ask finds room.
    func askHistoryFirst(bytes: Int64) {
        guard let signal = configuration.historyFirst else { return }
        guard case let .hold(hold) = signal.permission(writingIn: configuration.folder, bytes: bytes, held: heldFor != nil) else {
            heldFor = nil
            return
        }
        heldFor = hold
        figures.lastFailure = .heldForHistory(hold)
        closeFile(rotated: true)
        if health.recordHeld() == .startedFailing {
            figures.failing = true
            hooks.health(.startedFailing, publish())
        }
    }

    /// Counts a failed write and keeps its reason.
    func noteFailure(_ failure: DecryptedCaptureFailure) {
        figures.failedWrites &+= 1
        figures.lastFailure = failure
    }

    /// A write succeeded: after failures, recording resumes (said).
    func succeeded() {
        failuresInARow = 0
        retryAtNanos = nil
        if health.record(succeeded: true) == .resumed {
            figures.failing = false
            hooks.health(.resumed, publish())
        }
    }
}
