import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The decrypted capture (`capture.decrypted`) through the real `tv` binary, curl through `tv run
/// --inspect` to nginx on 127.0.0.1, as a new-user trial found it (session 42): on a full disk
/// (a tmpfs the test mounts on the captures folder) it stopped for good without a word, was cut
/// mid-packet by a clean stop and blamed on a kill; it never rotated, `tv captures rotate` and
/// `delete` did not know it, retention kept it 30 days past a 1 h content expiry, and a failed
/// start left an empty one. capinfos reads every file tv leaves.
@Suite("tv run: the decrypted capture on a full disk, rotated, limited, expired like content (session 42's trial)", .serialized)
struct DecryptedCaptureDiskRunTests {
    /// The decrypted captures in the captures folder, by name.
    func decryptedFiles(_ box: Sandbox) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: box.dataDir + "/captures")) ?? []).filter { $0.hasPrefix("decrypted-") }.sorted()
    }

    /// capinfos reads `name` whole (nothing cut short mid-packet).
    func expectWhole(_ box: Sandbox, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try box.tool("capinfos", ["-c", box.dataDir + "/captures/" + name], sourceLocation: sourceLocation)
        #expect(r.status == 0 && !r.all.contains("cut short") && !r.all.contains("appears to be damaged"), "\(name): \(r)", sourceLocation: sourceLocation)
    }

    func size(_ box: Sandbox, _ name: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: box.dataDir + "/captures/" + name)[.size] as? Int) ?? -1
    }

    func get(_ world: RunWorld, _ tv: TVSession, _ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try world.curlThrough(tv, ["--http1.1", "-s", "-o", "/dev/null", "-w", "%{http_code}", world.url(path)], sourceLocation: sourceLocation)
        #expect(r.status == 0 && r.out == "200", "\(r)", sourceLocation: sourceLocation)
    }

    @Test("a full disk: said once on stderr, counted in tv status (text and JSON) and tv diag, the file closed whole (not Recording); room again: resumed in a new file; tv stop on the full disk says what the decrypted capture lost and leaves every file whole, and the next start blames no kill",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func fullDiskSaidCountedResumedAndWholeAtStop() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let captures = box.dataDir + "/captures"
        try FileManager.default.createDirectory(atPath: captures, withIntermediateDirectories: true)
        let disk = try DiskFullRunTests.SmallDisk(at: captures, megabytes: 2)
        defer {
            disk.unmount()
            withExtendedLifetime(world) {}
        }
        #expect(try box.tv("settings", "set", "capture.decrypted", "on").status == 0)
        let tv = try world.run("--inspect")
        try get(world, tv, "/index.html")
        _ = try box.closedFlows(1)
        let first = try #require(decryptedFiles(box).first)

        // Full: the transfers go on, the capture's failure is said once and counted.
        disk.fill()
        try get(world, tv, "/10m.bin")
        try get(world, tv, "/10m.bin")
        // A reading command has the session flush its writers first: the counts are settled.
        _ = try box.closedFlows(3)
        var status = try box.waitForStatus() { $0.object("decryptedCapture")?.string("failing") == "on" && $0.int("openConnections") == 0 }
        let failing = try #require(status.object("decryptedCapture"), "\(status)")
        #expect(failing.int("packetsNotSaved") ?? 0 > 0 && failing.int("bytesNotSaved") ?? 0 > 1_000_000, "\(failing)")
        // The two downloads' flows (and the first request's, when its packets were still in the
        // tail held back from the disk as it filled).
        #expect((2...3).contains(failing.int("flowsNotSaved") ?? 0) && failing.int("failedWrites") ?? 0 > 0 && failing["recording"] == nil, "\(failing)")
        #expect(failing.string("lastError")?.hasPrefix("The disk holding the data folder is full (\(captures)/decrypted-") == true, "\(failing)")
        #expect(tv.log().components(separatedBy: "tv: The decrypted capture is not being saved: The disk holding the data folder is full").count == 2, "\(tv.log())")
        let text = try box.tv("status").out
        #expect(text.contains("  decrypted capture no file open while writes fail, ") && text.contains("  decrypted capture \(grouped(failing.int("packetsNotSaved") ?? 0)) packets not saved ("), "\(text)")
        let diag = try box.tv("diag").out
        #expect(diag.contains("  decrypted capture   no file open while writes fail") && diag.contains("    not saved         "), "\(diag)")
        // The file it was writing is closed, whole, and listed so.
        let listed = try box.tv("captures").out
        #expect(listed.contains("  \(first)  ") && listed.contains("closed") && !listed.contains("Recording"), "\(listed)")
        try expectWhole(box, first)

        // Room again: the next packets go to a new file, and that is said. A new file is tried
        // with backoff (1 s, doubling), so requests go on until one lands in it.
        disk.free()
        var requests = 3
        status = try box.waitForStatus() { status in
            if status.object("decryptedCapture")?.string("failing") == "off" { return status.object("decryptedCapture")?.string("recording") != nil }
            try? get(world, tv, "/index.html")
            requests += 1
            return false
        }
        let second = try #require(status.object("decryptedCapture")?.string("recording"))
        #expect(second != first && decryptedFiles(box) == [first, second].sorted(), "\(decryptedFiles(box))")
        #expect(tv.log().contains("tv: Recording resumed: the decrypted capture is saved again in \(second) ("), "\(tv.log())")

        // Full again, and stopped so: the stop says what the decrypted capture lost, every file is whole.
        disk.fill()
        try get(world, tv, "/10m.bin")
        _ = try box.closedFlows(requests + 1)
        let stop = try tv.stop()
        #expect(stop.status == 0 && stop.out.hasPrefix("Stopped the session; not everything was saved in \(box.dataDir): ")
                && stop.out.contains(" packets of the decrypted capture never written ("), "\(stop)")
        #expect(tv.log().contains("tv stopped; not everything was saved") && !tv.log().contains("everything is saved in"), "\(tv.log())")
        for name in decryptedFiles(box) { try expectWhole(box, name) }
        disk.free()
        // The next session finds nothing to repair: tv closed its own files whole.
        #expect(try box.tv("settings", "set", "capture.decrypted", "off").status == 0)
        let next = try world.run()
        try next.stop()
        #expect(!next.log().contains("left open by a session that was killed"), "\(next.log())")
    }

    @Test("a clean tv stop with the disk full under the held tail: the decrypted capture is left whole (it was cut mid-packet, and the next start blamed a kill), and the stop's summary says what it lost",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func cleanStopOnAFullDiskLeavesItWhole() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let captures = box.dataDir + "/captures"
        try FileManager.default.createDirectory(atPath: captures, withIntermediateDirectories: true)
        let disk = try DiskFullRunTests.SmallDisk(at: captures, megabytes: 8)
        defer {
            disk.unmount()
            withExtendedLifetime(world) {}
        }
        // An odd length: the file's last packets end inside a disk block, held back from O_DIRECT.
        try Data((0..<1_000_003).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: world.www + "/1m.bin"))
        #expect(try box.tv("settings", "set", "capture.decrypted", "on").status == 0)
        let tv = try world.run("--inspect")
        try get(world, tv, "/1m.bin")
        // Not a reading command (it would have the session write the held tail): the status alone.
        _ = try box.waitForStatus() { $0.int("openConnections") == 0 && $0.object("closed")?.int("inspected") == 1 }
        // The writer's batches reach the file on its own schedule: the disk is filled once the
        // response's bulk is there, so only the held tail meets it (filled earlier, nothing had
        // been written, the empty file was removed at stop, and the test found none: a full run).
        let written = Date().addingTimeInterval(15)
        while Date() < written, (decryptedFiles(box).first.map { size(box, $0) } ?? 0) < 900_000 { usleep(100_000) }
        disk.fill()
        let stop = try tv.stop()
        let name = try #require(decryptedFiles(box).first)
        try expectWhole(box, name)
        #expect(stop.status == 0, "\(stop)")
        // What the full disk took is said (or nothing was lost, when the tail had been written in time).
        #expect(stop.out.contains(" packets of the decrypted capture never written (") || stop.out.contains(" packet of the decrypted capture never written (")
                || stop.out.hasPrefix("Stopped the session; everything is saved in"), "\(stop)")
        disk.free()
        #expect(try box.tv("settings", "set", "capture.decrypted", "off").status == 0)
        let next = try world.run()
        try next.stop()
        #expect(!next.log().contains("left open by a session that was killed"), "\(next.log())")
        try expectWhole(box, name)
    }

    @Test("capture.rotateBytes 1MB and captures.maxBytes 6MB: the decrypted capture rotates near 1 MB, retention keeps the folder near the limit (never the file being written), tv captures rotate closes it, tv captures delete NAME deletes a closed one and refuses the one being written")
    func rotatedLimitedRotatedAndDeleted() throws {
        let world = try RunWorld()
        let box = world.sandbox
        defer { withExtendedLifetime(world) {} }
        for (name, value) in [("capture.decrypted", "on"), ("capture.rotateBytes", "1MB"), ("captures.maxBytes", "6MB")] {
            let set = try box.tv("settings", "set", name, value, "--yes")
            #expect(set.status == 0, "\(set)")
        }
        let tv = try world.run("--inspect")
        try get(world, tv, "/10m.bin")
        try get(world, tv, "/10m.bin")
        _ = try box.closedFlows(2)
        // Each rotation runs a retention pass: the closed files go, oldest first, until the
        // decrypted captures fit the limit (the open one may be up to a file over it).
        let deadline = Date().addingTimeInterval(30)
        var total = Int.max
        while Date() < deadline {
            total = decryptedFiles(box).reduce(0) { $0 + size(box, $1) }
            if total <= 7 << 20 { break }
            usleep(200_000)
        }
        #expect(total <= 7 << 20, "\(decryptedFiles(box).map { "\($0) \(size(box, $0))" })")
        let files = decryptedFiles(box)
        #expect(files.count >= 5, "\(files)")
        for name in files {
            #expect(size(box, name) < (1 << 20) + 70_000, "\(name) is \(size(box, name)) bytes")
            try expectWhole(box, name)
        }
        #expect(tv.log().range(of: #"tv: Deleted \d+ decrypted captures? \("#, options: .regularExpression) != nil,
                "retention said nothing of what it deleted: \(tv.log())")

        // `tv captures rotate` closes the file being written (the next opens with the next packet).
        let json = try box.tv("captures", "--json")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: Any]], "\(json)")
        let recording = entries.first { $0["kind"] as? String == "decrypted" && $0["recording"] as? Bool == true }?["name"] as? String
        let rotate = try box.tv("captures", "rotate")
        if let recording {
            #expect(rotate.status == 0 && rotate.out == "Closed the decrypted capture \(recording); the next opens with the next inspected packet.\n", "\(rotate)")
        } else {
            #expect(rotate.status == 0 && rotate.out.hasPrefix("No decrypted capture file is open"), "\(rotate)")
        }
        #expect(!(try box.tv("captures").out.contains("Recording")))

        // A closed one is deleted by its name, as `tv captures` lists it.
        let closed = try #require(decryptedFiles(box).first)
        let delete = try box.tv("captures", "delete", closed, "--yes")
        #expect(delete.status == 0 && delete.out.hasPrefix("Deleted \(closed); ") && delete.err.contains("Deleting \(closed) ("), "\(delete)")
        #expect(!decryptedFiles(box).contains(closed))
        // The one being written is refused.
        try get(world, tv, "/index.html")
        let status = try box.waitForStatus() { $0.object("decryptedCapture")?.string("recording") != nil }
        let open = try #require(status.object("decryptedCapture")?.string("recording"))
        let refused = try box.tv("captures", "delete", open, "--yes")
        #expect(refused.status == 1 && refused.err == "tv: The decrypted capture \(open) is being written and cannot be deleted; run `tv captures rotate` to close it first, then delete it.\n", "\(refused)")
        // Room counts the closed decrypted captures: they have expiry dates.
        let room = try box.tv("captures", "room")
        #expect(room.status == 0 && !room.out.contains("No capture has closed yet") && room.out.contains("decrypted captures"), "\(room)")
        try tv.stop()
        for name in decryptedFiles(box) { try expectWhole(box, name) }
    }

    @Test("content.expiry 1h: closed decrypted captures older than it expire although captures.maxAge is 30 days (they hold plaintext); tv captures room counts them past their expiry; the one kept is the recent one")
    func closedDecryptedCapturesExpireWithContent() throws {
        let world = try RunWorld()
        let box = world.sandbox
        defer { withExtendedLifetime(world) {} }
        #expect(try box.tv("settings", "set", "capture.decrypted", "on").status == 0)
        #expect(try box.tv("settings", "set", "content.expiry", "1h", "--yes").status == 0)
        for round in 1...3 {
            let tv = try world.run("--inspect")
            try get(world, tv, "/index.html")
            _ = try box.closedFlows(round)
            try tv.stop()
        }
        let files = decryptedFiles(box)
        try #require(files.count == 3, "\(files)")
        // Two of them last written two hours ago.
        let old = Date().addingTimeInterval(-7_200)
        for name in files.prefix(2) {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: box.dataDir + "/captures/" + name)
        }
        let room = try box.tv("captures", "room")
        #expect(room.out.contains("2 captures are already past their expiry and go at the next cleanup (captures are kept 30 days after they close; decrypted captures, which hold plaintext, 1 hour (content.expiry is sooner))."), "\(room)")
        let apply = try box.tv("storage", "apply")
        #expect(apply.status == 0, "\(apply)")
        #expect(decryptedFiles(box) == [files[2]], "\(decryptedFiles(box)) \(apply)")
        // The settings say so.
        let settings = try box.tv("settings").out
        #expect(settings.contains("a decrypted capture, which holds plaintext, at most content.expiry")
                && settings.contains("decrypted captures closed longer ago are deleted"), "\(settings)")
    }

    @Test("a start that fails after the session is made (the web view's port taken) leaves no decrypted capture behind (failed starts left 256-byte empty files listed as closed)")
    func failedStartLeavesNoFile() throws {
        let world = try RunWorld()
        let box = world.sandbox
        defer { withExtendedLifetime(world) {} }
        #expect(try box.tv("settings", "set", "capture.decrypted", "on").status == 0)
        let failed = try box.tvArgs(["run", "--inspect", "--upstream-ca", world.pki.upstreamCA, "--listen", "127.0.0.1:\(freeLoopbackPort())",
                                     "--web", "--web-listen", "127.0.0.1:\(world.nginx.plainPort)"])
        #expect(failed.status != 0, "\(failed)")
        #expect(decryptedFiles(box).isEmpty, "\(decryptedFiles(box))")
        #expect(!(try box.tv("captures").out.contains("decrypted capture")))
    }
}
