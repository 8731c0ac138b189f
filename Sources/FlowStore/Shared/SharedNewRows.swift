import FlowTerms

/// Which rows of a batch the shared store has no row of yet, as one writer connection knows it
/// (pure), for flows (keyed by id) and request rows (by flow id and sequence): the rows it wrote
/// while they were open have rows; every other row is new, since tv's events give each flow its
/// records from `.opened` (or `.closed` at once) to `.closed` and none after, each request row
/// its states up to one that is not `open` (`OpenExchangeHold` writes most only then), and
/// neither key is ever reused by an instance. New rows are copied straight into their table
/// (`SharedStaging.copyNewFlowsSQL`, `copyNewExchangesSQL`), the others upserted.
///
/// A row taken for new that exists after all (written by an earlier connection of this
/// instance, or a batch retried after a COMMIT whose answer was lost) fails that COPY, which
/// is rolled back to its savepoint and upserted instead: a wrong answer costs time, never a row.
/// Bounded by the rows open at once.
struct SharedNewRows<Key: Hashable> {
    /// Rows written while open, whose end has not been written yet.
    private(set) var writtenOpen: Set<Key> = []

    /// Whether the store has no row of `key` as far as this connection knows.
    func isNew(_ key: Key) -> Bool { !writtenOpen.contains(key) }

    /// After a batch committed: its open rows now exist; its ended ones are done.
    mutating func committed(_ key: Key, open: Bool) {
        if open { writtenOpen.insert(key) } else { writtenOpen.remove(key) }
    }
}

/// The flows a writer connection wrote while open.
typealias SharedNewFlows = SharedNewRows<Int64>

extension SharedNewRows where Key == Int64 {
    /// After a batch committed: its open flows now have rows; its closed ones are done.
    mutating func committed(_ flows: [FlowRecord]) {
        for flow in flows { committed(flow.id, open: flow.duration == nil) }
    }
}

/// A request row's key in the shared store, after the instance: its flow and sequence.
struct SharedExchangeKey: Hashable {
    var flowID: Int64
    var sequence: Int

    init(_ exchange: ExchangeRecord) {
        flowID = exchange.flowID
        sequence = exchange.sequence
    }

    init(flowID: Int64, sequence: Int) {
        self.flowID = flowID
        self.sequence = sequence
    }
}

/// The request rows a writer connection wrote while open.
typealias SharedNewExchanges = SharedNewRows<SharedExchangeKey>

extension SharedNewRows where Key == SharedExchangeKey {
    /// After a batch committed: its open request rows now exist; the others are done.
    mutating func committed(_ exchanges: [ExchangeRecord]) {
        for exchange in exchanges { committed(SharedExchangeKey(exchange), open: exchange.state == .open) }
    }
}
