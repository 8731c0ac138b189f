import FlowTerms

/// The exchanges the flow writer holds back while they are open, so that most exchanges are
/// written once, when they end, instead of once when their request starts and again when they
/// end (issue 16's cost: a second upsert per request). Pure: events and the time in, the events
/// to write out.
///
/// An open exchange (`ExchangeState.open`) is held until the first of: its end arrives (the end
/// is written, the open state never is); it has been open `delayMicros` (its open row is written,
/// so a long request — a long poll, a slow download — shows in `tv requests` while it lasts);
/// a release (`FlowWriter.flush`, so a reading command sees every request in flight); the writer
/// stops. At most `limit` are held; an open exchange past it is written at once.
struct OpenExchangeHold: Sendable {
    /// How long after its request starts (µs) an open exchange's row is written anyway.
    let delayMicros: Int64
    /// How many open exchanges are held at most.
    let limit: Int
    private var held: [Key: ExchangeRecord] = [:]

    private struct Key: Hashable, Sendable {
        var flow: Int64
        var sequence: Int
    }

    /// One second; 4,096 exchanges.
    init(delayMicros: Int64 = 1_000_000, limit: Int = 4_096) {
        self.delayMicros = delayMicros
        self.limit = max(limit, 0)
    }

    /// Exchanges held now.
    var count: Int { held.count }

    /// When the oldest held exchange is due (µs since the epoch); nil when none is held.
    var nextDue: Int64? { held.values.lazy.map(\.requestTime).min().map { $0 + delayMicros } }

    /// The events of `events` to write at `now` (µs since the epoch), in their order: open
    /// exchanges are taken out and held, an exchange's end drops what was held of it; then the
    /// held exchanges that are due (all of them with `releasingAll`), oldest request first, are
    /// appended (and no longer held).
    mutating func sift(_ events: [FlowEvent], now: Int64, releasingAll releaseAll: Bool = false) -> [FlowEvent] {
        var out: [FlowEvent] = []
        out.reserveCapacity(events.count)
        for event in events {
            switch event {
            case let .exchange(exchange):
                let key = Key(flow: exchange.flowID, sequence: exchange.sequence)
                if exchange.state == .open {
                    if held[key] != nil || held.count < limit {
                        held[key] = exchange
                    } else {
                        out.append(event)
                    }
                } else {
                    held[key] = nil
                    out.append(event)
                }
            default:
                out.append(event)
            }
        }
        guard !held.isEmpty else { return out }
        let due = held.filter { releaseAll || $0.value.requestTime + delayMicros <= now }
        for key in due.keys { held[key] = nil }
        out += due.values.sorted { ($0.requestTime, $0.flowID, $0.sequence) < ($1.requestTime, $1.flowID, $1.sequence) }
            .map { .exchange($0) }
        return out
    }

}
