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
    var nextDue: Int64? { earliest.map { $0 + delayMicros } }

    /// The earliest request time among the held exchanges (nil: none held), kept as they come
    /// and go so that `nextDue` (asked at every turn of the writer's loop) reads no record.
    private var earliest: Int64?

    /// The events of `events` to write at `now` (µs since the epoch), in their order: open
    /// exchanges are taken out and held, an exchange's end drops what was held of it; then the
    /// held exchanges that are due (all of them with `releasingAll`), oldest request first, are
    /// appended (and no longer held).
    mutating func sift(_ events: [FlowEvent], now: Int64, releasingAll releaseAll: Bool = false) -> [FlowEvent] {
        var out: [FlowEvent] = []
        out.reserveCapacity(events.count)
        var releasedEarliest = false
        for event in events {
            switch event {
            case let .exchange(exchange):
                let key = Key(flow: exchange.flowID, sequence: exchange.sequence)
                if exchange.state == .open {
                    if held.count < limit || held[key] != nil {
                        if let before = held.updateValue(exchange, forKey: key), before.requestTime == earliest {
                            releasedEarliest = true
                        }
                        earliest = min(earliest ?? exchange.requestTime, exchange.requestTime)
                    } else {
                        out.append(event)
                    }
                } else {
                    if let before = held.removeValue(forKey: key), before.requestTime == earliest { releasedEarliest = true }
                    out.append(event)
                }
            default:
                out.append(event)
            }
        }
        if releasedEarliest { earliest = held.values.lazy.map(\.requestTime).min() }
        guard let earliest, releaseAll || earliest + delayMicros <= now else { return out }
        let due = held.values.filter { releaseAll || $0.requestTime + delayMicros <= now }
        for exchange in due { held[Key(flow: exchange.flowID, sequence: exchange.sequence)] = nil }
        self.earliest = held.values.lazy.map(\.requestTime).min()
        out += due.sorted { ($0.requestTime, $0.flowID, $0.sequence) < ($1.requestTime, $1.flowID, $1.sequence) }
            .map { .exchange($0) }
        return out
    }

}
