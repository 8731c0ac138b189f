/// What the proxy tells the flow writer about a flow. Every event carries the whole record, and
/// the writer upserts it by id, so the latest event for a flow is what the row holds.
public enum FlowEvent: Sendable, Equatable {
    /// A new flow; its id came from `FlowWriter.open(_:)` or `FlowWriter.allocateID()`.
    case opened(FlowRecord)
    /// New facts or byte counts for an open flow.
    case updated(FlowRecord)
    /// The flow ended; `duration` and final byte counts are set.
    case closed(FlowRecord)

    /// The record the event carries.
    public var flow: FlowRecord {
        switch self {
        case let .opened(flow), let .updated(flow), let .closed(flow): return flow
        }
    }
}
