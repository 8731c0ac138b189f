import Foundation
import FlowTerms
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The writer thread's own connection and upsert statement. It is created, used and closed on
/// that one thread only (the one-connection-per-thread rule), so it need not be `Sendable`.
final class FlowBatchWriter: FlowBatchStore {
    private let database: SQLiteDatabase
    private let upsert: SQLiteStatement
    /// The `exchanges` upsert (`ExchangeColumns.upsertSQL`).
    private let exchangeUpsert: SQLiteStatement
    /// The exchange row's texts, bound without a copy (its buffer reused row after row).
    private var exchangeTexts = SQLiteTextRow()
    /// `UPDATE flows SET program_* … WHERE id = ?` (`FlowEvent.program` for a flow whose record
    /// is not in the batch).
    private let setProgram: SQLiteStatement
    /// The upsert with the program's columns, for a flow whose record and program share a batch.
    private let upsertWithProgram: SQLiteStatement
    /// `BEGIN IMMEDIATE`, `COMMIT` and `ROLLBACK`, compiled once: a batch of a few rows spent as
    /// much compiling them each time (`SQLiteDatabase.transaction`) as writing a row.
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    private let rollback: SQLiteStatement
    /// Certificates inserted, or their `stored_at` refreshed (`FlowRecord.newCertificates`, i21-audit-chain).
    private let insertCertificate: SQLiteStatement
    /// The largest flow id in the file when it was opened (0 for none).
    let maxID: Int64
    /// This writer's row in `flow_writers`, stamped on every flow it writes, and its held lock.
    private let registration: FlowWriterRegistry.Registration
    /// What registering found: writers that had died and the flows they left open, now closed.
    let recovery: FlowWriterRegistry.Recovery
    private let closing: ClosingChoice

    /// Opens `path`, applies migrations, registers the writer (closing flows a dead writer left
    /// open), reads max(id).
    /// - Throws: `FlowStoreError` (`.corrupt`, `.newerSchema`, `.cannotOpen` …).
    init(path: String, closing: ClosingChoice = ClosingChoice()) throws {
        self.closing = closing
        // Born, used and closed on the writer thread (`FlowWriter`'s thread; `SQLiteFlowBackend`
        // opens it there too): no SQLite mutex on each bind and step (callgrind: ~4 k instructions
        // an exchange row, a sixth of its cost).
        database = try SQLiteDatabase(path: path, oneThread: true)
        try FlowSchema.migrate(database)
        (registration, recovery) = try FlowWriterRegistry(database: database)
            .register(pid: getpid(), now: Int64(Date().timeIntervalSince1970 * 1_000_000))
        if case let .integer(max) = try database.scalar("SELECT max(id) FROM flows") {
            maxID = max
        } else {
            maxID = 0
        }
        // The schema's CHECK (status IN (…)) lists are compiled into every upsert as two
        // ephemeral b-trees (lists of more than two values), built again for each row: ~0.2 M
        // instructions a row, about a third of the writer's cost per proxied connection
        // (callgrind). This connection writes only the raw values of `FlowStatus`, `HostOrigin`
        // and `FlowTransport`, which `FlowSchemaCheckTests` proves the CHECKs accept; the CHECKs
        // stay in the schema for every other connection (and the sqlite3 shell).
        try database.execute("PRAGMA ignore_check_constraints=ON")
        upsert = try database.prepare(FlowRecordColumns.upsertSQL)
        exchangeUpsert = try database.prepare(ExchangeColumns.upsertSQL)
        setProgram = try database.prepare(FlowRecordColumns.programUpdateSQL)
        upsertWithProgram = try database.prepare(FlowRecordColumns.upsertWithProgramSQL)
        begin = try database.prepare("BEGIN IMMEDIATE")
        commit = try database.prepare("COMMIT")
        rollback = try database.prepare("ROLLBACK")
        insertCertificate = try database.prepare("""
            INSERT INTO certificates (sha256, der, stored_at) VALUES (?, ?, ?)
            ON CONFLICT(sha256) DO UPDATE SET stored_at = excluded.stored_at
            """)
    }

    /// Writes `events` in one transaction. Several events for one flow collapse into its latest
    /// record, written once, in the order flows first appear; a flow's program (it arrives after
    /// its opening; the last one of the batch) is written with its record when both are in the
    /// batch, else set after the records.
    /// - Throws: `FlowStoreError`; nothing of the batch is written then.
    func write(_ events: [FlowEvent]) throws {
        let batch = CollapsedFlowBatch(events)
        try transaction {
            let storedAt = batch.certificates.isEmpty ? 0 : EngineClock.wallMicros()
            for (sha256, der) in batch.certificates {
                try insertCertificate.bind([.text(sha256), .blob(der), .integer(storedAt)])
                try insertCertificate.step()
                insertCertificate.reset()
            }
            let programs = batch.programs.isEmpty ? [:] : Dictionary(batch.programs, uniquingKeysWith: { _, last in last })
            for id in batch.order {
                let bindings = FlowRecordColumns.bindings(batch.latest[id]!, writer: registration.id)
                if let program = programs[id] {
                    try upsertWithProgram.bind(bindings + FlowRecordColumns.programBindings(program))
                    try upsertWithProgram.step()
                } else {
                    try upsert.bind(bindings)
                    try upsert.step()
                }
            }
            for exchange in batch.exchanges.inOrder {
                try ExchangeColumns.write(exchange, with: exchangeUpsert, texts: &exchangeTexts)
            }
            for (id, program) in batch.programs where batch.latest[id] == nil {
                try setProgram.bind(FlowRecordColumns.programBindings(program) + [.integer(id)])
                try setProgram.step()
            }
        }
        // Rewound, not cleared: each is bound afresh before its next step (clearing the flow
        // upsert's bindings after every batch cost as much as binding an exchange).
        upsert.rewind()
        upsertWithProgram.rewind()
        exchangeUpsert.rewind()
        setProgram.rewind()
    }

    /// `SQLiteDatabase.transaction` (`BEGIN IMMEDIATE … COMMIT`, rolled back when `body` or the
    /// commit throws) with the three statements compiled once.
    private func transaction(_ body: () throws -> Void) throws {
        begin.rewind()
        try begin.step()
        do {
            try body()
            commit.rewind()
            try commit.step()
        } catch {
            rollback.rewind()
            _ = try? rollback.step()
            throw error
        }
    }

    /// The largest flow id in the file at `path`, read read-only (0 for none): where ids go on
    /// when the writer cannot open its connection yet (a full disk).
    /// - Throws: `FlowStoreError` when the file cannot be read either.
    static func maxID(readingAt path: String) throws -> Int64 {
        let database = try SQLiteDatabase(readingAt: path)
        defer { database.close() }
        if case let .integer(max) = try database.scalar("SELECT max(id) FROM flows") { return max }
        return 0
    }

    /// An SQLite file is never lost: a failed write is retried on the same connection.
    var isLost: Bool { false }

    /// How many of `ids` have no row in the file (a read: it works on a full disk).
    func countMissing(_ ids: [Int64]) -> Int {
        FlowBatchWriter.countMissing(ids, in: database)
    }

    /// How many of `ids` have no row in `database`. When it cannot be read, every id counts as
    /// missing (nothing shows it was saved).
    static func countMissing(_ ids: [Int64], in database: SQLiteDatabase) -> Int {
        guard let statement = try? database.prepare("SELECT 1 FROM flows WHERE id = ?") else { return ids.count }
        var missing = 0
        for id in ids {
            defer { statement.reset() }
            guard (try? statement.bind([.integer(id)])) != nil, let found = try? statement.step() else {
                missing += 1
                continue
            }
            if !found { missing += 1 }
        }
        return missing
    }

    /// Ends the registration (with `closing` set, this writer's flows still open become
    /// interrupted; see `FlowWriterRegistry.unregister`) and closes the connection.
    func close() {
        _ = try? FlowWriterRegistry(database: database).unregister(
            registration, interruptingOpenFlows: closing.interruptOpenFlows.load(ordering: .relaxed),
            now: Int64(Date().timeIntervalSince1970 * 1_000_000))
        database.close()
    }
}

/// How a writer is being closed, shared between `FlowWriter.close` and the writer thread.
final class ClosingChoice: Sendable {
    /// See `FlowWriter.close(interruptingOpenFlows:)`.
    let interruptOpenFlows = Atomic<Bool>(false)
}
