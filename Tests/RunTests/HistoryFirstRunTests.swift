import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Trial 43 through the real `tv` binary: `tv run --inspect --keep-content` with the decrypted
/// capture on, its data folder on a small tmpfs the test mounts and fills, curl to nginx on
/// 127.0.0.1. When room frees, the flows waiting in memory are written before kept content or
/// the decrypted capture take any of it (`HistoryFirst`): before, content took the 34 MB the
/// trial freed within seconds of the flows being written and 1,870 flows were never written.
/// Needs root (mount); skipped otherwise.
@Suite("tv run: the flow history first on a full disk (trial 43)", .serialized, .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
struct HistoryFirstRunTests {
    /// The bytes free on the file system at `path`.
    func freeBytes(_ path: String) -> Int64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return -1 }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Makes the disk's filler leave `bytes` free (it was the whole disk's).
    func leave(_ bytes: Int64, on disk: DiskFullRunTests.SmallDisk) {
        disk.free()
        let fd = open(disk.filler, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let block = [UInt8](repeating: 0, count: 65_536)
        var left = freeBytes(disk.path) - bytes
        while left > 0 {
            let n = block.withUnsafeBytes { write(fd, $0.baseAddress, Int(min(Int64($0.count), left))) }
            guard n > 0 else { break }
            left -= Int64(n)
        }
    }

    func get(_ world: RunWorld, _ tv: TVSession, _ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try world.curlThrough(tv, ["--http1.1", "-s", "-o", "/dev/null", "-w", "%{http_code}", world.url(path)], sourceLocation: sourceLocation)
        #expect(r.status == 0 && r.out == "200", "\(r)", sourceLocation: sourceLocation)
    }

    @Test("1 MiB freed on the full disk while 20 downloads come: the waiting flows and the new ones are all written, kept content and the decrypted capture take none of it (held, counted; once the flows are written, held for the 16 MiB reserve and said so); every room freed: content and the capture resume; the stop loses no flow")
    func flowsAreWrittenBeforeContentTakesTheRoom() throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        let disk = try DiskFullRunTests.SmallDisk(at: box.dataDir, megabytes: 40)
        defer {
            disk.unmount()
            withExtendedLifetime(world) {}
        }
        try box.createCA()
        #expect(try box.tv("settings", "set", "capture.decrypted", "on").status == 0)
        // 1 MiB answers: a 64 KiB turn of kept content each, and 1 MiB of the decrypted capture.
        try Data((0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: world.www + "/1m.bin"))
        let tv = try world.run("--inspect", "--keep-content")
        try get(world, tv, "/index.html")
        _ = try box.closedFlows(1)

        // Full: flows wait in memory, content and the capture are not saved. The flow writer's
        // first failure empties its WAL (`FullDiskWrites`), so the disk is filled again after it.
        disk.fill()
        try get(world, tv, "/1m.bin")
        _ = try box.waitForStatus { ($0.object("recording")?.int("flowWritesFailed") ?? 0) > 0 }
        disk.fill()
        for _ in 0..<5 { try get(world, tv, "/1m.bin") }
        var status = try box.waitForStatus { status in
            let stored = (try? box.flowRows().count) ?? -1
            return status.int("accepted") == 7 && status.int("openConnections") == 0 && stored < 7
                && status.object("recording")?.string("flowsFailing") == "on" && status.object("recording")?.int("flowsWaiting") == 7 - stored
                && status.object("recording")?.string("contentFailing") == "on" && status.object("decryptedCapture")?.string("failing") == "on"
        }
        let keptTurns = status.object("content")?.int("turnsKept")
        let capturePackets = status.object("decryptedCapture")?.int("packetsWritten")
        #expect(keptTurns != nil && capturePackets != nil, "\(status)")

        // 1 MiB freed, and 20 downloads at once (1.25 MiB of content to keep, 20 MiB to capture):
        // the flows are written first; content and the capture take none of the room (before,
        // content wrote its turns into it at once, and the flows, retried a second later, failed).
        leave(1 << 20, on: disk)
        for _ in 0..<20 { try get(world, tv, "/1m.bin") }
        status = try box.waitForStatus { status in
            status.int("accepted") == 27 && status.int("openConnections") == 0
                && status.object("recording")?.string("flowsFailing") == "off" && status.object("recording")?.int("flowsWaiting") == 0
        }
        #expect(try box.closedFlows(27).count == 27)
        #expect(status.object("recording")?.int("flowsNotSaved") == 0 && status.object("recording")?.int("flowUpdatesNotSaved") == 0, "\(status)")
        #expect(tv.log().contains("tv: Recording resumed: flows are saved again, none was lost."), "\(tv.log())")
        // The flows written, one more download: content and the capture leave the disk, still
        // short of room, to the history (`HistoryFirst.reserveBytes`), and say why. (Held while
        // the flows waited, they said that instead.)
        let reserve = "The disk holding the data folder has "
        try get(world, tv, "/1m.bin")
        status = try box.waitForStatus { status in
            status.int("accepted") == 28 && status.int("openConnections") == 0
                && status.object("recording")?.string("lastContentError")?.hasPrefix(reserve) == true
                && status.object("decryptedCapture")?.string("lastError")?.hasPrefix(reserve) == true
        }
        #expect(try box.closedFlows(28).count == 28)
        // Nothing of content or the capture was written.
        #expect(status.object("content")?.int("turnsKept") == keptTurns, "\(status)")
        #expect(status.object("decryptedCapture")?.int("packetsWritten") == capturePackets, "\(status)")
        #expect(status.object("recording")?.string("contentFailing") == "on", "\(status)")
        #expect(status.object("recording")?.string("lastContentError")?.hasPrefix(reserve) == true, "\(status)")
        #expect(status.object("recording")?.string("lastContentError")?.contains(" free, within the 16.0 MiB kept for the flow history: decrypted content takes none of it; ") == true, "\(status)")
        #expect(status.object("decryptedCapture")?.string("lastError")?.hasPrefix(reserve) == true, "\(status)")
        let notSaved = status.object("recording")?.int("contentTurnsNotSaved") ?? 0
        #expect(notSaved >= 42, "\(status)")

        // Every room freed: content resumes with the next turns, the capture in a new file.
        disk.free()
        status = try box.waitForStatus { status in
            if status.object("recording")?.string("contentFailing") == "off", status.object("decryptedCapture")?.string("failing") == "off" { return true }
            try? get(world, tv, "/index.html")
            return false
        }
        #expect((status.object("content")?.int("turnsKept") ?? 0) > (keptTurns ?? 0), "\(status)")
        #expect(tv.log().contains("tv: Recording resumed: decrypted content is saved again ("), "\(tv.log())")
        #expect(tv.log().contains("tv: Recording resumed: the decrypted capture is saved again in "), "\(tv.log())")
        let stop = try tv.stop()
        #expect(stop.status == 0 && stop.out.range(of: #"\d+ flows? never written"#, options: .regularExpression) == nil
                && stop.out.range(of: #"\d+ flows? without their last update"#, options: .regularExpression) == nil
                && stop.out.contains(" turns of decrypted content never written"), "\(stop.out)")
    }

    @Test("the first fill (trial 44): with 18 MiB free, 12 downloads with content kept and the decrypted capture on: they stop at the history's 16 MiB reserve, held and said once; every flow row is written and no flow write fails; the stop loses no flow")
    func contentYieldsBeforeTheFirstFill() throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        let disk = try DiskFullRunTests.SmallDisk(at: box.dataDir, megabytes: 40)
        defer {
            disk.unmount()
            withExtendedLifetime(world) {}
        }
        try box.createCA()
        #expect(try box.tv("settings", "set", "capture.decrypted", "on").status == 0)
        try Data((0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: world.www + "/1m.bin"))
        let tv = try world.run("--inspect", "--keep-content")
        try get(world, tv, "/index.html")
        _ = try box.closedFlows(1)
        // 2 MiB past the reserve: 12 MiB of plaintext to capture would fill it (before, the capture
        // took the disk and the flows that followed failed; nothing had failed yet to hold it).
        leave(18 << 20, on: disk)
        for _ in 0..<12 { try get(world, tv, "/1m.bin") }
        let reserve = "The disk holding the data folder has "
        let status = try box.waitForStatus { status in
            status.int("accepted") == 13 && status.int("openConnections") == 0
                && status.object("decryptedCapture")?.string("failing") == "on"
                && status.object("decryptedCapture")?.string("lastError")?.hasPrefix(reserve) == true
        }
        #expect(try box.closedFlows(13).count == 13)
        #expect(status.object("recording")?.int("flowWritesFailed") == 0, "\(status)")
        #expect(status.object("recording")?.string("flowsFailing") == "off", "\(status)")
        #expect(status.object("decryptedCapture")?.string("lastError")?.contains(" free, within the 16.0 MiB kept for the flow history: the decrypted capture takes none of it; free some space on it (`tv content delete` deletes the ") == true, "\(status)")
        #expect((status.object("decryptedCapture")?.int("packetsNotSaved") ?? 0) > 0, "\(status)")
        // The reserve is the history's: content and the capture left 16 MiB, of which the flows
        // took what they needed (13 flows: some KiB).
        #expect(freeBytes(disk.path) >= HistoryFirstRunTests.reserve - (1 << 20), "\(freeBytes(disk.path)) free")
        // Said once, as the hold it is (not a failed write).
        #expect(tv.log().components(separatedBy: "tv: The decrypted capture is not being saved: The disk holding the data folder has ").count == 2, "\(tv.log())")
        #expect(!tv.log().contains("tv: Flows are not being saved"), "\(tv.log())")
        let stop = try tv.stop()
        #expect(stop.status == 0 && stop.out.range(of: #"\d+ flows? never written"#, options: .regularExpression) == nil, "\(stop.out)")
        #expect(stop.out.contains(" of the decrypted capture never written"), "\(stop.out)")
    }

    /// `HistoryFirst.reserveBytes`.
    static let reserve: Int64 = 16 << 20
}
