import Foundation
import FlowTerms

/// The shared store's side of the flow writer thread (`FlowBatchStore`): its own libpq
/// connection, made, used and closed on that thread. A batch is one transaction: multi-row
/// `INSERT … ON CONFLICT (instance_id, id) DO UPDATE` of each flow's latest record (at most
/// `PostgresDialect.rowsPerInsert` rows a statement), then the programs, then the instance's
/// `last_seen`. Exchange rows stay local (their paths and queries are the user's).
final class PostgresBatchWriter: FlowBatchStore {
    private let connection: PGConnection
    private let instance: InstanceIdentity

    /// Connects, applies migrations and records the instance (`instances`).
    /// - Throws: `FlowStoreError.sharedStoreUnreachable`, `.sharedStoreFailed`, `.newerSchema`.
    init(target: SharedStoreTarget, instance: InstanceIdentity) throws {
        self.instance = instance
        connection = try PGConnection(target)
        do {
            try PostgresSchema.migrate(connection)
            let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
            try connection.query("""
                INSERT INTO instances (instance_id, machine, first_seen, last_seen) VALUES (?, ?, ?, ?)
                ON CONFLICT (instance_id) DO UPDATE SET machine = EXCLUDED.machine, last_seen = EXCLUDED.last_seen
                """, [.text(instance.id), .text(instance.machine), .integer(now), .integer(now)])
        } catch {
            connection.close()
            throw error
        }
    }

    func write(_ events: [FlowEvent]) throws {
        let batch = CollapsedFlowBatch(events)
        let flows = batch.flows
        guard !flows.isEmpty || !batch.programs.isEmpty else { return }
        try connection.transaction {
            var start = 0
            while start < flows.count {
                let chunk = flows[start..<min(start + PostgresDialect.rowsPerInsert, flows.count)]
                try connection.query(PostgresDialect.upsertSQL(rows: chunk.count),
                                     chunk.flatMap { PostgresDialect.upsertBindings($0, instance: instance) })
                start += chunk.count
            }
            for (id, program) in batch.programs {
                try connection.query(PostgresDialect.programUpdateSQL,
                                     FlowProgramColumns.bindings(program) + [.text(instance.id), .integer(id)])
            }
            try connection.query("UPDATE instances SET last_seen = ? WHERE instance_id = ?",
                                 [.integer(Int64(Date().timeIntervalSince1970 * 1_000_000)), .text(instance.id)])
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

    func close() { connection.close() }
}

/// The shared store as the flow writer thread's backend: reconnects with backoff (0.2 s,
/// doubling, at most 5 s) while the server is away.
struct PostgresFlowBackend: FlowBatchBackend {
    let target: SharedStoreTarget
    let instance: InstanceIdentity
    /// The first retry's delay and the longest (milliseconds).
    var retryBase = 200, retryCap = 5_000

    func open(closing: ClosingChoice) throws -> any FlowBatchStore {
        try PostgresBatchWriter(target: target, instance: instance)
    }

    /// Nothing can be read without the server: every id counts as missing.
    func countMissingWithoutStore(_ ids: [Int64]) -> Int { ids.count }

    func retryDelay(failures: Int) -> Int { RetryBackoff.delay(failures: failures, base: retryBase, cap: retryCap) }
}
