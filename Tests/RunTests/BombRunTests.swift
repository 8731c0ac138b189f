import Foundation
import Testing

/// Issue 12 §1 end to end: nginx serves a decompression bomb (16 MiB of zeros made small by the
/// real `brotli`, `zstd`, `gzip`, sent with its Content-Encoding), curl fetches it ten times on
/// one connection through `tv run --inspect --keep-content`, over HTTP/1.1 and HTTP/2; `tv turns
/// --http` and `tv export har` then read the recording within their limits and bounded memory
/// (the child's VmHWM from /proc/<pid>/status).
@Suite("tv run --keep-content: decompression bombs from a real server (issue 12 §1)", .serialized)
struct BombRunTests {
    /// Resident memory `tv` may use reading ten bombs (KiB); it took 877 MB for 50 before.
    static let residentBoundKiB = 96 * 1_024

    @Test(arguments: [("br", true), ("zstd", false), ("gzip", false)])
    func tenBombsThroughTheProxy(coding: String, http2: Bool) throws {
        let bomb = try #require(RealTools.bomb(coding, zeros: 16 * 1_048_576), "\(coding) is not installed")
        let world = try RunWorld(nginxLocations: """
        location = /bomb { alias www/bomb.\(coding); add_header Content-Encoding \(coding); default_type application/octet-stream; }
        """)
        let box = world.sandbox
        try Data(bomb).write(to: URL(fileURLWithPath: world.www + "/bomb.\(coding)"))
        let tv = try world.run("--inspect", "--keep-content")
        // curl does not decode (no --compressed): it stores the bomb as sent.
        let fetch = try world.curlThrough(tv, [http2 ? "--http2" : "--http1.1", "-H", "Accept-Encoding: \(coding)"]
                                          + Array(repeating: ["-o", "/dev/null"], count: 10).flatMap { $0 }
                                          + Array(repeating: world.url("/bomb"), count: 10))
        #expect(fetch.status == 0, "\(fetch)")
        let rows = try box.closedFlows(1)
        try #require(rows.count == 1, "one connection for the ten requests")
        let id = String(try #require(rows[0].int("id")))

        let previewPath = box.work + "/preview.txt"
        let preview = try ChildMemory.run(try TVBinary.require(), ["--data-dir", box.dataDir, "turns", id, "--http"],
                                          environment: box.environment, stdoutPath: previewPath)
        #expect(preview.status == 0, "\(preview)")
        #expect(preview.peakResidentKiB > 0 && preview.peakResidentKiB < Self.residentBoundKiB, "\(preview)")
        let text = box.text(previewPath)
        #expect(text.contains(" — read as \(http2 ? "HTTP/2" : "HTTP/1.1"), 10 exchanges\n"), "\(text.prefix(2_000))")
        // Each body stops at its own limit until the command's 64 MiB of decoding is spent.
        let perBody = max(65_536, bomb.count * 1_000)
        let cut = "bytes of \(coding) and stopped: tv decodes a body to at most 1,000 times its kept size (at least 64.0 KiB)"
        let decoded = text.components(separatedBy: cut).count - 1
        let partial = text.components(separatedBy: "bytes of \(coding) and stopped: this command decodes at most 64.0 MiB in all").count - 1
        let spent = text.components(separatedBy: "Not decoded: this command has already decoded 64.0 MiB").count - 1
        // br: four 16 MiB windows spend the 64 MiB; zstd: ten bodies of 1,000 times 530 bytes fit;
        // gzip: four bodies of ~15.5 MiB, then one cut by what is left.
        #expect(decoded == (coding == "zstd" ? 10 : 4), "\(text.prefix(3_000))")
        #expect(partial == (coding == "gzip" ? 1 : 0))
        #expect(decoded + partial + spent == 10)
        #expect(text.contains("    body: \(grouped(perBody)) bytes, decoded from \(coding) (\(grouped(bomb.count)) bytes as sent), "), "\(text.prefix(3_000))")

        let harPath = box.work + "/bombs.har"
        let har = try ChildMemory.run(try TVBinary.require(), ["--data-dir", box.dataDir, "export", "har", id, "-o", harPath],
                                      environment: box.environment, stdoutPath: "/dev/null")
        #expect(har.status == 0, "\(har)")
        #expect(har.peakResidentKiB > 0 && har.peakResidentKiB < Self.residentBoundKiB, "\(har)")
        let check = try box.python("""
        import json, sys
        entries = json.load(open(sys.argv[1]))["log"]["entries"]
        print(len(entries), sum(1 for e in entries if "and stopped" in e["response"]["content"].get("comment", "")))
        """, [harPath])
        #expect(check.out == "10 \(decoded + partial)\n", "\(check)")
        _ = try tv.stop()
    }
}
