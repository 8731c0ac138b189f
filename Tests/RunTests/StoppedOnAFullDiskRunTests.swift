import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Trial 43 through the real `tv` binary: a clean `tv stop` while the data folder's disk (a tmpfs
/// the test mounts) is full, with two tunnels open. Their rows could not get their last update;
/// `tv flow` and the next `tv run` called them left by a session "killed or crashed", though the
/// stop was clean and said so. Needs root (mount); skipped otherwise.
@Suite("tv run: a clean stop on a full disk is not a kill (trial 43)", .serialized, .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
struct StoppedOnAFullDiskRunTests {
    @Test("stopped with the disk full and two tunnels open: tv flow says their session stopped unable to save their end, claims no status, and the next tv run closes them as interrupted saying so, never 'killed or crashed'")
    func cleanStopOnAFullDiskIsNotAKill() throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        let disk = try DiskFullRunTests.SmallDisk(at: box.dataDir, megabytes: 4)
        defer {
            disk.unmount()
            withExtendedLifetime(world) {}
        }
        let tv = try TVSession(box, [])
        let held = try HeldTunnels(box, proxyPort: tv.port)
        defer { held.stop() }
        let carried = try held.waitUntilBothCarried { try box.flowRows() }
        try #require(carried.count == 2, "\(carried)")
        let ids = carried.compactMap { $0.int("id") }

        // Full: a write fails (its WAL emptied after it: `FullDiskWrites`), then full again.
        disk.fill()
        try DiskFullRunTests().requests(1, world, tv)
        _ = try box.waitForStatus { ($0.object("recording")?.int("flowWritesFailed") ?? 0) > 0 }
        disk.fill()
        let stop = try tv.stop()
        #expect(stop.status == 0 && stop.out.hasPrefix("Stopped the session; not everything was saved in "), "\(stop.out)")

        // Before any start: the rows still open say how their session ended.
        let rows = try box.flowRows().filter { ids.contains($0.int("id") ?? 0) }
        let leftOpen = rows.filter { $0["duration"] is NSNull }
        for row in rows {
            let detail = try box.tv("flow", String(row.int("id") ?? 0))
            #expect(detail.status == 0 && !detail.out.contains("killed"), "\(detail)")
            if row["duration"] is NSNull {
                #expect(detail.out.contains("\n  duration     unknown: its session stopped unable to save its end (the disk holding the data folder was full, or its database could not be written); the next tv run or tv exec closes it as interrupted\n"), "\(detail)")
                #expect(detail.out.contains("\n  status       not known — its last update, with how it ended, was never saved; the row holds what tv saved as the connection began\n"), "\(detail)")
            } else {
                // The stop found room for its own end: it closed them itself.
                #expect(row.string("status") == "interrupted", "\(row)")
            }
        }
        print("left open by the stop: \(leftOpen.count) of \(rows.count)")

        // With no session, on the disk still full: tv status and tv diag say what the last
        // session could not save, as its stop did (it left no trace before: trial 43).
        let said = "Stopped the session; not everything was saved in \(box.dataDir): "
        let lostParts = try #require(stop.out.hasPrefix(said) ? String(stop.out.dropFirst(said.count)).components(separatedBy: ". The last error").first : nil)
        let status = try box.tv("status")
        #expect(status.status == 3 && status.out.contains("  The last tv session (pid ") && status.out.contains(", could not save everything: \(lostParts)."), "\(status) \(lostParts)")
        let diag = try box.tv("diag")
        #expect(diag.out.contains("\nThe last tv session (pid ") && diag.out.contains(", could not save everything: \(lostParts)."), "\(diag)")
        let statusJSON = (try? JSONSerialization.jsonObject(with: Data(try box.tv("status", "--json").out.utf8)) as? JSON) ?? [:]
        #expect((statusJSON["lastStop"] as? JSON)?.int("flowUpdatesNotSaved") == leftOpen.count, "\(statusJSON)")

        disk.free()
        held.releaseClients()
        let next = try TVSession(box, [])
        #expect(!next.log().contains("killed or crashed"), "\(next.log())")
        if !leftOpen.isEmpty {
            let n = leftOpen.count
            #expect(next.log().contains("\(n == 1 ? "1 flow" : "\(n) flows") left open by an earlier tv session that stopped unable to save \(n == 1 ? "its" : "their") end (the disk holding the data folder was full, or its database could not be written) \(n == 1 ? "is" : "are") now closed as interrupted"), "\(next.log())")
        }
        let after = try box.flowRows().filter { ids.contains($0.int("id") ?? 0) }
        #expect(after.count == 2 && after.allSatisfy { $0.string("status") == "interrupted" }, "\(after)")
        try next.stop()
        // That session saved everything: nothing more is said.
        #expect(!(try box.tv("status").out.contains("The last tv session")))
        let marks = try FileManager.default.contentsOfDirectory(atPath: box.dataDir).filter { $0.hasSuffix(".lock") || $0.hasSuffix(".stopped") }
        #expect(marks == [])
    }
}
