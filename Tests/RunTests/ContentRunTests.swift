import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 5 through the real `tv` binary: `tv run --inspect --keep-content` between curl (and
/// h2load) and nginx, read back with `tv turns`, `tv turns --http`, `--raw`, `tv export har`,
/// `tv content`.
@Suite("tv run --keep-content: decrypted content end to end (issue 5)", .serialized)
struct ContentRunTests {
    /// nginx extras: a POST answer, gzip on a text folder, a pre-compressed brotli file (nginx-light
    /// has no brotli module), relative paths resolving against nginx's prefix.
    static let locations = """
    location = /post { return 200 "posted\\n"; }
            location /gz/ { gzip on; gzip_types text/plain; gzip_min_length 1; }
            location = /br/hello.txt { alias www/hello.txt.br; add_header Content-Encoding br; }
    """

    /// The world, with the extra files: www/gz/text.txt, www/hello.txt.br (of `brotliText`),
    /// www/1m.bin (1,048,576 bytes of a pattern that is not text).
    static func world() throws -> RunWorld {
        let world = try RunWorld(nginxLocations: locations)
        try FileManager.default.createDirectory(atPath: world.www + "/gz", withIntermediateDirectories: true)
        try Data(gzipText.utf8).write(to: URL(fileURLWithPath: world.www + "/gz/text.txt"))
        let plain = world.sandbox.work + "/hello.txt"
        try Data(brotliText.utf8).write(to: URL(fileURLWithPath: plain))
        let br = try world.sandbox.tool("brotli", ["-q", "11", "-f", "-o", world.www + "/hello.txt.br", plain])
        guard br.status == 0 else { throw Sandbox.Failed(output: br) }
        try oneMiB.write(to: URL(fileURLWithPath: world.www + "/1m.bin"))
        return world
    }

    static let gzipText = (1...20).map { "line \($0) of the gzip test\n" }.joined()
    static let brotliText = (1...10).map { "brotli says hello, \($0)\n" }.joined()
    static let oneMiB = Data((0..<1_048_576).map { UInt8(truncatingIfNeeded: ($0 &* 7) ^ ($0 >> 8)) })

    /// curl's options for one HTTP/1.1 transfer through `tv` with fixed request headers.
    static func h1(_ world: RunWorld, _ tv: TVSession, _ path: String, head: String, body: String, extra: [String] = []) -> [String] {
        ["-x", tv.proxyURL, "--cacert", world.tvRoot, "--http1.1", "-A", "tv-test", "-H", "Accept:", "-D", head, "-o", body] + extra + [world.url(path)]
    }

    /// The exact bytes nginx sent for one transfer: curl's -D head (without the tunnel's own
    /// "200 Connection established") and the body as received (no content decoding).
    static func response(_ box: Sandbox, head: String, body: String) -> Data {
        var headBytes = box.read(head)
        if headBytes.starts(with: Data(connectEstablished.utf8)) { headBytes = headBytes.dropFirst(connectEstablished.utf8.count) }
        return Data(headBytes) + box.read(body)
    }

    /// `tv turns ID --json` turns, each with its kept bytes decoded.
    static func turns(_ box: Sandbox, _ id: Int) throws -> [(json: JSON, bytes: Data)] {
        let object = try box.json("turns", String(id))
        return (object["turns"] as? [JSON] ?? []).map { turn in
            let bytes = turn.string("text").map { Data($0.utf8) } ?? Data(base64Encoded: turn.string("base64") ?? "") ?? Data()
            return (turn, bytes)
        }
    }

    @Test("HTTP/1.1 GET, POST and a binary GET on one keep-alive connection: six turns with exact figures and bytes, --http messages, --raw, HAR")
    func h1KeepAlive() throws {
        let world = try Self.world()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        // The banner says content is being kept, and for how long (the default, 1 day).
        #expect(tv.log().contains("\n  content     kept: what inspected connections say is written to the data folder for 1 day (`tv turns ID`)\n"), "\(tv.log())")
        let w = box.work
        let r = try box.curl(Self.h1(world, tv, "/index.html", head: w + "/d1", body: w + "/b1") + ["--next"]
                             + Self.h1(world, tv, "/post", head: w + "/d2", body: w + "/b2", extra: ["-d", "a=1&b=2"]) + ["--next"]
                             + Self.h1(world, tv, "/1k.bin", head: w + "/d3", body: w + "/b3"))
        #expect(r.status == 0, "\(r)")
        let rows = try box.closedFlows(1)
        try #require(rows.count == 1, "one connection for the three requests")
        let id = try #require(rows[0].int("id"))
        let port = world.nginx.tlsPort
        let requests = [
            Data("GET /index.html HTTP/1.1\r\nHost: localhost:\(port)\r\nUser-Agent: tv-test\r\n\r\n".utf8),
            Data("POST /post HTTP/1.1\r\nHost: localhost:\(port)\r\nUser-Agent: tv-test\r\nContent-Length: 7\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\na=1&b=2".utf8),
            Data("GET /1k.bin HTTP/1.1\r\nHost: localhost:\(port)\r\nUser-Agent: tv-test\r\n\r\n".utf8),
        ]
        let responses = (1...3).map { Self.response(box, head: w + "/d\($0)", body: w + "/b\($0)") }
        #expect(box.read(w + "/b2") == Data("posted\n".utf8))
        #expect(box.read(w + "/b3").count == 1024)

        let turns = try Self.turns(box, id)
        try #require(turns.count == 6, "\(turns.map(\.json))")
        for (i, turn) in turns.enumerated() {
            let expected = i % 2 == 0 ? requests[i / 2] : responses[i / 2]
            #expect(turn.json.int("number") == i + 1)
            #expect(turn.json.string("direction") == (i % 2 == 0 ? "client_to_server" : "server_to_client"))
            #expect(turn.json.int("keptBytes") == expected.count, "turn \(i + 1)")
            #expect(turn.json.int("seenBytes") == expected.count, "turn \(i + 1)")
            #expect(turn.json["truncated"] as? Bool == false)
            #expect(turn.bytes == expected, "turn \(i + 1): \(String(decoding: turn.bytes.prefix(200), as: UTF8.self))")
        }

        // The people's view: blocks with number, arrow and word, offset, exact figures; text or hex.
        let text = try box.tv("turns", String(id)).out
        #expect(text.hasPrefix("Flow \(id): localhost\n\nTurn 1  → client to server  at "), "\(text)")
        #expect(matches(text, #"Turn 1  → client to server  at \d+\.\d{3} s  \#(requests[0].count) bytes\n  GET /index.html HTTP/1.1\n  Host: localhost:\#(port)\n  User-Agent: tv-test\n"#), "\(text)")
        #expect(matches(text, #"Turn 2  ← server to client  at \d+\.\d{3} s  \#(responses[0].count) bytes\n  HTTP/1.1 200 OK\n  Server: nginx/"#), "\(text)")
        #expect(matches(text, #"Turn 3  → client to server  at \d+\.\d{3} s  \#(requests[1].count) bytes\n  POST /post HTTP/1.1\n"#), "\(text)")
        #expect(text.contains("  Content-Type: application/x-www-form-urlencoded\n\n  a=1&b=2\n"), "\(text)")
        #expect(matches(text, #"Turn 6  ← server to client  at \d+\.\d{3} s  \#(grouped(responses[2].count)) bytes\n  00000000  48 54 54 50 2f 31 2e 31  20 32 30 30 20 4f 4b 0d  \|HTTP/1.1 200 OK.\|\n"#), "\(text)")

        // As HTTP messages: three exchanges, the POST body, the binary body as hex.
        let http = try box.tv("turns", String(id), "--http").out
        #expect(http.hasPrefix("Flow \(id): localhost — read as HTTP/1.1, 3 exchanges\n"), "\(http)")
        #expect(http.contains("    GET /index.html HTTP/1.1\n"), "\(http)")
        #expect(http.contains("    POST /post HTTP/1.1\n"), "\(http)")
        #expect(http.contains("    body: 7 bytes, content-length\n      a=1&b=2\n"), "\(http)")
        #expect(http.contains("    body: 7 bytes, content-length\n      posted\n"), "\(http)")
        #expect(http.contains("    body: 1,024 bytes, content-length\n      00000000  07 26 45 64 83 a2 c1 e0  ff 1e 3d 5c 7b 9a b9 d8  |.&Ed......=\\{...|\n"), "\(http)")

        // --raw: one whole turn, byte for byte, to a file (0600) or standard output.
        let rawFile = w + "/turn4.bin"
        let raw = try box.tv("turns", String(id), "--turn", "4", "--raw", "-o", rawFile)
        #expect(raw.status == 0, "\(raw)")
        #expect(box.read(rawFile) == responses[1])
        #expect(box.mode(rawFile) == 0o600)
        #expect(try box.tv("turns", String(id), "--turn", "3", "--raw").stdout == requests[1])

        // HAR from the same reading.
        let harFile = w + "/flow.har"
        let har = try box.tv("export", "har", String(id), "-o", harFile)
        #expect(har.out == "Wrote 3 HAR entries from 1 flow to \(harFile); it holds the kept bodies, so share it with care.\n", "\(har)")
        let json = try #require(try JSONSerialization.jsonObject(with: box.read(harFile)) as? JSON)
        let log = try #require(json.object("log"))
        #expect(log.string("version") == "1.2")
        let entries = try #require(log["entries"] as? [JSON])
        #expect(entries.count == 3)
        #expect(entries.compactMap { $0.object("request")?.string("method") } == ["GET", "POST", "GET"])
        #expect(entries.compactMap { $0.object("request")?.string("url") } == ["/index.html", "/post", "/1k.bin"].map(world.url))
        #expect(entries.compactMap { $0.object("response")?.int("status") } == [200, 200, 200])
        #expect(entries[1].object("request")?.object("postData")?.string("text") == "a=1&b=2")
        #expect(entries[0].object("response")?.object("content")?.string("text") == "hello from nginx\n")
        try tv.stop()
    }

    @Test("a 1 MiB response: exactly 65,536 kept of 1,048,576 + head bytes seen, the rest of its turn not kept, the next request and response on the connection kept whole (all were lost after it: trial 42); --raw equals what nginx sent for that range")
    func oneMiBResponse() throws {
        let world = try Self.world()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        let w = box.work
        // One keep-alive connection (curl reuses it across --next): the big response, then a small one.
        let r = try box.curl(Self.h1(world, tv, "/1m.bin", head: w + "/d", body: w + "/b")
                             + ["--next", "-x", tv.proxyURL, "--cacert", world.tvRoot, "--http1.1", "-o", w + "/b2", world.url("/index.html")])
        #expect(r.status == 0, "\(r)")
        #expect(box.read(w + "/b") == Self.oneMiB)
        let response = Self.response(box, head: w + "/d", body: w + "/b")
        let headCount = response.count - 1_048_576
        let id = try #require(try box.closedFlows(1).first?.int("id"))
        let turns = try Self.turns(box, id)
        try #require(turns.count == 4, "\(turns.map(\.json))")
        #expect(turns[2].bytes.starts(with: Data("GET /index.html HTTP/1.1\r\n".utf8)) && turns[3].bytes.starts(with: Data("HTTP/1.1 200 OK\r\n".utf8)))
        let cut = turns[1]
        #expect(cut.json.int("keptBytes") == 65_536)
        #expect(cut.json.int("seenBytes") == 1_048_576 + headCount)
        #expect(cut.json["truncated"] as? Bool == true)
        #expect(cut.json.string("cutBy") == "turn_limit")
        #expect(cut.bytes == response.prefix(65_536))

        let text = try box.tv("turns", String(id)).out
        #expect(matches(text, #"Turn 2  ← server to client  at \d+\.\d{3} s  65,536 of \#(grouped(1_048_576 + headCount)) bytes kept\n"#), "\(text)")
        #expect(text.contains("⋯ The rest of this turn was not kept: a turn keeps at most 64 KiB; the server-to-client side's next turn is kept again.\n"), "\(text)")
        let http = try box.tv("turns", String(id), "--http").out
        #expect(http.contains("Cut by a recording limit: \(grouped(65_536 - headCount)) of 1,048,576 body bytes were kept."), "\(http)")
        let exchanges = exchangeBlocks(http)
        #expect(exchanges.count == 2 && exchanges[1].contains("    GET /index.html HTTP/1.1\n") && exchanges[1].contains("      hello from nginx\n"), "\(http.suffix(1_500))")

        let rawFile = w + "/turn2.bin"
        #expect(try box.tv("turns", String(id), "--turn", "2", "--raw", "-o", rawFile).status == 0)
        let raw = box.read(rawFile)
        #expect(raw.count == 65_536)
        #expect(raw == response.prefix(65_536))
        // The body part is the file's first bytes, exactly.
        #expect(raw.dropFirst(headCount) == Self.oneMiB.prefix(65_536 - headCount))
        let flow = try box.tv("flow", String(id)).out
        #expect(flow.contains("The recording budget cut part of it."), "\(flow)")
        try tv.stop()
    }

    @Test("tv run --keep-content, then content.keep saved off: the session says it keeps the value it started with, and goes on keeping content (it answered \"applied\": a trial)")
    func keepContentHoldsAgainstTheSetting() throws {
        let world = try Self.world()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        let off = try box.tv("settings", "set", "content.keep", "off")
        #expect(off.status == 0 && off.out.contains("The running session keeps the value it started with (it was started with --keep-content)."), "\(off)")
        let w = box.work
        #expect(try box.curl(Self.h1(world, tv, "/gz/text.txt", head: w + "/d", body: w + "/b")).status == 0)
        let id = try #require(try box.closedFlows(1).first?.int("id"))
        #expect(try Self.turns(box, id).count == 2)
        try tv.stop()
    }

    @Test("HTTP/2: curl --http2 --parallel streams on one connection, and h2load in reverse mode, paired as request/response by --http")
    func http2Streams() throws {
        let world = try Self.world()
        let box = world.sandbox
        var tv = try world.run("--inspect", "--keep-content")
        let paths = ["/index.html", "/1k.bin", "/gz/text.txt"]
        var arguments = ["--http2", "--parallel", "--parallel-max", "3", "-x", tv.proxyURL, "--cacert", world.tvRoot]
        for path in paths { arguments += ["-o", "/dev/null", world.url(path)] }
        let r = try box.curl(arguments)
        #expect(r.status == 0, "\(r)")
        let rows = try box.closedFlows(1)
        try #require(rows.count == 1, "curl multiplexes the three transfers on one connection: \(rows.map { $0["id"] ?? "?" })")
        #expect(rows[0].string("alpn") == "h2")
        let id = try #require(rows[0].int("id"))
        let http = try box.tv("turns", String(id), "--http").out
        #expect(http.hasPrefix("Flow \(id): localhost — read as HTTP/2, 3 exchanges\n"), "\(http)")
        let exchanges = exchangeBlocks(http)
        try #require(exchanges.count == 3, "\(http)")
        for (i, block) in exchanges.enumerated() {
            #expect(block.hasPrefix("#\(i + 1)  stream \(2 * i + 1)\n"), "\(block)")
            #expect(block.contains("    HTTP/2 200\n"), "\(block)")
        }
        // Each response sits with its own request.
        let byPath = Dictionary(uniqueKeysWithValues: paths.map { path in (path, exchanges.first { $0.contains("    GET \(path) HTTP/2\n") } ?? "") })
        #expect(byPath["/index.html"]?.contains("    body: 17 bytes, DATA frames\n      hello from nginx\n") == true, "\(http)")
        #expect(byPath["/1k.bin"]?.contains("    body: 1,024 bytes, DATA frames\n      00000000  07 26 45 64") == true, "\(http)")
        #expect(byPath["/gz/text.txt"]?.contains("      line 1 of the gzip test\n") == true, "\(http)")
        #expect(http.contains("  → client to server  SETTINGS "), "\(http)")
        let harFile = box.work + "/h2.har"
        #expect(try box.tv("export", "har", String(id), "-o", harFile).status == 0)
        let har = try #require(try JSONSerialization.jsonObject(with: box.read(harFile)) as? JSON)
        let entries = har.object("log")?["entries"] as? [JSON] ?? []
        #expect(Set(entries.compactMap { $0.object("request")?.string("url") }) == Set(paths.map(world.url)))
        #expect(entries.allSatisfy { $0.object("response")?.int("status") == 200 })
        try tv.stop()

        // h2load: four streams at once on one connection, through the reverse front-end.
        tv = try world.run("--inspect", "--keep-content", "--mode", "reverse:https://localhost:\(world.nginx.tlsPort)")
        let h2 = try box.tool("h2load", ["-n", "4", "-c", "1", "-m", "4", "https://localhost:\(tv.port)/index.html"], timeout: 30)
        #expect(h2.out.contains("4 succeeded, 0 failed, 0 errored"), "\(h2)")
        let all = try box.closedFlows(2)
        let reverseID = try #require(all.last?.int("id"))
        let loaded = try box.tv("turns", String(reverseID), "--http").out
        #expect(loaded.hasPrefix("Flow \(reverseID): localhost — read as HTTP/2, 4 exchanges\n"), "\(loaded)")
        let blocks = exchangeBlocks(loaded)
        #expect(blocks.count == 4)
        #expect(blocks.allSatisfy { $0.contains("    GET /index.html HTTP/2\n") && $0.contains("    HTTP/2 200\n") && $0.contains("      hello from nginx\n") }, "\(loaded)")
        try tv.stop()
    }

    @Test("HTTP/2: a 1 MiB response and a 100,000-byte upload keep their first 64 KiB of body, and the requests after them on the same connection are kept whole (a browser's page lost every response after one 64 KiB turn: trial 42)")
    func http2BodiesPastTheLimit() throws {
        let world = try RunWorld()
        let box = world.sandbox
        // nghttpd reads a POST's whole body (nginx's `return` answers before reading it and
        // resets the stream, and curl 7.88 then waits forever, with or without tv).
        let docs = box.work + "/docs"
        try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
        try Self.oneMiB.write(to: URL(fileURLWithPath: docs + "/1m.bin"))
        try Data("hello from nghttpd\n".utf8).write(to: URL(fileURLWithPath: docs + "/index.html"))
        try Data(repeating: 0x6B, count: 1_024).write(to: URL(fileURLWithPath: docs + "/1k.bin"))
        let port = Shell.freePort()
        let server = try Background(["nghttpd", "--htdocs=" + docs, String(port), TestPKI.shared.serverKey, TestPKI.shared.serverCert],
                                    logPath: box.work + "/nghttpd.log")
        defer { server.stop() }
        #expect(Shell.waitForListener(port))
        let tv = try world.run("--inspect", "--keep-content")
        let upload = box.work + "/upload.bin"
        try Data(repeating: 0x75, count: 100_000).write(to: URL(fileURLWithPath: upload))
        // One connection (curl reuses it across --next): the big download, a small one, the upload, a small one.
        let url = { (path: String) in "https://localhost:\(port)\(path)" }
        let common = ["--http2", "-x", tv.proxyURL, "--cacert", world.tvRoot, "-o", "/dev/null"]
        let r = try box.curl(common + [url("/1m.bin"), "--next"] + common + [url("/index.html"), "--next"] + common
                             + ["--data-binary", "@" + upload, url("/index.html"), "--next"] + common + [url("/1k.bin")])
        #expect(r.status == 0, "\(r)")
        let rows = try box.closedFlows(1)
        try #require(rows.count == 1 && rows[0].string("alpn") == "h2", "one HTTP/2 connection: \(rows)")
        let id = try #require(rows[0].int("id"))
        let http = try box.tv("turns", String(id), "--http").out
        let exchanges = exchangeBlocks(http)
        try #require(exchanges.count == 4, "\(http.prefix(4_000))")
        #expect(exchanges[0].contains("    GET /1m.bin HTTP/2\n") && exchanges[0].contains("Cut by a recording limit: 65,536 of 1,048,576 body bytes were kept."), "\(exchanges[0].prefix(2_000))")
        #expect(exchanges[1].contains("    GET /index.html HTTP/2\n") && exchanges[1].contains("      hello from nghttpd\n"), "\(exchanges[1].prefix(2_000))")
        #expect(exchanges[2].contains("    POST /index.html HTTP/2\n") && exchanges[2].contains("Cut by a recording limit: 65,536 of 100,000 body bytes were kept.")
                && exchanges[2].contains("      hello from nghttpd\n"), "\(exchanges[2].prefix(2_000))")
        #expect(exchanges[3].contains("    GET /1k.bin HTTP/2\n") && exchanges[3].contains("    body: 1,024 bytes, DATA frames\n"), "\(exchanges[3].prefix(2_000))")
        // Neither side stopped; the turns that lost body bytes say so (a download's and the upload's).
        let turns = try Self.turns(box, id)
        #expect(turns.allSatisfy { $0.json["truncated"] as? Bool == false })
        #expect(Set(turns.filter { $0.json["bodiesShortened"] as? Bool == true }.compactMap { $0.json.string("direction") })
                == ["client_to_server", "server_to_client"])
        #expect(try box.tv("turns", String(id)).out.contains("HTTP/2 bodies past 64 KiB were left out of this turn"))
        // The last request's row finds its kept content: `tv request` shows its response body.
        let rows1k = (try box.json("requests", "--flow", String(id))["requests"] as? [JSON] ?? []).filter { $0.string("path") == "/1k.bin" }
        let request = try #require(rows1k.first?.int("id"), "\(rows1k)")
        let shown = try box.tv("request", String(request)).out
        #expect(shown.contains("body: 1,024 bytes, DATA frames") && !shown.contains("not in the content kept"), "\(shown.prefix(2_000))")
        try tv.stop()
    }

    @Test("a gzip body (nginx gzip on) and a brotli body (pre-compressed .br) are decoded by --http")
    func encodedBodies() throws {
        let world = try Self.world()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        let w = box.work
        let r = try box.curl(Self.h1(world, tv, "/gz/text.txt", head: w + "/d1", body: w + "/b1", extra: ["--compressed"]) + ["--next"]
                             + Self.h1(world, tv, "/br/hello.txt", head: w + "/d2", body: w + "/b2", extra: ["--compressed"]))
        #expect(r.status == 0, "\(r)")
        #expect(box.text(w + "/b1") == Self.gzipText, "curl decoded the gzip body")
        #expect(box.text(w + "/b2") == Self.brotliText, "curl decoded the brotli body")
        #expect(box.text(w + "/d1").contains("Content-Encoding: gzip\r\n"))
        #expect(box.text(w + "/d2").contains("Content-Encoding: br\r\n"))
        let brSize = box.read(world.www + "/hello.txt.br").count
        let id = try #require(try box.closedFlows(1).first?.int("id"))
        let http = try box.tv("turns", String(id), "--http").out
        let blocks = exchangeBlocks(http)
        try #require(blocks.count == 2, "\(http)")
        #expect(matches(blocks[0], #"    body: \#(Self.gzipText.utf8.count) bytes, decoded from gzip \(\d+ bytes as sent\), chunked\n      line 1 of the gzip test\n      line 2 of the gzip test\n"#), "\(blocks[0])")
        #expect(blocks[0].contains("      line 20 of the gzip test\n"), "\(blocks[0])")
        #expect(blocks[1].contains("    body: \(Self.brotliText.utf8.count) bytes, decoded from br (\(brSize) bytes as sent), content-length\n      brotli says hello, 1\n"), "\(blocks[1])")
        #expect(blocks[1].contains("      brotli says hello, 10\n"), "\(blocks[1])")
        try tv.stop()
    }

    @Test("content.flowBudget 1K: responses on one connection kept until the budget, the one crossing it cut to fit, the side stopped after it; requests all kept")
    func flowBudget() throws {
        let world = try Self.world()
        let box = world.sandbox
        let set = try box.tv("settings", "set", "content.flowBudget", "1K")
        #expect(set.status == 0, "\(set)")
        let tv = try world.run("--inspect", "--keep-content")
        let w = box.work
        let count = 6
        var arguments: [String] = []
        for i in 1...count {
            if i > 1 { arguments.append("--next") }
            arguments += Self.h1(world, tv, "/index.html", head: w + "/d\(i)", body: w + "/b\(i)")
        }
        let r = try box.curl(arguments)
        #expect(r.status == 0, "\(r)")
        let responses = (1...count).map { Self.response(box, head: w + "/d\($0)", body: w + "/b\($0)") }
        let request = Data("GET /index.html HTTP/1.1\r\nHost: localhost:\(world.nginx.tlsPort)\r\nUser-Agent: tv-test\r\n\r\n".utf8)
        // The response that crosses 1,024 bytes, and what is left of the budget for it.
        var whole = 0, used = 0
        while whole < count && used + responses[whole].count <= 1024 { used += responses[whole].count; whole += 1 }
        try #require(whole > 0 && whole < count - 1 && used < 1024, "the fixture must cross 1 KiB before the last response: \(responses.map(\.count))")
        let left = 1024 - used
        let id = try #require(try box.closedFlows(1).first?.int("id"))
        let turns = try Self.turns(box, id)
        let summary = turns.map { "\($0.json["number"] ?? "?") \($0.json["keptBytes"] ?? "?")/\($0.json["seenBytes"] ?? "?") \($0.json["cutBy"] ?? "-")" }
        // Every request; the responses up to the cut one; nothing from the server after it.
        try #require(turns.count == count + whole + 1, "\(summary)")
        var number = 0
        for i in 0..<count {
            #expect(turns[number].bytes == request, "turn \(number + 1): \(summary)")
            #expect(turns[number].json.string("direction") == "client_to_server")
            number += 1
            if i < whole {
                #expect(turns[number].bytes == responses[i], "turn \(number + 1): \(summary)")
                number += 1
            } else if i == whole {
                let cut = turns[number]
                #expect(cut.json.int("keptBytes") == left, "\(summary)")
                #expect(cut.json.int("seenBytes") == responses[i].count, "\(summary)")
                #expect(cut.json["truncated"] as? Bool == true)
                #expect(cut.json.string("cutBy") == "flow_budget", "\(summary)")
                #expect(cut.bytes == responses[i].prefix(left))
                number += 1
            }
        }
        let text = try box.tv("turns", String(id)).out
        #expect(text.contains("  \(left) of \(responses[whole].count) bytes kept\n"), "\(text)")
        #expect(text.contains("⋯ The server-to-client side stopped being recorded after this turn: this connection's budget per direction (content.flowBudget) was used up.\n"), "\(text)")
        try tv.stop()
    }

    @Test("plain connections are recorded under the same switch: absolute-form HTTP through the proxy, and a non-TLS tunnel")
    func plainRecorded() throws {
        let world = try Self.world()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        let url = "http://localhost:\(world.nginx.plainPort)/index.html"
        let r = try box.curl(["-x", tv.proxyURL, "-A", "tv-test", "-H", "Accept:", "-D", box.work + "/d", "-o", box.work + "/b", url])
        #expect(r.out.isEmpty && r.status == 0, "\(r)")
        let echo = try PythonServer(echoServer)
        defer { echo.stop() }
        let e = try box.python(tunnelClient, [String(tv.port), "127.0.0.1:\(echo.port)", "send", "hello through tv\n"])
        #expect(e.out == "hello through tv\n", "\(e)")
        let rows = try box.closedFlows(2)
        try #require(rows.count == 2)
        #expect(rows.map { $0.string("status") } == ["not_encrypted", "not_encrypted"])

        let plain = try Self.turns(box, rows[0].int("id")!)
        try #require(plain.count == 2, "\(plain.map(\.json))")
        // What the server was sent: the head in origin form, Proxy-Connection dropped.
        #expect(plain[0].bytes == Data("GET /index.html HTTP/1.1\r\nHost: localhost:\(world.nginx.plainPort)\r\nUser-Agent: tv-test\r\n\r\n".utf8),
                "\(String(decoding: plain[0].bytes, as: UTF8.self))")
        #expect(plain[1].bytes == Self.response(box, head: box.work + "/d", body: box.work + "/b"))
        let http = try box.tv("turns", String(rows[0].int("id")!), "--http").out
        #expect(http.contains("    HTTP/1.1 200 OK\n"), "\(http)")
        #expect(http.contains("      hello from nginx\n"), "\(http)")

        let tunnel = try Self.turns(box, rows[1].int("id")!)
        #expect(tunnel.map(\.bytes) == [Data("hello through tv\n".utf8), Data("hello through tv\n".utf8)])
        #expect(tunnel.map { $0.json.string("direction") ?? "" } == ["client_to_server", "server_to_client"])
        try tv.stop()
    }

    @Test("bytes of turns a history limit deleted while the session ran are gone from the segment files once tv stop returns (they stayed in plaintext until the next session: a trial)")
    func stopClearsDeletedTurns() throws {
        let world = try Self.world()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        let url = "http://localhost:\(world.nginx.plainPort)/index.html?token=STOPSECRET1"
        #expect(try box.curl(["-x", tv.proxyURL, "-o", "/dev/null", url]).status == 0)
        _ = try box.closedFlows(1)
        let folder = box.dataDir + "/content"
        func holding() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
                box.read(folder + "/" + $0).range(of: Data("STOPSECRET1".utf8)) != nil
            }
        }
        try #require(!holding().isEmpty, "the content was not kept")
        usleep(1_500_000)
        let set = try box.tv("settings", "set", "history.maxAge", "1s", "--yes")
        #expect(set.status == 0, "\(set)")
        #expect(try box.flowRows().isEmpty)
        try tv.stop()
        #expect(holding().isEmpty, "\(holding())")
    }

    @Test("with the switch off nothing is recorded; tv content delete --yes removes the index rows, the segment bytes and the requests' queries (not left in the database files)")
    func switchOffAndDelete() throws {
        let world = try Self.world()
        let box = world.sandbox
        var tv = try world.run("--inspect")
        #expect(try box.status()?.string("contentKeeping") == "off")
        #expect(try world.curlThrough(tv, [world.url("/index.html")]).out == "hello from nginx\n")
        let first = try #require(try box.closedFlows(1).first?.int("id"))
        let nothing = "Inspected, and nothing was kept: keeping decrypted content was off for this connection, what was kept has expired or was deleted (`tv content delete`), or it could not be written (a full disk: the session said so then).\n"
        #expect(try box.tv("turns", String(first)).out == "Flow \(first): localhost\n" + nothing)
        #expect(try Self.turns(box, first).isEmpty)
        #expect(segmentFiles(box).isEmpty, "nothing written: \(segmentFiles(box))")
        try tv.stop()

        tv = try world.run("--inspect", "--keep-content")
        #expect(try box.status()?.string("contentKeeping") == "on")
        for path in ["/index.html?apikey=SECRETQ1", "/1k.bin"] {
            #expect(try world.curlThrough(tv, ["--http1.1", "-o", "/dev/null", world.url(path)]).status == 0)
        }
        let rows = try box.closedFlows(3)
        try tv.stop()
        // With content kept, the request row keeps its query (content, like headers and bodies).
        #expect(try box.tv("requests", "--json").out.contains("apikey=SECRETQ1"))
        let kept = try rows[1...].map { try Self.turns(box, $0.int("id")!) }
        #expect(kept.map(\.count) == [2, 2])
        let total = kept.joined().reduce(0) { $0 + ($1.json.int("keptBytes") ?? 0) }
        let files = segmentFiles(box)
        #expect(!files.isEmpty)
        let onDisk = files.reduce(0) { $0 + box.read(box.dataDir + "/content/" + $1).count }
        #expect(onDisk == total, "the segments hold exactly the kept bytes")

        let status = try box.tv("content").out
        #expect(status.hasPrefix("4 turns of 2 flows: "), "\(status)")
        let refused = try box.tv("content", "delete")
        #expect(refused.status == 2, "without --yes it only says what it would do: \(refused)")
        #expect(try Self.turns(box, rows[1].int("id")!).count == 2)
        let deleted = try box.tv("content", "delete", "--yes")
        #expect(deleted.status == 0, "\(deleted)")
        #expect(deleted.out.hasPrefix("Deleted 4 turns and \(files.count) segment file"), "\(deleted)")
        #expect(segmentFiles(box).isEmpty, "bytes removed with the rows: \(segmentFiles(box))")
        for row in rows[1...] {
            let id = row.int("id")!
            #expect(try Self.turns(box, id).isEmpty)
            #expect(try box.tv("turns", String(id)).out == "Flow \(id): localhost\n" + nothing)
        }
        #expect(try box.flowRows().count == 3, "flows stay in the history; only their content goes")
        // The query went with the content: not in the list, not left in the database's files (a trial found both).
        let requests = try box.tv("requests", "--json").out
        #expect(!requests.contains("SECRETQ1") && requests.contains("/index.html"), "\(requests)")
        for file in ["tunnelvision.sqlite3", "tunnelvision.sqlite3-wal"] {
            let bytes = box.read(box.dataDir + "/" + file)
            #expect(bytes.range(of: Data("SECRETQ1".utf8)) == nil, "\(file) still holds the query")
        }

        // While a session writes: it deletes through its own writer, closing the segment it
        // writes first, so the deleted turns' bytes go with it (a trial found them on disk after
        // a stop, a sweep and a restart: the spared segment was written on, and never freed).
        tv = try world.run("--inspect", "--keep-content")
        #expect(try world.curlThrough(tv, ["--http1.1", world.url("/index.html?mark=FOURTHMARK")]).out == "hello from nginx\n")
        let fourth = try #require(try box.closedFlows(4).last?.int("id"))
        #expect(try Self.turns(box, fourth).count == 2)
        func segmentsHold(_ text: String) -> Bool {
            segmentFiles(box).contains { box.read(box.dataDir + "/content/" + $0).range(of: Data(text.utf8)) != nil }
        }
        #expect(segmentsHold("FOURTHMARK"))
        let live = try box.tv("content", "delete", "--yes")
        #expect(live.status == 0, "\(live)")
        #expect(live.err.contains("The running session deletes it: it closes the segment it is writing first, so nothing of it stays."), "\(live)")
        #expect(matches(live.out, #"^Deleted 2 turns and 1 segment file \([0-9.]+ [KMG]?i?B\)\.\n$"#), "\(live)")
        #expect(try Self.turns(box, fourth).isEmpty)
        #expect(!segmentsHold("FOURTHMARK") && segmentFiles(box).isEmpty, "\(segmentFiles(box))")
        #expect(try world.curlThrough(tv, ["--http1.1", world.url("/index.html?mark=FIFTHMARK")]).out == "hello from nginx\n")
        let fifth = try #require(try box.closedFlows(5).last?.int("id"))
        #expect(try Self.turns(box, fifth).count == 2, "recording goes on after the delete")
        #expect(try box.tv("content").out.hasPrefix("2 turns of 1 flow: "))
        try tv.stop()
        #expect(segmentsHold("FIFTHMARK") && !segmentsHold("FOURTHMARK"))
    }

    /// A keep-alive connection: a request and its whole response, `tv content delete`, then a
    /// second request. The first response's turn was still open at the delete (a turn ends when
    /// the other side speaks) and was written after it (a re-check); it goes with the rest.
    @Test("tv content delete takes what an open connection's open turn holds so far; the connection's later turns are kept")
    func deleteTakesOpenTurns() throws {
        let world = try Self.world()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        defer { try? tv.stop() }
        let ready = box.work + "/ready", go = box.work + "/go"
        let client = #"""
        import os, socket, ssl, sys, time
        port, tls, ca, ready, go = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
        s = socket.create_connection(("127.0.0.1", port), timeout=20)
        s.sendall(f"CONNECT localhost:{tls} HTTP/1.1\r\nHost: localhost:{tls}\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(1)
        t = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname="localhost")
        def get(mark):
            t.sendall(f"GET /index.html?mark={mark} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
            data = b""
            while b"\r\n\r\n" not in data:
                data += t.recv(4096)
            head, body = data.split(b"\r\n\r\n", 1)
            length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
            while len(body) < length:
                body += t.recv(4096)
        get("OPENBEFORE")
        open(ready, "w").close()
        for _ in range(400):
            if os.path.exists(go):
                break
            time.sleep(0.05)
        get("AFTERMARK")
        print("done")
        """#
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var output: ProcessOutput?
        let arguments = [String(tv.port), String(world.nginx.tlsPort), world.tvRoot, ready, go]
        nonisolated(unsafe) let sandbox = box
        DispatchQueue.global().async {
            output = try? sandbox.python(client, arguments)
            done.signal()
        }
        for _ in 0..<400 where !FileManager.default.fileExists(atPath: ready) { usleep(50_000) }
        let deleted = try box.tv("content", "delete", "--yes")
        #expect(deleted.status == 0, "\(deleted)")
        FileManager.default.createFile(atPath: go, contents: nil)
        done.wait()
        #expect(output?.out == "done\n", "\(String(describing: output))")
        let flow = try #require(try box.closedFlows(1).last?.int("id"))
        try tv.stop()
        // Only the second exchange: its request first, then its response.
        let turns = try Self.turns(box, flow)
        #expect(turns.count == 2, "\(turns.map { $0.json })")
        #expect(turns.first.map { String(decoding: $0.bytes, as: UTF8.self).contains("AFTERMARK") } == true)
        #expect(turns.first?.json.string("direction") == "client_to_server")
    }
}

/// The segment files in the sandbox's content folder.
func segmentFiles(_ box: Sandbox) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: box.dataDir + "/content")) ?? []).filter { !$0.hasPrefix(".") }.sorted()
}

/// The `#N  stream S` (or `#N`) blocks of a `tv turns --http` view.
func exchangeBlocks(_ text: String) -> [String] {
    var blocks: [String] = []
    for part in text.components(separatedBy: "\n#").dropFirst() {
        // A block ends where the next connection-level line (no indent) begins.
        var lines: [Substring] = []
        for (i, line) in part.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if i > 0 && !line.isEmpty && !line.hasPrefix(" ") { break }
            lines.append(line)
        }
        blocks.append("#" + lines.joined(separator: "\n") + "\n")
    }
    return blocks
}

/// Whether `pattern` (a regular expression) matches somewhere in `text`.
func matches(_ text: String, _ pattern: String) -> Bool {
    text.range(of: pattern, options: .regularExpression) != nil
}
