import FlowStore
import FlowTerms
import Foundation
import Recording
import Testing
import TVHome

/// A data folder filled through the real writers: flow 1 (HTTP/1.1, a 5-byte body), flow 2
/// (SMTP, not HTTP), flow 3 (TLS passed through, nothing kept), flow 4 (binary with an escape),
/// flow 5 (HTTP/1.1 with a 100,000-byte text body, cut at 64 KiB).
struct KeptContentFolder {
    let path: String
    let home: TVHome

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("tv-turns-reading-\(getpid())-\(UUID().uuidString)").path
        home = TVHome(path: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let store = try FlowStore(path: home.databasePath)
        let writer = try store.makeWriter()
        for (status, host) in [(FlowStatus.inspected, "a.test"), (.inspected, "mail.test"), (.encrypted, "sealed.test"),
                               (.inspected, "bin.test"), (.inspected, "big.test")] {
            writer.open(FlowRecord(startTime: 1_764_471_900_000_000, clientAddress: "127.0.0.1", clientPort: 50_000,
                                   serverAddress: "192.0.2.1", serverPort: 443, host: host, hostOrigin: .sni, status: status))
        }
        writer.close()
        store.close()

        var configuration = ContentWriterConfiguration(databasePath: home.databasePath, directory: home.contentDirectory)
        configuration.sweepInterval = 3_600
        let session = ContentRecorder(writer: try ContentWriter(configuration), policy: ContentPolicy(keep: true))
        let web = try #require(session.recorder(flow: 1))
        web.record(.clientToServer, at: 0, Array("GET /hello HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8))
        web.record(.serverToClient, at: 2_000, Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8))
        web.finish()
        let mail = try #require(session.recorder(flow: 2))
        mail.record(.serverToClient, at: 0, Array("220 mail.test ESMTP\r\n".utf8))
        mail.finish()
        let binary = try #require(session.recorder(flow: 4))
        binary.record(.serverToClient, at: 0, [0x00, 0x1b, 0x5b, 0x32, 0x4a])
        binary.finish()
        let big = try #require(session.recorder(flow: 5))
        big.record(.clientToServer, at: 0, Array("GET /big HTTP/1.1\r\nHost: big.test\r\n\r\n".utf8))
        big.record(.serverToClient, at: 1_000, Array("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n".utf8)
                   + [UInt8](repeating: 0x61, count: 100_000))
        big.finish()
        session.writer.close()
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// Runs `sql` on the flow database past the schema's CHECKs, as a hand edit or a damaged page can.
    func damage(_ sql: String) throws {
        let database = try SQLiteDatabase(path: home.databasePath)
        defer { database.close() }
        try database.execute("PRAGMA ignore_check_constraints=ON;" + sql)
    }

    /// Sets one field of packed turns of `flow` (`TurnRunDamage`) as a hand edit can.
    func damageTurn(_ column: String, to value: String, flow: Int64, turn: Int? = nil) throws {
        let database = try SQLiteDatabase(path: home.databasePath)
        defer { database.close() }
        try TurnRunDamage.set(column, to: value, flow: flow, turn: turn, in: database)
    }
}
