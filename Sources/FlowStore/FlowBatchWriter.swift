/// The writer thread's own connection and upsert statement. It is created, used and closed on
/// that one thread only (the one-connection-per-thread rule), so it need not be `Sendable`.
final class FlowBatchWriter {
    private let database: SQLiteDatabase
    private let upsert: SQLiteStatement
    /// The largest flow id in the file when it was opened (0 for none).
    let maxID: Int64

    /// Opens `path`, applies migrations, reads max(id).
    /// - Throws: `FlowStoreError` (`.corrupt`, `.newerSchema`, `.cannotOpen` …).
    init(path: String) throws {
        database = try SQLiteDatabase(path: path)
        try FlowSchema.migrate(database)
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
    }

    /// Writes `events` in one transaction. Several events for one flow collapse into its latest
    /// record, written once, in the order flows first appear.
    /// - Throws: `FlowStoreError`; nothing of the batch is written then.
    func write(_ events: [FlowEvent]) throws {
        var order: [Int64] = []
        var latest: [Int64: FlowRecord] = [:]
        order.reserveCapacity(events.count)
        latest.reserveCapacity(events.count)
        for event in events {
            let flow = event.flow
            if latest.updateValue(flow, forKey: flow.id) == nil {
                order.append(flow.id)
            }
        }
        try database.transaction {
            for id in order {
                try upsert.bind(FlowRecordColumns.bindings(latest[id]!))
                try upsert.step()
            }
        }
        upsert.reset()
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

    func close() {
        database.close()
    }
}
