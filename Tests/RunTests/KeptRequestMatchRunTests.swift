import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Through the real `tv` binary: which kept request and response `tv request`, `tv export har`
/// and `tv turns --http` show for a row when the start of its connection's kept content was
/// deleted while the connection stayed open (`tv content delete` between two requests), and for
/// a server-pushed stream. A new-user trial: HTTP/1's second request was shown as the first's
/// and said not kept; HTTP/2's rows said content keeping was off and its turns "another
/// protocol"; a pushed response kept whole was said not kept.
@Suite("tv request: kept requests matched to their rows after a delete, and pushed streams", .serialized)
struct KeptRequestMatchRunTests {
    /// Starts `script` (run by `tool` with `arguments` and then the ready and go files' paths),
    /// waits until it wrote the ready file (its first request answered), runs `tv content delete
    /// --yes` in the running session, lets it go on (its next requests on the same connection),
    /// and returns its output once it ended.
    static func deleteBetweenRequests(_ box: Sandbox, tool: String, script: String, _ arguments: [String],
                                      sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput? {
        let ready = box.work + "/ready-\(UUID().uuidString.prefix(6))", go = box.work + "/go-\(UUID().uuidString.prefix(6))"
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var output: ProcessOutput?
        nonisolated(unsafe) let sandbox = box
        DispatchQueue.global().async {
            output = try? sandbox.tool(tool, [script] + arguments + [ready, go], timeout: 60)
            done.signal()
        }
        for _ in 0..<400 where !FileManager.default.fileExists(atPath: ready) { usleep(50_000) }
        let deleted = try box.tv("content", "delete", "--yes")
        #expect(deleted.status == 0, "\(deleted)", sourceLocation: sourceLocation)
        FileManager.default.createFile(atPath: go, contents: nil)
        done.wait()
        return output
    }

    /// The rows of flow `flow`, oldest first: (id, path).
    static func rows(_ box: Sandbox, flow: Int) throws -> [(id: Int, path: String)] {
        let all = try box.json("requests", "--limit", "1000")["requests"] as? [JSON] ?? []
        return all.filter { $0.int("flow") == flow }.map { ($0.int("id") ?? 0, $0.string("path") ?? "") }.sorted { $0.id < $1.id }
    }

    /// The HAR of flow `flow`'s entries, by time: (url, comment).
    static func har(_ box: Sandbox, flow: Int) throws -> [(url: String, comment: String)] {
        let file = box.work + "/flow-\(flow).har"
        let wrote = try box.tv("export", "har", String(flow), "-o", file)
        #expect(wrote.status == 0, "\(wrote)")
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? JSON
        let entries = (document?["log"] as? JSON)?["entries"] as? [JSON] ?? []
        return entries.map { (($0["request"] as? JSON)?["url"] as? String ?? "", $0["comment"] as? String ?? "") }
    }

    @Test("HTTP/1.1 keep-alive, tv content delete between two requests: tv request shows the second's kept request, says the first's went with the deleted start; the HAR has each once")
    func http1AfterADelete() throws {
        let world = try ContentRunTests.world()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        defer { try? tv.stop() }
        let client = try box.write("h1.py", #"""
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
        get("BEFOREMARK")
        open(ready, "w").close()
        for _ in range(400):
            if os.path.exists(go):
                break
            time.sleep(0.05)
        get("AFTERMARK")
        print("done")
        """#)
        let output = try Self.deleteBetweenRequests(box, tool: "python3", script: client,
                                                    [String(tv.port), String(world.nginx.tlsPort), world.tvRoot])
        #expect(output?.out == "done\n", "\(String(describing: output))")
        let flow = try #require(try box.closedFlows(1).last?.int("id"))
        let rows = try Self.rows(box, flow: flow)
        // The first row's query went with the content (`tv content delete` removes queries).
        try #require(rows.map(\.path) == ["/index.html", "/index.html?mark=AFTERMARK"], "\(rows)")

        let second = try box.tv("request", String(rows[1].id))
        #expect(second.status == 0 && second.out.contains("GET /index.html?mark=AFTERMARK HTTP/1.1"), "\(second)")
        #expect(!second.out.contains("not in the content kept") && second.out.contains("hello from nginx"), "\(second)")
        let first = try box.tv("request", String(rows[0].id))
        #expect(first.out.hasSuffix("This request is not in the content kept of its connection (the facts above are its row's): it was made before what is kept begins — the start of this connection's kept content was deleted (turns 1–2, by `tv content delete` while the connection was open, or as it expired). `tv turns \(flow)` shows every byte that was kept.\n"), "\(first)")
        #expect(!first.out.contains("AFTERMARK") && !first.out.contains("budget"), "\(first)")
        let json = try box.json("request", String(rows[0].id))
        #expect(json["content"] is NSNull && (json["absence"] as? String)?.contains("it was made before what is kept begins") == true, "\(json)")

        let entries = try Self.har(box, flow: flow)
        // The client's Host names no port.
        #expect(entries.map(\.url) == ["https://localhost/index.html", "https://localhost/index.html?mark=AFTERMARK"], "\(entries)")
        #expect(entries.first?.comment.hasPrefix("from the exchange row: it was made before what is kept of its connection begins — the start of this connection's kept content was deleted") == true, "\(entries)")
        #expect(entries.first?.comment.contains("the query string was not kept") == true, "\(entries)")
        let http = try box.tv("turns", String(flow), "--http")
        #expect(http.out.contains("The start of this connection's kept content was deleted (turns 1–2, by `tv content delete` while the connection was open, or as it expired); reading as HTTP starts at turn 3, the first request kept whole."), "\(http)")
    }

    @Test("HTTP/2, tv content delete between two requests on one connection: tv turns --http, tv request and the HAR say the start was deleted and HTTP/2 cannot be read from the middle, not 'another protocol' nor 'content keeping was off'")
    func http2AfterADelete() throws {
        let world = try ContentRunTests.world()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        defer { try? tv.stop() }
        let client = try box.write("h2.js", #"""
        const http = require('http'), http2 = require('http2'), tls = require('tls'), fs = require('fs');
        const [proxy, port, root, ready, go] = process.argv.slice(2);
        const ca = fs.readFileSync(root);
        const r = http.request({ host: '127.0.0.1', port: proxy, method: 'CONNECT', path: `localhost:${port}` });
        r.on('connect', (resp, sock) => {
            const s = http2.connect(`https://localhost:${port}`, { createConnection: () => tls.connect({ socket: sock, servername: 'localhost', ALPNProtocols: ['h2'], ca }) });
            const get = p => new Promise((res, rej) => { const q = s.request({ ':path': p }); let b = ''; q.on('data', d => b += d); q.on('end', () => res(b)); q.on('error', rej); });
            (async () => {
                await get('/index.html?n=BEFOREMARK');
                fs.writeFileSync(ready, '');
                while (!fs.existsSync(go)) await new Promise(w => setTimeout(w, 50));
                const after = await get('/index.html?n=AFTERMARK');
                console.log('done ' + after.length);
                s.close();
            })().catch(e => { console.error(e); process.exit(2); });
        });
        r.end();
        """#)
        let output = try Self.deleteBetweenRequests(box, tool: "node", script: client, [String(tv.port), String(world.nginx.tlsPort), world.tvRoot])
        #expect(output?.out == "done 17\n", "\(String(describing: output))")
        let flow = try #require(try box.closedFlows(1).last?.int("id"))
        let rows = try Self.rows(box, flow: flow)
        try #require(rows.map(\.path) == ["/index.html", "/index.html?n=AFTERMARK"], "\(rows)")
        let unreadable = "so its HTTP/2 cannot be read from the middle: header compression state is lost with it."

        let http = try box.tv("turns", String(flow), "--http")
        #expect(http.out.contains("Not read as HTTP: The start of this connection's kept content was deleted (turns 1–") && http.out.contains(unreadable + " The plain view follows."), "\(http)")
        #expect(!http.out.contains("another protocol") && !http.out.contains("recording queue was full"), "\(http)")

        let after = try box.tv("request", String(rows[1].id))
        #expect(after.out.contains("No headers or bodies can be shown for this request, though its bytes are kept: the start of this connection's kept content was deleted (turns 1–")
                && after.out.hasSuffix(unreadable + " `tv turns \(flow)` shows every byte that was kept.\n"), "\(after)")
        #expect(!after.out.contains("content keeping was off"), "\(after)")
        let json = try box.json("request", String(rows[1].id))
        #expect(json["content"] is NSNull && (json["absence"] as? String)?.contains(unreadable) == true, "\(json)")
        let before = try box.tv("request", String(rows[0].id))
        #expect(before.out.contains("it was made before what is kept begins — the start of this connection's kept content was deleted (turns 1–"), "\(before)")

        let entries = try Self.har(box, flow: flow)
        #expect(entries.count == 2 && entries[0].comment.hasPrefix("from the exchange row: it was made before what is kept of its connection begins"), "\(entries)")
        #expect(entries.last?.comment.hasPrefix("from the exchange row, its bytes kept but not readable: the start of this connection's kept content was deleted (turns 1–") == true
                && entries.last?.comment.contains(String(unreadable.dropLast())) == true, "\(entries)")
    }

    /// A request whose response was still coming at `tv content delete`: its row was written
    /// after the delete had taken the queries of the rows written so far, and kept its own
    /// beside content said deleted (a trial saw rows with their query while the HAR said "the
    /// query string was not kept").
    @Test("a request still open at tv content delete loses its query as the rows written already do")
    func openRequestLosesItsQuery() throws {
        let world = try RunWorld(nginxLocations: "location = /slow.bin { alias www/10m.bin; limit_rate 100k; }")
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        defer { try? tv.stop() }
        let client = try box.write("open.py", #"""
        import os, socket, ssl, sys, time
        port, tls, ca, ready, go = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
        s = socket.create_connection(("127.0.0.1", port), timeout=20)
        s.sendall(f"CONNECT localhost:{tls} HTTP/1.1\r\nHost: localhost:{tls}\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(1)
        t = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname="localhost")
        t.sendall(b"GET /slow.bin?secret=OPENACROSS HTTP/1.1\r\nHost: localhost\r\n\r\n")
        data = b""
        while len(data) < 4096:
            data += t.recv(4096)
        open(ready, "w").close()
        for _ in range(400):
            if os.path.exists(go):
                break
            time.sleep(0.05)
        t.close()
        print("done")
        """#)
        let output = try Self.deleteBetweenRequests(box, tool: "python3", script: client, [String(tv.port), String(world.nginx.tlsPort), world.tvRoot])
        #expect(output?.out == "done\n", "\(String(describing: output))")
        let flow = try #require(try box.closedFlows(1).last?.int("id"))
        let rows = try box.json("requests")["requests"] as? [JSON] ?? []
        let row = try #require(rows.first { $0.int("flow") == flow }, "\(rows)")
        #expect(row.string("path") == "/slow.bin" && row["queryRemoved"] as? Bool == true, "\(row)")
        let har = try Self.har(box, flow: flow)
        #expect(har.map(\.url) == ["https://localhost/slow.bin"] && har.first?.comment.contains("the query string was not kept") == true, "\(har)")
    }

    @Test("HTTP/2 server push with content kept (nghttpd through the reverse front-end): tv request shows a pushed stream's kept response, --json too")
    func pushedStreamIsShown() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let docs = box.work + "/docs"
        try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
        for (name, text) in [("index.html", "<link rel=stylesheet href=/s1.css>\n"), ("s1.css", "a{PUSHEDMARK}\n")] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: docs + "/" + name))
        }
        let port = Shell.freePort()
        let server = try Background(["nghttpd", "--htdocs=" + docs, "-p/index.html=/s1.css", String(port),
                                     TestPKI.shared.serverKey, TestPKI.shared.serverCert], logPath: box.work + "/nghttpd.log")
        defer { server.stop() }
        #expect(Shell.waitForListener(port))
        let tv = try world.run("--inspect", "--keep-content", "--mode", "reverse:https://localhost:\(port)")
        defer { try? tv.stop() }
        let got = try box.tool("nghttp", ["-ans", "https://localhost:\(tv.port)/index.html"], timeout: 30)
        #expect(got.status == 0 && got.out.contains("/s1.css"), "\(got)")
        _ = try box.waitForNoOpenConnections()
        let rows = try box.json("requests")["requests"] as? [JSON] ?? []
        let pushed = try #require(rows.first { $0.string("path") == "/s1.css" }, "\(rows)")
        #expect(pushed.int("stream").map { $0 % 2 == 0 } == true, "\(pushed)")
        let id = String(try #require(pushed.int("id")))
        let shown = try box.tv("request", id)
        #expect(shown.status == 0 && shown.out.contains("a{PUSHEDMARK}") && !shown.out.contains("not in the content kept"), "\(shown)")
        let json = try box.json("request", id)
        let content = try #require(json["content"] as? JSON, "\(json)")
        #expect(content["pushed"] as? Bool == true && json["absence"] is NSNull, "\(json)")
    }
}
