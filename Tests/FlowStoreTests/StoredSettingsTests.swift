import Testing
@testable import FlowStore

@Suite struct StoredSettingsTests {
    @Test func setGetOverwriteRemoveAndList() throws {
        try withStore { store, _ in
            let settings = store.settings
            #expect(try settings.get("inspect") == nil)
            try settings.set("inspect", "on")
            try settings.set("content.expiry", "1d")
            #expect(try settings.get("inspect") == "on")
            try settings.set("inspect", "off")
            #expect(try settings.get("inspect") == "off")
            try settings.set("empty", "")
            #expect(try settings.get("empty") == "")
            let all = try settings.all()
            #expect(all.map(\.key) == ["content.expiry", "empty", "inspect"])
            #expect(all.map(\.value) == ["1d", "", "off"])
            #expect(try settings.remove("empty"))
            #expect(try settings.remove("empty") == false)
            #expect(try settings.all().count == 2)
        }
    }

    @Test func aSavedSettingSurvivesReopen() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/tunnelvision.sqlite3"
        do {
            let store = try FlowStore(path: path)
            try store.settings.set("intro.seen", "yes")
            // No close: what `set` returned is already committed, so a second connection sees it.
            let other = try FlowStore(path: path)
            #expect(try other.settings.get("intro.seen") == "yes")
            other.close()
            store.close()
        }
        let store = try FlowStore(path: path)
        defer { store.close() }
        #expect(try store.settings.get("intro.seen") == "yes")
    }

    @Test func storeConnectionSyncsFully() throws {
        try withStore { store, _ in
            let synchronous = try store.connection.withDatabase { try $0.scalar("PRAGMA synchronous") }
            #expect(synchronous == .integer(2))
        }
    }
}
