import FlowTerms

/// What the proxy tells the flow writer about a flow. Every event carries the whole record, and
/// the writer upserts it by id, so the latest event for a flow is what the row holds.
public enum FlowEvent: Sendable, Equatable {
    /// A new flow; its id came from `FlowWriter.open(_:)` or `FlowWriter.allocateID()`.
    case opened(FlowRecord)
    /// New facts or byte counts for an open flow.
    case updated(FlowRecord)
    /// The flow ended; `duration` and final byte counts are set.
    case closed(FlowRecord)
    /// An HTTP exchange of a flow started or changed (issue 16); upserted by (flow, sequence),
    /// so the latest event for an exchange is what its row holds. `id` is ignored (SQLite's).
    case exchange(ExchangeRecord)

    /// The flow record the event carries; nil for `.exchange`.
    public var flow: FlowRecord? {
        switch self {
        case let .opened(flow), let .updated(flow), let .closed(flow): return flow
        case .exchange: return nil
        }
    }
}
