import Foundation
import Testing
import TVHome
@testable import FlowStore

@Suite struct SQLiteDatabaseTests {
    @Test func bindsAndReadsEveryStorageClass() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        try database.execute("CREATE TABLE t (a, b, c, d, e, f, g)")
        let values: [SQLiteValue] = [
            .integer(Int64.min), .real(1.5), .text("héllo\u{0}x"), .blob([0, 1, 255]), .null,
            .text(""), .blob([]),
        ]
        let insert = try database.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)")
        try insert.bind(values)
        try insert.step()
        let select = try database.prepare("SELECT a, b, c, d, e, f, g FROM t")
        #expect(try select.step())
        #expect((0..<7).map { select.value(at: Int32($0)) } == values)
        #expect(select.string(at: 2) == "héllo\u{0}x")
        #expect(select.blob(at: 3) == [0, 1, 255])
        #expect(select.isNull(at: 4))
        #expect(select.optionalInt64(at: 4) == nil)
        #expect(try select.step() == false)
    }

    @Test func transactionRollsBackWhenBodyThrows() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        try database.execute("CREATE TABLE t (x INTEGER)")
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try database.transaction {
                try database.execute("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(try database.scalar("SELECT count(*) FROM t") == .integer(0))
        try database.transaction { try database.execute("INSERT INTO t VALUES (2)") }
        #expect(try database.scalar("SELECT sum(x) FROM t") == .integer(2))
    }

    @Test func opensInWALWithNormalSync() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3", busyTimeout: 1_234)
        #expect(try database.scalar("PRAGMA journal_mode") == .text("wal"))
        #expect(try database.scalar("PRAGMA synchronous") == .integer(1))
    }

    @Test func newFileAndItsWALAreMode0600() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/tunnelvision.sqlite3"
        let store = try FlowStore(path: path)
        defer { store.close() }
        try store.settings.set("k", "v")
        #expect(FileModes.permissions(of: path) == 0o600)
        #expect(FileModes.permissions(of: path + "-wal") == 0o600)
        #expect(FileModes.permissions(of: path + "-shm") == 0o600)
    }

    @Test func existingLooseFileIsTightenedTo0600() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/t.sqlite3"
        writeFile(path, [])
        _ = chmod(path, 0o644)
        _ = try SQLiteDatabase(path: path)
        #expect(FileModes.permissions(of: path) == 0o600)
    }

    @Test func randomBytesAreReportedCorrupt() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/tunnelvision.sqlite3"
        var generator = SystemRandomNumberGenerator()
        writeFile(path, (0..<8_192).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let expected = FlowStoreError.corrupt(path: path, reason: "file is not a database")
        #expect(throws: expected) { try FlowStore(path: path) }
        #expect(throws: expected) { try FlowWriter(path: path) }
        #expect(expected.message
            == "The flow database at \(path) is corrupt (file is not a database); move it aside with its -wal and -shm files (all three together) and tv will start a new one, leaving the decrypted content already kept in the content folder untouched (tv content delete removes it).")
        #expect(expected.exitCode == 1)
    }

    @Test func missingFolderIsCannotOpen() throws {
        let path = "/nonexistent-flowstore-folder/tunnelvision.sqlite3"
        #expect(throws: FlowStoreError.cannotOpen(path: path, reason: "No such file or directory")) {
            try FlowStore(path: path)
        }
    }

    @Test func closedConnectionThrowsFailed() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/t.sqlite3"
        let database = try SQLiteDatabase(path: path)
        database.close()
        database.close()
        #expect(throws: FlowStoreError.failed(path: path, reason: "the connection is closed")) {
            try database.execute("SELECT 1")
        }
    }
}
