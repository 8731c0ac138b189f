import Foundation
import Synchronization
import Testing
@testable import FlowStore

@Suite struct FlowSchemaTests {
    private func names(_ database: SQLiteDatabase, type: String) throws -> [String] {
        let statement = try database.prepare(
            "SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%' ORDER BY name")
        try statement.bind([.text(type)])
        var names: [String] = []
        try statement.forEachRow { names.append($0.string(at: 0) ?? "") }
        return names
    }

    @Test func migratesAnEmptyFileToTheCurrentVersion() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        #expect(try database.userVersion() == 0)
        #expect(try FlowSchema.migrate(database) == 0)
        #expect(FlowSchema.currentVersion == FlowSchema.migrations.count)
        #expect(try database.userVersion() == FlowSchema.currentVersion)
        #expect(try names(database, type: "table") == ["audit_markers", "audit_projects", "audit_sessions",
                                                       "captures", "certificates", "client_pins", "content_turn_runs", "exchange_runs", "exchanges", "flow_activity",
                                                       "flow_names", "flow_names_text", "flow_names_text_config", "flow_names_text_data",
                                                       "flow_names_text_docsize", "flow_names_text_idx", "flow_writers", "flows", "host_names", "packet_counts", "packets", "pinned_hosts", "settings"])
        #expect(try names(database, type: "index") == ["audit_markers_by_time", "audit_sessions_by_project", "audit_sessions_live",
                                                       "client_pins_by_host", "content_turn_runs_by_segment_time", "exchange_runs_by_flow", "exchange_runs_by_last_time",
                                                       "exchanges_by_request_time", "exchanges_open", "flows_by_audit_session", "flows_by_day_client",
                                                       "flows_by_day_host", "flows_by_day_other_hosts", "flows_by_day_server", "flows_by_program_time",
                                                       "flows_by_start_time", "flows_by_status_time", "flows_open",
                                                       "packets_by_capture"])
        // A second run is a no-op.
        #expect(try FlowSchema.migrate(database) == FlowSchema.currentVersion)
        #expect(try database.userVersion() == FlowSchema.currentVersion)
    }

    @Test func reopenKeepsDataAndVersion() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/tunnelvision.sqlite3"
        do {
            let store = try FlowStore(path: path)
            try store.settings.set("inspect", "on")
            _ = try writeFlows([sampleFlow(start: 1_000)], to: store)
            store.close()
        }
        let store = try FlowStore(path: path)
        defer { store.close() }
        #expect(try store.settings.get("inspect") == "on")
        #expect(try store.flow(id: 1)?.startTime == 1_000)
        let database = try SQLiteDatabase(path: path)
        #expect(try database.userVersion() == FlowSchema.currentVersion)
    }

    @Test func migrationTwoAddsTheTurnsIndexToAVersionOneFile() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        #expect(try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(1))) == 0)
        #expect(try names(database, type: "table") == ["flows", "host_names", "pinned_hosts", "settings"])
        #expect(try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(2))) == 1)
        #expect(try names(database, type: "table").contains("content_turns"))
    }

    @Test func migrationThreeAddsPacketCountsAndTTLAndKeepsRows() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/t.sqlite3"
        let database = try SQLiteDatabase(path: path)
        #expect(try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(2))) == 0)
        try database.execute("""
            INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                               transport, host_origin, status) VALUES (7, 1, 1, '10.0.0.1', 1, '10.0.0.2', 53, 'udp', 'none', 'not_encrypted');
            INSERT INTO host_names (address, name, first_seen, last_seen) VALUES ('10.0.0.2', 'a.test', 1, 1);
            """)
        #expect(try FlowSchema.migrate(database) == 2)
        #expect(try database.scalar("SELECT coalesce(packets_up, -1) FROM flows WHERE id = 7") == .integer(-1))
        #expect(try database.scalar("SELECT coalesce(ttl, -1) FROM host_names") == .integer(-1))
        database.close()
        let store = try FlowStore(path: path)
        defer { store.close() }
        try store.hostNames.remember(name: "A.test.", address: "10.0.0.2", at: 5, ttl: 300)
        #expect(try store.hostNames.ttl(name: "a.test", address: "10.0.0.2") == 300)
        // An older answer does not overwrite a newer TTL; a newer one without TTL keeps it.
        try store.hostNames.remember(name: "a.test", address: "10.0.0.2", at: 3, ttl: 5)
        try store.hostNames.remember(name: "a.test", address: "10.0.0.2", at: 9)
        #expect(try store.hostNames.ttl(name: "a.test", address: "10.0.0.2") == 300)
        #expect(try store.flow(id: 7)?.packetsUp == nil)
        // Written and read back through the writer's upsert.
        var udp = sampleFlow(start: 2_000, host: nil, server: "10.203.0.2")
        udp.transport = .udp
        udp.packetsUp = 6
        udp.packetsDown = 5
        let written = try writeFlows([udp], to: store)
        let read = try store.flow(id: written[0].id)
        #expect(read?.packetsUp == 6 && read?.packetsDown == 5 && read?.transport == .udp)
    }

    @Test("migration 6 adds the client leg's TLS version beside the server leg's; older rows keep NULL there, new ones keep both")
    func migrationSixAddsTheClientLegsVersion() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/t.sqlite3"
        let database = try SQLiteDatabase(path: path)
        #expect(try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(5))) == 0)
        try database.execute("""
            INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                               transport, host_origin, tls_version, status, duration)
                VALUES (7, 1, 1, '10.0.0.1', 1, '10.0.0.2', 443, 'tcp', 'none', 'TLSv1.2', 'inspected', 5);
            """)
        #expect(try FlowSchema.migrate(database) == 5)
        database.close()
        let store = try FlowStore(path: path)
        defer { store.close() }
        let old = try store.flow(id: 7)
        #expect(old?.tlsVersion == "TLSv1.2" && old?.clientTLSVersion == nil)
        var both = sampleFlow(start: 2_000)
        both.tlsVersion = "TLSv1.2"
        both.clientTLSVersion = "TLSv1.3"
        let written = try writeFlows([both], to: store)
        let read = try store.flow(id: written[0].id)
        #expect(read?.tlsVersion == "TLSv1.2" && read?.clientTLSVersion == "TLSv1.3")
    }

    @Test("migration 31: packets.meaning takes 'too_big_for_path' (a file at 30 refuses it); rows written before stay, and the CHECK still refuses an unknown meaning")
    func migrationThirtyOneWidensPacketMeanings() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        #expect(try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(30))) == 0)
        func insert(_ n: Int, _ meaning: String) throws {
            try database.execute("INSERT INTO packets (flow_id, n, capture_seq, file_offset, time_us, direction, orig_len, incl_len, tcp_flags, meaning) "
                                 + "VALUES (5, \(n), 1, 0, 1, 'server_to_client', 576, 576, NULL, '\(meaning)')")
        }
        try insert(1, "cut_off")
        #expect(throws: (any Error).self) { try insert(2, "too_big_for_path") }
        #expect(try FlowSchema.migrate(database) == 30)
        try insert(2, "too_big_for_path")
        #expect(throws: (any Error).self) { try insert(3, "lost") }
        #expect(try database.scalar("SELECT group_concat(meaning, ' ') FROM packets WHERE flow_id = 5") == .text("cut_off too_big_for_path"))
    }

    @Test("migration 32: exchanges.state takes 'cancelled' (a file at 31 refuses it); rows written before stay, and the CHECK still refuses an unknown state")
    func migrationThirtyTwoWidensExchangeStates() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        #expect(try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(31))) == 0)
        func insert(_ sequence: Int, _ state: String) throws {
            try database.execute("INSERT INTO exchanges (flow_id, seq, http_version, method, path, request_time, state) "
                                 + "VALUES (5, \(sequence), 'HTTP/2', 'GET', '/', 1, '\(state)')")
        }
        try insert(1, "incomplete")
        #expect(throws: (any Error).self) { try insert(2, "cancelled") }
        #expect(try FlowSchema.migrate(database) == 31)
        try insert(2, "cancelled")
        #expect(throws: (any Error).self) { try insert(3, "reset") }
        #expect(try database.scalar("SELECT group_concat(state, ' ') FROM exchanges WHERE flow_id = 5") == .text("incomplete cancelled"))
    }

    @Test func refusesAFileFromANewerTV() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/tunnelvision.sqlite3"
        do {
            let database = try SQLiteDatabase(path: path)
            try database.setUserVersion(99)
            database.close()
        }
        let expected = FlowStoreError.newerSchema(path: path, found: 99, supported: FlowSchema.currentVersion)
        #expect(throws: expected) { try FlowStore(path: path) }
        #expect(throws: expected) { try FlowWriter(path: path) }
        #expect(expected.message == "The flow database at \(path) was written by a newer tv (schema version 99, "
            + "this tv knows up to \(FlowSchema.currentVersion)); upgrade tv, or move the file aside with its -wal and -shm files and tv will start a new one, leaving the decrypted content already kept in the content folder untouched (tv content delete removes it).")
        // Untouched: no tables were made, the version stays.
        let database = try SQLiteDatabase(path: path)
        #expect(try database.userVersion() == 99)
        #expect(try names(database, type: "table") == [])
    }

    @Test func appliesMigrationsInOrder() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        let first = ["CREATE TABLE a (x INTEGER)", "INSERT INTO a VALUES (1)"]
        #expect(try FlowSchema.migrate(database, migrations: first) == 0)
        let second = first + ["ALTER TABLE a ADD COLUMN y INTEGER DEFAULT 2", "UPDATE a SET x = x + 10"]
        #expect(try FlowSchema.migrate(database, migrations: second) == 2)
        #expect(try database.userVersion() == 4)
        #expect(try database.scalar("SELECT x * 100 + y FROM a") == .integer(1_102))
    }

    @Test("a migration of a file that holds a history, at or above the size given, is announced once with the file, its size and both versions; a new file, a small one and a current one are not")
    func migrationsOfALargeHistoryAreAnnounced() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/t.sqlite3"
        let database = try SQLiteDatabase(path: path)
        let heard = Mutex<[String]>([])
        let notice: FlowSchema.MigrationNotice = { path, bytes, from, to in heard.withLock { $0.append("\(path) \(bytes) \(from)→\(to)") } }
        let first = ["CREATE TABLE a (x BLOB)", "INSERT INTO a VALUES (zeroblob(100000))"]
        #expect(try FlowSchema.migrate(database, migrations: first, notice: notice, noticeFromBytes: 0) == 0)
        #expect(heard.withLock { $0 } == [], "a new file is not a history")
        let second = first + ["ALTER TABLE a ADD COLUMN y INTEGER"]
        #expect(try FlowSchema.migrate(database, migrations: second, notice: notice, noticeFromBytes: 1 << 30) == 2)
        #expect(heard.withLock { $0 } == [], "under the size")
        let third = second + ["ALTER TABLE a ADD COLUMN z INTEGER"]
        var st = stat()
        #expect(stat(path, &st) == 0)
        #expect(try FlowSchema.migrate(database, migrations: third, notice: notice, noticeFromBytes: Int64(st.st_size)) == 3)
        #expect(heard.withLock { $0 } == ["\(path) \(st.st_size) 3→4"])
        #expect(try FlowSchema.migrate(database, migrations: third, notice: notice, noticeFromBytes: 0) == 4)
        #expect(heard.withLock { $0 }.count == 1, "a current file is not announced")
        #expect(FlowSchema.noticeFromBytes == 64 << 20)
    }

    @Test func aFailingMigrationLeavesTheFileAtItsOldVersion() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/t.sqlite3"
        let database = try SQLiteDatabase(path: path)
        let migrations = ["CREATE TABLE a (x INTEGER)", "CREATE TABLE a (x INTEGER)"]
        #expect(throws: FlowStoreError.failed(path: path, reason: "table a already exists")) {
            try FlowSchema.migrate(database, migrations: migrations)
        }
        #expect(try database.userVersion() == 0)
        #expect(try names(database, type: "table") == [])
    }
}
