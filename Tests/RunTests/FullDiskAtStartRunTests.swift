import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Trial 44 through the real `tv` binary: `tv run` started on a data folder whose disk (a tmpfs
/// the test mounts) is full said nothing at its banner, and the disk-full sentence named
/// `tv content delete` with no content to delete. Needs root (mount); skipped otherwise.
@Suite("tv run on a full disk: said at the banner, with the way on that follows what is there (trial 44)", .serialized,
       .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
struct FullDiskAtStartRunTests {
    /// The history's bytes (the database and its log), as the way on names them.
    func historyBytes(_ box: Sandbox) -> Int64 {
        ["", "-wal"].reduce(Int64(0)) { sum, suffix in
            var st = stat()
            return sum + (stat(box.dataDir + "/tunnelvision.sqlite3" + suffix, &st) == 0 ? Int64(st.st_size) : 0)
        }
    }

    /// `ByteWords.binary` (TVHome), for the sentences' sizes.
    func binary(_ n: Int64) -> String {
        if n < 1024 { return "\(n) B" }
        var value = Double(n) / 1024
        var unit = "KiB"
        for next in ["MiB", "GiB"] where value.rounded() >= 1024 { value /= 1024; unit = next }
        if value >= 100 { return "\(Int(value.rounded())) \(unit)" }
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(unit)"
    }

    @Test("a history only, then full: the banner says flows cannot be saved and what frees room (no content to delete, so not `tv content delete`); curl still gets its answer through tv; the flows-not-saved line names the same way on")
    func historyOnly() throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        let disk = try DiskFullRunTests.SmallDisk(at: box.dataDir, megabytes: 2)
        defer {
            disk.unmount()
            withExtendedLifetime(world) {}
        }
        var tv = try TVSession(box, [])
        try DiskFullRunTests().requests(1, world, tv)
        #expect(try box.closedFlows(1).count == 1)
        try tv.stop()
        disk.fill()
        let history = binary(historyBytes(box))
        let wayOn = "free some space on it outside the data folder: no decrypted content or capture is kept to delete, and the history's \(history) shrinks only by deleting rows, which needs a little room first (`tv storage` shows what takes the room)"

        tv = try TVSession(box, [])
        #expect(tv.log().contains("\n  disk        full — the disk holding the data folder has no room, so flows cannot be saved until it has some (connections are still forwarded, and flows wait in memory, up to 16,384); \(wayOn)\n"), "\(tv.log())")
        // It proxies.
        try DiskFullRunTests().requests(2, world, tv)
        _ = try box.waitForStatus { $0.int("accepted") == 2 && $0.int("openConnections") == 0 }
        let settled = Date().addingTimeInterval(3)
        while Date() < settled, !tv.log().contains("tv: Flows are not being saved") { usleep(100_000) }
        // A failure is said with the way on for what is there (not `tv content delete`).
        #expect(!tv.log().contains("`tv content delete`"), "\(tv.log())")
        if tv.log().contains("tv: Flows are not being saved") {
            #expect(tv.log().contains("tv: Flows are not being saved: The disk holding the data folder is full (\(box.dataDir)/tunnelvision.sqlite3 cannot grow); \(wayOn) and try again."), "\(tv.log())")
        }
        try tv.stop()
    }

    @Test("kept content, then full: the banner names flows and content, and `tv content delete` with its bytes; a reading command's failure on the full disk names the same")
    func withContent() throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        // Past the history's 16 MiB reserve, so the first session keeps its content (`HistoryFirst`).
        let disk = try DiskFullRunTests.SmallDisk(at: box.dataDir, megabytes: 24)
        defer {
            disk.unmount()
            withExtendedLifetime(world) {}
        }
        try box.createCA()
        var tv = try world.run("--inspect", "--keep-content")
        let r = try world.curlThrough(tv, ["--http1.1", world.url("/index.html")])
        #expect(r.status == 0 && r.out == "hello from nginx\n", "\(r)")
        _ = try box.closedFlows(1)
        try tv.stop()
        disk.fill()
        let segments = (try? FileManager.default.contentsOfDirectory(atPath: box.dataDir + "/content")) ?? []
        let contentBytes = segments.filter { $0.hasSuffix(".seg") }.reduce(Int64(0)) { sum, name in
            var st = stat()
            return sum + (stat(box.dataDir + "/content/" + name, &st) == 0 ? Int64(st.st_size) : 0)
        }
        try #require(contentBytes > 0, "no segment in \(segments)")

        tv = try world.run("--inspect", "--keep-content")
        #expect(tv.log().contains("\n  disk        full — the disk holding the data folder has no room, so flows and decrypted content cannot be saved until it has some (connections are still forwarded, and flows wait in memory, up to 16,384); free some space on it (`tv content delete` deletes the \(binary(contentBytes)) of kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room)\n"), "\(tv.log())")
        let again = try world.curlThrough(tv, ["--http1.1", world.url("/index.html")])
        #expect(again.status == 0 && again.out == "hello from nginx\n", "\(again)")
        try tv.stop()
        let set = try box.tv("settings", "set", "history.maxAge", "1d", "--yes")
        #expect(set.status == 1 && set.err.hasSuffix("free some space on it (`tv content delete` deletes the \(binary(contentBytes)) of kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room) and try again.\n"), "\(set)")
    }
}
