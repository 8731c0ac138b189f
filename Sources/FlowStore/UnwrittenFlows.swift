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
    /// Programs a failed transaction did not set, by flow (bounded by `limit` too).
    private var programs: [Int64: FlowProgram] = [:]
    /// The events, as first queued, the state kept now stands for (several events of one flow
    /// are one state here): what `takeAll`'s events count as when written
    /// (`FlowWriterCounters.writtenOnRetry`). Flows given up past `limit` are not taken off it.
    private(set) var representedEvents = 0

    init(limit: Int) { self.limit = max(limit, 1) }

    /// Flows kept now.
    var count: Int { order.count }
    var isEmpty: Bool { order.isEmpty && exchanges.isEmpty }

    /// Keeps the latest state of every flow in `events` (a later event for a flow replaces its
    /// earlier state and keeps its place).
    /// - Returns: the flows given up to stay within `limit`, oldest first.
    /// - Parameter represented: the events, as first queued, that `events` stand for
    ///   (`events.count` unless some are states taken back from here).
    mutating func keep(_ events: [FlowEvent], representing represented: Int? = nil) -> [FlowRecord] {
        representedEvents += represented ?? events.count
        for event in events {
            guard let flow = event.flow else {
                if case let .exchange(exchange) = event { exchanges.keep(exchange) }
                if case let .program(id, program) = event, programs.count < limit || programs[id] != nil { programs[id] = program }
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
    /// so the kind of event does not matter), then the programs kept, and empties the set.
    mutating func takeAll() -> [FlowEvent] {
        defer {
            latest = [:]
            order = []
            exchanges = LatestExchanges()
            programs = [:]
            representedEvents = 0
        }
        return order.map { .updated(latest[$0]!) } + exchanges.inOrder.map { .exchange($0) }
            + programs.sorted { $0.key < $1.key }.map { .program(flowID: $0.key, $0.value) }
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
    /// The exchanges in the order they first appeared, each at its latest state.
    private(set) var inOrder: [ExchangeRecord] = []
    /// Where each exchange is in `inOrder`.
    private var positions: [ExchangeKey: Int] = [:]

    private struct ExchangeKey: Hashable, Sendable {
        var flow: Int64
        var sequence: Int
    }

    var count: Int { inOrder.count }
    var isEmpty: Bool { inOrder.isEmpty }

    /// Keeps `exchange` as its latest state (an exchange seen before keeps its place).
    mutating func keep(_ exchange: ExchangeRecord) {
        let key = ExchangeKey(flow: exchange.flowID, sequence: exchange.sequence)
        if let position = positions[key] {
            inOrder[position] = exchange
        } else {
            positions[key] = inOrder.count
            inOrder.append(exchange)
        }
    }

    /// Gives up the oldest exchanges past `limit`. - Returns: how many were given up.
    mutating func trim(to limit: Int) -> Int {
        guard inOrder.count > limit else { return 0 }
        let excess = inOrder.count - limit
        inOrder.removeFirst(excess)
        positions.removeAll(keepingCapacity: true)
        for (position, exchange) in inOrder.enumerated() {
            positions[ExchangeKey(flow: exchange.flowID, sequence: exchange.sequence)] = position
        }
        return excess
    }
}
