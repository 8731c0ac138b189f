import Foundation
import FlowTerms

/// The shared store's side of the flow writer thread (`FlowBatchStore`): its own libpq
/// connection, made, used and closed on that thread. A batch is one transaction: the flows'
/// latest records and the request rows (their paths without the query, `SharedExchangeRows`)
/// sent as `insertion` says (`SharedBatchRows`: by default the flows and request rows it has no
/// row of yet by COPY straight into `flows` and `exchanges` (`SharedNewRows`), the rest by COPY
/// into staging tables, then one `INSERT … SELECT … ON CONFLICT … DO UPDATE` each), programs, the local names,
/// pinned hosts and audit rows when due (`LocalTableSync`), and the instance's `last_seen`.
/// A flow first written takes the local audit session recording then (`audit_session_id`).
/// While no flow comes, the local tables are copied on the writer's idle timer when they changed
/// (`sideWorkDue`). Each connection first closes the flows this instance left open when it was
/// killed (`LeftOpenFlows`).
final class PostgresBatchWriter: FlowBatchStore {
    private let connection: PGConnection
    private let instance: InstanceIdentity
    private let insertion: SharedInsertion
    /// Reads this data folder's names, pinned hosts, audit rows and live audit session; nil:
    /// events only.
    private let tables: LocalTableSync?
    /// Told the store's largest id at connection and each batch's before it is sent.
    private let idFloor: SharedIDFloor?
    /// The flows this connection wrote while open (`SharedNewFlows`): the rest of a batch's
    /// flows are copied straight into `flows`.
    private var newFlows = SharedNewFlows()
    /// The request rows this connection wrote while open (`SharedNewExchanges`).
    private var newExchanges = SharedNewExchanges()

    /// Connects, applies migrations, records the instance (`instances`), makes the staging
    /// tables (`SharedStaging`) and closes the flows it left open when it was killed
    /// (`LeftOpenFlows`).
    /// - Throws: `FlowStoreError.sharedStoreUnreachable`, `.sharedStoreFailed`, `.sharedStoreNewerSchema`.
    init(target: SharedStoreTarget, instance: InstanceIdentity, localPath: String? = nil, insertion: SharedInsertion = .copy,
         idFloor: SharedIDFloor? = nil) throws {
        self.instance = instance
        self.insertion = insertion
        self.idFloor = idFloor
        tables = localPath.map { LocalTableSync(path: $0, instance: instance) }
        connection = try PGConnection(target)
        do {
            try PostgresSchema.migrate(connection)
            let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
            try connection.query("""
                INSERT INTO instances (instance_id, machine, first_seen, last_seen) VALUES (?, ?, ?, ?)
                ON CONFLICT (instance_id) DO UPDATE SET machine = EXCLUDED.machine, last_seen = EXCLUDED.last_seen
                """, [.text(instance.id), .text(instance.machine), .integer(now), .integer(now)])
            if insertion == .copy { try connection.execute(SharedStaging.createSQL) }
            // The local ids go on past the store's (`SharedIDFloor`): an id it holds would be
            // overwritten by a new flow's.
            if let idFloor {
                let found = try connection.query("SELECT max(id) FROM flows WHERE instance_id = ?", [.text(instance.id)]).first?.first
                let highest: Int64
                if case let .integer(id)? = found { highest = id } else { highest = 0 }
                if highest > 0 { idFloor.saw(highest) }
                // What earlier sessions recorded here past it never reached the store: said.
                let firstSeen = try connection.query("SELECT first_seen FROM instances WHERE instance_id = ?", [.text(instance.id)]).first?.first
                if let localPath, case let .integer(since)? = firstSeen,
                   let unsent = UnsentLocalFlows.find(localPath: localPath, above: max(highest, (instance.firstFlow ?? 1) - 1),
                                                      below: idFloor.sessionFirstID ?? .max, since: since) {
                    idFloor.noteUnsent(unsent)
                }
            }
            if let localPath {
                try connection.transaction { _ = try LeftOpenFlows.close(on: connection, instance: instance, localPath: localPath) }
            }
        } catch {
            connection.close()
            throw error
        }
    }

    func write(_ events: [FlowEvent]) throws {
        let batch = CollapsedFlowBatch(events)
        var flows = batch.flows, programs = Dictionary(batch.programs, uniquingKeysWith: { _, last in last })
        var exchanges = batch.exchanges.inOrder
        // Flows found under ids the store holds for other flows stay here (`SharedIDClash`).
        if let clashing = idFloor?.clashingIDs, !clashing.isEmpty {
            flows.removeAll { clashing.contains($0.id) }
            programs = programs.filter { !clashing.contains($0.key) }
            exchanges.removeAll { clashing.contains($0.flowID) }
        }
        var rows = SharedBatchRows(flows: flows, programs: programs, exchanges: exchanges, instance: instance,
                                   auditSession: batch.flowCount == 0 ? nil : tables?.liveAuditSession())
        let known = newFlows, knownExchanges = newExchanges
        rows.isNew = { known.isNew($0) }
        rows.isNewExchange = { knownExchanges.isNew($0) }
        // Kept beside the database before the store can hold it (`SharedIDFloor.willWrite`).
        if let highest = batch.highestFlowID { idFloor?.willWrite(upTo: highest) }
        do {
            let clashing = try connection.transaction {
                let clashing = try rows.send(on: connection, as: insertion)
                try tables?.run(into: connection)
                try connection.query("UPDATE instances SET last_seen = ? WHERE instance_id = ?",
                                     [.integer(Int64(Date().timeIntervalSince1970 * 1_000_000)), .text(instance.id)])
                return clashing
            }
            if clashing.isEmpty {
                newFlows.committed(rows.flows)
                newExchanges.committed(rows.exchanges)
            } else {
                idFloor?.noteClashes(clashing)
                newFlows.committed(rows.flows.filter { !clashing.contains($0.id) })
                newExchanges.committed(rows.exchanges.filter { !clashing.contains($0.flowID) })
            }
        } catch {
            tables?.reset()
            throw error
        }
    }

    /// The next copy of the local tables, while no flow comes.
    var sideWorkDue: DispatchTime? { tables?.nextDue }

    /// Copies the local tables when something was committed to the local file since the last
    /// copy, in a transaction of its own.
    func doSideWork() throws {
        guard let tables, tables.changedLocally() else { return }
        do {
            try connection.transaction { try tables.run(into: connection) }
        } catch {
            tables.reset()
            throw error
        }
    }

    func countMissing(_ ids: [Int64]) -> Int {
        guard !ids.isEmpty else { return 0 }
        let list = "{" + ids.map(String.init).joined(separator: ",") + "}"
        guard let rows = try? connection.query("SELECT count(*) FROM flows WHERE instance_id = ? AND id = ANY(?::bigint[])",
                                               [.text(instance.id), .text(list)]),
              case let .integer(found) = rows.first?.first ?? .null
        else { return ids.count }
        return ids.count - Int(found)
    }

    var isLost: Bool { connection.isLost }

    /// Copies the local tables a last time (what changed since the last batch), then closes.
    func close() {
        if !connection.isLost, let tables {
            _ = try? connection.transaction { try tables.run(into: connection, force: true) }
        }
        tables?.close()
        connection.close()
    }
}

/// The shared store as the flow writer thread's backend: reconnects with backoff (0.2 s,
/// doubling, at most 5 s) while the server is away, and seldom (30 s, doubling, at most 5
/// minutes) after it refused tv's password: where a server counts failed logins (an LDAP or PAM
/// backend, fail2ban on its log), a try every 5 s would lock the account.
struct PostgresFlowBackend: FlowBatchBackend {
    let target: SharedStoreTarget
    let instance: InstanceIdentity
    /// This data folder's SQLite file (`PostgresBatchWriter.localPath`); nil: events only.
    var localPath: String?
    /// How batches are sent (`SharedInsertion`).
    var insertion: SharedInsertion = .copy
    /// Told the store's largest flow id for the instance at each connection.
    var idFloor: SharedIDFloor?
    /// The first retry's delay and the longest (milliseconds).
    var retryBase = 200, retryCap = 5_000
    /// The same after a refused login (`FlowStoreError.sharedStoreLoginRefused`).
    var loginRetryBase = 30_000, loginRetryCap = 300_000

    func open(closing: ClosingChoice) throws -> any FlowBatchStore {
        try PostgresBatchWriter(target: target, instance: instance, localPath: localPath, insertion: insertion, idFloor: idFloor)
    }

    /// Nothing can be read without the server: every id counts as missing.
    func countMissingWithoutStore(_ ids: [Int64]) -> Int { ids.count }

    func retryDelay(failures: Int, after failure: FlowStoreError?) -> Int {
        if case .sharedStoreLoginRefused? = failure {
            return RetryBackoff.delay(failures: failures, base: loginRetryBase, cap: loginRetryCap)
        }
        return RetryBackoff.delay(failures: failures, base: retryBase, cap: retryCap)
    }

    var opensWhenIdle: Bool { localPath != nil }

    /// Noted beside the database (`StoreUnsent`) for the next connection to say and a backfill
    /// to send.
    func gaveUp(_ ids: [Int64]) {
        guard let localPath else { return }
        StoreUnsent.add(ids, folder: (localPath as NSString).deletingLastPathComponent)
    }
}
