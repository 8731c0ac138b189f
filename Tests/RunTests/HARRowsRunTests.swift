import Foundation
import Testing

/// `tv export har` through the real `tv` binary (issue 16): real curl over HTTP/1.1 keep-alive
/// and HTTP/2 through `tv run --inspect` to nginx. Without content keeping each entry is built
/// from its exchange row and agrees with nginx's access log, and no header value or query string
/// is in the file; the web's download is the same file. With content keeping the entries are
/// read from the kept content, headers and bodies included, as before.
@Suite("tv export har: entries from exchange rows (issue 16)", .serialized)
struct HARRowsRunTests {
    /// Checks a HAR 1.2 document's required fields with Python's own JSON reader (so the file is
    /// JSON to a reader that is not ours) and prints one line per entry: method, URL, status,
    /// response bodySize, then the request's headers count, the timings and the comment.
    static let harCheck = #"""
    import json, sys
    doc = json.load(open(sys.argv[1]))
    log = doc["log"]
    assert log["version"] == "1.2", log["version"]
    assert set(log["creator"]) >= {"name", "version"}
    for e in log["entries"]:
        for k in ("startedDateTime", "time", "request", "response", "cache", "timings"):
            assert k in e, k
        q, r, t = e["request"], e["response"], e["timings"]
        for k in ("method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"):
            assert k in q, k
        for k in ("status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize", "bodySize"):
            assert k in r, k
        assert set(r["content"]) >= {"size", "mimeType"}
        for k in ("send", "wait", "receive"):
            assert isinstance(t[k], (int, float)) and t[k] >= 0, (k, t[k])   # HAR 1.2: required, non-negative
        assert abs(e["time"] - sum(v for v in (t["send"], t["wait"], t["receive"]) if v >= 0)) < 0.01
        print(q["method"], q["url"], r["status"], r["bodySize"], len(q["headers"]) + len(r["headers"]),
              "%g" % t["send"], "wait" if t["wait"] >= 0 else "-", e.get("comment", ""), sep="\t")
    """#

    /// An entry as nginx's access log has it: method, path, status, body bytes.
    typealias Entry = ExchangeRowsRunTests.Logged

    /// The entries `harCheck` prints, and the rest of each line.
    func entries(_ box: Sandbox, _ file: String) throws -> [(entry: Entry, headers: Int, send: String, wait: String, comment: String)] {
        let checked = try box.tool("python3", ["-c", Self.harCheck, file])
        #expect(checked.status == 0, "\(checked)")
        return checked.out.split(separator: "\n").map { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let url = URL(string: f[1])
            return (Entry(method: f[0], path: url?.path ?? f[1], status: Int(f[2]) ?? -1, bytes: Int(f[3]) ?? -1),
                    Int(f[4]) ?? -1, f[5], f[6], f.count > 7 ? f[7] : "")
        }
    }

    /// Counted per kind: nginx's access log (the path without its query), or a HAR's entries.
    func counted(_ entries: [Entry]) -> [Entry: Int] {
        entries.reduce(into: [:]) { $0[$1, default: 0] += 1 }
    }

    func logged(_ world: RunWorld) -> [Entry: Int] {
        counted(ExchangeRowsRunTests.accessLog(world.sandbox.text(world.nginx.dir + "/logs/access.log")))
    }

    /// `tv export har --all -o FILE` (its summary must be `summary`), the entries read by Python,
    /// which must equal nginx's access log.
    func exported(_ world: RunWorld, _ name: String, summary: (String) -> String,
                  sourceLocation: SourceLocation = #_sourceLocation) throws -> (file: String, found: [(entry: Entry, headers: Int, send: String, wait: String, comment: String)]) {
        let box = world.sandbox
        let file = box.work + "/" + name
        let har = try box.tv("export", "har", "--all", "-o", file)
        #expect(har.status == 0 && har.out == summary(file), "\(har)", sourceLocation: sourceLocation)
        let found = try entries(box, file)
        let expected = logged(world)
        #expect(expected.values.reduce(0, +) == 6, sourceLocation: sourceLocation)
        #expect(counted(found.map(\.entry)) == expected, "HAR \(found.map(\.entry)) vs nginx \(expected)", sourceLocation: sourceLocation)
        return (file, found)
    }

    static let secretQuery = "SECRETQUERY51D2", secretHeader = "SECRETHEADER77B0"

    /// HTTP/1.1 keep-alive (GET with a query, GET, a 404, HEAD) and HTTP/2 (GET with a query, GET),
    /// each request carrying a secret header.
    func requests(_ world: RunWorld, _ tv: TVSession) throws {
        let q = Self.secretQuery, header = ["-H", "X-Secret: \(Self.secretHeader)"]
        var r = try world.curlThrough(tv, ["--http1.1"] + header + ["-o", "/dev/null", world.url("/index.html?token=\(q)"),
                                                                    "-o", "/dev/null", world.url("/1k.bin"),
                                                                    "-o", "/dev/null", world.url("/missing?token=\(q)")])
        #expect(r.status == 0, "\(r)")
        r = try world.curlThrough(tv, ["--http1.1", "-I"] + header + [world.url("/index.html")])
        #expect(r.status == 0, "\(r)")
        r = try world.curlThrough(tv, ["--http2"] + header + ["-o", "/dev/null", world.url("/index.html?token=\(q)"),
                                                              "-o", "/dev/null", world.url("/1k.bin")])
        #expect(r.status == 0, "\(r)")
        _ = try world.sandbox.waitForNoOpenConnections()
    }

    @Test("without content.keep: entries from exchange rows equal nginx's access log; no header value or query string; the web's download is the same file")
    func entriesFromRows() throws {
        let world = try RunWorld(nginxLocations: "access_log logs/access.log;")
        let box = world.sandbox
        let tv = try world.run("--inspect", "--web", "--web-listen", "127.0.0.1:0")
        defer { tv.kill() }
        try requests(world, tv)

        let (file, found) = try exported(world, "rows.har") {
            "Wrote 6 HAR entries from 3 flows to \($0); all are from exchange rows alone (no content was kept: no headers, bodies or query strings).\n"
        }
        #expect(box.mode(file) == 0o600)
        let text = box.text(file)
        #expect(!text.contains(Self.secretQuery) && !text.contains(Self.secretHeader) && !text.contains("token="), "\(text)")
        // No headers anywhere, send 0 (HAR 1.2 allows no -1 there), wait measured; the comment says why, and where the query went.
        #expect(found.allSatisfy { $0.headers == 0 && $0.send == "0" && $0.wait == "wait" }, "\(found)")
        #expect(found.allSatisfy { $0.comment.hasPrefix("from the exchange row: no content is kept for its connection (never kept, or deleted since), so no headers, cookies or bodies") })
        let queried = found.filter { $0.comment.contains("the query string was not kept, so the URL ends at the path") }
        #expect(queried.map(\.entry.path).sorted() == ["/index.html", "/index.html", "/missing"])
        #expect(found.filter { $0.comment.contains("HTTP/2 stream") }.count == 2)

        // The web's download of one flow is what `tv export har ID` writes.
        let flow = try #require(try box.json("requests", "--limit", "1")["requests"] as? [JSON]).first?.int("flow")
        let id = try #require(flow)
        let served = try WebRunTests().served(tv)
        let web = try box.curl(["-sS", "-H", served.bearer, "-o", box.work + "/web.har", served.base + "/api/flows/\(id)/har"])
        #expect(web.status == 0, "\(web)")
        #expect(try box.tv("export", "har", String(id), "-o", box.work + "/cli.har").status == 0)
        let webJSON = try JSONSerialization.jsonObject(with: box.read(box.work + "/web.har")) as? NSDictionary
        let cliJSON = try JSONSerialization.jsonObject(with: box.read(box.work + "/cli.har")) as? NSDictionary
        #expect(webJSON != nil && webJSON == cliJSON)
        #expect(try entries(box, box.work + "/web.har").count == 2)
    }

    @Test("with content.keep: entries read from the kept content, headers, query and bodies as before")
    func entriesFromKeptContent() throws {
        let world = try RunWorld(nginxLocations: "access_log logs/access.log;")
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        defer { tv.kill() }
        try requests(world, tv)

        let (file, found) = try exported(world, "kept.har") {
            "Wrote 6 HAR entries from 3 flows to \($0); it holds the kept bodies, so share it with care.\n"
        }
        #expect(found.allSatisfy { $0.headers > 0 && $0.send == "0" && !$0.comment.hasPrefix("from the exchange row") }, "\(found)")
        let text = box.text(file)
        #expect(text.contains(Self.secretHeader) && text.contains("token=\(Self.secretQuery)") && text.contains("hello from nginx\\n"))
        #expect(!text.contains("\"_tv\""))
    }
}
