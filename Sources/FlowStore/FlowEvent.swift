import FlowTerms

/// What the proxy tells the flow writer about a flow. Every event carries the whole record, and
/// the writer upserts it by id, so the latest event for a flow is what the row holds.
///
/// `indirect`: each event's payload is boxed, so an event is one reference (8 bytes) and not a
/// ~500-byte `FlowRecord` inline. The queue's array, the open-exchange sift, the retry set and
/// the collapsed batch then move references, not records: with the records inline, the writer
/// spent 13 % of its CPU in `memmove` and 4.5 % in page faults (the queue's storage growing by
/// doubling to 65,536 × ~500 bytes and freed each batch; perf, `tv-bench flows --flows 200000`,
/// i25-hist). The box costs the producer one allocation per event, where it copied the record
/// into the queue's storage before.
public indirect enum FlowEvent: Sendable, Equatable {
    /// A new flow; its id came from `FlowWriter.open(_:)` or `FlowWriter.allocateID()`.
    case opened(FlowRecord)
    /// New facts or byte counts for an open flow.
    case updated(FlowRecord)
    /// The flow ended; `duration` and final byte counts are set.
    case closed(FlowRecord)
    /// An HTTP exchange of a flow started or changed (issue 16); upserted by (flow, sequence),
    /// so the latest event for an exchange is what its row holds. `id` is ignored (SQLite's).
    case exchange(ExchangeRecord)
    /// The program behind flow `flowID`, from the program lookup: sets only the `program_*`
    /// columns of a row already written (the record events never touch them).
    case program(flowID: Int64, FlowProgram)

    /// The flow record the event carries; nil for `.exchange` and `.program`.
    public var flow: FlowRecord? {
        switch self {
        case let .opened(flow), let .updated(flow), let .closed(flow): return flow
        case .exchange, .program: return nil
        }
    }
}
