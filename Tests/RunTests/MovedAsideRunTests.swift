import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 12 §3 through the real `tv` binary: content kept by one session survives a database
/// that went bad — corrupt and moved aside as tv's advice says, or cut to 0 bytes — and the next
/// sessions (whose sweeps run at start) over a new, empty index.
@Suite("tv run: content kept before a new database (issue 12 §3)", .serialized)
struct MovedAsideRunTests {
    /// Segment file names and sizes in the data folder's content folder.
    func segments(_ box: Sandbox) -> [String: Int] {
        let folder = box.dataDir + "/content"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".seg") }
        var sizes: [String: Int] = [:]
        for name in names {
            sizes[name] = (try? FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.size] as? Int) ?? -1
        }
        return sizes
    }

    /// One inspected HTTPS request through a new `tv run --inspect --keep-content`, then stop.
    func session(_ world: RunWorld) throws {
        let tv = try world.run("--inspect", "--keep-content")
        let r = try world.curlThrough(tv, ["--http1.1", world.url("/index.html")])
        #expect(r.status == 0 && r.out == "hello from nginx\n", "\(r)")
        _ = try world.sandbox.closedFlows(1)
        try tv.stop()
    }

    @Test("corrupt and moved aside, or cut to 0 bytes: the segments kept before survive two new sessions", arguments: ["corrupt", "empty"])
    func keptSegmentsSurvive(_ how: String) throws {
        let world = try RunWorld()
        let box = world.sandbox
        try session(world)
        let before = segments(box)
        try #require(before.count == 1 && before.values.allSatisfy { $0 > 0 }, "\(before)")
        let database = box.dataDir + "/tunnelvision.sqlite3"
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        if how == "corrupt" {
            try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: database))
            let flows = try box.tv("flows")
            #expect(flows.status == 1)
            #expect(flows.err.contains("is corrupt") && flows.err.contains("move it aside with its -wal and -shm files (all three together) and tv will start a new one, leaving the decrypted content already kept in the content folder untouched (tv content delete removes it)."), "\(flows)")
            try FileManager.default.moveItem(atPath: database, toPath: database + ".corrupt")
        } else {
            try Data().write(to: URL(fileURLWithPath: database))
        }

        try session(world)
        try session(world)
        let after = segments(box)
        for (name, size) in before { #expect(after[name] == size, "\(name) is gone or changed: \(after)") }
        #expect(after.count == 3, "\(after)")
        let status = try box.tv("content", "status")
        #expect(status.out.contains("\n1 of them ("), "\(status)")
        #expect(status.out.contains(") predate this flow database, which has no index of them: they are kept untouched for a database moved aside, and `tv content delete` removes them.\n"), "\(status)")
        let rows = try box.flowRows()
        #expect(rows.count == 2)
        for row in rows {
            let turns = try box.tv("turns", String(row.int("id") ?? 0))
            #expect(turns.status == 0 && turns.out.contains("GET /index.html"), "\(turns)")
        }
    }

    @Test("a killed session's database moved aside without its -wal: no command makes a new one over the log (it would lose the log's flows); put back, every flow is there")
    func walWithoutDatabaseIsKept() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run()
        for _ in 0..<3 { _ = try world.curlThrough(tv, ["--http1.1", "http://127.0.0.1:\(world.nginx.plainPort)/index.html"]) }
        _ = try box.closedFlows(3)
        tv.kill()
        let database = box.dataDir + "/tunnelvision.sqlite3"
        var st = stat()
        try #require(stat(database + "-wal", &st) == 0 && st.st_size > 0, "the killed session left no WAL content")
        try FileManager.default.moveItem(atPath: database, toPath: database + ".aside")
        let said = "tv: The flow database \(database) is missing, but its write-ahead log \(database)-wal is there and holds the flows written last; put the database file back, or move \(database)-wal and \(database)-shm aside as well (tv then starts a new history without them), and try again.\n"
        for words in [["flows"], ["storage"], ["requests"]] {
            let refused = try box.tvArgs(words)
            #expect(refused.status == 1 && refused.err == said, "\(words): \(refused)")
        }
        // A limit that would delete is refused before it is saved (it was saved, its consent
        // skipped, and applied once the database was back: a re-check).
        let limit = try box.tv("settings", "set", "history.maxAge", "1m")
        #expect(limit.status == 1 && limit.err == said && !limit.out.contains("Saved"), "\(limit)")
        #expect(!FileManager.default.fileExists(atPath: database))
        try FileManager.default.moveItem(atPath: database + ".aside", toPath: database)
        #expect(try box.tv("settings", "get", "history.maxAge").out == "30d\n")
        #expect(try box.flowRows().count == 3)
    }
}
