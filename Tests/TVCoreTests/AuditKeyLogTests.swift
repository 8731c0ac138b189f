import Foundation
import Testing
import TVHome
@testable import TVCore

/// The audit key log (issue 23): lines through a bounded batch to a 0600 file; the bundle's
/// keys.log merges the capture's lines with it, each once.
@Suite struct AuditKeyLogTests {
    @Test("a key log and its folder opened to others are made the owner's again at a session's start (bits only taken away; a trial's 644 log in a 755 folder stayed so)")
    func modesTightened() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tv-keys-\(getpid())-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let home = TVHome(path: root)
        let folder = AuditKeyLog.folder(home: home)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let log = AuditKeyLog.path(home: home, session: 1)
        #expect(FileManager.default.createFile(atPath: log, contents: Data("CLIENT_RANDOM aa bb\n".utf8)))
        chmod(log, 0o644)
        chmod(folder, 0o755)
        AuditKeyLog.tightenModes(home: home)
        #expect(FileModes.permissions(of: folder) == 0o700 && FileModes.permissions(of: log) == 0o600)
    }

    @Test("merged keeps the first list's order, adds the second's new lines, drops repeats and blank lines")
    func mergedLines() {
        let capture = Array("CLIENT_TRAFFIC_SECRET_0 aa 01\nEXPORTER_SECRET aa 02\n".utf8)
        let recorded = Array("EXPORTER_SECRET aa 02\n\nCLIENT_TRAFFIC_SECRET_0 bb 03\n".utf8)
        #expect(String(decoding: AuditKeyLog.merged(capture, recorded), as: UTF8.self)
                == "CLIENT_TRAFFIC_SECRET_0 aa 01\nEXPORTER_SECRET aa 02\nCLIENT_TRAFFIC_SECRET_0 bb 03\n")
        #expect(AuditKeyLog.merged([], []) == [])
        #expect(String(decoding: AuditKeyLog.merged([], Array("X y z".utf8)), as: UTF8.self) == "X y z\n")
    }

    @Test("the batch takes lines with their line feed up to its bound, then drops and counts; a stopping queue's offer is refused")
    func batchBound() {
        var batch = AuditKeyLogBatch(maximumBytes: 10)
        var counters = AuditKeyLogCounters()
        let take = { (text: String, refusing: Bool) -> Bool in
            Array(text.utf8).withUnsafeBytes { batch.add($0, refusing: refusing, counters: &counters).outcome }
        }
        #expect(take("abcd", false))
        #expect(take("efgh", false))
        #expect(!take("i", false))
        #expect(!take("", true))
        #expect(String(decoding: batch.bytes, as: UTF8.self) == "abcd\nefgh\n")
        #expect(batch.count == 2 && batch.isWorthWritingNow)
        #expect(counters == AuditKeyLogCounters(linesQueued: 2, linesDropped: 2))
        batch.removeAll()
        #expect(batch.bytes.isEmpty && batch.count == 0)
    }

    @Test("lines recorded reach the file (0600, its folder 0700) once the log stops; a second log of the session appends")
    func writesTheFile() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tv-keylog-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/audit-keys/session-7.log"
        for line in ["EXPORTER_SECRET aa 01", "EXPORTER_SECRET bb 02"] {
            let log = try AuditKeyLog(path: path, lingerMillis: 1)
            Array(line.utf8).withUnsafeBytes { log.record(keyLogLine: $0) }
            log.stop()
        }
        #expect(String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
                == "EXPORTER_SECRET aa 01\nEXPORTER_SECRET bb 02\n")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: root + "/audit-keys")[.posixPermissions] as? Int == 0o700)
    }
}
