import Synchronization
import FlowTerms

/// The recorder of one flow: a `RecordingCut` (the turn rules, HTTP/2's body limit) behind a mutex (the two legs may be read on
/// different threads), handing kept bytes and turn ends to the session's `ContentWriter`.
///
/// Made by `ContentRecorder` (`recorder(flow:)`, or at a flow's first chunk through
/// `record(flow:_:at:_:)`). The contract for the caller:
/// - Check `isRecording` first (one relaxed atomic load); skip the call when false.
/// - `record` never blocks on disk or SQLite and never fails: when the recording queue is full
///   the chunk is dropped from the recording, counted, and its turn marked incomplete.
/// - `offset` is µs since the flow's first byte; `bytes` is the plaintext of one read, valid for
///   the duration of the call only (what is kept is copied).
/// - Call `finish()` exactly once when the connection closes, whatever `isRecording` says: it
///   ends the open turn and releases the recorder.
///
/// When content is switched off, the open turn ends at once (marked incomplete) and nothing more
/// is kept.
public final class FlowContentRecorder: FlowChunkRecorder {
    /// The flow's id (the `flows` row).
    public let flowID: Int64
    private let writer: ContentWriter
    private let session: ContentRecorder?
    private let active = Atomic<Bool>(true)
    private let state: Mutex<RecordingCut>

    init(flowID: Int64, budget: RecordingBudget, writer: ContentWriter, session: ContentRecorder?) {
        self.flowID = flowID
        self.writer = writer
        self.session = session
        state = Mutex(RecordingCut(budget: budget))
    }

    /// False once nothing more of this flow will be kept (content switched off, both sides cut,
    /// or finished).
    public var isRecording: Bool { active.load(ordering: .relaxed) }

    /// `record` for bytes held in an array.
    public func record(_ direction: Direction, at offset: Int64, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { record(direction, at: offset, $0) }
    }

    /// One read from one leg.
    public func record(_ direction: Direction, at offset: Int64, _ bytes: UnsafeRawBufferPointer) {
        guard active.load(ordering: .relaxed), bytes.count > 0 else { return }
        let done = state.withLock { cut -> Bool in
            // Checked again under the lock: a switch-off may have ended the flow meanwhile.
            guard active.load(ordering: .relaxed) else { return false }
            // One lock for both, and the kept bytes copied once, into the queue's batch.
            return cut.take(direction, at: offset, bytes) { ended, open, kept in
                writer.enqueue(flow: flowID, ended: ended, chunkOf: open, kept)
            }
        }
        if done { end(incomplete: false) }
    }

    /// `record` for the connection that holds this recorder (`FlowChunkRecorder`).
    /// - Returns: `isRecording` after the chunk.
    public func record(direction: Direction, offsetMicros: Int64, bytes: UnsafeRawBufferPointer) -> Bool {
        record(direction, at: offsetMicros, bytes)
        return isRecording
    }

    /// The connection closed: ends the open turn and forgets the flow.
    public func finish() {
        end(incomplete: false)
        session?.release(flowID)
    }

    /// Content was switched off: ends the open turn as incomplete (its figures stop short) and
    /// records nothing more.
    func stop() {
        end(incomplete: true)
    }

    private func end(incomplete: Bool) {
        let wasActive = state.withLock { cut -> Bool in
            let was = active.exchange(false, ordering: .relaxed)
            if incomplete { cut.turns.markIncomplete() }
            if let last = cut.turns.finish() {
                writer.enqueueTurnEnd(flow: flowID, turn: last)
            }
            return was
        }
        // The flow's turns are complete: written without waiting out the writer's linger.
        if wasActive { writer.expedite() }
    }
}
