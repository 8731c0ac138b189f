import FlowTerms

/// The flows whose latest state a failed transaction did not write, kept for the next attempt
/// (pure). Bounded: past `limit` flows, the oldest (first kept) are given up and handed back, so
/// a long outage costs a fixed amount of memory and the data path never waits.
struct UnwrittenFlows: Sendable {
    /// How many flows it keeps at most (at least 1).
    let limit: Int
    private var latest: [Int64: FlowRecord] = [:]
    private var order: [Int64] = []
    /// Programs a failed transaction did not set, by flow (bounded by `limit` too).
    private var programs: [Int64: FlowProgram] = [:]

    init(limit: Int) { self.limit = max(limit, 1) }

    /// Flows kept now.
    var count: Int { order.count }
    var isEmpty: Bool { order.isEmpty }

    /// Keeps the latest state of every flow in `events` (a later event for a flow replaces its
    /// earlier state and keeps its place).
    /// - Returns: the flows given up to stay within `limit`, oldest first.
    mutating func keep(_ events: [FlowEvent]) -> [FlowRecord] {
        for event in events {
            guard let flow = event.flow else {
                if case let .program(id, program) = event, programs.count < limit || programs[id] != nil { programs[id] = program }
                continue
            }
            if latest.updateValue(flow, forKey: flow.id) == nil { order.append(flow.id) }
        }
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
            programs = [:]
        }
        return order.map { .updated(latest[$0]!) } + programs.sorted { $0.key < $1.key }.map { .program(flowID: $0.key, $0.value) }
    }

    /// Gives up every flow kept (the writer is stopping). - Returns: them, oldest first.
    mutating func giveUpAll() -> [FlowRecord] {
        takeAll().compactMap(\.flow)
    }
}
