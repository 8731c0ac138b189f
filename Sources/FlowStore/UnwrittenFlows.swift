import FlowTerms

/// The flows whose latest state a failed transaction did not write, kept for the next attempt
/// (pure). Bounded: past `limit` flows, the oldest (first kept) are given up and handed back, so
/// a long outage costs a fixed amount of memory and the data path never waits.
struct UnwrittenFlows: Sendable {
    /// How many flows it keeps at most (at least 1).
    let limit: Int
    private var latest: [Int64: FlowRecord] = [:]
    private var order: [Int64] = []
    /// Exchanges' latest states kept beside the flows (at most `limit`; the oldest go first).
    private var exchanges = LatestExchanges()
    /// Exchanges given up since the set was made (past `limit`, or at `giveUpAll`).
    private(set) var exchangesGivenUp = 0

    init(limit: Int) { self.limit = max(limit, 1) }

    /// Flows kept now.
    var count: Int { order.count }
    var isEmpty: Bool { order.isEmpty && exchanges.isEmpty }

    /// Keeps the latest state of every flow in `events` (a later event for a flow replaces its
    /// earlier state and keeps its place).
    /// - Returns: the flows given up to stay within `limit`, oldest first.
    mutating func keep(_ events: [FlowEvent]) -> [FlowRecord] {
        for event in events {
            guard let flow = event.flow else {
                if case let .exchange(exchange) = event { exchanges.keep(exchange) }
                continue
            }
            if latest.updateValue(flow, forKey: flow.id) == nil { order.append(flow.id) }
        }
        exchangesGivenUp += exchanges.trim(to: limit)
        guard order.count > limit else { return [] }
        let excess = order.prefix(order.count - limit)
        order.removeFirst(excess.count)
        return excess.map { latest.removeValue(forKey: $0)! }
    }

    /// Hands back every flow kept, oldest first, as `.updated` events (the writer upserts by id,
    /// so the kind of event does not matter), and empties the set.
    mutating func takeAll() -> [FlowEvent] {
        defer {
            latest = [:]
            order = []
            exchanges = LatestExchanges()
        }
        return order.map { .updated(latest[$0]!) } + exchanges.inOrder.map { .exchange($0) }
    }

    /// Gives up every flow kept (the writer is stopping). - Returns: them, oldest first.
    mutating func giveUpAll() -> [FlowRecord] {
        exchangesGivenUp += exchanges.count
        return takeAll().compactMap(\.flow)
    }
}

/// The latest state of each exchange among some events, in the order exchanges first appear,
/// keyed by (flow, sequence) as the `exchanges` upsert is.
struct LatestExchanges: Sendable {
    private var latest: [ExchangeKey: ExchangeRecord] = [:]
    private var order: [ExchangeKey] = []

    private struct ExchangeKey: Hashable, Sendable {
        var flow: Int64
        var sequence: Int
    }

    var count: Int { order.count }
    var isEmpty: Bool { order.isEmpty }

    /// Keeps `exchange` as its exchange's latest state (its first place kept).
    mutating func keep(_ exchange: ExchangeRecord) {
        let key = ExchangeKey(flow: exchange.flowID, sequence: exchange.sequence)
        if latest.updateValue(exchange, forKey: key) == nil { order.append(key) }
    }

    /// Drops the oldest past `limit`. - Returns: how many were dropped.
    mutating func trim(to limit: Int) -> Int {
        guard order.count > limit else { return 0 }
        let excess = order.prefix(order.count - limit)
        for key in excess { latest[key] = nil }
        order.removeFirst(excess.count)
        return excess.count
    }

    /// The latest states, in first-appearance order.
    var inOrder: [ExchangeRecord] { order.map { latest[$0]! } }
}
