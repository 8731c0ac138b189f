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
        // nginx closes first after a `Connection: close` request: its stream's FINs start with the server's.
        let closing = try world.curlThrough(tv, ["--http1.1", "-H", "Connection: close", world.url("/index.html?close")])
        #expect(closing.out == "hello from nginx\n", "\(closing)")
        let rows = try box.closedFlows(3)
        try #require(rows.count == 3)
        let log = try tv.stop()
        // content.keep is off (its default): the request rows keep no query string, for a query
        // is content, whether or not the decrypted capture records (a trial's rows said `?two`).
        let listed = try box.tv("requests", "--json")
        let page = try #require(try JSONSerialization.jsonObject(with: Data(listed.out.utf8)) as? [String: Any], "\(listed)")
        let requests = try #require(page["requests"] as? [[String: Any]], "\(listed)")
        #expect(requests.map { "\($0["path"] ?? "") \($0["queryRemoved"] as? Bool ?? false)" }.sorted() == ["/index.html false", "/index.html true", "/index.html true"], "\(requests)")
        let folder = box.dataDir + "/captures"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("decrypted-") }
        try #require(names.count == 1, "\(names) \(log)")
        let file = folder + "/" + names[0]
        var info = stat()
        #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)

        // HTTP/1 is read as such by its server port (Decode As), as HTTP/2 is below: without it
        // tshark gives a stream to whatever protocol Wireshark registers on either of its ports
        // before its HTTP heuristic is asked, and curl's ephemeral port can be one (44818 is
        // EtherNet/IP, 48898 ADS, 57000 IRC: `tshark -G decodes`); this failed once in a clean-clone
        // CI run that way (SYNs, comments and FINs there, no HTTP), and a stream with client port
        // 44818 fails the same without `-d`.
        let decodeH1 = ["-d", "tcp.port==\(world.nginx.tlsPort),http"]
        let h1Packets = try Self.tshark(box, file, filter: "http && !http2", fields: ["http.request.method", "http.request.uri", "http.response.code"],
                                        extra: decodeH1)
        // Said with every payload packet as tshark reads it (checksums checked) and the session's log.
        let seen = h1Packets.map { $0.joined(separator: " ") } == ["GET /index.html ", "  200", "GET /index.html?close ", "  200"] ? []
            : try Self.tshark(box, file, filter: "tcp.len > 0 || tcp.checksum.status == 2 || ip.checksum.status == 2",
                              fields: ["frame.number", "tcp.stream", "tcp.seq", "tcp.len", "tcp.checksum.status", "_ws.col.Protocol", "_ws.col.Info"],
                              extra: decodeH1)
        #expect(h1Packets.map { $0.joined(separator: " ") } == ["GET /index.html ", "  200", "GET /index.html?close ", "  200"], "\(h1Packets) \(seen) \(log)")
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
        // Every stream ends: a FIN each way (curl and nginx closed in order), the first from the
        // side that closed first: curl in two, nginx after `Connection: close` (a trial's
        // server-first closes were drawn client first).
        let fins = try Self.tshark(box, file, filter: "tcp.flags.fin == 1", fields: ["tcp.stream", "tcp.srcport"])
        #expect(fins.count == 6, "\(fins)")
        var firstFIN: [String: String] = [:]
        for fin in fins where firstFIN[fin[0]] == nil { firstFIN[fin[0]] = fin[1] }
        #expect(firstFIN.values.filter { $0 == "\(world.nginx.tlsPort)" }.count == 1, "\(fins)")
        let bad = try Self.tshark(box, file, filter: "tcp.analysis.flags || tcp.checksum.status == 0 || ip.checksum.status == 0",
                                  fields: ["frame.number"])
        #expect(bad.isEmpty, "\(bad)")

        // tv content delete takes the decrypted captures too (they hold what was said as much as
        // the content store does; a trial recovered every body from one after the delete), but
        // the one a running session writes, which it names.
        let again = try world.run("--inspect")
        #expect(try world.curlThrough(again, ["--http1.1", world.url("/index.html")]).out == "hello from nginx\n")
        let live = try box.tv("content", "delete", "--yes")
        #expect(live.status == 0 && live.err.contains("the 1 closed decrypted capture (") && live.out.contains(", and 1 decrypted capture (")
                && live.out.contains("Spared the decrypted capture being written (decrypted-"), "\(live)")
        #expect(!FileManager.default.fileExists(atPath: file))
        try again.stop()
        let after = try box.tv("content", "delete", "--yes")
        #expect(after.status == 0 && after.out.contains(", and 1 decrypted capture (") && !after.out.contains("Spared"), "\(after)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("decrypted-") }.isEmpty)
    }

    @Test("a decrypted capture cut mid-packet (a session killed while writing it) is cut back to whole packets by the next session, whatever its mode; capinfos then reads it cleanly")
    func cutDecryptedCaptureRepairedAtNextStart() throws {
        let world = try RunWorld()
        let box = world.sandbox
        #expect(try box.tv("settings", "set", "capture.decrypted", "on").status == 0)
        let tv = try world.run("--inspect")
        #expect(try world.curlThrough(tv, ["--http1.1", world.url("/index.html")]).out == "hello from nginx\n")
        _ = try box.closedFlows(1)
        try tv.stop()
        let folder = box.dataDir + "/captures"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasPrefix("decrypted-") })
        let file = folder + "/" + name
        let whole = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        // `tv captures` names it (it listed only packet captures: a trial).
        let listed = try box.tv("captures")
        #expect(listed.out.contains("1 decrypted capture (") && listed.out.contains("  \(name)  ") && listed.out.contains("closed"), "\(listed)")
        // So does `tv captures --json` (and `/api/captures` with it), as a "decrypted" entry.
        let json = try box.tv("captures", "--json")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: Any]], "\(json)")
        let entry = try #require(entries.first { $0["kind"] as? String == "decrypted" }, "\(json)")
        #expect(entry["name"] as? String == name && entry["path"] as? String == file && entry["bytes"] as? Int == whole
                && entry["recording"] as? Bool == false && entries.filter { $0["kind"] as? String == "decrypted" }.count == 1, "\(json)")
        // What a kill mid-write leaves: the head of an Enhanced Packet Block whose body never came.
        let handle = try #require(FileHandle(forWritingAtPath: file))
        handle.seekToEndOfFile()
        handle.write(Data([6, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3]))
        try handle.close()
        let cut = try box.tool("capinfos", ["-c", file])
        #expect(cut.status != 0 || cut.all.contains("cut short"), "\(cut)")
        // The next session (no inspection, no decrypted capture of its own) repairs it.
        #expect(try box.tv("settings", "set", "capture.decrypted", "off").status == 0)
        let next = try world.run()
        try next.stop()
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int == whole)
        let clean = try box.tool("capinfos", ["-c", file])
        #expect(clean.status == 0 && !clean.all.contains("cut short"), "\(clean)")
    }

    @Test("a 1 MiB body over h1 and over h2: segments of up to 64 KB (the largest an IP packet allows), reassembled by tshark whole, checksums good, no analysis warnings")
    func largeBodiesInLargeSegments() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") else {
            Issue.record("tshark is needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)")
            return
        }
        let world = try RunWorld()
        let box = world.sandbox
        let body = Data((0..<1_048_576).map { UInt8(truncatingIfNeeded: ($0 &* 7) ^ ($0 >> 8)) })
        try body.write(to: URL(fileURLWithPath: world.www + "/1m.bin"))
        let set = try box.tv("settings", "set", "capture.decrypted", "on")
        #expect(set.status == 0, "\(set)")
        let tv = try world.run("--inspect")
        let h1 = try world.curlThrough(tv, ["--http1.1", "-o", "/dev/null", "-w", "%{size_download}", world.url("/1m.bin")])
        #expect(h1.out == "1048576", "\(h1)")
        let h2 = try world.curlThrough(tv, ["--http2", "-o", "/dev/null", "-w", "%{size_download}", world.url("/1m.bin?two")])
        #expect(h2.out == "1048576", "\(h2)")
        _ = try box.closedFlows(2)
        let log = try tv.stop()
        let folder = box.dataDir + "/captures"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("decrypted-") }
        try #require(names.count == 1, "\(names) \(log)")
        let file = folder + "/" + names[0]
        let decodeH2 = ["-d", "tcp.port==\(world.nginx.tlsPort),http2"]

        // Stream 0 is the h1 flow: its response is one HTTP message of the whole body.
        let h1Response = try Self.tshark(box, file, filter: "tcp.stream == 0 && http.response.code == 200",
                                         fields: ["http.content_length", "tcp.reassembled.length"], extra: ["-d", "tcp.port==\(world.nginx.tlsPort),http"])
        #expect(h1Response.map { $0[0] } == ["1048576"], "\(h1Response)")
        #expect(h1Response.first.flatMap { Int($0[1]) } ?? 0 > 1_048_576, "\(h1Response)")
        // The h2 flow: its request and its DATA frames adding up to the body.
        let h2Headers = try Self.tshark(box, file, filter: "tcp.stream == 1 && http2.type == 1",
                                        fields: ["http2.headers.path", "http2.headers.status"], extra: decodeH2)
        #expect(h2Headers.contains { $0[0] == "/1m.bin?two" } && h2Headers.contains { $0[1] == "200" }, "\(h2Headers)")
        // Each packet lists its frames' types and lengths side by side; DATA is type 0.
        let h2Data = try Self.tshark(box, file, filter: "tcp.stream == 1 && http2.type == 0", fields: ["http2.type", "http2.length"],
                                     extra: decodeH2)
        var dataBytes = 0
        for row in h2Data {
            let types = row[0].split(separator: ","), lengths = row[1].split(separator: ",")
            for (type, length) in zip(types, lengths) where type == "0" { dataBytes += Int(length) ?? 0 }
        }
        #expect(dataBytes == 1_048_576, "\(h2Data.count) packets with DATA")

        // The segments are large: the server's carry tens of KB each (up to 65,495 over IPv4, 65,515 over IPv6).
        let lengths = try Self.tshark(box, file, filter: "tcp.len > 0", fields: ["tcp.len"]).compactMap { Int($0[0]) }
        #expect(lengths.max() ?? 0 > 60_000 && lengths.allSatisfy { $0 <= 65_515 }, "\(lengths)")
        let bad = try Self.tshark(box, file, filter: "tcp.analysis.flags || tcp.checksum.status == 0 || ip.checksum.status == 0",
                                  fields: ["frame.number"], extra: decodeH2)
        #expect(bad.isEmpty, "\(bad)")
    }
}
