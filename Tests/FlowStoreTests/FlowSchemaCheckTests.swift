import Testing
@testable import FlowStore
import FlowTerms

/// The flow writer runs with `PRAGMA ignore_check_constraints=ON` (the CHECK lists cost an
/// ephemeral b-tree per list per row). That is safe only while every value the Swift enums can
/// write is one the schema's CHECKs accept: proven here with the CHECKs on.
@Suite("Flow schema CHECKs and the enums the writer binds")
struct FlowSchemaCheckTests {
    private func insert(_ database: SQLiteDatabase, id: Int64, transport: String, origin: String, status: String) throws {
        let statement = try database.prepare("""
            INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address,
                               server_port, transport, host_origin, status)
            VALUES (?, 0, 0, '127.0.0.1', 1, '127.0.0.1', 2, ?, ?, ?)
            """)
        try statement.bind([.integer(id), .text(transport), .text(origin), .text(status)])
        try statement.step()
    }

    @Test("every FlowTransport, HostOrigin and FlowStatus value passes the CHECKs; other text does not")
    func enumsMatchChecks() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        _ = try FlowSchema.migrate(database)
        var id: Int64 = 1
        for transport in FlowTransport.allCases {
            for origin in HostOrigin.allCases {
                for status in FlowStatus.allCases {
                    try insert(database, id: id, transport: transport.rawValue, origin: origin.rawValue, status: status.rawValue)
                    id += 1
                }
            }
        }
        #expect(try database.scalar("SELECT count(*) FROM flows") == .integer(id - 1))
        #expect(throws: FlowStoreError.self) { try insert(database, id: id, transport: "tcp", origin: "sni", status: "bogus") }
        #expect(throws: FlowStoreError.self) { try insert(database, id: id, transport: "tcp", origin: "bogus", status: "failed") }
        #expect(throws: FlowStoreError.self) { try insert(database, id: id, transport: "sctp", origin: "sni", status: "failed") }
    }

    @Test("migration 25 widens host_origin by 'http_host' in place: rows, and a column another migration added, stay")
    func httpHostMigration() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        let mine = try #require(FlowSchema.migrations.firstIndex { $0.contains("'http_host'") })
        #expect(mine == 24)
        try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(mine)))
        try database.execute("ALTER TABLE flows ADD COLUMN added_elsewhere TEXT")
        try insert(database, id: 1, transport: "tcp", origin: "dns", status: "not_encrypted")
        #expect(throws: FlowStoreError.self) { try database.execute("UPDATE flows SET host_origin = 'http_host'") }
        try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(mine + 1)))
        #expect(try database.scalar("SELECT count(added_elsewhere) || '/' || host_origin FROM flows") == .text("0/dns"))
        try database.execute("UPDATE flows SET host_origin = 'http_host'")
        #expect(throws: FlowStoreError.self) { try database.execute("UPDATE flows SET host_origin = 'bogus'") }
        #expect(try database.scalar("PRAGMA integrity_check") == .text("ok"))
    }
}
