import Synchronization

/// The recorder of one flow: a `TurnRecorder` behind a mutex (the two legs may be read on
/// different threads), handing kept bytes and turn ends to the session's `ContentWriter`.
///
/// Made by `ContentRecorder.recorder(flow:)`. `isRecording` is one atomic load. When the
/// recording queue is full, the chunk is dropped and its turn marked incomplete; when content is
/// switched off, the open turn ends at once (marked incomplete) and nothing more is kept.
public final class FlowContentRecorder: ChunkRecorder {
    /// The flow's id (the `flows` row).
    public let flowID: Int64
    private let writer: ContentWriter
    private let session: ContentRecorder?
    private let active = Atomic<Bool>(true)
    private let state: Mutex<TurnRecorder>

    init(flowID: Int64, budget: RecordingBudget, writer: ContentWriter, session: ContentRecorder?) {
        self.flowID = flowID
        self.writer = writer
        self.session = session
        state = Mutex(TurnRecorder(budget: budget))
    }

    public var isRecording: Bool { active.load(ordering: .relaxed) }

    public func record(_ direction: Direction, at offset: Int64, _ bytes: UnsafeRawBufferPointer) {
        guard active.load(ordering: .relaxed), bytes.count > 0 else { return }
        let done = state.withLock { recorder -> Bool in
            // Checked again under the lock: a switch-off may have ended the flow meanwhile.
            guard active.load(ordering: .relaxed) else { return false }
            let verdict = recorder.take(direction, at: offset, count: bytes.count)
            let open = verdict.keep > 0 ? recorder.openTurn : nil
            guard verdict.ended != nil || open != nil else { return recorder.isDone }
            // One lock for both, and the kept bytes copied once, into the queue's batch.
            let kept = UnsafeRawBufferPointer(rebasing: bytes[..<(open == nil ? 0 : verdict.keep)])
            if !writer.enqueue(flow: flowID, ended: verdict.ended, chunkOf: open, kept) {
                recorder.markIncomplete()
            }
            return recorder.isDone
        }
        if done { end(incomplete: false) }
    }

    public func finish() {
        end(incomplete: false)
    }

    /// Content was switched off: ends the open turn as incomplete (its figures stop short) and
    /// records nothing more.
    func stop() {
        end(incomplete: true)
    }

    private func end(incomplete: Bool) {
        let wasActive = state.withLock { recorder -> Bool in
            let was = active.exchange(false, ordering: .relaxed)
            if incomplete { recorder.markIncomplete() }
            if let last = recorder.finish() {
                writer.enqueueTurnEnd(flow: flowID, turn: last)
            }
            return was
        }
        // The flow's turns are complete: written without waiting out the writer's linger.
        if wasActive { writer.expedite() }
        if wasActive { session?.release(flowID) }
    }
}
