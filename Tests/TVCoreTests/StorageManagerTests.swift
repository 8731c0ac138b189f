import FlowStore
import FlowTerms
import Foundation
import Capture
import Recording
import Testing
import TVHome
import Tunnel
@testable import TVCore

/// `StorageManager` over a real data folder: the file being recorded survives every path
/// (limits, size, delete-everything), and a file whose row is gone is taken by the next pass.
@Suite(.serialized) struct StorageManagerTests {
    let day: Int64 = 86_400_000_000

    func withHome(_ body: (TVHome, SQLiteDatabase) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tv-storage-\(getpid())-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let home = TVHome(path: path)
        try home.ensureExists()
        let store = try FlowStore(path: home.databasePath)
        store.close()
        let database = try SQLiteDatabase(path: home.databasePath)
        defer { database.close() }
        try body(home, database)
    }

    /// A capture file's row: live, marked deleted by a pass (killed before the unlink), or none.
    enum Row { case live, deleted, none }

    func capture(_ home: TVHome, _ database: SQLiteDatabase, seq: Int, endedAt: Int64?, bytes: Int, row: Row = .live) throws {
        try FileManager.default.createDirectory(atPath: home.captureDirectory, withIntermediateDirectories: true)
        let name = CaptureFolder.fileName(Int64(seq))
        _ = FileManager.default.createFile(atPath: home.path + "/captures/" + name, contents: Data(count: bytes))
        if row != .none {
            try database.execute("INSERT INTO captures (seq, path, started_at, ended_at, bytes, snaplen, recording, deleted_at) VALUES (\(seq), 'captures/\(name)', \((endedAt ?? 0) - 1), \(endedAt.map(String.init) ?? "NULL"), \(bytes), 65535, \(endedAt == nil && row == .live ? 1 : 0), \(row == .deleted ? "1" : "NULL"))")
        }
    }

    @Test("a history limit's count leaves out what audit sessions hold (it said 20 of 20 where it deleted the 10 outside: a trial), and open flows")
    func flowsDoomedSparesEvidence() throws {
        try withHome { home, database in
            let now: Int64 = 1_764_600_000_000_000
            for i in 0..<20 {
                let start = now - Int64(i + 1) * 60_000_000
                try database.execute("""
                    INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address, server_port, transport, host_origin, status, duration)
                    VALUES (\(i + 1), \(start), \(start), '127.0.0.1', \(40_000 + i), '192.0.2.1', 443, 'tcp', 'none', 'encrypted', \(i == 19 ? "NULL" : "1000"))
                    """)
            }
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            #expect(try manager.flowsDoomed(startedBefore: now) == (doomed: 19, closed: 19))
            // An audit session holding the newest ten flows (1–10).
            try database.execute("INSERT INTO audit_projects (id, name, created) VALUES (1, 'app', 0)")
            try database.execute("INSERT INTO audit_sessions (id, project_id, started, ended) VALUES (1, 1, \(now - 10 * 60_000_000 - 1), \(now))")
            try database.execute("UPDATE flows SET audit_session_id = 1 WHERE id <= 10")
            let counted = try manager.flowsDoomed(startedBefore: now)
            #expect(counted == (doomed: 9, closed: 19), "\(counted)")
        }
    }

    func files(_ home: TVHome) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: home.captureDirectory)) ?? []).sorted()
    }

    @Test func theRecordingFileSurvivesTheLimitsTheSizeAndDeleteEverything() throws {
        try withHome { home, database in
            let now = StorageClock.now()
            try capture(home, database, seq: 1, endedAt: now - 40 * day, bytes: 3_000_000)
            try capture(home, database, seq: 2, endedAt: now - day, bytes: 3_000_000)
            try capture(home, database, seq: 3, endedAt: nil, bytes: 5_000_000)
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            let limits = StorageLimits(historyMaxAge: 30 * day, capturesMaxBytes: 1_000_000, capturesMaxAge: 30 * day)
            let report = try manager.applyLimits(limits, recording: 3, now: now)
            #expect(report.captureFilesDeleted == 2)
            #expect(report.sparedRecording == 3)
            #expect(report.capturesStillOver == .recording)
            #expect(files(home) == ["capture-000003.pcapng"])
            #expect(StoragePresentation.report(report, automatic: true) == [
                "Deleted 2 capture files (5.7 MiB).",
                "Spared capture-000003.pcapng, which is being recorded.",
                "The captures are still over their size limit because of the file being recorded; it is deleted once it closes (when its session stops or the file rotates).",
            ])
            let everything = try manager.deleteEverything(recording: 3, now: now)
            #expect(everything.captureFilesDeleted == 0)
            #expect(files(home) == ["capture-000003.pcapng"])
            let rows = try CaptureRowSequences.read(database)
            #expect(manager.captures.facts(rows: rows.live, deleted: rows.deleted, recording: 3).map(\.sequence) == [3])
        }
    }

    @Test func theFileAWriterHoldsLockedIsFoundAndSparedWithoutBeingNamed() throws {
        try withHome { home, database in
            let now = StorageClock.now()
            try capture(home, database, seq: 1, endedAt: now - 40 * day, bytes: 10)
            try capture(home, database, seq: 2, endedAt: nil, bytes: 20)
            // What a live capture writer does to its file: an exclusive flock(2) for as long as it appends.
            let fd = open(CaptureFolder(path: home.captureDirectory).filePath(2), O_RDWR | O_CLOEXEC)
            #expect(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
            defer { close(fd) }
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            let report = try manager.deleteEverything(recording: nil, now: now)
            #expect(report.captureFilesDeleted == 1)
            #expect(report.sparedRecording == 2)
            #expect(files(home) == ["capture-000002.pcapng"])
            let figures = try StorageFigures.read(home: home, limits: .factory)
            #expect(figures.recordingCapture == 2)
            #expect(figures.captureFiles == 1)
        }
    }

    @Test func anAutomaticPassThatFoundNothingSaysNothingAndARequestedOneAnswers() throws {
        try withHome { home, _ in
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            let report = try manager.applyLimits(.factory, recording: nil, now: StorageClock.now())
            #expect(report.deletedNothing)
            #expect(StoragePresentation.report(report, automatic: true) == [])
            #expect(StoragePresentation.report(report, automatic: false) == ["Everything is within its limits; nothing was deleted."])
            // Over the size limit by the file being recorded alone: not "within its limits".
            var over = StorageReport()
            over.capturesStillOver = .recording
            #expect(StoragePresentation.report(over, automatic: false) == [
                "Nothing was deleted.",
                "The captures are still over their size limit because of the file being recorded; it is deleted once it closes (when its session stops or the file rotates).",
            ])
        }
    }

    @Test func aFileWhoseRowAPassAlreadyDeletedGoesAtTheNextPassButNotTheHighestWhileRecording() throws {
        try withHome { home, database in
            try capture(home, database, seq: 1, endedAt: nil, bytes: 10, row: .deleted)
            try capture(home, database, seq: 2, endedAt: nil, bytes: 10, row: .deleted)
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            let report = try manager.applyLimits(StorageLimits(historyMaxAge: nil, capturesMaxBytes: nil, capturesMaxAge: nil),
                                                 recording: 2, now: StorageClock.now())
            #expect(report.captureFilesDeleted == 1)
            #expect(files(home) == ["capture-000002.pcapng"])
        }
    }

    @Test("a capture file the history never described (a database moved aside as tv advises, a file copied in) is left alone by every pass and said apart by tv storage; each start deleted them all (a trial)")
    func filesTheHistoryNeverDescribedAreLeftAlone() throws {
        try withHome { home, database in
            let now = StorageClock.now()
            try capture(home, database, seq: 1, endedAt: now - 40 * day, bytes: 1_000, row: .none)
            try capture(home, database, seq: 2, endedAt: now - 40 * day, bytes: 2_000, row: .none)
            try capture(home, database, seq: 3, endedAt: now - day, bytes: 300, row: .deleted)
            try capture(home, database, seq: 4, endedAt: now - day, bytes: 400)
            // Put back under the name of a finished deletion: not the history's either.
            try capture(home, database, seq: 5, endedAt: now - day, bytes: 50, row: .deleted)
            try database.execute("UPDATE captures SET unlinked_at = 2 WHERE seq = 5")
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            let figures = try StorageFigures.read(home: home, limits: .factory)
            #expect(figures.captureFiles == 2 && figures.captureBytes == 700)
            #expect(figures.unknownCaptureFiles == 3 && figures.unknownCaptureBytes == 3_050)
            #expect(StoragePresentation.lines(figures, now: now).contains(
                "  Besides, 3 capture files (3.0 KiB) in the folder are not in this history (from a database moved aside, or copied in): tv leaves them alone and does not count them; delete them yourself when done."))
            // Delete-everything says they stay (they may hold packets and secrets).
            #expect(StoragePresentation.deletionWarning(figures).last
                    == "3 capture files (3.0 KiB) in the folder are not in this history and stay: tv deletes only what it recorded here; remove them yourself from the captures folder.")
            // The factory limits (30 days) and a 1-byte size limit: only the file whose row a pass deleted goes.
            let report = try manager.applyLimits(.factory, recording: nil, now: now)
            #expect(report.captureFilesDeleted == 1)
            #expect(files(home) == ["capture-000001.pcapng", "capture-000002.pcapng", "capture-000004.pcapng", "capture-000005.pcapng"])
            // The interrupted deletion is now finished: a file put back under its name stays.
            #expect(try database.scalar("SELECT unlinked_at IS NOT NULL FROM captures WHERE seq = 3") == .integer(1))
            #expect(try manager.captureFilesDoomed(StorageLimits(historyMaxAge: nil, capturesMaxBytes: 1, capturesMaxAge: day), now: now) == (files: 1, bytes: 400))
            _ = try manager.deleteEverything(recording: nil, now: now)
            #expect(files(home) == ["capture-000001.pcapng", "capture-000002.pcapng", "capture-000005.pcapng"])
        }
    }

    @Test("a start says what it did to a capture a killed session left: cut back, or left as it is when damaged otherwise")
    func killedSessionsCapturesAreSaid() throws {
        try withHome { home, database in
            // Garbage where the Section Header Block belongs: damaged at byte 0, left as it is.
            try capture(home, database, seq: 1, endedAt: nil, bytes: 64)
            let garbage = Data("GARBAGEGARBAGEGARBAGE".utf8) + Data(count: 43)
            #expect(FileManager.default.createFile(atPath: home.captureDirectory + "/capture-000001.pcapng", contents: garbage))
            // A head cut by the kill: its Section Header Block begun (type, then a length past the end).
            try capture(home, database, seq: 2, endedAt: nil, bytes: 0)
            let begun = Data([0x0A, 0x0D, 0x0D, 0x0A, 0x1C, 0x00, 0x00, 0x00, 0x4D, 0x3C, 0x2B, 0x1A])
            #expect(FileManager.default.createFile(atPath: home.captureDirectory + "/capture-000002.pcapng", contents: begun))
            #expect(CapturesLeftByKilledSessions.repair(home: home) == [
                "capture-000001.pcapng, left open by a session that was killed, is damaged at byte 0, not cut short by the kill: tv left it as it is (cutting it there would lose what follows); readers such as capinfos may stop at that byte.",
                "capture-000002.pcapng, left open by a session that was killed, was cut back to its last whole block (the 12 bytes of the one the kill interrupted).",
            ])
            #expect(files(home) == ["capture-000001.pcapng", "capture-000002.pcapng"])
            #expect(FileManager.default.contents(atPath: home.captureDirectory + "/capture-000001.pcapng") == garbage)
            #expect(CapturesLeftByKilledSessions.repair(home: home) == [], "said once: the row is closed")
            #expect(CapturesLeftByKilledSessions.sentence("capture-000002.pcapng", cut: 28)
                    == "capture-000002.pcapng, left open by a session that was killed, was cut back to its last whole block (the 28 bytes of the one the kill interrupted).")
        }
    }

    @Test func retentionCountsFromTheRollupAndTakesTheNamesNoFlowCarries() throws {
        try withHome { home, database in
            let now = StorageClock.now()
            let store = try FlowStore(path: home.databasePath)
            let writer = try store.makeWriter()
            for (age, host, server) in [(40 * day, "old.example", "10.0.0.1"), (35 * day, "old.example", "10.0.0.2"),
                                        (day, "new.example", "10.0.0.2"), (day / 2, "new.example", "10.0.0.3")] {
                var flow = FlowRecord(startTime: now - age, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: server,
                                      serverPort: 443, host: host, hostOrigin: .sni, status: .encrypted)
                flow.duration = 1_000
                _ = writer.open(flow)
            }
            writer.flush()
            writer.close()
            store.close()
            #expect(try StorageFigures.read(home: home, limits: .factory).flows == 4)
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            let report = try manager.applyLimits(StorageLimits(historyMaxAge: 30 * day, capturesMaxBytes: nil, capturesMaxAge: nil),
                                                 recording: nil, now: now)
            #expect(report.flowsDeleted == 2)
            #expect(try StorageFigures.read(home: home, limits: .factory).flows == 2)
            let statement = try database.prepare("SELECT name FROM flow_names ORDER BY name")
            var names: [String] = []
            try statement.forEachRow { names.append($0.string(at: 0) ?? "") }
            #expect(names == ["10.0.0.2", "10.0.0.3", "127.0.0.1", "new.example"])
            // The names' trigram index lost the deleted names too (FTS5's own check; fts5.html §6.7).
            try database.execute("INSERT INTO flow_names_text (flow_names_text) VALUES ('integrity-check')")
            let found = try database.prepare("SELECT count(*) FROM flow_names_text WHERE flow_names_text MATCH '\"old\"'")
            _ = try found.step()
            #expect(found.int64(at: 0) == 0)
        }
    }

    /// Found by a new-user trial: after delete-everything the next session numbered its flows
    /// from the deleted ones' ids again, so an id in an earlier export named another flow.
    @Test func flowIDsAreNeverHandedOutTwiceAfterDeletions() throws {
        try withHome { home, _ in
            let now = StorageClock.now()
            func write(_ count: Int) throws -> [Int64] {
                let store = try FlowStore(path: home.databasePath)
                defer { store.close() }
                let writer = try store.makeWriter()
                var ids: [Int64] = []
                for _ in 0..<count {
                    var flow = FlowRecord(startTime: now - day, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: "10.0.0.1",
                                          serverPort: 443, host: "a.example", hostOrigin: .sni, status: .encrypted)
                    flow.duration = 1_000
                    ids.append(writer.open(flow).id)
                }
                writer.flush()
                writer.close()
                return ids
            }
            #expect(try write(3) == [1, 2, 3])
            var manager = try StorageManager(home: home)
            #expect(try manager.deleteEverything(recording: nil, now: now).flowsDeleted == 3)
            manager.close()
            #expect(try write(2) == [4, 5])
            // Retention taking the newest too (an age of one hour), then a writer reading the file read-only.
            manager = try StorageManager(home: home)
            #expect(try manager.applyLimits(StorageLimits(historyMaxAge: 3_600_000_000, capturesMaxBytes: nil, capturesMaxAge: nil),
                                            recording: nil, now: now).flowsDeleted == 2)
            manager.close()
            #expect(try write(1) == [6])
        }
    }

    /// Found by a new-user trial: `tv exec` ended while a connection's upstream connect was still
    /// going, so its packets were captured under an id that no flow row held, and the next
    /// session gave that id to another flow, whose packet list then showed those packets.
    @Test func anIDWithPacketsButNoFlowIsNotHandedOutAgain() throws {
        try withHome { home, _ in
            let now = StorageClock.now()
            func write() throws -> Int64 {
                let store = try FlowStore(path: home.databasePath)
                defer { store.close() }
                let writer = try store.makeWriter()
                var flow = FlowRecord(startTime: now - day, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: "10.0.0.1",
                                      serverPort: 443, host: "a.example", hostOrigin: .sni, status: .encrypted)
                flow.duration = 1_000
                let id = writer.open(flow).id
                writer.flush()
                writer.close()
                return id
            }
            #expect(try write() == 1)
            let database = try SQLiteDatabase(path: home.databasePath)
            try database.execute("INSERT INTO packet_counts (flow_id, packets) VALUES (7, 3)")
            database.close()
            #expect(try write() == 8)
            // And after delete-everything took the flows (the orphan packet rows are no flow's, so they stay).
            let manager = try StorageManager(home: home)
            #expect(try manager.deleteEverything(recording: nil, now: now).flowsDeleted == 2)
            manager.close()
            #expect(try write() == 9)
        }
    }

    /// Found by a new-user trial: delete-everything kept audit sessions' flows and captures
    /// without a word, next to "nothing that was deleted is left".
    @Test func deleteEverythingSaysWhatAuditEvidenceItKept() throws {
        try withHome { home, database in
            let now = StorageClock.now()
            let store = try FlowStore(path: home.databasePath)
            let writer = try store.makeWriter()
            for _ in 0..<3 {
                var flow = FlowRecord(startTime: now - day, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: "10.0.0.1",
                                      serverPort: 443, host: "a.example", hostOrigin: .sni, status: .encrypted)
                flow.duration = 1_000
                _ = writer.open(flow)
            }
            writer.flush()
            writer.close()
            store.close()
            try capture(home, database, seq: 1, endedAt: now - day, bytes: 1_000)
            try capture(home, database, seq: 2, endedAt: now - day, bytes: 1_000)
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            let report = try manager.deleteEverything(evidence: .known(captures: [1], flows: [2]), recording: nil, now: now)
            #expect(report.flowsDeleted == 2 && report.captureFilesDeleted == 1, "\(report)")
            #expect(report.evidenceFlowsKept == 1 && report.evidenceCapturesKept == 1)
            #expect(files(home) == ["capture-000001.pcapng"])
            #expect(StoragePresentation.deletedEverything(report, databaseFile: "tunnelvision.sqlite3", session: false).suffix(2)
                    == ["Kept as audit evidence until their audit session is deleted (`tv audit delete ID`, then the limits): 1 connection with its content, 1 capture file.",
                        "Each evidence capture file is kept whole, so it still holds what it recorded of other connections in the same hours, deleted connections' included."])
            #expect(StoragePresentation.deletedEverything(report, databaseFile: "tunnelvision.sqlite3", session: true).last
                    == "The running session closed its open content file first, and the history's write-ahead log was emptied: nothing that was deleted is left in the data folder but the evidence capture files kept whole.")
        }
    }

    /// A decrypted capture whose span meets an audit session's is evidence (`tv audit bundle`
    /// cuts its `decrypted.pcapng` from it): kept by delete-everything and by the limits, said.
    @Test func decryptedCapturesAnAuditSessionHoldsAreKept() throws {
        try withHome { home, database in
            let now = StorageClock.now()
            try FileManager.default.createDirectory(atPath: home.captureDirectory, withIntermediateDirectories: true)
            func decrypted(startedDaysAgo: Int64, modifiedDaysAgo: Int64) -> String {
                let start = (now - startedDaysAgo * day) / 1_000_000 * 1_000_000
                let name = DecryptedCapture.fileName(startMicros: start)
                let path = home.captureDirectory + "/" + name
                _ = FileManager.default.createFile(atPath: path, contents: Data(count: 1_000))
                let seconds = (now - modifiedDaysAgo * day) / 1_000_000
                var times = [timespec(tv_sec: Int(seconds), tv_nsec: 0), timespec(tv_sec: Int(seconds), tv_nsec: 0)]
                _ = utimensat(AT_FDCWD, path, &times, 0)
                return name
            }
            let old = decrypted(startedDaysAgo: 10, modifiedDaysAgo: 9)
            let held = decrypted(startedDaysAgo: 5, modifiedDaysAgo: 4)
            #expect(DecryptedCapture.startMicros(fileName: held) == (now - 5 * day) / 1_000_000 * 1_000_000)
            try database.execute("INSERT INTO audit_projects (id, name, created) VALUES (1, 'app', 0)")
            try database.execute("INSERT INTO audit_sessions (project_id, started, ended) VALUES (1, \(now - 9 * day / 2), \(now - 4 * day - day / 5))")
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            let limits = StorageLimits(historyMaxAge: nil, capturesMaxBytes: 1, capturesMaxAge: day)
            let pass = try manager.applyLimits(limits, recording: nil, now: now)
            #expect(pass.decryptedCapturesDeleted == 1 && files(home) == [held], "\(pass) \(files(home))")
            #expect(!files(home).contains(old))
            let everything = try manager.deleteEverything(recording: nil, now: now)
            #expect(everything.evidenceDecryptedCapturesKept == 1 && everything.decryptedCapturesDeleted == 0 && files(home) == [held])
            #expect(StoragePresentation.deletedEverything(everything, databaseFile: "tunnelvision.sqlite3", session: false).suffix(2)
                    == ["Kept as audit evidence until their audit session is deleted (`tv audit delete ID`, then the limits): 1 decrypted capture.",
                        "Each evidence capture file is kept whole, so it still holds what it recorded of other connections in the same hours (in a decrypted capture, their plaintext), deleted connections' included."])
            // Once the session is deleted, it goes with everything else.
            try database.execute("DELETE FROM audit_sessions")
            #expect(try manager.deleteEverything(recording: nil, now: now).decryptedCapturesDeleted == 1 && files(home) == [])
        }
    }

    /// The decrypted captures (`capture.decrypted`'s files, no row describes them): the captures'
    /// age and what their size limit leaves take them oldest first, delete-everything takes every
    /// one, and the one a running session holds locked survives both and is named.
    @Test func decryptedCapturesLiveUnderTheCapturesLimitsAndGoWithEverything() throws {
        try withHome { home, database in
            let now = StorageClock.now()
            try capture(home, database, seq: 1, endedAt: now - day, bytes: 400_000)
            func decrypted(_ name: String, bytes: Int, daysOld: Int64) throws {
                let path = home.captureDirectory + "/" + name
                _ = FileManager.default.createFile(atPath: path, contents: Data(count: bytes))
                let seconds = (now - daysOld * day) / 1_000_000
                var times = [timespec(tv_sec: Int(seconds), tv_nsec: 0), timespec(tv_sec: Int(seconds), tv_nsec: 0)]
                #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            }
            try decrypted("decrypted-20251101-100000.pcapng", bytes: 100_000, daysOld: 40)
            try decrypted("decrypted-20251120-100000.pcapng", bytes: 300_000, daysOld: 3)
            try decrypted("decrypted-20251121-100000.pcapng", bytes: 300_000, daysOld: 2)
            try decrypted("decrypted-20251121-100000-2.pcapng", bytes: 200_000, daysOld: 1)
            // The one a running session writes: held locked, as `DecryptedCapture` holds it.
            try decrypted("decrypted-20251122-100000.pcapng", bytes: 50_000, daysOld: 0)
            let held = open(home.captureDirectory + "/decrypted-20251122-100000.pcapng", O_RDONLY)
            #expect(flock(held, LOCK_EX | LOCK_NB) == 0)
            defer { close(held) }
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            // 1 MB for the captures: the packet capture keeps 400,000, the decrypted ones 600,000.
            // Content kept a week: the 40-day-old one is past both ages, the others past neither.
            let limits = StorageLimits(historyMaxAge: nil, capturesMaxBytes: 1_000_000, capturesMaxAge: 30 * day, contentExpiry: .oneWeek)
            let report = try manager.applyLimits(limits, recording: nil, now: now)
            #expect(report.decryptedCapturesDeleted == 2 && report.decryptedCaptureBytesFreed == 400_000, "\(report)")
            #expect(files(home) == ["capture-000001.pcapng", "decrypted-20251121-100000-2.pcapng", "decrypted-20251121-100000.pcapng",
                                    "decrypted-20251122-100000.pcapng"])
            #expect(StoragePresentation.report(report, automatic: true) == ["Deleted 2 decrypted captures (391 KiB)."])
            let figures = try StorageFigures.read(home: home, limits: limits)
            #expect(figures.decryptedCaptureFiles == 3 && figures.decryptedCaptureBytes == 550_000)
            #expect(figures.recordingDecryptedCapture == "decrypted-20251122-100000.pcapng")
            #expect(StoragePresentation.deletionWarning(figures).last == "decrypted-20251122-100000.pcapng is being written by the running session and is spared.")
            let everything = try manager.deleteEverything(recording: nil, now: now)
            #expect(everything.decryptedCapturesDeleted == 2 && everything.sparedDecryptedCapture == "decrypted-20251122-100000.pcapng")
            #expect(files(home) == ["decrypted-20251122-100000.pcapng"])
            // They are content: the sooner content.expiry takes them as well (the 2-day-old one
            // past a 1-day expiry, though captures.maxAge keeps files 30 days).
            try decrypted("decrypted-20251123-100000.pcapng", bytes: 10, daysOld: 2)
            try decrypted("decrypted-20251124-100000.pcapng", bytes: 10, daysOld: 0)
            let expired = try manager.applyLimits(StorageLimits(historyMaxAge: nil, capturesMaxBytes: nil, capturesMaxAge: 30 * day, contentExpiry: .oneDay),
                                                  recording: nil, now: now)
            #expect(expired.decryptedCapturesDeleted == 1)
            #expect(files(home) == ["decrypted-20251122-100000.pcapng", "decrypted-20251124-100000.pcapng"])
            let said = StoragePresentation.deletedEverything(everything, databaseFile: "tunnelvision.sqlite3", session: true)
            #expect(said.contains("captures/decrypted-20251122-100000.pcapng, the decrypted capture the running session writes, still holds the plaintext of what it inspected; run this command again after the session ends."), "\(said)")
            #expect(said.last?.hasSuffix("nothing that was deleted is left in the data folder but the decrypted capture being written.") == true, "\(said)")
        }
    }

    @Test func figuresAndTheirSentences() {
        let figures = StorageFigures(databaseBytes: 4_194_304, freeBytes: 1_048_576, flows: 12_345, oldestFlowStart: 1_764_471_900_000_000,
                                     captureFiles: 3, captureBytes: 1_500_000_000, recordingCapture: 7, contentBytes: 2_097_152,
                                     contentTurns: 10, limits: .factory)
        #expect(StoragePresentation.lines(figures, now: 0) == [
            "History: 4.0 MiB, 12,345 connections since 2025-11-30 03:05 UTC; kept 30 days.",
            "  SQLite keeps the room of deleted rows for reuse: the file does not shrink after a cleanup (1.0 MiB free inside it now; `tv storage compact` gives it back).",
            "Captures: 1.4 GiB in 3 files of 2.0 GiB; each kept 30 days after it closes (the next one opens, or its session ends).",
            "  capture-000007.pcapng is being recorded: it counts, and is never deleted while it is.",
            "Decrypted content: 2.0 MiB of a fixed 512 MiB; kept 1 day.",
            "Total: 1.4 GiB.",
        ])
        var unlimited = figures
        unlimited.limits = StorageLimits(historyMaxAge: nil, capturesMaxBytes: nil, capturesMaxAge: nil)
        #expect(StoragePresentation.lines(unlimited, now: 0)[2] == "Captures: 1.4 GiB in 3 files; no limit is set, so nothing removes a capture unless you do.")
        var noContent = figures
        (noContent.contentBytes, noContent.contentTurns) = (0, 0)
        #expect(StoragePresentation.lines(noContent, now: 0)[4] == "Decrypted content: 0 B of a fixed 512 MiB; kept 1 day.")
        #expect(StoragePresentation.deletionWarning(figures) == [
            "This deletes the whole history (12,345 connections, with their packets, names and exchanges), 2 capture files and all decrypted content (2.0 MiB). None of it comes back.",
            "capture-000007.pcapng is being recorded and is spared.",
        ])
        var withDecrypted = figures
        (withDecrypted.decryptedCaptureFiles, withDecrypted.decryptedCaptureBytes) = (2, 3 << 20)
        #expect(StoragePresentation.lines(withDecrypted, now: 0)[4]
                == "Decrypted captures (capture.decrypted): 3.0 MiB in 2 files, the plaintext of inspected connections; under the captures' limits, after the packet captures.")
        #expect(StoragePresentation.deletionWarning(withDecrypted)[0]
                == "This deletes the whole history (12,345 connections, with their packets, names and exchanges), 2 capture files, 2 decrypted captures and all decrypted content (2.0 MiB). None of it comes back.")
    }
}
