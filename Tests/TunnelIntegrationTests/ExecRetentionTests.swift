import FlowStore
import FlowTerms
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Retention runs in `tv exec`'s session as in `tv run`'s (issue 19): with small limits set
/// through `tv settings`, the pass at the exec's start deletes old flows with their packet rows,
/// and an expired capture file with its row, while the exec's own traffic is recorded.
@Suite("tv exec applies the storage limits", .serialized, .enabled(if: LabRequirements.met, "needs root, /dev/net/tun, nginx, dnsmasq"))
final class ExecRetentionTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    static let day: Int64 = 86_400_000_000

    func integer(_ database: SQLiteDatabase, _ sql: String) throws -> Int64 {
        if case let .integer(n) = try database.scalar(sql) { return n }
        return -1
    }

    @Test("history.maxAge 1d and captures.maxAge 1d: tv exec's pass deletes the 40-day-old flows (their packet rows too) and the expired capture file (its row marked), keeps the young flow and records curl's")
    func execAppliesLimits() throws {
        // The limits first: saved with no session running they are applied at once, to an empty store.
        for (key, value) in [("history.maxAge", "1d"), ("captures.maxAge", "1d")] {
            let set = lab.tv(["settings", "set", key, value])
            #expect(set.status == 0, "\(set)")
        }
        let path = lab.dataDir + "/tunnelvision.sqlite3"
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        let store = try FlowStore(path: path)
        let writer = try store.makeWriter()
        var ids: [Int64] = []
        for (i, age) in [40 * Self.day, 40 * Self.day, Self.day / 10].enumerated() {
            var flow = FlowRecord(startTime: now - age, clientAddress: "10.77.0.1", clientPort: 40_000 + i, serverAddress: "192.0.2.9",
                                  serverPort: 443, host: "old\(i).test", hostOrigin: .sni, status: .encrypted)
            flow.duration = 1_000
            ids.append(writer.open(flow).id)
        }
        writer.close()
        store.close()
        let folder = lab.dataDir + "/captures"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: folder + "/capture-000001.pcapng", contents: Data(repeating: 0x0a, count: 4_096))
        let database = try SQLiteDatabase(path: path)
        let ended = now - 40 * Self.day
        try database.execute("INSERT INTO captures (seq, path, started_at, ended_at, bytes, packets, snaplen, recording) VALUES (1, 'captures/capture-000001.pcapng', \(ended - 1_000_000), \(ended), 4096, 2, 65535, 0)")
        for (n, flow) in [ids[0], ids[1]].enumerated() {
            try database.execute("INSERT INTO packets (flow_id, n, capture_seq, file_offset, time_us, direction, orig_len, incl_len, meaning) VALUES (\(flow), 1, 1, \(100 * (n + 1)), \(ended), 'client_to_server', 60, 60, 'data')")
        }
        database.close()

        let r = lab.exec([], ["curl", "-sS", "http://origin.test:8080/index.html"])
        #expect(r.status == 0 && r.out == OriginLab.indexBody, "\(r)")

        let after = try SQLiteDatabase(readingAt: path)
        defer { after.close() }
        #expect(try integer(after, "SELECT count(*) FROM flows WHERE id IN (\(ids[0]), \(ids[1]))") == 0)
        #expect(try integer(after, "SELECT count(*) FROM flows WHERE id = \(ids[2])") == 1)
        #expect(try integer(after, "SELECT count(*) FROM flows WHERE server_port = 8080 AND server_address = '10.203.0.2'") == 1)
        #expect(try integer(after, "SELECT count(*) FROM packets WHERE capture_seq = 1") == 0)
        #expect(try integer(after, "SELECT count(*) FROM captures WHERE seq = 1 AND deleted_at IS NOT NULL") == 1)
        #expect(!FileManager.default.fileExists(atPath: folder + "/capture-000001.pcapng"))
        // The exec's own capture file is there, with its row.
        #expect(try integer(after, "SELECT count(*) FROM captures WHERE seq > 1 AND deleted_at IS NULL") == 1)
        #expect(FileManager.default.fileExists(atPath: folder + "/capture-000002.pcapng"))
    }

    @Test("capture.rotateBytes 1MB and captures.maxBytes 2MB: the limit is applied as files rotate and when tv exec ends, so the folder is within it after an 8 MiB download (it held 457 MiB against 5MB until the next session: a trial)")
    func captureLimitAppliedAtRotationAndEnd() throws {
        for (key, value) in [("capture.rotateBytes", "1MB"), ("captures.maxBytes", "2MB")] {
            let set = lab.tv(["settings", "set", key, value])
            #expect(set.status == 0, "\(set)")
        }
        // Not --quiet: the session says what its passes delete (and says nothing of them quiet).
        let r = lab.tv(["exec", "--yes", "--", "curl", "-sS", "-o", "/dev/null", "http://origin.test:8080/1m.bin?[1-8]"], timeout: 90)
        #expect(r.status == 0, "\(r)")
        let quiet = lab.exec([], ["curl", "-sS", "-o", "/dev/null", "http://origin.test:8080/1m.bin?[1-4]"])
        #expect(quiet.status == 0 && !quiet.err.contains("capture file"), "\(quiet)")
        let folder = lab.dataDir + "/captures"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("capture-") }
        let total = try files.reduce(0) { $0 + (try FileManager.default.attributesOfItem(atPath: folder + "/" + $1)[.size] as? Int ?? 0) }
        #expect(!files.isEmpty && total <= 2 * 1_048_576, "\(files.count) files, \(total) bytes")
        // The session said what went.
        #expect(r.err.contains("capture file"), "\(r.err)")
    }
}
