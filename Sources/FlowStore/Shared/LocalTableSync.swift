import Foundation

/// Copies what travels besides flows and request rows from this data folder's SQLite file to the
/// shared store, on the shared writer's thread (never the data path's): DNS/SNI host names and
/// the time they were seen (`host_names`), pinned hosts, and audit projects, sessions and
/// markers, each row tagged with the instance. These are written locally by their own owners
/// (`HostNames`, `PinnedHosts`, `AuditStore`), not as flow events, so the writer reads them back
/// at most once per `interval` (with each batch, and on its idle timer when no flow comes and
/// something was committed to the file, `changedLocally`; and when it stops): `host_names` from
/// the newest `last_seen` it
/// copied (an upsert: the local row is the truth), the small tables whole, replaced only when
/// they changed (a deletion, `tv audit delete` or an unpinned host, leaves the shared store too).
final class LocalTableSync {
    /// One copied table: its name and columns (the same in both schemas).
    struct Table: Equatable {
        let name: String
        let columns: [String]
    }

    /// The tables copied whole, oldest schema first.
    static let wholeTables: [Table] = [
        Table(name: "pinned_hosts", columns: ["host", "first_seen", "last_seen", "reason", "count"]),
        Table(name: "client_pins", columns: ["client_address", "client_hello", "host", "port", "kind", "first_seen", "last_seen", "reason", "count"]),
        Table(name: "audit_projects", columns: ["id", "name", "note", "created"]),
        Table(name: "audit_sessions", columns: ["id", "project_id", "note", "started", "ended", "settings", "recorder_pid", "recorder_start_ticks"]),
        Table(name: "audit_markers", columns: ["id", "session_id", "time", "text"]),
    ]
    /// The names table, copied from a `last_seen` on.
    static let names = Table(name: "host_names", columns: ["address", "name", "first_seen", "last_seen", "ttl"])

    /// How often a busy writer reads the local tables again (nanoseconds): 1 s.
    static let interval: UInt64 = 1_000_000_000

    private let path: String
    private let instance: InstanceIdentity
    /// The newest `host_names.last_seen` copied (copies from it again: an equal time may be new).
    private var namesFrom: Int64 = .min
    /// The whole tables' rows as last copied, by table name.
    private var copied: [String: [[SQLiteValue]]] = [:]
    /// When the last copy ran (uptime ns; 0: never).
    private var lastRun: UInt64 = 0
    /// The file's `PRAGMA data_version` at the last copy: unchanged, nothing was committed to
    /// the file since (by any other connection) and the idle timer has nothing to copy.
    private var copiedVersion: Int64?
    /// A read-only connection to the local file, kept between copies (nil until needed, or after
    /// a failure).
    private var local: SQLiteDatabase?

    /// A sync of the SQLite file at `path` for `instance`.
    init(path: String, instance: InstanceIdentity) {
        self.path = path
        self.instance = instance
    }

    /// Copies what changed when `interval` has passed since the last copy (or at once with
    /// `force`), inside the caller's transaction on `connection`. A local file that cannot be
    /// read skips this turn (the flows still travel).
    /// - Throws: `FlowStoreError` from the shared store (the caller's batch fails and is retried).
    func run(into connection: PGConnection, force: Bool = false) throws {
        let now = DispatchTime.now().uptimeNanoseconds
        guard force || lastRun == 0 || now - lastRun >= LocalTableSync.interval else { return }
        lastRun = now
        guard let local = reader() else { return }
        let version = LocalTableSync.dataVersion(local)
        for table in LocalTableSync.wholeTables {
            guard let rows = try? LocalTableSync.read(table, from: local), rows != copied[table.name] else { continue }
            try connection.query("DELETE FROM \(table.name) WHERE instance_id = ?", [.text(instance.id)])
            try insert(rows, into: table, on: connection, update: nil)
            copied[table.name] = rows
        }
        let table = LocalTableSync.names
        guard let rows = try? LocalTableSync.read(table, from: local, where: "last_seen >= ?", [.integer(namesFrom)]) else { return }
        try insert(rows, into: table, on: connection, update: "(instance_id, address, name)")
        for row in rows { if case let .integer(seen) = row[3] { namesFrom = max(namesFrom, seen) } }
        copiedVersion = version
    }

    /// When the idle timer's next copy may run: `interval` after the last (or from now when none
    /// ran yet: the first batch copies at once).
    var nextDue: DispatchTime {
        lastRun == 0 ? .now() + .nanoseconds(Int(LocalTableSync.interval)) : DispatchTime(uptimeNanoseconds: lastRun + LocalTableSync.interval)
    }

    /// True when something was committed to the local file since the last copy (or none ran,
    /// or the file cannot be asked); false also starts the next `interval`, so an idle writer
    /// asks at most once per `interval`.
    func changedLocally() -> Bool {
        guard let local = reader(), let version = LocalTableSync.dataVersion(local), version == copiedVersion else { return true }
        lastRun = DispatchTime.now().uptimeNanoseconds
        return false
    }

    /// The local audit session recording now (`audit_sessions` with no end; at most one), which
    /// a flow first written now belongs to, as SQLite's upsert decides (`FlowRecordColumns`);
    /// nil for none or when the file cannot be read.
    func liveAuditSession() -> LiveAuditSession? {
        guard let local = reader() else { return nil }
        do {
            let statement = try local.prepare(LiveAuditSession.selectSQL)
            var live: LiveAuditSession?
            try statement.forEachRow { live = LiveAuditSession(id: $0.int64(at: 0), startedMicros: $0.int64(at: 1)) }
            return live
        } catch {
            drop()
            return nil
        }
    }

    /// Forgets what was copied, so the next run copies everything again (a new connection may
    /// follow a failed batch whose copy was rolled back). The interval goes on (a failing
    /// server is not asked again at once).
    func reset() {
        namesFrom = .min
        copied = [:]
        copiedVersion = nil
    }

    /// Closes the local connection.
    func close() { drop() }

    private func reader() -> SQLiteDatabase? {
        if local == nil { local = try? SQLiteDatabase(readingAt: path, busyTimeout: 200) }
        return local
    }

    private func drop() {
        local?.close()
        local = nil
    }

    /// `PRAGMA data_version` of `database`: changes when another connection commits to the file.
    static func dataVersion(_ database: SQLiteDatabase) -> Int64? {
        guard let statement = try? database.prepare("PRAGMA data_version") else { return nil }
        var version: Int64?
        try? statement.forEachRow { version = $0.optionalInt64(at: 0) }
        return version
    }

    private func insert(_ rows: [[SQLiteValue]], into table: Table, on connection: PGConnection, update key: String?) throws {
        let columns = PostgresDialect.instanceColumns + table.columns
        let row = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let conflict = key.map { key in
            " ON CONFLICT \(key) DO UPDATE SET " + table.columns.map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
        } ?? ""
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(start + 500, rows.count)]
            try connection.query("INSERT INTO \(table.name) (\(columns.joined(separator: ", "))) VALUES "
                                 + Array(repeating: row, count: chunk.count).joined(separator: ", ") + conflict,
                                 chunk.flatMap { [SQLiteValue.text(instance.id), .text(instance.machine)] + $0 })
            start += chunk.count
        }
    }

    /// The rows of `table` in the local file (its columns in order, by its first column).
    static func read(_ table: Table, from database: SQLiteDatabase, where condition: String? = nil,
                     _ bindings: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        let statement = try database.prepare("SELECT \(table.columns.joined(separator: ", ")) FROM \(table.name)"
                                             + (condition.map { " WHERE " + $0 } ?? "") + " ORDER BY 1, 2")
        try statement.bind(bindings)
        var rows: [[SQLiteValue]] = []
        try statement.forEachRow { row in rows.append(table.columns.indices.map { row.value(at: Int32($0)) }) }
        return rows
    }
}
