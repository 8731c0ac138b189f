import Synchronization
import FlowTerms

/// Decrypted-content recording for one live session: the switch, the budget for new flows, and
/// the one map from a flow's id to its recorder.
///
/// - The proxy's seam: `record(flow:_:at:_:)` hands a chunk to the flow's recorder, making it
///   when content is kept and the flow has none yet; `flowEnded(flow:)` finishes it and forgets
///   the flow. A flow keeps its recorder until then, even once it stopped recording, so a flow
///   whose recording ended is not recorded again from the middle.
/// - `recorder(flow:)` gives a flow its `FlowContentRecorder` directly (the caller feeds it and
///   calls its `finish()`, which forgets the flow).
/// - `apply(_:)` takes a new policy (saved first by the caller, applied here): switching off
///   stops every flow at once; a new expiry sweeps at once; a new budget applies to new flows.
/// - `stop()` at session end finishes every flow still recording; then close the writer.
public final class ContentRecorder: Sendable {
    /// The writer the flows hand their bytes to.
    public let writer: ContentWriter
    private let keeping: Atomic<Bool>
    private let state: Mutex<(policy: ContentPolicy, flows: [Int64: FlowContentRecorder])>

    public init(writer: ContentWriter, policy: ContentPolicy) {
        self.writer = writer
        keeping = Atomic(policy.keep)
        state = Mutex((policy, [:]))
    }

    /// Whether new flows are recorded now (one relaxed atomic load: the proxy asks it before
    /// every chunk and copies nothing while it is false).
    public var isKeeping: Bool { keeping.load(ordering: .relaxed) }

    /// The policy in force.
    public var policy: ContentPolicy { state.withLock { $0.policy } }

    /// Flows being recorded now.
    public var activeFlows: Int { state.withLock { $0.flows.values.count { $0.isRecording } } }

    /// The writer's counters (queued, dropped, written, sweeps).
    public var counters: ContentCounters { writer.counters }

    /// A recorder for the flow `id`, or nil when content is not kept. The caller must call its
    /// `finish()` when the connection closes.
    public func recorder(flow id: Int64) -> FlowContentRecorder? {
        guard keeping.load(ordering: .relaxed) else { return nil }
        return state.withLock { state -> FlowContentRecorder? in
            guard state.policy.keep else { return nil }
            let recorder = FlowContentRecorder(flowID: id, budget: state.policy.budget, writer: writer, session: self)
            state.flows[id] = recorder
            return recorder
        }
    }

    /// One plaintext read of flow `id` (see `FlowContentRecorder.record`): handed to the flow's
    /// recorder, which is made now when the flow has none and content is kept (else the chunk is
    /// not recorded). One uncontended lock to find the recorder; never blocks on disk.
    /// - Returns: false once the flow's recorder records nothing more (both sides past the
    ///   budget, content switched off, or finished): the proxy stops handing this flow's chunks
    ///   (past the budget a chunk then costs the loop nothing instead of this lock and lookup).
    @discardableResult
    public func record(flow id: Int64, _ direction: Direction, at offset: Int64, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let recorder = existingOrNewRecorder(flow: id) else { return true }
        recorder.record(direction, at: offset, bytes)
        return recorder.isRecording
    }

    /// Flow `id`'s recorder: the one it has (even stopped), else a new one when content is kept,
    /// else nil. One lock and one hashed lookup.
    private func existingOrNewRecorder(flow id: Int64) -> FlowContentRecorder? {
        state.withLock { state -> FlowContentRecorder? in
            if let existing = state.flows[id] { return existing }
            guard state.policy.keep else { return nil }
            let made = FlowContentRecorder(flowID: id, budget: state.policy.budget, writer: writer, session: self)
            state.flows[id] = made
            return made
        }
    }

    /// The connection of flow `id` (the proxy's `FlowFacts.id`) closed: its recorder (if it has
    /// one) ends its open turn and the flow is forgotten. `ChunkRecorder`'s end of a flow.
    public func flowEnded(flow id: UInt64) {
        let recorder = state.withLock { $0.flows.removeValue(forKey: Int64(id)) }
        recorder?.finish()
    }

    /// Applies `policy` to the live session.
    /// - Returns: the sweep a changed expiry ran, if any.
    /// - Throws: what `ContentWriter.setExpiry` throws (the switch and budget are applied first).
    @discardableResult
    public func apply(_ policy: ContentPolicy) throws -> ContentSweepReport? {
        let (stopping, expiryChanged) = state.withLock { state -> ([FlowContentRecorder], Bool) in
            let changed = state.policy.expiry != policy.expiry
            state.policy = policy
            keeping.store(policy.keep, ordering: .relaxed)
            return (policy.keep ? [] : state.flows.values.filter(\.isRecording), changed)
        }
        stopping.forEach { $0.stop() }
        return expiryChanged ? try writer.setExpiry(policy.expiry) : nil
    }

    /// Session end: every flow still recording ends its open turn (as incomplete).
    public func stop() {
        keeping.store(false, ordering: .relaxed)
        let flows = state.withLock { state -> [FlowContentRecorder] in
            state.policy.keep = false
            return state.flows.values.filter(\.isRecording)
        }
        flows.forEach { $0.stop() }
    }

    /// Flow `id`'s recorder finished: the flow is forgotten.
    func release(_ id: Int64) {
        _ = state.withLock { $0.flows.removeValue(forKey: id) }
    }
}

/// The proxy's recorder seam is the session's `ContentRecorder` itself: its one map from flow id
/// to `FlowContentRecorder` serves the proxy's chunks.
extension ContentRecorder: ChunkRecorder {
    /// `isKeeping`, as the loop asks it before every chunk.
    public var isRecording: Bool { isKeeping }
    /// What it records is the flows' content.
    public var keepsContent: Bool { isKeeping }

    /// `record(flow:_:at:_:)` for the proxy's flow id (`FlowFacts.id`).
    @discardableResult
    public func record(flow: UInt64, direction: Direction, offsetMicros: Int64, bytes: UnsafeRawBufferPointer) -> Bool {
        record(flow: Int64(flow), direction, at: offsetMicros, bytes)
    }

    /// The flow's `FlowContentRecorder` (the one it has, even stopped, else a new one), or nil
    /// when content is not kept: the same recorder `record(flow:…)` would find for each chunk.
    public func flowRecorder(flow: UInt64) -> (any FlowChunkRecorder)? {
        existingOrNewRecorder(flow: Int64(flow))
    }
}
