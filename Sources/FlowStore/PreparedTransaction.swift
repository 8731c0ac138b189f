/// `SQLiteDatabase.transaction` for a writer that commits batch after batch on one connection:
/// `BEGIN IMMEDIATE`, `COMMIT` and `ROLLBACK` compiled once instead of parsed by `sqlite3_exec`
/// for every batch (callgrind, the content writer: compiling BEGIN and COMMIT was ~1,000
/// instructions a batch). Same rules as `transaction`: the write lock is taken at BEGIN (where
/// the busy timeout applies), a body or COMMIT that throws is rolled back and its error rethrown;
/// transactions do not nest. Same threading rule as `SQLiteDatabase`: one thread at a time.
public final class PreparedTransaction {
    /// The connection the statements belong to.
    public let database: SQLiteDatabase
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    private let rollback: SQLiteStatement

    /// - Throws: `FlowStoreError` when the statements cannot be compiled (e.g. an unreadable file).
    public init(_ database: SQLiteDatabase) throws {
        self.database = database
        begin = try database.prepare("BEGIN IMMEDIATE")
        commit = try database.prepare("COMMIT")
        rollback = try database.prepare("ROLLBACK")
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`.
    /// - Throws: what `body` throws, or `FlowStoreError` from BEGIN or COMMIT.
    public func run<T>(_ body: () throws -> T) throws -> T {
        begin.rewind()
        try begin.step()
        do {
            let result = try body()
            commit.rewind()
            try commit.step()
            return result
        } catch {
            rollback.rewind()
            _ = try? rollback.step()
            throw error
        }
    }
}
