import FlowTerms

/// The flows whose latest state a failed transaction did not write, kept for the next attempt
/// (pure). Bounded: past `limit` flows, the oldest (first kept) are given up and handed back, so
/// a long outage costs a fixed amount of memory and the data path never waits.
///
/// A flow's program travels with its flow: kept beside the flow's state, handed back right
/// after it, given up with it. Programs were kept in a map of their own, capped at `limit` and
/// never emptied of the flows given up: after 12,822 flows were given up in a trial, their
/// programs filled the map, and the newest flows' programs were refused, so 12,822 of the
/// 16,384 flows written once the disk had room were saved without their program.
///
/// What is kept is handed back whole (`take(upTo: .max)`) or in parts (`take(upTo:)`, oldest
/// first: flows with their programs, then exchanges, then programs of flows not kept here), and a
/// part whose write failed is put back as it was (`putBack`).
struct UnwrittenFlows: Sendable {
    /// How many flows it keeps at most (at least 1).
    let limit: Int
    /// Each flow's latest state, its program when one came, and the events it stands for.
    private var latest: [Int64: Kept] = [:]
    /// The flows kept, oldest first.
    private var order: [Int64] = []
    /// Exchanges' latest states kept beside the flows (at most `limit`; the oldest go first).
    private var exchanges = LatestExchanges()
    /// Programs of flows with no state kept here (their row was written before): at most
    /// `limit`, in `LonePrograms`' order (oldest first).
    private var lonePrograms = LonePrograms()
    /// Exchanges given up since the set was made (past `limit`, or at `giveUpAll`).
    private(set) var exchangesGivenUp = 0
    /// Programs of flows not kept here given up since the set was made (past `limit`, or at
    /// `giveUpAll`): rows that lack their program. A kept flow's program is given up with it
    /// (`keep`, `giveUpAll` hand it back beside the flow).
    private(set) var programsGivenUp = 0
    /// The events, as first queued, the state kept now stands for (several events of one flow
    /// are one state here): what the events handed back count as when written
    /// (`FlowWriterCounters.writtenOnRetry`). Flows given up past `limit` are taken off it.
    private(set) var representedEvents = 0

    /// A flow's state kept: its latest record, its program, and the events they stand for.
    struct Kept: Sendable, Equatable {
        var record: FlowRecord
        var program: FlowProgram?
        var events: Int
    }

    /// What `take(upTo:)` hands back: the events to write, and what to put back should their
    /// write fail.
    struct Part: Sendable, Equatable {
        fileprivate var flows: [Kept] = []
        fileprivate var exchanges: [ExchangeRecord] = []
        fileprivate var programs: [(Int64, FlowProgram)] = []
        /// The events, as first queued, the part stands for.
        var represented = 0

        /// Each flow as `.updated` (the writer upserts by id, so the kind does not matter) with
        /// its program after it, then the exchanges, then the other programs.
        var events: [FlowEvent] {
            var out: [FlowEvent] = []
            out.reserveCapacity(flows.count * 2 + exchanges.count + programs.count)
            for kept in flows {
                out.append(.updated(kept.record))
                if let program = kept.program { out.append(.program(flowID: kept.record.id, program)) }
            }
            out += exchanges.map { .exchange($0) }
            out += programs.map { .program(flowID: $0.0, $0.1) }
            return out
        }

        /// Flows, exchanges and programs of flows not among them: what `take(upTo:)` counts.
        var items: Int { flows.count + exchanges.count + programs.count }

        static func == (a: Part, b: Part) -> Bool {
            a.flows == b.flows && a.exchanges == b.exchanges && a.represented == b.represented
                && a.programs.map(\.0) == b.programs.map(\.0) && a.programs.map(\.1) == b.programs.map(\.1)
        }
    }

    init(limit: Int) { self.limit = max(limit, 1) }

    /// Flows kept now.
    var count: Int { order.count }
    var isEmpty: Bool { order.isEmpty && exchanges.isEmpty && lonePrograms.count == 0 }
    /// Flows, exchanges and programs of flows not kept: what `take(upTo:)` counts.
    var items: Int { order.count + exchanges.count + lonePrograms.count }

    /// Keeps the latest state of every flow in `events` (a later event for a flow replaces its
    /// earlier state and keeps its place).
    /// - Parameter represented: the events, as first queued, that `events` stand for (the
    ///   writer's open-exchange hold takes some out and puts earlier ones in); `events.count`
    ///   when nil. Each event counts as one for its flow; the difference goes with the part that
    ///   empties the set (`take(upTo:)`), so the parts add up to it.
    /// - Returns: the flows given up to stay within `limit` (each with its program), oldest first.
    mutating func keep(_ events: [FlowEvent], representing represented: Int? = nil) -> [Kept] {
        representedEvents += represented ?? events.count
        for event in events {
            switch event {
            case let .opened(flow), let .updated(flow), let .closed(flow):
                if var kept = latest[flow.id] {
                    kept.record = flow
                    kept.events += 1
                    latest[flow.id] = kept
                } else {
                    // A program that came before this state (its row was written) goes with it now.
                    let program = lonePrograms.remove(flow.id)
                    latest[flow.id] = Kept(record: flow, program: program, events: program == nil ? 1 : 2)
                    order.append(flow.id)
                }
            case let .exchange(exchange):
                exchanges.keep(exchange)
            case let .program(id, program):
                if var kept = latest[id] {
                    kept.program = program
                    kept.events += 1
                    latest[id] = kept
                } else {
                    lonePrograms.keep(program, of: id)
                }
            }
        }
        exchangesGivenUp += exchanges.trim(to: limit)
        programsGivenUp += lonePrograms.takeFirst(lonePrograms.count - limit).count
        guard order.count > limit else { return [] }
        let excess = order.prefix(order.count - limit)
        order.removeFirst(excess.count)
        return excess.map { id in
            let kept = latest.removeValue(forKey: id)!
            representedEvents -= kept.events
            return kept
        }
    }

    /// Takes the oldest `items` of what is kept: flows (each with its program) first, then
    /// exchanges, then programs of flows not kept here. Everything with `.max`.
    mutating func take(upTo items: Int) -> Part {
        var part = Part()
        var room = max(items, 0)
        let flows = min(room, order.count)
        if flows > 0 {
            part.flows = order.prefix(flows).map { latest.removeValue(forKey: $0)! }
            order.removeFirst(flows)
            room -= flows
        }
        part.exchanges = exchanges.takeFirst(room)
        room -= part.exchanges.count
        part.programs = lonePrograms.takeFirst(room)
        // Exchanges and programs stand for one event each; what several of their events were
        // collapsed into goes with the part that leaves the set empty.
        part.represented = isEmpty ? representedEvents
            : part.flows.reduce(0) { $0 + $1.events } + part.exchanges.count + part.programs.count
        representedEvents -= part.represented
        return part
    }

    /// Puts `part` back in front of what is kept (its write failed), as it was. Call it before
    /// keeping anything new.
    mutating func putBack(_ part: Part) {
        for kept in part.flows { latest[kept.record.id] = kept }
        order.insert(contentsOf: part.flows.map(\.record.id), at: 0)
        exchanges.putBack(part.exchanges)
        lonePrograms.putBack(part.programs)
        representedEvents += part.represented
    }

    /// Gives up every flow kept (the writer is stopping). - Returns: them (each with its
    /// program), oldest first.
    mutating func giveUpAll() -> [Kept] {
        let part = take(upTo: .max)
        exchangesGivenUp += part.exchanges.count
        programsGivenUp += part.programs.count
        return part.flows
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
        _ = takeFirst(excess)
        return excess
    }

    /// Takes the first `n` exchanges (all when fewer).
    mutating func takeFirst(_ n: Int) -> [ExchangeRecord] {
        let taken = Array(inOrder.prefix(max(n, 0)))
        guard !taken.isEmpty else { return [] }
        inOrder.removeFirst(taken.count)
        reindex()
        return taken
    }

    /// Puts `exchanges` (taken by `takeFirst`, none kept since) back in front.
    mutating func putBack(_ exchanges: [ExchangeRecord]) {
        guard !exchanges.isEmpty else { return }
        inOrder.insert(contentsOf: exchanges, at: 0)
        reindex()
    }

    private mutating func reindex() {
        positions.removeAll(keepingCapacity: true)
        for (position, exchange) in inOrder.enumerated() {
            positions[ExchangeKey(flow: exchange.flowID, sequence: exchange.sequence)] = position
        }
    }
}
