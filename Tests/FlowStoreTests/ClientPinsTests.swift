import FlowTerms
import Testing
@testable import FlowStore

@Suite struct ClientPinsTests {
    @Test func rememberListForgetByClientHostAndPort() throws {
        try withStore { store, _ in
            let pins = store.clientPins
            #expect(try pins.list() == [])
            try pins.remember(clientAddress: "127.0.0.1", clientHello: "aaaaaaaaaaaa", host: "A.test.", port: 443, kind: .lacksRoot, reason: "r1", at: 100)
            // The same client on another port, another client on the same port: separate rows.
            try pins.remember(clientAddress: "127.0.0.1", clientHello: "aaaaaaaaaaaa", host: "a.test", port: 8443, kind: .pinned, reason: "r2", at: 200)
            try pins.remember(clientAddress: "127.0.0.1", clientHello: "bbbbbbbbbbbb", host: "a.test", port: 443, kind: .pinned, reason: "r3", at: 150)
            try pins.remember(clientAddress: "::1", clientHello: "aaaaaaaaaaaa", host: "b.test", port: 443, kind: .pinned, reason: "r4", at: 50)
            // A known key: count + 1, the latest kind and reason, the later last time.
            try pins.remember(clientAddress: "127.0.0.1", clientHello: "aaaaaaaaaaaa", host: "a.test", port: 443, kind: .pinned, reason: "r5", at: 120)
            #expect(try pins.list() == [
                ClientPin(clientAddress: "127.0.0.1", clientHello: "aaaaaaaaaaaa", host: "a.test", port: 8443, kind: .pinned, firstSeen: 200, lastSeen: 200, reason: "r2", count: 1),
                ClientPin(clientAddress: "127.0.0.1", clientHello: "bbbbbbbbbbbb", host: "a.test", port: 443, kind: .pinned, firstSeen: 150, lastSeen: 150, reason: "r3", count: 1),
                ClientPin(clientAddress: "127.0.0.1", clientHello: "aaaaaaaaaaaa", host: "a.test", port: 443, kind: .pinned, firstSeen: 100, lastSeen: 120, reason: "r5", count: 2),
                ClientPin(clientAddress: "::1", clientHello: "aaaaaaaaaaaa", host: "b.test", port: 443, kind: .pinned, firstSeen: 50, lastSeen: 50, reason: "r4", count: 1),
            ])
            #expect(try pins.forget(host: "A.TEST") == 3)
            #expect(try pins.forget(host: "a.test") == 0)
            #expect(try pins.list().map(\.host) == ["b.test"])
        }
    }

    @Test func aVersionFourFileKeepsItsHostWidePinsAndGetsAnEmptyClientPinsTable() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/t.sqlite3"
        let database = try SQLiteDatabase(path: path)
        #expect(try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(4))) == 0)
        try database.execute("INSERT INTO pinned_hosts (host, first_seen, last_seen, reason, count) VALUES ('old.test', 1, 2, 'alert unknown_ca', 3)")
        #expect(try FlowSchema.migrate(database) == 4)
        database.close()
        let store = try FlowStore(path: path)
        defer { store.close() }
        #expect(try store.pinnedHosts.list() == [PinnedHost(host: "old.test", firstSeen: 1, lastSeen: 2, reason: "alert unknown_ca", count: 3)])
        #expect(try store.clientPins.list() == [])
    }
}
