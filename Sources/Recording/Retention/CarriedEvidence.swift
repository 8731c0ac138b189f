import Synchronization

/// The flows carried into audit sessions (opened before one, still active at its start: its
/// bundle holds them, `AuditStore.flowIDs(carriedInto:)`), as the history's retention pass last
/// found them, for the content writer's sweeps. Finding them reads every flow started before each
/// session (no index reaches the last activity), which the retention pass does every 10 minutes
/// and the writer's minute sweeps must not: they read only the tagged flows, and expired a
/// carried flow's content that its session's bundle counted (a trial). A session's carried flows
/// are known to the writer from the first retention pass after its start (at most 10 minutes).
/// Never blocks for long: one lock around a set swap or copy.
public final class CarriedEvidence: Sendable {
    private let flows = Mutex<Set<Int64>>([])

    public init() {}

    /// The retention pass's evidence: its flows (tagged and carried; the writer's own reading
    /// adds the tagged ones made since).
    public func update(_ evidence: AuditEvidence) {
        guard evidence != .unknown else { return }
        let ids = evidence.flows
        flows.withLock { $0 = ids }
    }

    /// The flows last published.
    public var current: Set<Int64> { flows.withLock { $0 } }
}

extension AuditEvidence {
    /// This evidence with `flows` added (a `.none` with some becomes `.known`; `.unknown` stays:
    /// nothing is deleted that could be evidence).
    public func adding(flows more: Set<Int64>) -> AuditEvidence {
        guard !more.isEmpty else { return self }
        switch self {
        case .none: return .known(captures: [], flows: more)
        case let .known(captures, flows): return .known(captures: captures, flows: flows.union(more))
        case .unknown: return .unknown
        }
    }
}
