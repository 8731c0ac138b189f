import Synchronization

/// One `SQLiteDatabase` shared by threads: every use takes the mutex, so the connection is driven
/// by one thread at a time, which is its threading rule. No `@unchecked`: `Mutex` owns the
/// connection (it was handed over with `sending`) and only lends it inside `withDatabase`.
final class SharedConnection: Sendable {
    /// The database file's path.
    let path: String
    private let database: Mutex<SQLiteDatabase>

    init(_ database: sending SQLiteDatabase) {
        path = database.path
        self.database = Mutex(database)
    }

    /// Runs `body` with the connection while holding the lock.
    /// - Throws: what `body` throws.
    func withDatabase<T: Sendable>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try database.withLock { database in
            try body(database)
        }
    }

    /// Closes the connection; later uses throw `FlowStoreError.failed`.
    func close() {
        database.withLock { $0.close() }
    }
}
