import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 17, the decrypted capture (`capture.decrypted`): curl through `tv run --inspect` to the
/// test nginx over HTTP/1.1 and HTTP/2; tshark reads the session's decrypted capture and sees the
/// requests and responses without any key, each stream commented with its flow id.
@Suite("tv run: the decrypted capture shows inspected HTTP/1 and HTTP/2 in tshark without keys (issue 17)", .serialized)
struct DecryptedCaptureRunTests {
    /// `tshark -r FILE -Y FILTER -T fields -e …`, one array of fields per packet.
    static func tshark(_ box: Sandbox, _ file: String, filter: String, fields: [String], extra: [String] = []) throws -> [[String]] {
        let out = try box.tool("tshark", ["-r", file] + extra + ["-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE", "-Y", filter, "-T", "fields", "-E", "separator=|"] + fields.flatMap { ["-e", $0] })
        return out.out.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
    }

    @Test("explicit mode: an h1 and an h2 request through tv run --inspect are HTTP in tshark (-Y http, -Y http2); file 0600; streams named by flow")
    func explicitH1AndH2() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") else {
            Issue.record("tshark is needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)")
            return
        }
        let world = try RunWorld()
        let box = world.sandbox
        let set = try box.tv("settings", "set", "capture.decrypted", "on")
        #expect(set.status == 0, "\(set)")
        let tv = try world.run("--inspect")
        let h1 = try world.curlThrough(tv, ["--http1.1", world.url("/index.html")])
        #expect(h1.out == "hello from nginx\n", "\(h1)")
        let h2 = try world.curlThrough(tv, ["--http2", world.url("/index.html?two")])
        #expect(h2.out == "hello from nginx\n", "\(h2)")
        let rows = try box.closedFlows(2)
        try #require(rows.count == 2)
        let log = try tv.stop()
        let folder = box.dataDir + "/captures"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("decrypted-") }
        try #require(names.count == 1, "\(names) \(log)")
        let file = folder + "/" + names[0]
        var info = stat()
        #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)

        let h1Packets = try Self.tshark(box, file, filter: "http", fields: ["http.request.method", "http.request.uri", "http.response.code"])
        #expect(h1Packets.map { $0.joined(separator: " ") } == ["GET /index.html ", "  200"], "\(h1Packets)")
        // HTTP/2 without TLS on a port Wireshark does not know is read as such when asked (Decode As).
        let h2Packets = try Self.tshark(box, file, filter: "http2.type == 1",
                                        fields: ["http2.headers.method", "http2.headers.path", "http2.headers.status"],
                                        extra: ["-d", "tcp.port==\(world.nginx.tlsPort),http2"])
        let cols = try Self.tshark(box, file, filter: "tcp.len > 0", fields: ["tcp.stream", "_ws.col.Protocol", "_ws.col.Info"])
        #expect(h2Packets.contains { $0.first == "GET" && $0.dropFirst().first == "/index.html?two" }, "\(h2Packets) \(cols)")
        #expect(h2Packets.contains { $0.last == "200" }, "\(h2Packets)")

        // The first packet of each stream says which flow it is; the ports are the flows' own.
        let comments = try Self.tshark(box, file, filter: "frame.comment", fields: ["frame.comment", "tcp.srcport", "tcp.flags.syn"])
        let ids = rows.compactMap { $0.int("id") }.sorted()
        #expect(comments.map { $0[0] }.sorted() == ids.map { "tv flow \($0)" }, "\(comments)")
        #expect(comments.allSatisfy { $0[2] == "1" })
        // Every stream ends: a FIN each way (curl and nginx closed in order).
        let fins = try Self.tshark(box, file, filter: "tcp.flags.fin == 1", fields: ["tcp.stream"])
        #expect(fins.count == 4, "\(fins)")
        let bad = try Self.tshark(box, file, filter: "tcp.analysis.flags || tcp.checksum.status == 0 || ip.checksum.status == 0",
                                  fields: ["frame.number"])
        #expect(bad.isEmpty, "\(bad)")
    }
}
