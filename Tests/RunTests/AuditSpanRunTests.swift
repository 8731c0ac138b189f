import Foundation
import Testing

/// An audit bundle holds what happened within its session's span, by time, for every
/// connection: a connection open across `tv audit start` brings what it said during the span (it
/// is in `flows.json`, marked `carriedIntoSession`), and a connection of the session that goes
/// on after `tv audit stop` brings nothing said after it. A trial's bundle chose by connection:
/// its HAR and turns had a request made after the stop and lacked one made during the session,
/// while its decrypted capture, cut by time, had the opposite.
@Suite("tv audit bundle: requests, turns and captures of the span only, whatever connection carried them", .serialized)
struct AuditSpanRunTests {
    @Test("python keeps connection A open across tv audit start and B across tv audit stop: the HAR and content hold A-during and B-during, not A-before or B-after; flows.json marks A carried in")
    func bundleHoldsTheSpanByTime() throws {
        let world = try RunWorld()
        let box = world.sandbox
        #expect(try box.tv("audit", "project", "new", "span").status == 0)
        #expect(try box.tv("settings", "set", "capture.decrypted", "on").status == 0)
        let tv = try world.run("--inspect", "--keep-content")
        let proxy = tv.proxyURL.replacingOccurrences(of: "http://", with: "")
        let step = box.work + "/step"
        let done = box.work + "/done"
        // Each step waits for the test to write its number, then says it is done.
        let script = """
            import http.client, os, ssl, sys, time
            host, port = sys.argv[1].rsplit(":", 1)
            target_port = int(sys.argv[2])
            context = ssl.create_default_context(cafile=sys.argv[3])
            def connect():
                c = http.client.HTTPSConnection(host, int(port), context=context, timeout=10)
                c.set_tunnel("localhost", target_port)
                return c
            def get(c, query):
                c.request("GET", "/index.html?" + query)
                r = c.getresponse()
                assert r.read() == b"hello from nginx\\n", query
            def wait_for(n):
                end = time.time() + 20
                while time.time() < end:
                    if os.path.exists(sys.argv[4]) and open(sys.argv[4]).read().strip() == str(n):
                        return
                    time.sleep(0.05)
                raise SystemExit("step %d never came" % n)
            def said(n):
                with open(sys.argv[5], "w") as f:
                    f.write(str(n))
            a = connect()
            get(a, "A-before")
            said(1)
            wait_for(2)           # the session started
            get(a, "A-during")
            b = connect()
            get(b, "B-during")
            said(2)
            wait_for(3)           # the session stopped
            get(b, "B-after")
            a.close(); b.close()
            said(3)
            """
        let client = try Child("/usr/bin/python3", ["-c", script, proxy, String(world.nginx.tlsPort), world.tvRoot, step, done],
                               environment: box.environment, log: box.work + "/client.log")
        defer { client.stop() }
        func waitDone(_ n: Int) {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline, (try? String(contentsOfFile: done, encoding: .utf8)) != String(n) { usleep(50_000) }
            #expect((try? String(contentsOfFile: done, encoding: .utf8)) == String(n), "step \(n): \((try? String(contentsOfFile: box.work + "/client.log", encoding: .utf8)) ?? "")")
        }
        waitDone(1)
        // The writer has A's row (first written before the session: not its flow).
        usleep(300_000)
        #expect(try box.tv("audit", "start", "span").status == 0)
        usleep(100_000)
        try "2".write(toFile: step, atomically: true, encoding: .utf8)
        waitDone(2)
        usleep(100_000)
        #expect(try box.tv("audit", "stop").status == 0)
        usleep(100_000)
        try "3".write(toFile: step, atomically: true, encoding: .utf8)
        waitDone(3)
        #expect(client.wait(seconds: 10) && client.status == 0)
        _ = try box.closedFlows(2)
        _ = try tv.stop()

        let bundle = try box.tv("audit", "bundle", "1", "-o", "span.tar.gz", "--yes")
        #expect(bundle.status == 0, "\(bundle)")
        let out = box.work + "/x"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        #expect(try box.tool("tar", ["-xzf", box.work + "/span.tar.gz", "-C", out]).status == 0)
        let check = try box.tool("python3", ["-c", """
            import glob, json, sys
            out = sys.argv[1]
            har = json.load(open(out + "/requests.har"))
            urls = sorted(e["request"]["url"].split("?")[1] for e in har["log"]["entries"])
            turns = b"".join(open(p, "rb").read() for p in glob.glob(out + "/content/*.bin"))
            kept = sorted(q for q in ["A-before", "A-during", "B-during", "B-after"] if ("GET /index.html?" + q + " ").encode() in turns)
            flows = json.load(open(out + "/flows.json"))["flows"]
            carried = sorted(bool(f.get("carriedIntoSession")) for f in flows)
            print(" ".join(urls), "|", " ".join(kept), "|", carried)
            """, out])
        #expect(check.out == "A-during B-during | A-during B-during | [False, True]\n", "\(check)")
        // The decrypted capture, cut by time, agrees.
        let capture = try box.tool("tshark", ["-r", out + "/decrypted.pcapng", "-Y", "http.request", "-T", "fields", "-e", "http.request.uri"])
        #expect(capture.out.split(separator: "\n").sorted() == ["/index.html?A-during", "/index.html?B-during"], "\(capture)")
    }

    @Test("a session recorded by two tv runs, the first inspecting, the second not: the second adds a marker with its own settings (the session said only the first's)")
    func aSecondRunSaysItsSettings() throws {
        let world = try RunWorld()
        let box = world.sandbox
        #expect(try box.tv("audit", "project", "new", "runs").status == 0)
        #expect(try box.tv("audit", "start", "runs").status == 0)
        let first = try world.run("--inspect", "--keep-content")
        #expect(try world.curlThrough(first, ["--http1.1", world.url("/index.html?kept")]).out == "hello from nginx\n")
        _ = try box.closedFlows(1)
        _ = try first.stop()
        let second = try world.run()
        // Passed through, no content: its request is still the session's, from its row.
        let plain = try box.curl(["-x", second.proxyURL, "http://localhost:\(world.nginx.plainPort)/index.html?row-only"])
        #expect(plain.out == "hello from nginx\n", "\(plain)")
        _ = try box.closedFlows(2)
        _ = try second.stop()
        #expect(try box.tv("audit", "stop").status == 0)
        #expect(try box.tv("audit", "bundle", "1", "-o", "runs.tar.gz", "--yes").status == 0)
        let har = try box.tool("sh", ["-c", "tar -xzOf runs.tar.gz requests.har | python3 -c 'import json,sys; print(sorted(e[\"request\"][\"url\"].split(\"/\")[-1] for e in json.load(sys.stdin)[\"log\"][\"entries\"]))'"])
        // The row keeps no query (content was not kept): its URL ends at the path.
        #expect(har.out == "['index.html', 'index.html?kept']\n", "\(har.out) \(har.err)")
        let shown = try box.tv("audit", "show", "1")
        #expect(shown.status == 0 && shown.out.contains("inspection=on"), "\(shown)")
        #expect(shown.out.contains(" began recording into this audit session: inspection=off listen=127.0.0.1:") && shown.out.contains("(the audit session's settings, as `tv audit show` lists them, are the first tv session's)"), "\(shown)")
        // One marker: the first run adopted the empty settings, the second said its own.
        #expect(shown.out.components(separatedBy: "began recording into this audit session").count == 2, "\(shown)")
    }
}
