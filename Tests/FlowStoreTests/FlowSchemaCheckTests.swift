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
}
