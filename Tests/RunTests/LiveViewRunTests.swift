import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 20 through the real `tv` binary: `tv diag`'s verdict for real sessions (no inspection,
/// nothing offered, a client without tv's root, a pinning client, plain TCP through CONNECT),
/// `tv top` in tmux, `tv activity` and `tv flows --follow`.
@Suite("tv diag, tv top, tv activity, tv flows --follow (issue 20)", .serialized)
struct LiveViewRunTests {
    static func diag(_ box: Sandbox) throws -> (sentence: String, json: JSON) {
        let text = try box.tv("diag")
        let json = try #require(try JSONSerialization.jsonObject(with: try box.tvArgs(["diag", "--json"]).stdout) as? JSON)
        return (text.out.split(separator: "\n").first.map(String.init) ?? "", json)
    }

    static func verdictCase(_ json: JSON) -> String? { json.object("verdict")?.string("case") }

    @Test("no session: tv diag says so and asks nothing (exit 3)")
    func noSession() throws {
        try withSandbox { box in
            let out = try box.tv("diag")
            #expect(out.status == 3)
            #expect(out.out == "No tv session is running, so there is nothing to diagnose (the counters start at zero with every session); start one with `tv run`, or run one command through tv with `tv exec -- CMD`.\n")
        }
    }

    @Test("inspection off, then on with nothing offered, then with a connection that failed before it was offered: the first sentences")
    func offAndNothing() throws {
        let world = try RunWorld()
        let box = world.sandbox
        var tv = try world.run()
        var d = try Self.diag(box)
        #expect(Self.verdictCase(d.json) == "inspectionOff", "\(d)")
        #expect(d.sentence.hasPrefix("Inspection is off in this session"))
        _ = try world.curlThrough(tv, [world.url("/index.html")])
        #expect(Self.verdictCase(try Self.diag(box).json) == "inspectionOff")
        try tv.stop()
        tv = try world.run("--inspect")
        d = try Self.diag(box)
        #expect(Self.verdictCase(d.json) == "nothingOffered", "\(d)")
        #expect(d.sentence.hasPrefix("Inspection is on, and no connection has been offered for inspection yet"))
        // A connection that came and failed before it was offered (its server refused) is not
        // "nothing has come through tv" (a trial's reverse mode read so beside 3 failures).
        let closed = freeLoopbackPort()
        #expect(try world.curlThrough(tv, ["https://127.0.0.1:\(closed)/"]).status != 0)
        _ = try box.closedFlows(1)
        d = try Self.diag(box)
        #expect(Self.verdictCase(d.json) == "noneOfferedOf", "\(d)")
        #expect(d.sentence == "Inspection is on, and 1 connection came through tv, none of them far enough to be offered for inspection: 1 failed before that (a server not reached, a refused request: `tv flows --status failed` says why).", "\(d)")
        try tv.stop()
    }

    @Test("a client without tv's root (curl, no --cacert): named and never taken over, the clients lack the root; then inspected with it")
    func untrustedClient() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let curl = try box.curl(["-x", tv.proxyURL, world.url("/index.html")])
        #expect(curl.status != 0)
        _ = try box.closedFlows(1)
        var d = try Self.diag(box)
        #expect(Self.verdictCase(d.json) == "neverTakenOver.clientsLackRoot", "\(d)")
        #expect(d.sentence == "1 connection was named and still never taken over, because their clients do not trust tv's root; browsing keeps working, because tv passes such connections through untouched, so give them the root (`tv setup`, or `curl --cacert` with the file `tv ca status` names) and let tv try again with `tv pinned forget HOST`.")
        let offered = try #require(d.json.object("session")?.object("offered"))
        #expect(offered.int("total") == 1)
        #expect(offered.object("clientRefused")?.int("lacksRoot") == 1)
        let text = try box.tv("diag").out
        #expect(text.contains("  refused by client   1 lacking tv's root, 0 possible pinning, 0 left\n"), "\(text)")
        #expect(text.contains("Last errors\n  "), "\(text)")
        // The same client given the root, for another host (the first is remembered): inspected.
        let port = world.nginx.tlsPort
        let ok = try world.curlThrough(tv, ["--connect-to", "a.test:\(port):localhost:\(port)", "https://a.test:\(port)/index.html"])
        #expect(ok.out == "hello from nginx\n", "\(ok)")
        _ = try box.closedFlows(2)
        d = try Self.diag(box)
        #expect(d.sentence == "Inspection is working: 1 of 2 TLS connections offered was inspected.", "\(d)")
        try tv.stop()
    }

    @Test("a pinning client (s_client closing right after the handshake, twice): the pinning rule working, not a fault")
    func pinningClient() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        for n in 1...2 {
            _ = try box.tool("openssl", ["s_client", "-proxy", tv.proxyHostPort, "-connect", "localhost:\(world.nginx.tlsPort)",
                                         "-servername", "a.test"], stdin: Data())
            _ = try box.closedFlows(n)
        }
        let d = try Self.diag(box)
        #expect(Self.verdictCase(d.json) == "allPinned", "\(d)")
        #expect(d.sentence == "Every client tv tried to inspect pins its certificate (2 connections): tv passes them through untouched, which is the pinning rule working, not a fault.")
        try tv.stop()
    }

    @Test("plain TCP through CONNECT to a local non-TLS server on 443: what was offered was not TLS")
    func plainTCP() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        // Port 443 needs root; any port shows the same, so fall back to a free one.
        let port: UInt16 = getuid() == 0 ? 443 : freeLoopbackPort()
        let server = try Child("python3", ["-m", "http.server", "--bind", "127.0.0.1", String(port)],
                               environment: Run.environment(home: box.root), directory: world.www)
        defer { server.stop() }
        var answered: ProcessOutput?
        for _ in 0..<50 {
            // -p: CONNECT first, then plain HTTP inside the tunnel.
            let out = try box.curl(["-p", "-x", tv.proxyURL, "http://127.0.0.1:\(port)/index.html"])
            if out.status == 0 { answered = out; break }
            usleep(100_000)
        }
        #expect(answered?.out == "hello from nginx\n", "\(String(describing: answered))")
        let rows = try box.closedFlows(1)
        let d = try Self.diag(box)
        #expect(Self.verdictCase(d.json) == "notTLS", "\(d) \(rows)")
        // Attempts before the server listened failed at connect: never offered.
        let offered = try #require(d.json.object("session")?.object("offered"))
        #expect(offered.int("total") == 1 && offered.int("notTLS") == 1, "\(offered)")
        #expect(d.sentence == "Inspection is on, and the 1 connection offered was not TLS: plain HTTP or a protocol of its own, so there was nothing to take over.")
        try tv.stop()
    }

    @Test("tv activity: nothing recorded, then the flows of a session in bars, --json buckets, a stretch before the history")
    func activity() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let empty = try box.tv("activity", "--bars", "20")
        #expect(empty.out == "Nothing is recorded yet, so there is no activity to draw; `tv run` records every connection.\n", "\(empty)")
        let tv = try world.run()
        for _ in 0..<3 { _ = try world.curlThrough(tv, [world.url("/index.html")]) }
        _ = try box.closedFlows(3)
        try tv.stop()
        // An hour in at most 13 bars: 5 min each (13 when the hour does not start on a 5-minute mark).
        let json = try box.json("activity", "--since", "1h", "--bars", "13")
        #expect(json.int("widthSeconds") == 300)
        let buckets = json["buckets"] as? [JSON] ?? []
        #expect((12...13).contains(buckets.count), "\(buckets.count)")
        #expect(buckets.compactMap { $0.int("count") }.reduce(0, +) == 3)
        // The three may straddle a bar's edge (a 5-minute mark here, a second below), so the
        // busiest bar is the largest bucket, not always all three.
        let counts = buckets.compactMap { $0.int("count") }
        #expect(json.int("busiest") == counts.max())
        let text = try box.tv("activity", "--bars", "30").out.split(separator: "\n").map(String.init)
        #expect(text.count == 5, "\(text)")
        #expect(text[0].count <= 30 && text[0].contains("█"))
        // The default stretch runs from the first connection kept to the last, so after the
        // session stops the same question asked as JSON sees the same bars.
        let same = try box.json("activity", "--bars", "30")
        let busiest = try #require(same.int("busiest"))
        #expect((1...3).contains(busiest))
        #expect(text[3].contains("busiest: \(busiest) connection"), "\(text[3]) \(busiest)")
        #expect(text[4] == "Counts cover every connection recorded: the axis honours no host or status filter.")
        let old = try box.tv("activity", "--from", "2020-01-01", "--to", "2020-01-02").out
        #expect(old.hasPrefix("Nothing is kept from this stretch: the oldest connection kept started at "), "\(old)")
    }

    @Test("tv flows --follow sees a curl's flow open and finish, as text and JSON lines, and ends when the session stops")
    func follow() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run()
        func start(_ extra: [String]) throws -> (Child, String) {
            let out = box.root + "/follow-\(UUID().uuidString.prefix(6)).txt"
            let outFD = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            let errFD = open(out + ".err", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            defer { close(outFD); close(errFD) }
            let p = try Child(try TVBinary.require(), ["--data-dir", box.dataDir, "flows", "--follow"] + extra,
                              environment: box.environment, stdout: outFD, stderr: errFD)
            return (p, out)
        }
        let (text, textOut) = try start(["--host", "localhost"])
        let (json, jsonOut) = try start(["--json"])
        // --filter is honoured as the list honours it (a trial's follow printed every flow).
        let (none, noneOut) = try start(["--filter", "~d nomatch.example"])
        usleep(700_000)
        _ = try world.curlThrough(tv, [world.url("/index.html")])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, box.text(jsonOut).split(separator: "\n").count < 2 || box.text(textOut).split(separator: "\n").count < 2 { usleep(100_000) }
        let lines = box.text(textOut).split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.hasPrefix("+ ") == true && lines.first?.contains(" localhost ") == true, "\(lines)")
        #expect(lines.first?.hasSuffix(" :\(world.nginx.tlsPort)") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("- ") == true && lines.last?.hasSuffix(" encrypted") == true, "\(lines)")
        let events = box.text(jsonOut).split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? JSON }
        #expect(events.map { $0.string("event") ?? "" } == ["opened", "finished"])
        #expect(events.last?.object("flow")?.string("host") == "localhost")
        #expect(box.text(noneOut).isEmpty, "\(box.text(noneOut))")
        none.send(SIGINT)
        #expect(none.wait(seconds: 5))
        // Ctrl-C ends one and says so; stopping the session ends the other and says that.
        text.send(SIGINT)
        #expect(text.wait(seconds: 5))
        #expect(box.text(textOut + ".err").contains("Stopped following (Ctrl-C)."))
        try tv.stop()
        #expect(json.wait(seconds: 5))
        #expect(json.status == 0)
        #expect(box.text(jsonOut + ".err") == "The session stopped, so following ends.\n")
    }

    @Test("tv flows --follow --requests prints one line per finished request, as tv run --log requests does")
    func followRequests() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let out = box.root + "/requests.txt"
        let outFD = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(outFD) }
        let p = try Child(try TVBinary.require(), ["--data-dir", box.dataDir, "flows", "--follow", "--requests"],
                          environment: box.environment, stdout: outFD)
        let only404 = box.root + "/requests-404.txt"
        let only404FD = open(only404, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(only404FD) }
        let filtered = try Child(try TVBinary.require(), ["--data-dir", box.dataDir, "flows", "--follow", "--requests", "--filter", "~c 404"],
                                 environment: box.environment, stdout: only404FD)
        usleep(700_000)
        let curl = try world.curlThrough(tv, ["--http1.1", world.url("/index.html"), world.url("/missing")])
        #expect(curl.out.hasPrefix("hello from nginx\n"), "\(curl)")
        let deadline = Date().addingTimeInterval(10)
        // Both followers poll on their own: wait for each (a loaded run read the filtered one early).
        while Date() < deadline, box.text(out).split(separator: "\n").count < 2 || box.text(only404).split(separator: "\n").isEmpty { usleep(100_000) }
        let lines = box.text(out).split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.contains(" GET https://localhost:\(world.nginx.tlsPort)/index.html 200 17 B ") == true, "\(lines)")
        #expect(lines.last?.contains(" GET https://localhost:\(world.nginx.tlsPort)/missing 404 ") == true, "\(lines)")
        let filteredLines = box.text(only404).split(separator: "\n").map(String.init)
        #expect(filteredLines.count == 1 && filteredLines.first?.contains("/missing 404 ") == true, "\(filteredLines)")
        try tv.stop()
        #expect(p.wait(seconds: 5))
        #expect(filtered.wait(seconds: 5))
    }
}
