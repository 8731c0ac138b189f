import Dispatch
import FlowTerms

/// The seam between the flow writer thread (`FlowWriterThread`: its queue, retries, health and
/// counting) and the database it writes: SQLite's file (`FlowBatchWriter`) or the shared store
/// on PostgreSQL (`PostgresBatchWriter`). A store is made, used and closed on the writer thread.
protocol FlowBatchStore: AnyObject {
    /// Writes `events` in one transaction (several events of one flow collapse into its latest
    /// record, `CollapsedFlowBatch`).
    /// - Throws: `FlowStoreError`; nothing of the batch is written then.
    func write(_ events: [FlowEvent]) throws
    /// How many of `ids` have no row (every id counts when the store cannot be read).
    func countMissing(_ ids: [Int64]) -> Int
    /// True when the connection is gone and a new store must be opened before the next attempt.
    var isLost: Bool { get }
    /// Ends the writer's registration, if any, and closes the connection.
    func close()
    /// When work beside the batches is due although no event comes (the shared writer's copy of
    /// the local tables that changed, `PostgresBatchWriter`); nil: none.
    var sideWorkDue: DispatchTime? { get }
    /// Does that work now.
    /// - Throws: `FlowStoreError`; the connection may then be lost (`isLost`).
    func doSideWork() throws
    /// Copies the journal into the store and truncates it to nothing, where the store keeps one
    /// on the disk it fills (SQLite's write-ahead log), so that room freed on a full disk goes
    /// to rows (`FullDiskWrites`). What cannot be done now is left to a later call.
    /// - Returns: nil when it was emptied (or the store keeps none); why not otherwise
    ///   (`.diskFull`: the store's file cannot grow to take what the journal holds).
    @discardableResult
    func emptyJournal() -> FlowStoreError?
    /// The bytes free on the store's disk; nil when there is none to tell (a server).
    var freeBytes: Int64? { get }
}

extension FlowBatchStore {
    /// None (SQLite's writer has no work beside its batches).
    var sideWorkDue: DispatchTime? { nil }
    func doSideWork() throws {}
    /// Nothing (the shared store's server keeps its own journal).
    func emptyJournal() -> FlowStoreError? { nil }
    var freeBytes: Int64? { nil }
}

/// How the writer thread opens its store, and counts missing rows while it has none.
protocol FlowBatchBackend: Sendable {
    /// Opens a store (applying migrations). Called on the writer thread.
    /// - Throws: `FlowStoreError`.
    func open(closing: ClosingChoice) throws -> any FlowBatchStore
    /// `countMissing` without an open store (every id, when nothing can be read).
    func countMissingWithoutStore(_ ids: [Int64]) -> Int
    /// How long the writer waits before trying again after `failures` failed attempts in a row,
    /// the last of them failing as `failure` (milliseconds). While the store is not open, no
    /// batch tries to open it before then either (`FlowWriterThread`).
    func retryDelay(failures: Int, after failure: FlowStoreError?) -> Int
    /// Whether a store that could not be opened at start is opened again on the idle timer,
    /// with no flow to write: it has work of its own (the shared store's local tables, and the
    /// flows a killed session left open there, `LeftOpenFlows`). A quiet session whose server
    /// was down at start stayed "retrying" and left those open until a flow came (a trial).
    var opensWhenIdle: Bool { get }
    /// The writer gave up `ids` (their latest state will not be written by this writer).
    func gaveUp(_ ids: [Int64])
}

extension FlowBatchBackend {
    var opensWhenIdle: Bool { false }
    /// The local file needs no note: its writer's losses are counted and said.
    func gaveUp(_ ids: [Int64]) {}
}

/// The flow database file (SQLite): retried every second.
struct SQLiteFlowBackend: FlowBatchBackend {
    let path: String
    let retryMillis: Int
    /// Test hook: the writer's connection keeps the triggers (`FlowBatchWriter.init`'s
    /// `keepingTriggers`; `FlowStore.makeWriterKeepingTriggersForTesting`). False for every real writer.
    var keepsTriggers = false

    func open(closing: ClosingChoice) throws -> any FlowBatchStore {
        try FlowBatchWriter(path: path, closing: closing, keepingTriggers: keepsTriggers)
    }

    func countMissingWithoutStore(_ ids: [Int64]) -> Int {
        guard let reader = try? SQLiteDatabase(readingAt: path) else { return ids.count }
        defer { reader.close() }
        return FlowBatchWriter.countMissing(ids, in: reader)
    }

    func retryDelay(failures: Int, after failure: FlowStoreError?) -> Int { max(retryMillis, 1) }
}

/// How long to wait before the next attempt after `failures` failed attempts in a row: `base`
/// doubled for each failure after the first, at most `cap` (milliseconds; pure).
/// `RetryBackoff.delay(failures: 3, base: 200, cap: 5_000)` is 800. The flow writers' reconnects
/// and the decrypted capture's new file after a failed write take it.
public enum RetryBackoff {
    public static func delay(failures: Int, base: Int, cap: Int) -> Int {
        let base = max(base, 1)
        guard failures > 1 else { return min(base, max(cap, base)) }
        let shift = min(failures - 1, 20)
        return min(base << shift, max(cap, base))
    }
}

/// One batch of flow events collapsed for writing (pure): each flow's latest record once, in the
/// order flows first appear; exchanges' latest states; programs in arrival order (set after the
/// records, since a flow's program arrives after its opening).
///
/// The records are not copied: the batch keeps the events (each a reference, `FlowEvent` is
/// `indirect`) and, for each flow, where its latest record is among them. Copying each ~500-byte
/// record into a dictionary grown by doubling was 6 % of the writer's CPU
/// (`_NativeDictionary.copyOrMoveAndResize`, perf, i25-hist).
struct CollapsedFlowBatch {
    /// The events the batch was made of.
    private let events: [FlowEvent]
    /// For each flow, in first-appearance order, the index in `events` of its latest record.
    private var latestAt: [Int] = []
    /// Where each flow id's entry is in `latestAt`.
    private var slots: [Int64: Int] = [:]
    var exchanges = LatestExchanges()
    var programs: [(Int64, FlowProgram)] = []
    /// Every event's new certificates by SHA-256 (a collapsed event may be the one that carried
    /// them); the first DER offered for a fingerprint is kept, as `INSERT OR IGNORE` keeps the
    /// stored one.
    var certificates: [String: [UInt8]] = [:]

    /// The largest id of a flow the batch writes a row of; nil when it writes none.
    var highestFlowID: Int64? { slots.keys.max() }

    init(_ events: [FlowEvent]) {
        self.events = events
        // No capacity reserved up front: most batches of a busy session are exchanges, and a
        // dictionary sized for every event was allocated (and freed) for each batch.
        for (index, event) in events.enumerated() {
            switch event {
            case let .opened(flow), let .updated(flow), let .closed(flow):
                for certificate in flow.newCertificates where certificates[certificate.sha256] == nil {
                    certificates[certificate.sha256] = certificate.der
                }
                if let slot = slots[flow.id] {
                    latestAt[slot] = index
                } else {
                    slots[flow.id] = latestAt.count
                    latestAt.append(index)
                }
            case let .exchange(exchange):
                exchanges.keep(exchange)
            case let .program(id, program):
                programs.append((id, program))
            }
        }
    }

    /// How many distinct flows the batch has records of.
    var flowCount: Int { latestAt.count }

    /// Whether the batch has a record of flow `id`.
    func hasRecord(of id: Int64) -> Bool { slots[id] != nil }

    /// The flows' latest records in first-appearance order, each read from its event when asked.
    var latestFlows: LazyMapSequence<[Int], FlowRecord> {
        latestAt.lazy.map { [events] in events[$0].flow! }
    }

    /// The flows' latest records in first-appearance order.
    var flows: [FlowRecord] { Array(latestFlows) }
}
