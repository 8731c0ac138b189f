import Foundation
import FlowStore
import Synchronization
import TVHome

/// The one writer of decrypted content: a background thread with its own SQLite connection and
/// the segment being written, fed through a bounded queue so forwarding never waits on disk.
///
/// - `enqueueChunk` / `enqueueTurnEnd` never block; a full queue drops the chunk and counts it
///   (`counters.chunksDropped`) — the caller marks its turn incomplete.
/// - Turns go to the segment whole when they end; rows are committed in batches.
/// - Retention: a sweep at start, every `sweepInterval` seconds, whenever `setExpiry` is called,
///   and on demand (`sweep()`); times come from the injected clock.
/// - `close()` writes what is queued, closes the segment (releasing its lock) and the connection.
public final class ContentWriter: Sendable {
    private let queue: ContentWriterThread.Queue

    /// Starts the writer thread: opens the database (migrations) and the folder, sweeps once.
    /// - Parameter onHealthChange: called on the writer thread when storing turns starts failing
    ///   (a full disk) and when it succeeds again, with the counters at that moment.
    /// - Throws: `FlowStoreError` / `TVHomeError` when the database or folder cannot be opened;
    ///   no thread is left running then. A failing first sweep is counted, not thrown.
    public init(_ configuration: ContentWriterConfiguration, clock: any ContentClock = SystemContentClock(),
                onHealthChange: (@Sendable (WriteHealth.Change, ContentCounters) -> Void)? = nil) throws {
        let policy = ContentBatchPolicy(bytes: configuration.queueBytes, chunks: configuration.queueChunks,
                                        ends: configuration.queueTurnEnds, lingerMillis: configuration.lingerMillis)
        // The writer lingers after a wake-up and after each write, so a burst (or a busy
        // session) costs one transaction and one segment write per linger.
        let queue = ContentWriterThread.Queue(batch: PendingContent(policy: policy), counters: ContentCounters(),
                                              lingerMillis: policy.lingerMillis, lingerAfterWrite: true)
        self.queue = queue
        try queue.startThread(named: "tv content writer") {
            let state = try ContentWriterThread(configuration: configuration, clock: clock, queue: queue,
                                                onHealthChange: onHealthChange)
            state.start()
            return state
        }
    }

    deinit { queue.stop() }

    /// Queues the kept bytes of a chunk of `turn` (its figures so far) of `flow`; never blocks.
    /// - Returns: false when the chunk was dropped (queue full or writer closed).
    public func enqueueChunk(flow: Int64, turn: Turn, bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { queue.enqueue(ContentOffer(flow: flow, ended: nil, chunkOf: turn, kept: $0)) }
    }

    /// Queues the end of `turn` of `flow` with its final figures; never blocks. A dropped end
    /// is counted (`counters.turnEndsDropped`); the turn is then written as incomplete later.
    public func enqueueTurnEnd(flow: Int64, turn: Turn) {
        _ = queue.enqueue(ContentOffer(flow: flow, ended: turn, chunkOf: nil, kept: UnsafeRawBufferPointer(start: nil, count: 0)))
    }

    /// What one chunk of `flow` produces, queued under one lock: the end of the turn its change
    /// of side ended (`ended`), then its kept bytes (`kept`, copied) for the open turn `turn`.
    /// Never blocks.
    /// - Returns: false when the chunk was dropped (queue full or writer closed).
    func enqueue(flow: Int64, ended: Turn?, chunkOf turn: Turn?, _ kept: UnsafeRawBufferPointer) -> Bool {
        queue.enqueue(ContentOffer(flow: flow, ended: ended, chunkOf: turn, kept: kept))
    }

    /// A flow ended: what is queued is written now rather than at the end of the linger.
    /// Never blocks.
    func expedite() { queue.expedite() }

    /// Blocks until everything queued before the call is written.
    public func flush() { queue.flush() }

    /// `flush()` bounded by `deadline`: true when everything queued before the call is written,
    /// false when the deadline came first.
    public func flush(waitingUntil deadline: DispatchTime) -> Bool { queue.flush(waitingUntil: deadline) }

    /// Sweeps now, on the writer thread, with the current expiry (the segment being written is
    /// spared).
    /// - Throws: `FlowStoreError`, `ContentError.cannotDelete`, `ContentWriterError.closed`.
    @discardableResult
    public func sweep() throws -> ContentSweepReport {
        try perform { try $0.sweep() }
    }

    /// Applies a new expiry and sweeps with it at once (a setting change).
    /// - Throws: as `sweep()`.
    @discardableResult
    public func setExpiry(_ expiry: ContentExpiry) throws -> ContentSweepReport {
        try perform { thread in
            thread.expiry = expiry
            return try thread.sweep()
        }
    }

    /// Deletes every index row and every segment file except the one being written, on the
    /// writer thread (so nothing it is about to index is lost).
    /// - Throws: as `sweep()`.
    @discardableResult
    public func deleteAll() throws -> ContentSweepReport {
        try perform { try $0.deleteAll() }
    }

    /// Deletes every row and every segment, the one being written included (closed first; the
    /// next turn opens a new one), on the writer thread between batches.
    /// - Throws: `ContentWriterError.closed`, `FlowStoreError`, `ContentError`.
    /// - Parameter keepingAuditEvidence: true (`tv storage delete-everything`) spares what
    ///   audit sessions hold; false (`tv content delete`) deletes it too.
    public func deleteEverything(keepingAuditEvidence: Bool = true) throws -> ContentSweepReport {
        try perform { try $0.deleteEverything(evidence: keepingAuditEvidence ? nil : AuditEvidence.none) }
    }

    /// The sequence of the segment being written (nil before the first turn is written, or
    /// after a sweep closed an old one).
    /// - Throws: `ContentWriterError.closed`.
    public func writingSegment() throws -> Int? {
        try perform { $0.writingSegment }
    }

    /// Counters since start (queued, dropped, written, lost, sweeps).
    public var counters: ContentCounters { queue.counters }

    /// Writes what is queued, stops the thread, closes its segment and connection. Idempotent.
    public func close() { queue.stop() }

    /// Test hook: the thread leaves queued events alone until `resumeForTesting()` (jobs such as
    /// sweeps still run).
    func pauseForTesting() { queue.pause() }

    /// Test hook: undoes `pauseForTesting()`.
    func resumeForTesting() { queue.resume() }

    private func perform<T: Sendable>(_ body: @escaping @Sendable (ContentWriterThread) throws -> T) throws -> T {
        let result = Mutex<Result<T, any Error>?>(nil)
        let ran = queue.perform { thread in
            let outcome = Result { try body(thread) }
            result.withLock { $0 = outcome }
        }
        guard ran, let outcome = result.withLock({ $0 }) else { throw ContentWriterError.closed }
        return try outcome.get()
    }
}

/// The content writer refused work.
public enum ContentWriterError: UserFacingError, Equatable {
    /// It was closed (the session is ending).
    case closed

    public var message: String {
        "The content writer has stopped because the session is ending; run the command again once no session is running, or after the next `tv run` starts."
    }
}
