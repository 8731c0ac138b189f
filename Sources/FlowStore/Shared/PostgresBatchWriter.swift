import Foundation
import FlowTerms

/// The shared store's side of the flow writer thread (`FlowBatchStore`): its own libpq
/// connection, made, used and closed on that thread. A batch is one transaction: multi-row
/// `INSERT … ON CONFLICT (instance_id, id) DO UPDATE` of each flow's latest record (at most
/// `PostgresDialect.rowsPerInsert` rows a statement), then the request rows (their paths without
/// the query, `SharedExchangeRows`), the programs, the local names, pinned hosts and audit rows
/// when due (`LocalTableSync`), and the instance's `last_seen`. Each connection first closes the
/// flows this instance left open when it was killed (`LeftOpenFlows`).
final class PostgresBatchWriter: FlowBatchStore {
    private let connection: PGConnection
    private let instance: InstanceIdentity
    /// Reads this data folder's names, pinned hosts and audit rows; nil: events only.
    private let tables: LocalTableSync?

    /// Connects, applies migrations, records the instance (`instances`) and closes the flows it
    /// left open when it was killed (`LeftOpenFlows`).
    /// - Throws: `FlowStoreError.sharedStoreUnreachable`, `.sharedStoreFailed`, `.newerSchema`.
    init(target: SharedStoreTarget, instance: InstanceIdentity, localPath: String? = nil) throws {
        self.instance = instance
        tables = localPath.map { LocalTableSync(path: $0, instance: instance) }
        connection = try PGConnection(target)
        do {
            try PostgresSchema.migrate(connection)
            let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
            try connection.query("""
                INSERT INTO instances (instance_id, machine, first_seen, last_seen) VALUES (?, ?, ?, ?)
                ON CONFLICT (instance_id) DO UPDATE SET machine = EXCLUDED.machine, last_seen = EXCLUDED.last_seen
                """, [.text(instance.id), .text(instance.machine), .integer(now), .integer(now)])
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
        let flows = batch.flows
        let exchanges = batch.exchanges.inOrder
        do {
            try connection.transaction {
                try upsert(flows, exchanges)
                for (id, program) in batch.programs {
                    try connection.query(PostgresDialect.programUpdateSQL,
                                         FlowProgramColumns.bindings(program) + [.text(instance.id), .integer(id)])
                }
                try tables?.run(into: connection)
                try connection.query("UPDATE instances SET last_seen = ? WHERE instance_id = ?",
                                     [.integer(Int64(Date().timeIntervalSince1970 * 1_000_000)), .text(instance.id)])
            }
        } catch {
            tables?.reset()
            throw error
        }
    }

    /// The flows' and request rows' multi-row upserts, at most 500 rows a statement.
    private func upsert(_ flows: [FlowRecord], _ exchanges: [ExchangeRecord]) throws {
        var start = 0
        while start < flows.count {
            let chunk = flows[start..<min(start + PostgresDialect.rowsPerInsert, flows.count)]
            try connection.query(PostgresDialect.upsertSQL(rows: chunk.count),
                                 chunk.flatMap { PostgresDialect.upsertBindings($0, instance: instance) })
            start += chunk.count
        }
        start = 0
        while start < exchanges.count {
            let chunk = exchanges[start..<min(start + SharedExchangeRows.rowsPerInsert, exchanges.count)]
            try connection.query(SharedExchangeRows.upsertSQL(rows: chunk.count),
                                 chunk.flatMap { SharedExchangeRows.bindings($0, instance: instance) })
            start += chunk.count
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
        connection.close()
    }
}

/// The shared store as the flow writer thread's backend: reconnects with backoff (0.2 s,
/// doubling, at most 5 s) while the server is away.
struct PostgresFlowBackend: FlowBatchBackend {
    let target: SharedStoreTarget
    let instance: InstanceIdentity
    /// This data folder's SQLite file (`PostgresBatchWriter.localPath`); nil: events only.
    var localPath: String?
    /// The first retry's delay and the longest (milliseconds).
    var retryBase = 200, retryCap = 5_000

    func open(closing: ClosingChoice) throws -> any FlowBatchStore {
        try PostgresBatchWriter(target: target, instance: instance, localPath: localPath)
    }

    /// Nothing can be read without the server: every id counts as missing.
    func countMissingWithoutStore(_ ids: [Int64]) -> Int { ids.count }

    func retryDelay(failures: Int) -> Int { RetryBackoff.delay(failures: failures, base: retryBase, cap: retryCap) }
}
