import Synchronization

/// Where every flow id of a session comes from: the engine's connections (`ProxyConfiguration`),
/// the TUN's own flows and the flow writer all take them from this one counter, so a floor
/// raised on it (`raise(above:)`) holds for every one of them.
///
/// Ids are positive and increase; none is handed out twice in a process. (The engine counted on
/// its own from the writer's first id, so the shared store's floor, raised on the writer's
/// counter when the store came back, never reached the engine: a trial's flows took ids the store
/// already held for other flows and wrote over them.)
public final class FlowIDSequence: Sendable {
    private let nextID: Atomic<Int64>
    /// What `nextID` was last set to (at start, or by `raise`): equal to it, no id has been
    /// handed out since (`highestHandedOut`).
    private let lastFloor: Atomic<Int64>

    /// The first id of the sequence (as made; `raise` does not move it).
    public let first: Int64

    /// A sequence whose first id is `first` (≥ 1).
    public init(first: Int64) {
        self.first = first
        nextID = Atomic(first)
        lastFloor = Atomic(first)
    }

    /// A fresh id; never blocks (one atomic add).
    public func next() -> Int64 {
        nextID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// Makes every id handed out from now on larger than `id`.
    public func raise(above id: Int64) {
        var current = nextID.load(ordering: .relaxed)
        while current <= id {
            let (exchanged, original) = nextID.compareExchange(expected: current, desired: id + 1, ordering: .relaxed)
            if exchanged {
                lastFloor.store(id + 1, ordering: .relaxed)
                return
            }
            current = original
        }
    }

    /// The id `next()` hands out next (unless a `raise` comes first).
    public var upcoming: Int64 { nextID.load(ordering: .relaxed) }

    /// The largest id handed out since the start or the last `raise`; nil when none was (a
    /// `tv exec` that made no flow has only its id range's start, 2³² past the others: marked as
    /// the store's, it moved every later session's ids there).
    public var highestHandedOut: Int64? {
        let next = nextID.load(ordering: .relaxed)
        return next == lastFloor.load(ordering: .relaxed) ? nil : next - 1
    }
}
