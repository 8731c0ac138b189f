import Testing
@testable import FlowStore
import FlowTerms

/// Issue 18: a flow named from DNS keeps its address's other live names and is found by any of
/// them; the origins of the names survive a round trip; DNS query flows written before are
/// relabelled.
@Suite("Names from DNS and QUIC in the flow database")
struct InferredNameStoreTests {
    @Test("other names and the ECH flag round-trip; --host finds by the name, another name, the address")
    func otherNames() throws {
        try withStore { store, _ in
            var inferred = sampleFlow(start: 1, host: "www.example", server: "203.0.113.100")
            inferred.hostOrigin = .dns
            inferred.otherHosts = ["edge.cdn.example", "api.example"]
            var quic = sampleFlow(start: 2, host: "public.example", server: "198.51.100.9")
            quic.transport = .udp
            quic.hostOrigin = .quic
            quic.hostIsECHPublicName = true
            let written = try writeFlows([inferred, quic, sampleFlow(start: 3, host: "unrelated.test", server: "192.0.2.1")], to: store)
            let readBack = try store.flows(FlowQuery()).flows
            #expect(readBack.map(\.id) == written.map(\.id).reversed())
            #expect(readBack[2].otherHosts == ["edge.cdn.example", "api.example"] && readBack[2].hostOrigin == .dns && !readBack[2].hostIsECHPublicName)
            #expect(readBack[1].hostOrigin == .quic && readBack[1].hostIsECHPublicName && readBack[1].otherHosts.isEmpty)
            func ids(_ host: String) throws -> [Int64] { try store.flows(FlowQuery(host: host)).flows.map(\.id) }
            #expect(try ids("www.example") == [written[0].id])
            #expect(try ids("cdn.example") == [written[0].id])
            #expect(try ids("API.EXAMPLE") == [written[0].id])
            #expect(try ids("203.0.113.100") == [written[0].id])
            #expect(try ids("example") == [written[1].id, written[0].id])
        }
    }

    @Test("migrating a file whose DNS query flows said 'dns': they become 'dns_question'; the new origins pass the CHECK")
    func migration() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        let mine = try #require(FlowSchema.migrations.firstIndex { $0.contains("dns_question") })
        try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(mine)))
        // A column another migration added before this one (any order at a merge) survives the
        // in-place edit of the CHECK.
        try database.execute("ALTER TABLE flows ADD COLUMN added_elsewhere TEXT")
        try database.execute("""
            INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                               transport, host, host_origin, status)
            VALUES (1, 0, 0, '10.0.0.2', 5353, '10.0.0.1', 53, 'udp', 'named.test', 'dns', 'not_encrypted')
            """)
        #expect(throws: FlowStoreError.self) { try database.execute("UPDATE flows SET host_origin = 'quic'") }
        try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(mine + 1)))
        #expect(try database.scalar("SELECT count(added_elsewhere) FROM flows") == .integer(0))
        #expect(try database.scalar("SELECT host_origin || '/' || other_hosts || '/' || ech_public_name FROM flows") == .text("dns_question//0"))
        try database.execute("UPDATE flows SET host_origin = 'quic'")
        #expect(throws: FlowStoreError.self) { try database.execute("UPDATE flows SET host_origin = 'bogus'") }
    }
}
