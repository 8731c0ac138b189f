import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TVHome

/// A thin wrapper over one SQLite connection (`sqlite3*`).
///
/// Threading rule: a connection belongs to one thread at a time. It is deliberately not
/// `Sendable`; an owner that is shared between threads keeps it inside a `Mutex` (`FlowStore`),
/// and the flow writer keeps its own connection on its own thread. The handle is also opened with
/// `SQLITE_OPEN_FULLMUTEX` (unless `oneThread`), so even a mistake cannot corrupt SQLite's own state, but statements and
/// transactions are only coherent when one thread drives them.
///
/// Every connection runs with `PRAGMA journal_mode=WAL` (readers never block the writer),
/// `PRAGMA synchronous=NORMAL`, foreign keys on, and a busy timeout. A database file that does
/// not exist is created with mode 0600 before SQLite opens it, so it is never readable by others,
/// not even for a moment; SQLite gives the `-wal` and `-shm` files the same mode.
public final class SQLiteDatabase {
    /// The file path as given.
    public let path: String
    private var handle: OpaquePointer?
    /// How long (milliseconds) a statement waits for another connection's lock.
    private(set) var busyTimeoutMillis: Int32 = 5_000

    /// Opens (creating if missing, mode 0600) the database at `path`.
    /// - Parameters:
    ///   - path: the database file; its folder must exist.
    ///   - busyTimeout: how long (milliseconds) a statement waits for another connection's lock.
    ///   - oneThread: true for a connection that only ever one thread creates, uses and closes
    ///     (a writer thread's own): it is opened `SQLITE_OPEN_NOMUTEX`, so SQLite skips taking the
    ///     connection's mutex on every call (bind, step, reset). Everything else keeps
    ///     `SQLITE_OPEN_FULLMUTEX`.
    /// - Throws: `FlowStoreError.cannotOpen` when the file cannot be created or opened,
    ///   `.corrupt` when it is not an SQLite database, `.walWithoutDatabase` when the file is
    ///   missing and a write-ahead log waits beside it (a new file would discard the log's
    ///   flows: a trial moved a killed session's database aside, and the next `tv flows` made a
    ///   new one and the log's last 100 flows were gone), other cases for other SQLite failures.
    public init(path: String, busyTimeout milliseconds: Int32 = 5_000, oneThread: Bool = false) throws {
        self.path = path
        _ = SQLiteDatabase.configureLibrary
        if access(path, F_OK) != 0 && !SQLiteDatabase.walIsEmpty(path) { throw FlowStoreError.walWithoutDatabase(path: path) }
        try SQLiteDatabase.createPrivateFile(path)
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | (oneThread ? SQLITE_OPEN_NOMUTEX : SQLITE_OPEN_FULLMUTEX)
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let failure = SQLiteDatabase.openFailure(db, rc, path: path)
            sqlite3_close_v2(db)
            throw failure
        }
        handle = db
        busyTimeoutMillis = milliseconds
        sqlite3_extended_result_codes(db, 1)
        SQLiteBusyWait.install(on: db, timeoutMilliseconds: milliseconds)
        // The first statements read page 1, so a file of random bytes fails here (SQLITE_NOTADB).
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=NORMAL")
        try execute("PRAGMA foreign_keys=ON")
    }

    /// Opens the database at `path` read-only, for a command that only reads: nothing is created
    /// or migrated, and it works on a full disk. When the WAL's shared-memory index cannot be
    /// made there (no room for the `-shm` file), WAL content that waits (after a crash, or a stop
    /// that could not checkpoint) is first folded into the file (`foldWaitingWAL`: the content is
    /// unchanged), and the file is then opened as immutable (no locks, no `-shm`).
    /// - Throws: `FlowStoreError.cannotOpen` (no such file, unreadable), `.corrupt`,
    ///   `.diskFull` (full, and WAL content waits that could not be folded: the file itself
    ///   must grow for it, or another connection holds the database).
    public init(readingAt path: String, busyTimeout milliseconds: Int32 = 5_000) throws {
        self.path = path
        do {
            handle = try SQLiteDatabase.connect(path, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX, busyTimeout: milliseconds)
            // The first read opens the WAL and maps its index (or fails, on a full disk).
            _ = try scalar("SELECT count(*) FROM sqlite_master")
        } catch FlowStoreError.diskFull(let full) {
            close()
            guard SQLiteDatabase.walIsEmpty(path) || SQLiteDatabase.foldWaitingWAL(path, busyTimeout: milliseconds) else {
                throw FlowStoreError.diskFull(path: full)
            }
            handle = try SQLiteDatabase.connect(SQLiteDatabase.immutableURI(path),
                                             flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_URI,
                                             busyTimeout: milliseconds, path: path)
            _ = try scalar("SELECT count(*) FROM sqlite_master")
        }
    }

    /// Whether `path`'s WAL is missing or empty (nothing waits to be folded into the file).
    static func walIsEmpty(_ path: String) -> Bool {
        var st = stat()
        return stat(path + "-wal", &st) != 0 || st.st_size == 0
    }

    /// Folds the WAL content waiting beside `path` into the database file and empties the WAL,
    /// where the WAL's shared-memory index (`-shm`) cannot be made, as on a full disk (SQLite
    /// shortens the `-shm` file to 3 bytes when its first connection opens, then grows it back
    /// to 32 KiB per 4,096 WAL frames). The connection sets `PRAGMA locking_mode=EXCLUSIVE`
    /// before its first read, so SQLite keeps the index in the process's own memory and never
    /// maps `-shm` ("Use of WAL Without Shared-Memory", https://sqlite.org/wal.html), then runs
    /// `PRAGMA wal_checkpoint(TRUNCATE)`; closing it deletes the WAL. The data is unchanged:
    /// the same pages, moved from the WAL into the file. Holds the database's exclusive lock
    /// meanwhile (another connection's lock is waited for `busyTimeout` ms, then the fold gives
    /// up). On a full disk this works when the file need not grow (the WAL's pages replace
    /// pages it has); measured with a WAL of 107 KB (a killed session's 3 flows) on a full
    /// 2 MiB tmpfs, after which the freed WAL left room for the next session to record.
    /// - Returns: whether the WAL is missing or empty afterwards.
    static func foldWaitingWAL(_ path: String, busyTimeout milliseconds: Int32) -> Bool {
        guard let db = try? connect(path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, busyTimeout: milliseconds) else {
            return false
        }
        if sqlite3_exec(db, "PRAGMA locking_mode=EXCLUSIVE", nil, nil, nil) == SQLITE_OK {
            _ = sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nil, nil, nil)
        }
        sqlite3_close_v2(db)
        return walIsEmpty(path)
    }

    /// The process-wide settings of the SQLite library, applied once before the first connection
    /// opens (`sqlite3_config` works only before SQLite initializes): **memory statistics off**
    /// (`SQLITE_CONFIG_MEMSTATUS`). With them on (the system library's default), every
    /// `sqlite3_malloc` and `sqlite3_free` takes a process-wide mutex to count bytes, and this
    /// build has no lookaside (`OMIT_LOOKASIDE`), so every small allocation goes there: the flow
    /// writer spent ~5 % of its CPU in `pthread_mutex_lock`/`unlock` for it (perf, `tv-bench
    /// flows`, i25-hist). tv reads none of those statistics (`sqlite3_memory_used`, the soft heap
    /// limit). **No bulk page cache** (`SQLITE_CONFIG_PAGECACHE` with no buffer and no lines):
    /// Debian's build preallocates 20 cache lines per connection (`DEFAULT_PCACHE_INITSZ=20`)
    /// and writes a header into each, ~20 touched pages a connection; a resting `tv run` holds
    /// several connections (seven handles on the database file) over a database of a few pages,
    /// so each line is now allocated when first used (anonymous memory of a resting `tv run`
    /// after one request −0.18 MiB, issue 21). A library already initialized (SQLite used
    /// before the first `SQLiteDatabase`) keeps its settings: the calls then fail harmlessly.
    static let configureLibrary: Void = {
        _ = tv_sqlite3_config_memstatus(0)
        _ = tv_sqlite3_config_no_bulk_page_cache()
    }()

    /// Opens a connection with `flags` (extended result codes on, the busy timeout set).
    /// - Parameter path: the file's path, for errors (when `name` is a URI).
    private static func connect(_ name: String, flags: Int32, busyTimeout milliseconds: Int32,
                             path: String? = nil) throws -> OpaquePointer {
        _ = SQLiteDatabase.configureLibrary
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let failure = openFailure(db, rc, path: path ?? name)
            sqlite3_close_v2(db)
            throw failure
        }
        sqlite3_extended_result_codes(db, 1)
        SQLiteBusyWait.install(on: db, timeoutMilliseconds: milliseconds)
        return db
    }

    /// `file:PATH?mode=ro&immutable=1`, with the characters a URI path cannot hold escaped.
    static func immutableURI(_ path: String) -> String {
        var escaped = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x20, 0x7f...:
                escaped += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            default:
                escaped.append(Character(Unicode.Scalar(byte)))
            }
        }
        return "file:" + escaped + "?mode=ro&immutable=1"
    }

    deinit {
        // close_v2 defers the close until the last statement is finalized.
        if let handle { sqlite3_close_v2(handle) }
    }

    /// Closes the connection; later calls throw `FlowStoreError.failed`. Idempotent.
    public func close() {
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Runs one or more SQL statements that take no parameters and return no rows of interest.
    /// - Throws: `FlowStoreError` for any SQLite failure.
    public func execute(_ sql: String) throws {
        let db = try connection()
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let text = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(errorMessage)
            throw FlowStoreError.from(code: rc, message: text, path: path, systemErrno: sqlite3_system_errno(db))
        }
    }

    /// Compiles one SQL statement with `?` parameters.
    /// - Throws: `FlowStoreError` when the SQL does not compile (or the file is unreadable).
    public func prepare(_ sql: String) throws -> SQLiteStatement {
        let db = try connection()
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw error(code: rc)
        }
        return SQLiteStatement(database: self, handle: statement)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT` (the write lock is taken up front, so the
    /// busy timeout applies at BEGIN, never halfway). Rolls back and rethrows if `body` throws.
    /// Transactions do not nest.
    /// - Throws: what `body` throws, or `FlowStoreError` from BEGIN or COMMIT.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        let result: T
        do {
            result = try body()
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        return result
    }

    /// `PRAGMA user_version`: the schema version this file carries (0 for a new file).
    /// - Throws: `FlowStoreError` (e.g. `.corrupt`).
    public func userVersion() throws -> Int {
        let statement = try prepare("PRAGMA user_version")
        guard try statement.step() else { return 0 }
        return Int(statement.int64(at: 0))
    }

    /// Sets `PRAGMA user_version` (inside the caller's transaction, if any).
    public func setUserVersion(_ version: Int) throws {
        try execute("PRAGMA user_version = \(version)")
    }

    /// Runs a single-value query such as `PRAGMA journal_mode` or `SELECT count(*) …`.
    /// - Returns: column 0 of the first row, or `.null` when there is no row.
    public func scalar(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> SQLiteValue {
        let statement = try prepare(sql)
        try statement.bind(bindings)
        guard try statement.step() else { return .null }
        return statement.value(at: 0)
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE on this connection.
    public var changes: Int {
        handle.map { Int(sqlite3_changes($0)) } ?? 0
    }

    /// `sqlite3_last_insert_rowid`: the rowid of the last row an INSERT on this connection
    /// inserted (a trigger's inserts are undone when it ends; an upsert that updates leaves it
    /// alone); set it to tell afterwards whether a statement inserted (0 on a closed connection).
    var lastInsertRowID: Int64 {
        get { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }
        set { if let handle { sqlite3_set_last_insert_rowid(handle, newValue) } }
    }

    /// Whether the triggers of the file's schema run for this connection's statements
    /// (`SQLITE_DBCONFIG_ENABLE_TRIGGER`; on by default, and for every other connection whatever
    /// this one says). Set off only by a writer that does the triggers' work itself
    /// (`FlowBatchWriter`, `FlowTriggerWork`). Setting it on a closed connection does nothing.
    var triggersEnabled: Bool {
        get {
            var now: Int32 = 1
            if let handle { _ = tv_sqlite3_db_enable_triggers(handle, -1, &now) }
            return now != 0
        }
        set {
            var now: Int32 = 0
            if let handle { _ = tv_sqlite3_db_enable_triggers(handle, newValue ? 1 : 0, &now) }
        }
    }

    func connection() throws -> OpaquePointer {
        guard let handle else { throw FlowStoreError.failed(path: path, reason: "the connection is closed") }
        return handle
    }

    /// The `FlowStoreError` for `code`, with the connection's current message.
    func error(code: Int32) -> FlowStoreError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        return FlowStoreError.from(code: code, message: message, path: path,
                                   systemErrno: handle.map { sqlite3_system_errno($0) } ?? 0)
    }

    /// Why sqlite3_open_v2 failed with `rc` (`db`: the handle it left, if any): no descriptor
    /// left (`sqlite3_system_errno` EMFILE or ENFILE), else `.cannotOpen` with SQLite's words.
    private static func openFailure(_ db: OpaquePointer?, _ rc: Int32, path: String) -> FlowStoreError {
        if let db, TooManyOpenFiles.isShortage(sqlite3_system_errno(db)) {
            return FlowStoreError.opening(sqlite3_system_errno(db), path: path)
        }
        let reason = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        return .cannotOpen(path: path, reason: reason)
    }

    /// Creates `path` empty with mode 0600 when it does not exist (an empty file is a valid empty
    /// database), and tightens an existing file to 0600.
    private static func createPrivateFile(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            Glibc.close(fd)
            return
        }
        let err = errno
        guard err == EEXIST else { throw FlowStoreError.opening(err, path: path) }
        if let mode = FileModes.permissions(of: path), mode & 0o077 != 0 {
            _ = chmod(path, 0o600)
        }
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
