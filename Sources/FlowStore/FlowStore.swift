import TVHome

/// The flow database (`$TV_HOME/tunnelvision.sqlite3`): flows, settings, pinned hosts and host
/// names, in one SQLite file in WAL mode.
///
/// Reads and the small tables go through one connection shared behind a mutex (`Sendable`, safe
/// from any thread); flow rows are written by a `FlowWriter`, which has its own connection and
/// thread. WAL lets the two work at once. This connection runs with `synchronous=FULL`, so a
/// setting or pinned host is on disk when its call returns.
public final class FlowStore: Sendable {
    /// The database file's path.
    public let path: String
    /// The `settings` table.
    public let settings: StoredSettings
    /// The `pinned_hosts` table (host-wide pins of an older tv).
    public let pinnedHosts: PinnedHosts
    /// The `client_pins` table: pinning memory per client, host and port.
    public let clientPins: ClientPins
    /// The `host_names` table.
    public let hostNames: HostNames

    let connection: SharedConnection

    /// Opens (creating with mode 0600) the database at `path` and applies missing migrations.
    /// - Throws: `FlowStoreError.cannotOpen` (folder missing or not ours), `.corrupt` (not an
    ///   SQLite file), `.newerSchema` (written by a newer tv), other cases for other failures.
    public init(path: String) throws {
        let database = try SQLiteDatabase(path: path)
        try database.execute("PRAGMA synchronous=FULL")
        try FlowSchema.migrate(database)
        self.path = path
        connection = SharedConnection(database)
        settings = StoredSettings(connection: connection)
        pinnedHosts = PinnedHosts(connection: connection)
        clientPins = ClientPins(connection: connection)
        hostNames = HostNames(connection: connection)
    }

    /// Opens the database at `path` for a command that only reads (lists flows, shows one): read-
    /// only when the file exists at the current schema, so it works on a full disk; otherwise as
    /// `init(path:)` does (a missing file is created, an older one migrated).
    /// - Throws: `FlowStoreError.newerSchema`, `.corrupt`, `.diskFull` …
    public init(readingAt path: String) throws {
        let database = try FlowSchema.openForReading(path)
        self.path = path
        connection = SharedConnection(database)
        settings = StoredSettings(connection: connection)
        pinnedHosts = PinnedHosts(connection: connection)
        clientPins = ClientPins(connection: connection)
        hostNames = HostNames(connection: connection)
    }

    /// Opens `home.databasePath` for a command that only reads (see `init(readingAt:)`); the
    /// data folder must exist.
    public convenience init(readingHome home: TVHome) throws {
        try self.init(readingAt: home.databasePath)
    }

    /// Opens `home.databasePath`, creating the data folder (0700) first.
    /// - Throws: `TVHomeError.cannotCreate`, or what `init(path:)` throws.
    public convenience init(home: TVHome) throws {
        try home.ensureExists()
        try self.init(path: home.databasePath)
    }

    /// Starts a writer for this file (its own connection and thread).
    /// - Throws: what `FlowWriter.init(path:capacity:retryLimit:onHealthChange:)` throws.
    /// - Parameter mirror: the shared store's writer, given a copy of every event (`tv run --store`).
    public func makeWriter(capacity: Int = FlowWriter.defaultCapacity, retryLimit: Int = FlowWriter.defaultRetryLimit,
                           mirror: FlowWriter? = nil,
                           onHealthChange: (@Sendable (WriteHealth.Change, FlowWriterCounters) -> Void)? = nil,
                           onGivingUp: (@Sendable (FlowWriterCounters) -> Void)? = nil) throws -> FlowWriter {
        try FlowWriter(path: path, capacity: capacity, retryLimit: retryLimit, mirror: mirror, onHealthChange: onHealthChange,
                       onGivingUp: onGivingUp)
    }

    /// Test hook: `makeWriter`, its connection keeping the triggers (a test's own trigger refuses
    /// or counts its writes; `SQLiteFlowBackend.keepsTriggers`).
    func makeWriterKeepingTriggersForTesting(retryLimit: Int = FlowWriter.defaultRetryLimit,
                                             onHealthChange: (@Sendable (WriteHealth.Change, FlowWriterCounters) -> Void)? = nil,
                                             onGivingUp: (@Sendable (FlowWriterCounters) -> Void)? = nil) throws -> FlowWriter {
        try FlowWriter(path: path, retryLimit: retryLimit, keepingTriggers: true, onHealthChange: onHealthChange, onGivingUp: onGivingUp)
    }

    /// One page of flows matching `query`, newest first (start time, then id, both descending).
    /// - Returns: at most `query.effectiveLimit` flows and the cursor of the next page (nil when
    ///   no row follows).
    /// - Throws: `FlowStoreError.badCursor` for a cursor tv did not give out, or a read failure.
    public func flows(_ query: FlowQuery) throws -> FlowPage {
        // A host text is read through the names that hold it, window by window (`FlowHostWindows`).
        if let host = query.host, FlowTextSearch.readsNames(host) { return try hostPage(query, text: host) }
        let plan = try query.plan()
        return try connection.withDatabase { database in
            let statement = try database.prepare(plan.sql)
            try statement.bind(plan.bindings)
            var rows = FlowPageRows()
            try rows.read(statement)
            return rows.page(limit: plan.limit)
        }
    }

    /// Why open flow `id` was left open by a writer that is gone (its session was killed or
    /// crashed, or stopped unable to write its end; the next session closes it as interrupted,
    /// `FlowWriterRegistry`): nil for a closed flow, one a live writer holds, or one written
    /// before writers were registered.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func leftOpen(flowID id: Int64) throws -> LeftOpenCause? {
        try leftOpen(among: [id])[id]
    }

    /// `leftOpen(flowID:)` for each of `ids` (a page of `tv flows`): one query, each writer's
    /// lock tried once; the flows left open by a gone writer, by id (the others are absent).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func leftOpen(among ids: [Int64]) throws -> [Int64: LeftOpenCause] {
        var writers: [(flow: Int64, writer: Int64)] = []
        // 500 ids a statement, as `requestsLeftOut` (SQLite's bound on variables was 999 before 3.32).
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = ids[start..<min(start + 500, ids.count)]
            try connection.withDatabase { database in
                let statement = try database.prepare("""
                    SELECT f.id, w.id FROM flows f JOIN flow_writers w ON w.id = f.writer
                    WHERE f.id IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ", "))) AND f.duration IS NULL AND w.ended IS NULL
                    """)
                try statement.bind(chunk.map { .integer($0) })
                while try statement.step() { writers.append((statement.int64(at: 0), statement.int64(at: 1))) }
            }
        }
        var causes: [Int64: LeftOpenCause?] = [:]
        var found: [Int64: LeftOpenCause] = [:]
        for (flow, writer) in writers {
            if causes[writer] == nil {
                causes[writer] = FlowWriterRegistry.isGone(lockPath: FlowWriterRegistry.lockPath(database: path, writer: writer))
                    ? FlowWriterRegistry.cause(database: path, writer: writer) : LeftOpenCause?.none
            }
            if let cause = causes[writer] ?? nil { found[flow] = cause }
        }
        return found
    }

    /// The flow with `id`, or nil when there is none.
    /// - Throws: `FlowStoreError` when the database cannot be read, `.damagedRow` when the row
    ///   holds a value no writer writes.
    public func flow(id: Int64) throws -> FlowRecord? {
        try connection.withDatabase { database in
            let statement = try database.prepare("SELECT \(FlowRecordColumns.selectList) FROM flows WHERE id = ?")
            try statement.bind([.integer(id)])
            guard try statement.step() else { return nil }
            do throws(DamagedRow) {
                return try FlowRecordColumns.record(from: statement)
            } catch {
                throw FlowStoreError.damagedRow(path: database.path, error)
            }
        }
    }

    /// How many flows match `query`'s filters (its `after` and `limit` are ignored).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func count(_ query: FlowQuery) throws -> Int {
        let plan = query.countPlan()
        return try connection.withDatabase { database in
            if case let .integer(count) = try database.scalar(plan.sql, plan.bindings) { return Int(count) }
            return 0
        }
    }

    /// Closes the shared connection; later calls throw `FlowStoreError.failed`. Writers made by
    /// `makeWriter` are closed separately.
    public func close() {
        connection.close()
    }

    /// Copies the write-ahead log into the database file and truncates it to nothing
    /// (`PRAGMA wal_checkpoint(TRUNCATE)`, sqlite.org/pragma.html), then closes: what a session
    /// does last, once its writers have closed. SQLite's own checkpoint when the last connection
    /// closes did not always happen: after a reading command had read the file, 2 to 6 clean stops
    /// in 8 left the WAL holding the session's last writes (~80 KB; strace: the last close never
    /// tried the exclusive lock it needs). On a disk that then filled, the next `tv run` could not
    /// index that WAL and refused to start (DiskFullRunTests, once in six clean-clone CI runs). Best
    /// effort: a file opened read-only, or a reader in another process, leaves the WAL as it is
    /// (a reader is waited for 200 ms at most, not the connection's 5 s: a stop must not hang on
    /// a `tv flows --follow` in another terminal).
    public func closeEmptyingWAL() {
        _ = try? connection.withDatabase { try $0.execute("PRAGMA busy_timeout = 200; PRAGMA wal_checkpoint(TRUNCATE)") }
        connection.close()
    }
}
