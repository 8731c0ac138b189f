import Testing
@testable import FlowStore

@Suite struct PreparedTransactionTests {
    @Test("batch after batch commits, each seen by another connection; a body that throws is rolled back and the next batch still commits")
    func commitsAndRollsBack() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        try database.execute("CREATE TABLE t (x INTEGER)")
        let reader = try SQLiteDatabase(path: folder + "/t.sqlite3")
        let transaction = try PreparedTransaction(database)
        for x in 1...3 {
            let returned = try transaction.run { () throws -> Int in
                try database.execute("INSERT INTO t VALUES (\(x))")
                return x * 10
            }
            #expect(returned == x * 10)
            #expect(try reader.scalar("SELECT sum(x) FROM t") == .integer(Int64(x * (x + 1) / 2)))
        }
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try transaction.run {
                try database.execute("INSERT INTO t VALUES (100)")
                throw Boom()
            }
        }
        #expect(try reader.scalar("SELECT count(*) FROM t") == .integer(3))
        #expect(try reader.scalar("SELECT sum(x) FROM t") == .integer(6))
        try transaction.run { try database.execute("INSERT INTO t VALUES (4)") }
        #expect(try reader.scalar("SELECT sum(x) FROM t") == .integer(10))
    }

    @Test("BEGIN IMMEDIATE: inside the body the write lock is held (another writer is refused busy), and released after")
    func holdsTheWriteLock() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3", busyTimeout: 100)
        try database.execute("CREATE TABLE t (x INTEGER)")
        let other = try SQLiteDatabase(path: folder + "/t.sqlite3", busyTimeout: 0)
        let transaction = try PreparedTransaction(database)
        try transaction.run {
            #expect(throws: FlowStoreError.self) { try other.execute("BEGIN IMMEDIATE") }
        }
        try other.execute("BEGIN IMMEDIATE")
        try other.execute("COMMIT")
        // A BEGIN refused busy throws and leaves no transaction open behind it.
        try other.execute("BEGIN IMMEDIATE")
        #expect(throws: FlowStoreError.self) { try transaction.run { try database.execute("INSERT INTO t VALUES (1)") } }
        try other.execute("COMMIT")
        try transaction.run { try database.execute("INSERT INTO t VALUES (2)") }
        #expect(try other.scalar("SELECT sum(x) FROM t") == .integer(2))
    }
}
