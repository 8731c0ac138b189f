import Synchronization

/// The largest flow id the shared store holds for this instance, as each connection of the
/// shared writer finds it (`PostgresBatchWriter`), and the local writer that must go on past it
/// (`FlowWriter.raiseIDFloor`). The local database is where ids come from (`FlowIDFloor`), and
/// it can fall behind the store: a backup restored over it in place (same file, so the instance
/// keeps its id: `InstanceBinding` sees no change), or flows the shared writer sent that the
/// local writer never wrote (its file locked, a full disk) before a kill. A new flow under an id
/// the store already has replaces that row: a trial's restored folder overwrote the shared rows
/// of the flows it had lost, one by one. Found at the session's first connection (before any
/// flow is made, when the store answers at start) and again at each reconnection.
///
/// The largest id the store may hold is also kept outside the database (`persist`,
/// `StoreHighestMark`) before each batch that goes past it is sent (`willWrite`): a kill
/// loses the local writer's waiting flows while the store has them, and a next start with the
/// store down then took their ids again (a trial: five shared rows written over). When the
/// mark is put back from an older copy with the database, the flows made before the store
/// answers can still take ids it holds: those are found at their first write and kept out of
/// the store (`SharedIDClash`, `noteClashes`), its rows untouched.
public final class SharedIDFloor: Sendable {
    private let highest = Atomic<Int64>(0)
    /// The largest id handed to `persist` (or known from it at start).
    private let persisted = Atomic<Int64>(0)
    private let writer = Mutex<FlowWriter?>(nil)
    /// Told each larger id the store holds or is about to (`StoreHighestMark.raise`).
    private let persist: (@Sendable (Int64) -> Void)?
    /// Told what earlier sessions recorded that the store never got (`UnsentLocalFlows`), at
    /// each connection that finds some.
    private let unsent: (@Sendable (UnsentLocalFlows) -> Void)?
    /// Flows of this session the store holds other flows under (`SharedIDClash`): never sent.
    private let clashes = Mutex<Set<Int64>>([])
    /// Told how many flows a batch found clashing, and how many so far.
    private let clashed: (@Sendable (_ new: Int, _ total: Int) -> Void)?

    /// - Parameters:
    ///   - known: the mark kept from earlier sessions (`StoreHighestMark.read`), so a session
    ///     whose store does not answer at start still goes on past it.
    ///   - persist: keeps each larger id a connection finds.
    ///   - unsent: says the flows of earlier sessions the store never got.
    ///   - clashed: says the flows a batch found whose ids the store holds for other flows.
    public init(known: Int64? = nil, persist: (@Sendable (Int64) -> Void)? = nil,
                unsent: (@Sendable (UnsentLocalFlows) -> Void)? = nil,
                clashed: (@Sendable (_ new: Int, _ total: Int) -> Void)? = nil) {
        self.persist = persist
        self.unsent = unsent
        self.clashed = clashed
        if let known {
            highest.store(known, ordering: .relaxed)
            persisted.store(known, ordering: .relaxed)
        }
    }

    /// The largest id the store holds for the instance, as one connection found it.
    func saw(_ id: Int64) {
        var current = highest.load(ordering: .relaxed)
        var raised = false
        while id > current {
            let (exchanged, original) = highest.compareExchange(expected: current, desired: id, ordering: .relaxed)
            if exchanged { raised = true; break }
            current = original
        }
        if raised { keep(id) }
        writer.withLock { $0?.raiseIDFloor(above: id) }
    }

    /// A batch with flows up to `id` is about to be sent: the mark is raised to it first (one
    /// small file written per batch that goes past it, on the shared writer's thread).
    func willWrite(upTo id: Int64) {
        if id > persisted.load(ordering: .relaxed) { keep(id) }
    }

    private func keep(_ id: Int64) {
        guard id > persisted.load(ordering: .relaxed) else { return }
        persisted.store(id, ordering: .relaxed)
        persist?(id)
    }

    /// The local writer whose ids go on past what the store holds: raised now to what was seen
    /// so far, and at each later connection.
    public func attach(_ local: FlowWriter) {
        writer.withLock { writer in
            writer = local
            local.raiseIDFloor(above: highest.load(ordering: .relaxed))
        }
    }

    /// The first id of this session's flows, once its local writer is attached (`FlowIDSequence.first`).
    var sessionFirstID: Int64? { writer.withLock { $0?.ids.first } }

    func noteUnsent(_ flows: UnsentLocalFlows) { unsent?(flows) }

    /// Flows a batch found under ids the store holds for other flows: kept out of every later
    /// batch (`clashingIDs`), and said.
    func noteClashes(_ ids: Set<Int64>) {
        let (new, total) = clashes.withLock { known -> (Int, Int) in
            let before = known.count
            known.formUnion(ids)
            return (known.count - before, known.count)
        }
        if new > 0 { clashed?(new, total) }
    }

    /// The flows found so far whose ids the store holds for other flows (empty: none, the rule).
    public var clashingIDs: Set<Int64> { clashes.withLock { $0 } }

    /// How many flows of this session stay out of the store because their ids were taken there.
    public var clashCount: Int { clashes.withLock { $0.count } }

    /// The largest id seen so far (0: none).
    public var value: Int64 { highest.load(ordering: .relaxed) }
}
