import Testing
@testable import FlowStore

@Suite struct PinnedHostsTests {
    @Test func rememberIsPinnedListForget() throws {
        try withStore { store, _ in
            let pinned = store.pinnedHosts
            #expect(try pinned.isPinned("example.com") == false)
            #expect(try pinned.list() == [])

            try pinned.remember("Example.COM.", reason: "client sent alert 48 (unknown_ca)", at: 100)
            #expect(try pinned.isPinned("example.com"))
            #expect(try pinned.isPinned("EXAMPLE.com."))
            #expect(try pinned.pinnedHost("example.com")
                == PinnedHost(host: "example.com", firstSeen: 100, lastSeen: 100,
                              reason: "client sent alert 48 (unknown_ca)", count: 1))

            try pinned.remember("example.com", reason: "client closed after ServerHello", at: 300)
            try pinned.remember("example.com", reason: "late report", at: 50)
            #expect(try pinned.pinnedHost("example.com")
                == PinnedHost(host: "example.com", firstSeen: 50, lastSeen: 300, reason: "late report", count: 3))

            try pinned.remember("api.bank.test", reason: "alert 42", at: 200)
            try pinned.remember("cdn.test", reason: "alert 46", at: 300)
            #expect(try pinned.list().map(\.host) == ["cdn.test", "example.com", "api.bank.test"])

            #expect(try pinned.forget("EXAMPLE.COM"))
            #expect(try pinned.forget("example.com") == false)
            #expect(try pinned.isPinned("example.com") == false)
            #expect(try pinned.list().map(\.host) == ["cdn.test", "api.bank.test"])
        }
    }

    @Test func pinnedHostsSurviveReopen() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/tunnelvision.sqlite3"
        do {
            let store = try FlowStore(path: path)
            try store.pinnedHosts.remember("pinned.test", reason: "alert 48", at: 7)
            store.close()
        }
        let store = try FlowStore(path: path)
        defer { store.close() }
        #expect(try store.pinnedHosts.isPinned("pinned.test"))
    }
}
