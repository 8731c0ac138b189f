import Dispatch
import FlowStore
import Foundation
import FlowTerms
import Synchronization

/// The capture: a bounded queue in front of one writer thread that appends pcapng blocks to
/// `$TV_HOME/captures/capture-NNNNNN.pcapng` and keeps the `captures`, `packets` and
/// `packet_counts` rows. The one `PacketRecorder` (the TUN engine's seam).
///
/// - `record` / `enqueue` never block: a full queue drops the packet and counts it
///   (`queueCounters.packetsDropped`, said by `tv status`).
/// - `appendSecrets` queues a Decryption Secrets Block: it lands in the file being written,
///   before every packet queued after it.
/// - `rotate` closes the file being written and opens the next (waits for the writer).
/// - `stop` writes what is queued, closes the file (fdatasync, row closed) and ends the thread.
public final class CaptureWriter: PacketRecorder {
    private let queue: BoundedWriterQueue<CaptureWriterThread>
    private let writerCounters: CaptureCountersBox
    private let capturing: Atomic<Bool>
    /// Bytes of each packet kept (the file's if_snaplen); 0: whole packets.
    public let snapLength: Int

    /// Opens the database (migrating it), closes what a dead writer left recording, opens the
    /// first file and starts the thread.
    /// - Throws: `FlowStoreError`, `TVHomeError.cannotCreate`, `CaptureError.cannotOpen`.
    public init(configuration: CaptureConfiguration) throws {
        let counters = CaptureCountersBox()
        writerCounters = counters
        snapLength = configuration.snapLength
        capturing = Atomic(true)
        let queue = BoundedWriterQueue<CaptureWriterThread>(
            batch: CaptureBatch(maximumItems: configuration.batchItems, maximumBytes: configuration.batchBytes),
            counters: CaptureQueueCounters(), lingerMillis: configuration.lingerMillis, lingerAfterWrite: false)
        self.queue = queue
        // The writer is made on its own thread: its SQLite connection is single-threaded.
        try queue.startThread(named: "tv capture writer") {
            try CaptureWriterThread(configuration: configuration, counters: counters)
        }
    }

    deinit { queue.stop() }

    // MARK: PacketRecorder

    public var isCapturing: Bool { capturing.load(ordering: .relaxed) }

    public func record(flow: UInt64, direction: Direction, timeMicros: Int64, packet: UnsafeRawBufferPointer) {
        _ = queue.enqueue(.packet(flow: flow, direction: direction, timeMicros: timeMicros, bytes: packet, snapLength: snapLength, comment: nil))
    }

    /// `record` with a comment on the packet's block (opt_comment, e.g. which flow a synthesized
    /// stream is); never blocks.
    /// - Returns: false when the queue was full (dropped and counted).
    @discardableResult
    public func record(flow: UInt64, direction: Direction, timeMicros: Int64, packet: UnsafeRawBufferPointer, comment: String) -> Bool {
        queue.enqueue(.packet(flow: flow, direction: direction, timeMicros: timeMicros, bytes: packet, snapLength: snapLength, comment: comment))
    }

    // MARK: the rest of the API

    /// Queues TLS secrets (SSLKEYLOGFILE lines, each ending in "\n") as a Decryption Secrets Block
    /// of the file being written; never blocks. The client randoms of its client-Finished lines
    /// are read here, on the caller's thread and outside the queue's lock, and travel with the
    /// block (`CaptureBatch.clientRandoms`).
    /// - Returns: false when the queue was full (dropped and counted in `secretsDropped`).
    @discardableResult
    public func appendSecrets(_ keyLogLines: [UInt8], type: UInt32 = PcapngBlocks.tlsKeyLogSecrets) -> Bool {
        let randoms = type == PcapngBlocks.tlsKeyLogSecrets
            ? keyLogLines.withUnsafeBytes { TLSClientRandom.clientFinishedSecrets(inKeyLog: $0) } : []
        return queue.enqueue(.secrets(type: type, bytes: keyLogLines, clientRandoms: randoms))
    }

    /// The connection whose ClientHello carried `random` will log no client secret (tv passes it
    /// through): its packets stop waiting for one (`CaptureHoldPolicy`).
    /// - Returns: false when the queue dropped the note (full, or stopping): the wait then ends
    ///   by its age.
    @discardableResult
    public func noSecretWillCome(_ random: TLSClientRandom) -> Bool {
        queue.enqueue(.noSecretWillCome(random))
    }

    /// Closes the file being written and opens the next; waits for the writer.
    /// - Returns: the sequence numbers of the file closed and of the one opened (nil: none).
    public func rotate() -> (closed: Int64?, opened: Int64?) {
        let result = Mutex<(Int64?, Int64?)>((nil, nil))
        queue.flush()
        _ = queue.perform { writer in
            let r = writer.rotate()
            result.withLock { $0 = (r.closed, r.opened) }
        }
        return result.withLock { $0 }
    }

    /// Waits until everything queued before the call is in the file, the held-back tail and the
    /// packets held for a secret (`CaptureHoldPolicy`, let go without it) too (tests, a reading
    /// command).
    public func flush() { _ = flush(waitingUntil: .distantFuture) }

    /// `flush` that waits no later than `deadline` (`LiveSessionFlush`): true when everything
    /// queued before the call, the held tail too, is in the file; false when the deadline passed
    /// first (the writer goes on) or the writer stopped (its file was closed whole).
    public func flush(waitingUntil deadline: DispatchTime) -> Bool {
        guard queue.flush(waitingUntil: deadline) else { return false }
        return queue.perform({
            $0.writeAllHeld()
            $0.writeTail()
        }, waitingUntil: deadline)
    }

    /// Pauses or resumes capturing new packets (the engine checks `isCapturing` first).
    public func setCapturing(_ on: Bool) { capturing.store(on, ordering: .relaxed) }

    /// Writes what is queued, closes the file and stops the thread. Safe to call twice.
    public func stop() {
        capturing.store(false, ordering: .relaxed)
        queue.stop()
    }

    /// The queue's counters (queued, dropped).
    public var queueCounters: CaptureQueueCounters { queue.read { counters, _, _ in counters } }
    /// The writer's counters (written, failed, the file being written).
    public var counters: CaptureWriterCounters { writerCounters.state.withLock { $0 } }
}
