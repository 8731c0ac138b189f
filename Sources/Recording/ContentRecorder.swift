import Synchronization

/// Decrypted-content recording for one live session: the switch, the budget for new flows, and
/// the recorders of the flows being recorded.
///
/// - `recorder(flow:)` gives a flow its `FlowContentRecorder` when content is kept, else nil (a
///   flow is recorded only when the switch was on at its start).
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

    /// Whether new flows are recorded now.
    public var isKeeping: Bool { keeping.load(ordering: .relaxed) }

    /// The policy in force.
    public var policy: ContentPolicy { state.withLock { $0.policy } }

    /// Flows being recorded now.
    public var activeFlows: Int { state.withLock { $0.flows.count } }

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

    /// Applies `policy` to the live session.
    /// - Returns: the sweep a changed expiry ran, if any.
    /// - Throws: what `ContentWriter.setExpiry` throws (the switch and budget are applied first).
    @discardableResult
    public func apply(_ policy: ContentPolicy) throws -> ContentSweepReport? {
        let (stopping, expiryChanged) = state.withLock { state -> ([FlowContentRecorder], Bool) in
            let changed = state.policy.expiry != policy.expiry
            state.policy = policy
            keeping.store(policy.keep, ordering: .relaxed)
            return (policy.keep ? [] : Array(state.flows.values), changed)
        }
        stopping.forEach { $0.stop() }
        return expiryChanged ? try writer.setExpiry(policy.expiry) : nil
    }

    /// Session end: every flow still recording ends its open turn (as incomplete).
    public func stop() {
        keeping.store(false, ordering: .relaxed)
        let flows = state.withLock { state -> [FlowContentRecorder] in
            state.policy.keep = false
            return Array(state.flows.values)
        }
        flows.forEach { $0.stop() }
    }

    /// A flow finished or stopped.
    func release(_ id: Int64) {
        _ = state.withLock { $0.flows.removeValue(forKey: id) }
    }
}
