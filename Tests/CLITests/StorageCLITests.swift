import FlowStore
import FlowTerms
import Foundation
import Recording
import TVHome
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 19 through the real `tv`: retention takes rows and files together (`tv storage apply`,
/// a changed limit, a session's start and a limit changed under it), delete-everything, a
/// `kill -9` in the middle of a pass, and `tv storage` figures.
@Suite(.serialized) struct StorageCLITests {
    static let day: Int64 = 86_400_000_000
    static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }

    /// Flows through the real writer, closed (a duration), started `daysAgo` days ago.
    static func writeFlows(_ dataDir: String, daysAgo: [Double], host: (Int) -> String = { "host\($0).test" }) throws {
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        let store = try FlowStore(path: dataDir + "/tunnelvision.sqlite3")
        let writer = try store.makeWriter()
        let now = StorageCLITests.now
        for (i, days) in daysAgo.enumerated() {
            var flow = FlowRecord(startTime: now - Int64(days * Double(day)), clientAddress: "127.0.0.1", clientPort: 40_000 + i,
                                  serverAddress: "192.0.2.\(i % 250 + 1)", serverPort: 443, host: host(i), hostOrigin: .sni,
                                  status: .encrypted)
            flow.duration = 1_000
            writer.open(flow)
        }
        writer.close()
        store.close()
    }

    static func capture(_ database: SQLiteDatabase, dataDir: String, seq: Int, endedDaysAgo: Double, bytes: Int) throws {
        let folder = dataDir + "/captures"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let name = String(format: "capture-%06d.pcapng", seq)
        _ = FileManager.default.createFile(atPath: folder + "/" + name, contents: Data(repeating: 0x0a, count: bytes))
        let ended = now - Int64(endedDaysAgo * Double(day))
        try database.execute("INSERT INTO captures (seq, path, started_at, ended_at, bytes, packets, snaplen, recording) VALUES (\(seq), 'captures/\(name)', \(ended - 1_000_000), \(ended), \(bytes), 1, 65535, 0)")
    }

    static func packet(_ database: SQLiteDatabase, flow: Int64, n: Int, capture: Int) throws {
        try database.execute("INSERT INTO packets (flow_id, n, capture_seq, file_offset, time_us, direction, orig_len, incl_len, meaning) VALUES (\(flow), \(n), \(capture), \(100 * n), 0, 'client_to_server', 60, 60, 'data')")
    }

    static func integer(_ database: SQLiteDatabase, _ sql: String) throws -> Int64 {
        if case let .integer(n) = try database.scalar(sql) { return n }
        return -1
    }

    /// Content for flows `ids` through the real content writer (recorded now: not expired).
    static func keepContent(_ dataDir: String, flows ids: [Int64]) throws {
        var configuration = ContentWriterConfiguration(databasePath: dataDir + "/tunnelvision.sqlite3", directory: dataDir + "/content")
        configuration.sweepInterval = 3_600
        let session = ContentRecorder(writer: try ContentWriter(configuration), policy: ContentPolicy(keep: true))
        for id in ids {
            let recorder = try #require(session.recorder(flow: id))
            recorder.record(.clientToServer, at: 0, Array("GET / HTTP/1.1\r\n\r\n".utf8))
            recorder.finish()
        }
        session.writer.close()
    }

    @Test("tv storage apply: an old flow goes with its packets, content and name; an expired capture goes with its row, and packet rows of kept flows that pointed into it say the bytes are gone; a second pass finds nothing and says so")
    func applyCutsRowsAndFilesTogether() throws {
        try withSandbox { s in
            try StorageCLITests.writeFlows(s.dataDir, daysAgo: [40, 1])   // flow 1 old, flow 2 young
            try StorageCLITests.keepContent(s.dataDir, flows: [1, 2])
            let database = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            try StorageCLITests.capture(database, dataDir: s.dataDir, seq: 1, endedDaysAgo: 40, bytes: 100)
            try StorageCLITests.capture(database, dataDir: s.dataDir, seq: 2, endedDaysAgo: 1, bytes: 200)
            try StorageCLITests.packet(database, flow: 1, n: 1, capture: 1)
            try StorageCLITests.packet(database, flow: 2, n: 1, capture: 1)
            try StorageCLITests.packet(database, flow: 2, n: 2, capture: 2)
            // Issue 16's exchange rows: one for the old flow, one for the kept one.
            try database.execute("""
                INSERT INTO exchanges (flow_id, seq, http_version, method, path, request_time, state)
                    VALUES (1, 1, 'HTTP/1.1', 'GET', '/', 0, 'complete'), (2, 1, 'HTTP/1.1', 'GET', '/', 0, 'complete');
                """)
            try database.execute("INSERT INTO host_names (address, name, first_seen, last_seen) VALUES ('192.0.2.1', 'old.test', 0, \(StorageCLITests.now - 40 * StorageCLITests.day)), ('192.0.2.2', 'new.test', 0, \(StorageCLITests.now))")
            database.close()

            let r = try s.tv("storage", "apply")
            #expect(r.status == 0, "\(r)")
            #expect(r.out == """
                Deleted 1 connection (with 1 packet row, 1 exchange, 1 content turn), 1 name, 1 capture file (100 B).
                1 packet row of a connection still in the history now says its bytes are gone with their capture file.

                """, "\(r)")
            let after = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            defer { after.close() }
            #expect(try StorageCLITests.integer(after, "SELECT count(*) FROM flows") == 1)
            #expect(try StorageCLITests.integer(after, "SELECT id FROM flows") == 2)
            #expect(try StorageCLITests.integer(after, "SELECT count(*) FROM content_turn_runs WHERE flow_id = 1") == 0)
            #expect(try StorageCLITests.integer(after, "SELECT turn_count FROM content_turn_runs WHERE flow_id = 2") == 1)
            #expect(try StorageCLITests.integer(after, "SELECT count(*) FROM packets WHERE flow_id = 1") == 0)
            #expect(try StorageCLITests.integer(after, "SELECT sum(flow_id) * count(*) FROM exchanges") == 2)
            // The kept flow's packet rows stay; the one into capture 1 reads as "bytes gone" through its row's deleted_at.
            #expect(try StorageCLITests.integer(after, "SELECT count(*) FROM packets WHERE flow_id = 2") == 2)
            #expect(try StorageCLITests.integer(after, "SELECT count(*) FROM captures WHERE deleted_at IS NULL") == 1)
            #expect(try StorageCLITests.integer(after, "SELECT seq FROM captures WHERE deleted_at IS NULL") == 2)
            #expect(try StorageCLITests.integer(after, "SELECT count(*) FROM captures WHERE seq = 1 AND deleted_at IS NOT NULL AND recording = 0") == 1)
            #expect(try StorageCLITests.integer(after, "SELECT count(*) FROM host_names") == 1)
            #expect(!FileManager.default.fileExists(atPath: s.dataDir + "/captures/capture-000001.pcapng"))
            #expect(FileManager.default.fileExists(atPath: s.dataDir + "/captures/capture-000002.pcapng"))
            let again = try s.tv("storage", "apply")
            #expect(again.out == "Everything is within its limits; nothing was deleted.\n", "\(again)")
        }
    }

    /// A trial's data folder alone on a full tmpfs: `tv settings set captures.maxBytes 1MB --yes`
    /// and `tv storage apply` both said "free some space" and deleted nothing, though the data
    /// folder held 40.6 MiB that tv's limits doomed.
    @Test("on a full disk: tv settings set says so and names what frees room without needing any; tv storage apply deletes the decrypted captures its limits doom first, then the old flows in the room made (it deleted nothing); with only rows to delete it names the way on",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func applyOnAFullDisk() throws {
        try withSandbox { s in
            try FileManager.default.createDirectory(atPath: s.dataDir, withIntermediateDirectories: false)
            let mounted = try s.tool("mount", ["-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", s.dataDir])
            try #require(mounted.status == 0, "tmpfs could not be mounted: \(mounted)")
            defer { _ = try? s.tool("umount", ["-l", s.dataDir]) }
            try StorageCLITests.writeFlows(s.dataDir, daysAgo: [40, 40, 1])
            try FileManager.default.createDirectory(atPath: s.dataDir + "/captures", withIntermediateDirectories: true)
            let decrypted = s.dataDir + "/captures/decrypted-20261101-000000.pcapng"
            _ = FileManager.default.createFile(atPath: decrypted, contents: Data(repeating: 0x0a, count: 1 << 20))
            _ = FileManager.default.createFile(atPath: s.dataDir + "/settings.json", contents: Data("{\"captures.maxBytes\": \"512KB\"}\n".utf8))
            let full = try s.tool("dd", ["if=/dev/zero", "of=\(s.dataDir)/filler", "bs=65536"])
            #expect(full.status != 0, "the disk is not full: \(full)")

            let set = try s.tv("settings", "set", "history.maxAge", "1d", "--yes")
            // The way on names what is there: the 1 MiB decrypted capture (trial 44: named whatever was there).
            #expect(set.status == 1 && set.err == "tv: Could not save history.maxAge to \(s.dataDir)/settings.json: the disk holding the data folder is full, so nothing changed and the old value is still in force; free some space on it (`tv content delete` deletes the 1.0 MiB of kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room) and try again.\n", "\(set)")
            let apply = try s.tv("storage", "apply")
            #expect(apply.status == 0, "\(apply)")
            #expect(apply.out == "Deleted 2 connections, 1 decrypted capture (1.0 MiB).\n", "\(apply)")
            #expect(!FileManager.default.fileExists(atPath: decrypted))
            let after = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            #expect(try StorageCLITests.integer(after, "SELECT count(*) FROM flows") == 1)
            after.close()

            // Full again, with an old flow and nothing else: no file to delete first.
            let database = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            try database.execute("UPDATE flows SET start_time = start_time - \(40 * StorageCLITests.day)")
            database.close()
            _ = try s.tool("dd", ["if=/dev/zero", "of=\(s.dataDir)/filler2", "bs=4096"])
            // Rows to delete and no room: a failure, whose way on names no content (there is none)
            // but the history's bytes (trial 44: it named `tv content delete`).
            func historyBytes() -> Int64 {
                ["", "-wal"].reduce(Int64(0)) { sum, suffix in
                    var st = stat()
                    return sum + (stat(s.dataDir + "/tunnelvision.sqlite3" + suffix, &st) == 0 ? Int64(st.st_size) : 0)
                }
            }
            let refused = try s.tv("storage", "apply")
            let historyOnly = "free some space on it outside the data folder: no decrypted content or capture is kept to delete, and the history's \(ByteWords.binary(historyBytes())) shrinks only by deleting rows, which needs a little room first (`tv storage` shows what takes the room)"
            #expect(refused.status == 1 && refused.err == "tv: The disk holding the data folder is full (\(s.dataDir)/tunnelvision.sqlite3 cannot grow); \(historyOnly) and try again.\n", "\(refused)")

            // Nothing over the limits on the full disk: nothing to delete under them, said as
            // such, and no failure (it exited 1 with the disk-full error: trial 44).
            _ = try s.tool("rm", ["-f", "\(s.dataDir)/filler2"])
            let recent = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            try recent.execute("UPDATE flows SET start_time = start_time + \(40 * StorageCLITests.day)")
            recent.close()
            _ = try s.tool("dd", ["if=/dev/zero", "of=\(s.dataDir)/filler2", "bs=4096"])
            let nothing = try s.tv("storage", "apply")
            #expect(nothing.status == 0 && nothing.err.isEmpty, "\(nothing)")
            #expect(nothing.out == "Nothing was deleted: the disk holding the data folder is full, and nothing in it is over the limits (history.maxAge, captures.maxBytes, captures.maxAge, content.expiry) to delete under them; free some space on it outside the data folder: no decrypted content or capture is kept to delete, and the history's \(ByteWords.binary(historyBytes())) shrinks only by deleting rows, which needs a little room first (`tv storage` shows what takes the room).\n", "\(nothing)")
        }
    }

    @Test("a captures limit that would delete capture files is refused with the count and saved with --yes (a re-check's 1MB deleted one without a word)")
    func captureLimitAsksFirst() throws {
        try withSandbox { s in
            try StorageCLITests.writeFlows(s.dataDir, daysAgo: [1])
            let database = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            try StorageCLITests.capture(database, dataDir: s.dataDir, seq: 1, endedDaysAgo: 3, bytes: 2_000)
            try StorageCLITests.capture(database, dataDir: s.dataDir, seq: 2, endedDaysAgo: 1, bytes: 3_000)
            database.close()
            let age = try s.tv("settings", "set", "captures.maxAge", "2d")
            #expect(age.status == 1 && age.err == "tv: captures.maxAge 2d deletes 1 capture file (2.0 KiB) that the limits in force keep, as soon as it is saved; add --yes to save it.\n", "\(age)")
            // A value that is not one is refused as such first (`1B` was said to delete files: a trial).
            let tiny = try s.tv("settings", "set", "captures.maxBytes", "1B")
            #expect(tiny.status == 2 && tiny.err.hasPrefix("tv: captures.maxBytes takes 1MB or more (or off)"), "\(tiny)")
            #expect(FileManager.default.fileExists(atPath: s.dataDir + "/captures/capture-000001.pcapng"))
            #expect(try s.tv("settings", "get", "captures.maxAge").out == "30d\n")
            // One that deletes nothing needs no --yes; with --yes the file goes.
            #expect(try s.tv("settings", "set", "captures.maxAge", "5d").status == 0)
            // A file already past the limits in force (one came while they were saved) is not
            // blamed on a looser value: 6d is saved without --yes (it was refused for it: a trial).
            let late = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            try StorageCLITests.capture(late, dataDir: s.dataDir, seq: 3, endedDaysAgo: 10, bytes: 1_000)
            late.close()
            let looser = try s.tv("settings", "set", "captures.maxAge", "6d")
            #expect(looser.status == 0, "\(looser)")
            let yes = try s.tv("settings", "set", "captures.maxAge", "2d", "--yes")
            #expect(yes.status == 0 && yes.out.contains("1 capture file"), "\(yes)")
            #expect(!FileManager.default.fileExists(atPath: s.dataDir + "/captures/capture-000001.pcapng"))
        }
    }

    @Test("a captures.maxBytes below a file being recorded says that file goes once it closes (a trial's running tv exec lost its 40 MiB capture after a consent that counted the saved files only)")
    func captureLimitCountsTheFileBeingRecorded() throws {
        try withSandbox { s in
            try StorageCLITests.writeFlows(s.dataDir, daysAgo: [1])
            let database = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            try StorageCLITests.capture(database, dataDir: s.dataDir, seq: 1, endedDaysAgo: 1, bytes: 1_500_000)
            try StorageCLITests.capture(database, dataDir: s.dataDir, seq: 2, endedDaysAgo: 0, bytes: 3_000_000)
            try database.execute("UPDATE captures SET ended_at = NULL, recording = 1 WHERE seq = 2")
            database.close()
            // The limit takes at least the rotation size (files rotated at 1 MB from now on).
            #expect(try s.tv("settings", "set", "capture.rotateBytes", "1MB").status == 0)
            // Held as a writer holds it (`CaptureFolder.isRecording`).
            let held = open(s.dataDir + "/captures/capture-000002.pcapng", O_RDONLY)
            #expect(held >= 0 && flock(held, LOCK_EX) == 0)
            defer { close(held) }
            let both = try s.tv("settings", "set", "captures.maxBytes", "2MB")
            #expect(both.status == 1 && both.err == "tv: captures.maxBytes 2MB deletes 1 capture file (1.4 MiB) that the limits in force keep, as soon as it is saved, and the file being recorded now (2.9 MiB) once it closes (when its session stops or the file rotates); add --yes to save it.\n", "\(both)")
            // With --yes the saved file goes now; the one being written stays while it is.
            let yes = try s.tv("settings", "set", "captures.maxBytes", "2MB", "--yes")
            #expect(yes.status == 0, "\(yes)")
            #expect(!FileManager.default.fileExists(atPath: s.dataDir + "/captures/capture-000001.pcapng"))
            #expect(try s.tv("settings", "set", "captures.maxBytes", "5MB").status == 0)
            // Only the file being recorded is past the new limit: said as such.
            let later = try s.tv("settings", "set", "captures.maxBytes", "2MB")
            #expect(later.status == 1 && later.err == "tv: captures.maxBytes 2MB deletes the file being recorded now (2.9 MiB) once it closes (when its session stops or the file rotates): the limits in force keep it; add --yes to save it.\n", "\(later)")
            // Agreed beforehand, it is said all the same: the file goes later, when it closes.
            let agreed = try s.tv("settings", "set", "captures.maxBytes", "2MB", "--yes")
            #expect(agreed.status == 0 && agreed.out.contains("\nAs agreed with --yes: captures.maxBytes 2MB deletes the file being recorded now (2.9 MiB) once it closes (when its session stops or the file rotates): the limits in force keep it.\n"), "\(agreed)")
            // Still written: not deleted now.
            #expect(FileManager.default.fileExists(atPath: s.dataDir + "/captures/capture-000002.pcapng"))
        }
    }

    @Test("a shorter content.expiry that deletes kept turns says how many and is saved only with --yes; a longer one is saved at once (a trial's 1h deleted 1,029 turns unasked)")
    func contentExpiryAsksFirst() throws {
        try withSandbox { s in
            try StorageCLITests.writeFlows(s.dataDir, daysAgo: [0.2, 0.1])
            try StorageCLITests.keepContent(s.dataDir, flows: [1, 2])
            let database = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            try database.execute("UPDATE content_turn_runs SET recorded_at = recorded_at - 3 * 3600 * 1000000 WHERE flow_id = 1")
            database.close()
            let asked = try s.tv("settings", "set", "content.expiry", "1h")
            #expect(asked.status == 1 && asked.err.hasPrefix("tv: content.expiry 1h deletes 1 decrypted turn that 1d keeps (those recorded before ")
                    && asked.err.hasSuffix("), as soon as it is saved; add --yes to save it.\n"), "\(asked)")
            #expect(try s.tv("settings", "get", "content.expiry").out == "1d\n")
            let longer = try s.tv("settings", "set", "content.expiry", "1w")
            #expect(longer.status == 0 && longer.out == "Saved content.expiry = 1w (was 1d).\n", "\(longer)")
            let agreed = try s.tv("settings", "set", "content.expiry", "1h", "--yes")
            #expect(agreed.status == 0 && agreed.out.hasPrefix("Saved content.expiry = 1h (was 1w).\n"), "\(agreed)")
            let left = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            defer { left.close() }
            #expect(try StorageCLITests.integer(left, "SELECT count(*) FROM content_turn_runs WHERE flow_id = 1") == 0)
            #expect(try StorageCLITests.integer(left, "SELECT count(*) FROM content_turn_runs WHERE flow_id = 2") == 1)
        }
    }

    @Test("a shorter content.expiry saved with --yes while a session runs says what went, as without a session (a re-check's went unsaid)")
    func contentExpiryUnderASession() throws {
        try withSandbox { s in
            try StorageCLITests.writeFlows(s.dataDir, daysAgo: [0.2])
            try StorageCLITests.keepContent(s.dataDir, flows: [1])
            let database = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            try database.execute("UPDATE content_turn_runs SET recorded_at = recorded_at - 3 * 3600 * 1000000")
            database.close()
            let port = freeLoopbackPort()
            let run = try Child(try TVBinary.require(), ["--data-dir", s.dataDir, "run", "--listen", "127.0.0.1:\(port)", "--quiet"], environment: s.environment)
            defer { run.stop() }
            for _ in 0..<250 where (try? s.tv("status"))?.status != 0 { usleep(20_000) }
            let r = try s.tv("settings", "set", "content.expiry", "1h", "--yes")
            #expect(r.status == 0 && r.out.hasPrefix("Saved content.expiry = 1h (was 1d).\nThe running session applied it.\nDeleted 1 decrypted turn"), "\(r)")
            #expect(try s.tv("content", "status").out.hasPrefix("No decrypted content is kept."))
            #expect(try s.tv("stop").status == 0)
        }
    }

    @Test("a limit saved with no session running is applied at once, silently when nothing goes; nonsense is refused with one sentence and changes nothing")
    func limitChangeApplies() throws {
        try withSandbox { s in
            try StorageCLITests.writeFlows(s.dataDir, daysAgo: [3, 0.5])
            let quiet = try s.tv("settings", "set", "captures.maxAge", "2w")
            #expect(quiet.out == "Saved captures.maxAge = 2w (was 30d).\n", "\(quiet)")
            // An age that deletes connections kept is refused with the count, saved with --yes
            // (a trial's `1s` deleted the whole history with one line of output).
            let asked = try s.tv("settings", "set", "history.maxAge", "2d")
            #expect(asked.status == 1 && asked.err.hasPrefix("tv: history.maxAge 2d deletes 1 of the 2 connections kept (those started before ")
                    && asked.err.hasSuffix("), with their requests, packets and content, as soon as it is saved; add --yes to save it.\n"), "\(asked)")
            let minutes = try s.tv("settings", "set", "history.maxAge", "30m")
            #expect(minutes.status == 1 && minutes.err.hasSuffix("add --yes to save it (m is minutes: a month is 30d).\n"), "\(minutes)")
            #expect(try s.tv("settings", "get", "history.maxAge").out == "30d\n")
            let r = try s.tv("settings", "set", "history.maxAge", "2d", "--yes")
            #expect(r.out == "Saved history.maxAge = 2d (was 30d).\nDeleted 1 connection.\n", "\(r)")
            // One that deletes nothing needs no --yes.
            #expect(try s.tv("settings", "set", "history.maxAge", "1w").status == 0)
            // Minutes are said to be minutes when nothing is deleted too (`1M` meant a month: a trial).
            let month = try s.tv("settings", "set", "history.maxAge", "100000M", "--yes")
            #expect(month.out == "Saved history.maxAge = 100000m (was 1w).\nm is minutes: a month is 30d.\n", "\(month)")
            #expect(try s.tv("settings", "set", "history.maxAge", "1w", "--yes").status == 0)
            let bad = try s.tv("settings", "set", "captures.maxBytes", "lots")
            #expect(bad.status != 0)
            #expect(bad.err == "tv: captures.maxBytes takes a size of 1MB or more with its unit like 64MB or 2GB (1 KB = 1024 bytes), or off, not 'lots'.\n", "\(bad)")
            let badAge = try s.tv("settings", "set", "history.maxAge", "forever")
            #expect(badAge.err == "tv: history.maxAge takes an age above zero like 12h, 30d or 2w (s, m for minutes, h, d, w), or off, not 'forever'.\n", "\(badAge)")
            // Zero, a bare number, none and empty read as no limit in a saved file; typed, they are refused.
            for (name, value) in [("history.maxAge", "0"), ("history.maxAge", "0d"), ("history.maxAge", ""), ("history.maxAge", "none"),
                                  ("history.maxAge", "30"), ("captures.maxBytes", "0GB"), ("captures.maxBytes", "2"), ("captures.maxAge", "0")] {
                let refused = try s.tv("settings", "set", name, value)
                #expect(refused.status == 2 && refused.err.hasPrefix("tv: \(name) takes a") && refused.err.hasSuffix(", not '\(value)'.\n"),
                        "\(refused)")
            }
            #expect(try s.tv("settings", "get", "captures.maxBytes").out == "2GB\n")
            #expect(try s.tv("settings", "get", "history.maxAge").out == "1w\n")
            let size = try s.tv("settings", "set", "captures.maxBytes", "500MB")
            #expect(size.out == "Saved captures.maxBytes = 500MB (was 2GB).\n", "\(size)")
            // Saved as written canonically: the unit's case, no space; OFF is off.
            let spaced = try s.tv("settings", "set", "captures.maxBytes", " 2 gib ")
            #expect(spaced.out == "Saved captures.maxBytes = 2GB (was 500MB).\n", "\(spaced)")
            // The same size in binary units is the same setting (it was said as a change: a trial).
            let same = try s.tv("settings", "set", "captures.maxBytes", "2GiB")
            #expect(same.out == "captures.maxBytes is already 2GB; nothing changed.\n", "\(same)")
            let days = try s.tv("settings", "set", "captures.maxAge", "30D")
            #expect(days.out == "Saved captures.maxAge = 30d (was 2w).\n", "\(days)")
            let off = try s.tv("settings", "set", "history.maxAge", "OFF")
            #expect(off.out == "Saved history.maxAge = off (was 1w).\n", "\(off)")
        }
    }

    @Test("a session applies the limits when it starts and when one is changed under it")
    func sessionAppliesAtStartAndOnChange() throws {
        try withSandbox { s in
            try StorageCLITests.writeFlows(s.dataDir, daysAgo: [40, 3, 0.1])
            let port = freeLoopbackPort()
            let errPath = s.root + "/run.err"
            _ = FileManager.default.createFile(atPath: errPath, contents: nil)
            let errFD = open(errPath, O_WRONLY | O_CLOEXEC)
            defer { close(errFD) }
            let run = try Child(try TVBinary.require(), ["--data-dir", s.dataDir, "run", "--listen", "127.0.0.1:\(port)"],
                                environment: s.environment, stderr: errFD)
            defer { run.stop() }
            func flows() throws -> Int64 {
                let database = try SQLiteDatabase(readingAt: s.dataDir + "/tunnelvision.sqlite3")
                defer { database.close() }
                return try StorageCLITests.integer(database, "SELECT count(*) FROM flows")
            }
            var n: Int64 = -1
            for _ in 0..<500 {
                n = try flows()
                if n == 2 { break }
                usleep(20_000)
            }
            #expect(n == 2, "the pass at start did not delete the 40-day-old flow")
            // The pass commits its deletion, then says so: the sentence may come a moment after
            // the row is gone.
            for _ in 0..<250 where !s.text(errPath).contains("Deleted 1 connection.") { usleep(20_000) }
            #expect(s.text(errPath).contains("Deleted 1 connection."), "\(s.text(errPath))")
            // It deletes a kept connection, so it is saved with --yes; the session's pass is
            // waited for, so the command says what went, as it does with no session (a trial's
            // printed no count). The pass is done when it answers.
            let r = try s.tv("settings", "set", "history.maxAge", "1d", "--yes")
            #expect(r.out == "Saved history.maxAge = 1d (was 30d).\nThe running session applied it.\nDeleted 1 connection.\n", "\(r)")
            #expect(try flows() == 1, "the changed limit was not applied by the session")
            // Nothing more to delete: applied, silently, as without a session.
            let again = try s.tv("settings", "set", "history.maxAge", "2d")
            #expect(again.out == "Saved history.maxAge = 2d (was 1d).\nThe running session applied it.\n", "\(again)")
            #expect(try s.tv("stop").status == 0)
        }
    }

    @Test("tv storage delete-everything: without a terminal and --yes it refuses with a sentence; with --yes history, captures and content go")
    func deleteEverything() throws {
        try withSandbox { s in
            try StorageCLITests.writeFlows(s.dataDir, daysAgo: [1, 0])
            try StorageCLITests.keepContent(s.dataDir, flows: [1])
            let database = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            try StorageCLITests.capture(database, dataDir: s.dataDir, seq: 1, endedDaysAgo: 0, bytes: 10)
            // What `tv pinned` remembers goes too (a trial found it after "delete everything").
            try database.execute("""
                INSERT INTO client_pins (client_address, client_hello, host, port, kind, first_seen, last_seen, reason)
                VALUES ('127.0.0.1', 'e5f34934e5de', 'pinned.test', 443, 'pinned', 1, 2, 'the client closed right after the handshake')
                """)
            database.close()
            #expect(try s.tv("pinned").out.contains("pinned.test"))
            let refused = try s.tv("storage", "delete-everything")
            #expect(refused.status == 2, "a confirmation to add, as tv content delete says it")
            // What would go is said first, then the refusal (a trial's script got only the refusal).
            #expect(refused.err.hasSuffix("\ntv: Nothing was deleted: with no terminal to ask on, add --yes to delete everything.\n")
                    && refused.err.count > 100, "\(refused)")
            let r = try s.tv("storage", "delete-everything", "--yes")
            #expect(r.status == 0, "\(r)")
            #expect(r.out.hasPrefix("Deleted 2 connections (with 1 content turn), 1 capture file (10 B), 1 content segment ("), "\(r)")
            #expect(r.out.contains("Forgot what `tv pinned` remembered (1 entry): the next connection of those clients is inspected again, if inspection is on."), "\(r)")
            #expect(!(try s.tv("pinned").out.contains("pinned.test")))
            let show = try s.tv("storage", "--json")
            #expect(show.status == 0, "\(show)")
            let json = try #require(try JSONSerialization.jsonObject(with: show.stdout) as? [String: Any])
            #expect((json["history"] as? [String: Any])?["flows"] as? Int == 0)
            #expect((json["captures"] as? [String: Any])?["files"] as? Int == 0)
            #expect((json["content"] as? [String: Any])?["bytes"] as? Int == 0)
            #expect(!r.out.contains("shared store"), "\(r)")
            // A store set that was never written to holds nothing of this folder: nothing said.
            #expect(try s.tv("settings", "set", "store.url", "postgresql://tv@db.example/tvhistory").status == 0)
            #expect(!(try s.tv("storage", "delete-everything", "--yes")).out.contains("shared store"))
            // Once this folder's instance has written there, the store keeps its copy (a trial
            // was not told): said with the instance and its tables, with or without the setting.
            let instance = "0f8e2d34-5b6a-4c1d-9e7f-a1b2c3d4e5f6"
            try Data((instance + "\n").utf8).write(to: URL(fileURLWithPath: s.dataDir + "/instance-id"))
            try Data("\(instance) 7\n".utf8).write(to: URL(fileURLWithPath: s.dataDir + "/instance-store-highest"))
            let shared = try s.tv("storage", "delete-everything", "--yes")
            #expect(shared.out.hasSuffix("The shared store at db.example:5432/tvhistory keeps its copy of this data folder's flows (metadata, no content) as instance \(instance); tv deletes nothing there: its owner can, with `DELETE FROM … WHERE instance_id = '\(instance)'` in exchanges, flows, host_names, pinned_hosts, client_pins, audit_markers, audit_sessions and audit_projects.\n"), "\(shared)")
            #expect(try s.tv("settings", "set", "store.url", "").status == 0)
            let given = try s.tv("storage", "delete-everything", "--yes")
            #expect(given.out.hasSuffix("The shared store this data folder's sessions wrote to (with --store) keeps its copy of this data folder's flows (metadata, no content) as instance \(instance); tv deletes nothing there: its owner can, with `DELETE FROM … WHERE instance_id = '\(instance)'` in exchanges, flows, host_names, pinned_hosts, client_pins, audit_markers, audit_sessions and audit_projects.\n"), "\(given)")
        }
    }

    @Test("kill -9 in the middle of a pass leaves a consistent store, and the next pass finishes it (a capture file whose row went is deleted then)")
    func killDuringAPass() throws {
        try withSandbox { s in
            try StorageCLITests.writeFlows(s.dataDir, daysAgo: [])
            let database = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            let old = StorageCLITests.now - 40 * StorageCLITests.day
            try database.transaction {
                try database.execute("""
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000)
                    INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                                       transport, host, host_origin, status, duration)
                    SELECT i, \(old) + i, \(old) + i, '127.0.0.1', 40000, '192.0.2.1', 443, 'tcp', 'h' || i || '.test', 'sni', 'encrypted', 1 FROM n;
                    INSERT INTO packets (flow_id, n, capture_seq, file_offset, time_us, direction, orig_len, incl_len, meaning)
                        SELECT id, 1, 1, 0, 0, 'client_to_server', 60, 60, 'data' FROM flows;
                    INSERT INTO captures (seq, path, started_at, ended_at, bytes, snaplen, recording, deleted_at)
                        VALUES (1, 'captures/capture-000001.pcapng', \(old), \(old), 64, 65535, 0, \(old + 1));
                    """)
            }
            database.close()
            // A file whose row a killed pass already marked deleted (the rows commit before the
            // unlink). A file no row ever described is left alone (StorageManagerTests).
            try FileManager.default.createDirectory(atPath: s.dataDir + "/captures", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: s.dataDir + "/captures/capture-000001.pcapng", contents: Data(count: 64))
            let pass = try Child(try TVBinary.require(), ["--data-dir", s.dataDir, "storage", "apply"], environment: s.environment)
            usleep(150_000)
            pass.stop()
            let check = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            #expect(try check.scalar("PRAGMA integrity_check") == .text("ok"))
            let flows = try StorageCLITests.integer(check, "SELECT count(*) FROM flows")
            // Whole blocks only: every flow kept still has its packet, no packet outlives its flow.
            #expect(try StorageCLITests.integer(check, "SELECT count(*) FROM packets") == flows)
            #expect(try StorageCLITests.integer(check, "SELECT count(*) FROM packets WHERE flow_id NOT IN (SELECT id FROM flows)") == 0)
            // The names' trigram index matches the names left (FTS5's own check; fts5.html §6.7).
            try check.execute("INSERT INTO flow_names_text (flow_names_text) VALUES ('integrity-check')")
            check.close()
            let r = try s.tv("storage", "apply")
            #expect(r.status == 0, "\(r)")
            let done = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            defer { done.close() }
            #expect(try StorageCLITests.integer(done, "SELECT count(*) FROM flows") == 0)
            #expect(try StorageCLITests.integer(done, "SELECT count(*) FROM packets") == 0)
            #expect(!FileManager.default.fileExists(atPath: s.dataDir + "/captures/capture-000001.pcapng"))
        }
    }

    @Test("tv storage: each store beside its limit, the total, and that SQLite keeps deleted rows' room until tv storage compact")
    func figures() throws {
        try withSandbox { s in
            try StorageCLITests.writeFlows(s.dataDir, daysAgo: Array(repeating: 40, count: 2_000) + [0])
            let before = try s.tv("storage")
            #expect(before.status == 0, "\(before)")
            let lines = before.out.split(separator: "\n").map(String.init)
            #expect(lines.count == 5, "\(before)")
            #expect(lines[0].hasPrefix("History: ") && lines[0].contains(", 2,001 connections since ") && lines[0].hasSuffix("; kept 30 days."), "\(before)")
            #expect(lines[2] == "Captures: 0 B in 0 files of 2.0 GiB; each kept 30 days after it closes (the next one opens, or its session ends).", "\(before)")
            #expect(lines[3].hasPrefix("Decrypted content: 0 B of a fixed 512 MiB; kept "), "\(before)")
            #expect(lines[4].hasPrefix("Total: "), "\(before)")
            #expect(try s.tv("storage", "apply").out == "Deleted 2,000 connections.\n")
            let after = try s.tv("storage", "--json")
            let json = try #require(try JSONSerialization.jsonObject(with: after.stdout) as? [String: Any])
            let history = try #require(json["history"] as? [String: Any])
            let free = try #require(history["freeBytes"] as? Int)
            let bytes = try #require(history["bytes"] as? Int)
            #expect(free > 0, "\(after)")
            let compact = try s.tv("storage", "compact")
            #expect(compact.status == 0, "\(compact)")
            #expect(compact.out.hasPrefix("Compacted the history: its file is "), "\(compact)")
            let last = try #require(try JSONSerialization.jsonObject(with: try s.tv("storage", "--json").stdout) as? [String: Any])
            let lastHistory = try #require(last["history"] as? [String: Any])
            #expect((lastHistory["bytes"] as? Int ?? Int.max) < bytes)
            #expect(lastHistory["freeBytes"] as? Int == 0)
        }
    }
}
