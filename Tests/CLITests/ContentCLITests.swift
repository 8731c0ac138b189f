import FlowStore
import Foundation
import Recording
import Testing
import FlowTerms

/// `tv turns`, `tv export har`, `tv content` run as a user would, over a data folder filled
/// through the real writer (FlowWriter for flows, ContentWriter for turns).
@Suite(.serialized) struct ContentCLITests {
    /// A data folder with: flow 1 (HTTP/1.1, gzip body), flow 2 (HTTP/2 frames, padded data),
    /// flow 3 (binary, cut by a 64-byte flow budget), flow 4 (encrypted, nothing kept).
    static func makeHome(in parent: String = NSTemporaryDirectory()) throws -> (folder: String, dataDir: String) {
        let folder = parent + "/tv-content-cli-\(getpid())-\(UUID().uuidString)"
        let dataDir = folder + "/data"
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        let store = try FlowStore(path: dataDir + "/tunnelvision.sqlite3")
        let writer = try store.makeWriter()
        let start: Int64 = 1_764_471_900_000_000
        for (status, host) in [(FlowStatus.inspected, "a.test"), (.inspected, "h2.test"), (.notEncrypted, "bin.test"), (.encrypted, "sealed.test")] {
            writer.open(FlowRecord(startTime: start, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: "192.0.2.1",
                                   serverPort: status == .notEncrypted ? 80 : 443, host: host, hostOrigin: .sni, status: status))
        }
        writer.close()
        store.close()

        var configuration = ContentWriterConfiguration(databasePath: dataDir + "/tunnelvision.sqlite3", directory: dataDir + "/content")
        configuration.sweepInterval = 3_600
        let session = ContentRecorder(writer: try ContentWriter(configuration), policy: ContentPolicy(keep: true))
        let gzipBody: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x07,
                                 0x00, 0x86, 0xa6, 0x10, 0x36, 0x05, 0x00, 0x00, 0x00]   // `printf hello | gzip -9 -n`
        let one = try #require(session.recorder(flow: 1))
        one.record(.clientToServer, at: 0, Array("GET /hello HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8))
        one.record(.serverToClient, at: 1_500, Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 25\r\n\r\n".utf8) + gzipBody)
        one.finish()
        let two = try #require(session.recorder(flow: 2))
        let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        two.record(.clientToServer, at: 0, preface + [0, 0, 0, 4, 0, 0, 0, 0, 0] + [0, 0, 3, 1, 5, 0, 0, 0, 1, 0x82, 0x86, 0x84])
        two.record(.serverToClient, at: 800, [0, 0, 1, 1, 4, 0, 0, 0, 1, 0x88] + [0, 0, 5, 0, 9, 0, 0, 0, 1, 2, 0x68, 0x69, 0, 0])
        two.finish()
        session.writer.close()

        // Flow 3 under a 64-byte flow budget, as its own session.
        let small = ContentRecorder(writer: try ContentWriter(configuration), policy: ContentPolicy(keep: true, flowBudget: 64))
        let three = try #require(small.recorder(flow: 3))
        three.record(.serverToClient, at: 0, (0..<100).map { UInt8($0) })
        three.finish()
        small.writer.close()
        return (folder, dataDir)
    }

    static func tv(_ arguments: [String], dataDir: String) throws -> (status: Int32, out: String, err: String, data: Data) {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("tv").path
        let candidates = [binary, Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("tv").path,
                          Bundle.main.bundleURL.appendingPathComponent("tv").path]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw CocoaError(.fileNoSuchFile)
        }
        let r = try Run.process(path, ["--data-dir", dataDir] + arguments, in: FileManager.default.currentDirectoryPath,
                                environment: ["PATH": "/usr/bin:/bin", "HOME": dataDir, "LC_ALL": "C.UTF-8"])
        return (r.status, r.out, r.err, r.stdout)
    }

    @Test func turnsHTTPRawHARAndDelete() throws {
        let (folder, dataDir) = try Self.makeHome()
        defer { try? FileManager.default.removeItem(atPath: folder) }

        let plain = try Self.tv(["turns", "1"], dataDir: dataDir)
        #expect(plain.status == 0)
        #expect(plain.out.hasPrefix("Flow 1: a.test\n\nTurn 1  → client to server  at 0.000 s  37 bytes\n  GET /hello HTTP/1.1\n  Host: a.test\n\n\nTurn 2  ← server to client  at 0.002 s  88 bytes\n  00000000  48 54 54 50 2f 31 2e 31  20 32 30 30 20 4f 4b 0d  |HTTP/1.1 200 OK.|\n"))

        let http = try Self.tv(["turns", "1", "--http"], dataDir: dataDir)
        #expect(http.status == 0)
        #expect(http.out.contains("    body: 5 bytes, decoded from gzip (25 bytes as sent), content-length\n      hello\n"))

        let h2 = try Self.tv(["turns", "2", "--http"], dataDir: dataDir)
        #expect(h2.out.hasPrefix("Flow 2: h2.test — read as HTTP/2, 1 exchange\n\nturn 1  → client to server  SETTINGS (no parameters)\n\n#1  stream 1\n  → client to server  turn 1  at 0.000 s\n    GET / HTTP/2\n  ← server to client  turn 2  at 0.001 s\n    HTTP/2 200\n    body: 2 bytes, DATA frames\n      hi\n"))

        let cut = try Self.tv(["turns", "3"], dataDir: dataDir)
        #expect(cut.out.contains("Turn 1  ← server to client  at 0.000 s  64 of 100 bytes kept\n  00000000  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|\n"))
        #expect(cut.out.hasSuffix("  00000030  30 31 32 33 34 35 36 37  38 39 3a 3b 3c 3d 3e 3f  |0123456789:;<=>?|\n⋯ The server-to-client side stopped being recorded after this turn: this connection's budget per direction (content.flowBudget) was used up.\n"))

        let none = try Self.tv(["turns", "4"], dataDir: dataDir)
        #expect(none.out == "Flow 4: sealed.test\nNot inspected: tv passed this connection through without decrypting it, so it never saw what was said.\n")

        let rawFile = folder + "/turn2.bin"
        let raw = try Self.tv(["turns", "1", "--turn", "2", "--raw", "-o", rawFile], dataDir: dataDir)
        #expect(raw.status == 0)
        let written = try #require(FileManager.default.contents(atPath: rawFile))
        #expect(written.count == 88)
        #expect(written.prefix(17) == Data("HTTP/1.1 200 OK\r\n".utf8))
        let rawOut = try Self.tv(["turns", "1", "--turn", "1", "--raw"], dataDir: dataDir)
        #expect(rawOut.data == Data("GET /hello HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8))
        #expect(try Self.tv(["turns", "1", "--raw"], dataDir: dataDir).status == 2)
        #expect(try Self.tv(["turns", "1", "--turn", "9"], dataDir: dataDir).err == "tv: Flow 1 has no turn 9; its turns are 1 to 2.\n")

        let harPath = folder + "/out.har"
        let har = try Self.tv(["export", "har", "1", "2", "4", "-o", harPath], dataDir: dataDir)
        #expect(har.status == 0)
        #expect(har.out == "Wrote 2 HAR entries from 2 flows to \(harPath); it holds the kept bodies, so share it with care.\n")
        #expect(har.err.hasPrefix("tv: left out flow 4: Not inspected"))
        let json = try JSONSerialization.jsonObject(with: try #require(FileManager.default.contents(atPath: harPath))) as? [String: Any]
        let entries = (json?["log"] as? [String: Any])?["entries"] as? [[String: Any]]
        #expect(entries?.count == 2)
        #expect(((entries?.first?["response"] as? [String: Any])?["content"] as? [String: Any])?["text"] as? String == "hello")

        let status = try Self.tv(["content"], dataDir: dataDir)
        #expect(status.out.hasPrefix("5 turns of 3 flows: 258 B kept.\nOn disk: 258 B in 2 segment files"))
        let refused = try Self.tv(["content", "delete"], dataDir: dataDir)
        #expect(refused.status == 2)
        let deleted = try Self.tv(["content", "delete", "--yes"], dataDir: dataDir)
        #expect(deleted.status == 0)
        #expect(deleted.err.hasPrefix("This deletes all decrypted content: 5 turns of 3 flows, 258 B in 2 segment files."))
        #expect(deleted.out == "Deleted 5 turns and 2 segment files (258 B).\n")
        let after = try Self.tv(["turns", "1"], dataDir: dataDir)
        #expect(after.out == "Flow 1: a.test\nInspected, and nothing was kept: keeping decrypted content was off for this connection, what was kept has expired or was deleted (`tv content delete`), or it could not be written (a full disk: the session said so then).\n")
        let flow = try Self.tv(["flow", "1"], dataDir: dataDir)
        #expect(flow.out.hasSuffix("Decrypted content\n  Inspected, and nothing was kept: keeping decrypted content was off for this connection, what was kept has expired or was deleted (`tv content delete`), or it could not be written (a full disk: the session said so then).\n"))
    }

    @Test("tv content delete on a full disk frees the segments first, so the rows' deletion has room and succeeds (it failed and freed nothing: a trial)",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func deleteOnAFullDisk() throws {
        try withSandbox { s in
            let mount = s.root + "/full"
            try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
            let mounted = try s.tool("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mount])
            try #require(mounted.status == 0, "tmpfs could not be mounted: \(mounted)")
            defer { _ = try? s.tool("umount", [mount]) }
            let (_, home) = try Self.makeHome(in: mount)
            // What the sessions kept, then the rest of the disk in one more segment.
            _ = try s.tool("dd", ["if=/dev/zero", "of=\(home)/content/content-00000099.seg", "bs=4096"])
            let full = try s.tool("dd", ["if=/dev/zero", "of=\(home)/filler", "bs=512", "count=64"])
            #expect(full.status != 0, "the disk is not full: \(full)")
            let delete = try Self.tv(["content", "delete", "--yes"], dataDir: home)
            #expect(delete.status == 0, "\(delete.status) \(delete.out) \(delete.err)")
            let left = try FileManager.default.contentsOfDirectory(atPath: home + "/content").filter { $0.hasSuffix(".seg") }
            #expect(left.isEmpty, "\(left)")
            let status = try Self.tv(["content", "status"], dataDir: home)
            #expect(status.status == 0 && status.out.hasPrefix("No decrypted content is kept."), "\(status)")
        }
    }
}
