import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 16 through the real `tv` binary: exchange rows from `tv run --inspect` between real
/// clients (curl over HTTP/1.1 keep-alive and HTTP/2 multiplexing, h2load, Python) and nginx,
/// checked against nginx's own access log; without content keeping, no header value or query
/// string reaches the data folder.
@Suite("tv run: HTTP exchanges as rows (issue 16)", .serialized)
struct ExchangeRowsRunTests {
    /// A WebSocket backend behind nginx: answers the upgrade with 101 (RFC 6455 §4.2.2), sends
    /// one text frame, then waits for the client to close.
    static let webSocketServer = #"""
    import base64, hashlib, socket, sys, threading
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(sys.argv[1])))
    s.listen(16)
    def serve(c):
        with c:
            data = b""
            while b"\r\n\r\n" not in data:
                d = c.recv(4096)
                if not d:
                    return
                data += d
            key = [l.split(b":", 1)[1].strip() for l in data.split(b"\r\n") if l.lower().startswith(b"sec-websocket-key:")][0]
            accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
            c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n\x81\x02hi")
            while c.recv(4096):
                pass
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
    """#

    /// Through tv (argv: proxy port, nginx port, tv's root, mode): CONNECT, TLS to localhost,
    /// then `ws` (a WebSocket upgrade, one frame each way, close) or `cut` (a POST announcing
    /// 1,000 bytes that sends 100 and closes).
    static let client = #"""
    import socket, ssl, sys
    proxy, port, root, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    s = socket.create_connection(("127.0.0.1", proxy), timeout=10)
    s.sendall(f"CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(4096)
    ctx = ssl.create_default_context(cafile=root)
    ctx.set_alpn_protocols(["http/1.1"])
    t = ctx.wrap_socket(s, server_hostname="localhost")
    if mode == "ws":
        t.sendall(f"GET /ws/chat HTTP/1.1\r\nHost: localhost:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        got = b""
        while b"hi" not in got:
            got += t.recv(4096)
        assert got.startswith(b"HTTP/1.1 101"), got
        t.sendall(b"\x81\x82abcd" + bytes(a ^ b for a, b in zip(b"yo", b"ab")))
    else:
        t.sendall(f"POST /echo/cut HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Length: 1000\r\n\r\n".encode() + b"x" * 100)
    t.close()
    print("done")
    """#

    /// One line of nginx's combined log: method, path without the query, status, body bytes sent.
    struct Logged: Hashable, CustomStringConvertible {
        var method: String
        var path: String
        var status: Int
        var bytes: Int
        var description: String { "\(method) \(path) \(status) \(bytes)" }
    }

    static func accessLog(_ text: String) -> [Logged] {
        text.split(separator: "\n").compactMap { line in
            let quoted = line.split(separator: "\"")
            guard quoted.count >= 3 else { return nil }
            let request = quoted[1].split(separator: " ")
            let after = quoted[2].split(separator: " ")
            guard request.count >= 2, after.count >= 2, let status = Int(after[0]), let bytes = Int(after[1]) else { return nil }
            let path = String(request[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
            return Logged(method: String(request[0]), path: path, status: status, bytes: bytes)
        }
    }

    @Test("1,000+ requests over keep-alive and h2 (curl, h2load), 204, 304, HEAD, chunked, 100-continue, a WebSocket upgrade and a cut-off request: every row matches nginx's access log; no header value or query string on disk")
    func rowsMatchTheAccessLog() throws {
        let ws = try PythonServer(Self.webSocketServer)
        let locations = """
        access_log logs/access.log;
                location /gz/ { gzip on; gzip_types text/plain; gzip_min_length 1; }
                location = /cond.html { if_modified_since before; }
                location /ws/ { proxy_pass http://127.0.0.1:\(ws.port); proxy_http_version 1.1; proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection upgrade; }
        """
        let world = try RunWorld(nginxLocations: locations)
        let box = world.sandbox
        try FileManager.default.createDirectory(atPath: world.www + "/gz", withIntermediateDirectories: true)
        try Data((1...40).map { "line \($0) of text\n" }.joined().utf8).write(to: URL(fileURLWithPath: world.www + "/gz/t.txt"))
        try Data("conditional\n".utf8).write(to: URL(fileURLWithPath: world.www + "/cond.html"))
        try FileManager.default.createDirectory(atPath: world.www + "/echo", withIntermediateDirectories: true)
        let secretQuery = "SECRETQUERY7F3A", secretHeader = "SECRETHEADER9C1E"
        var tv = try world.run("--inspect", "--log", "requests")

        // HTTP/1.1 keep-alive: 400 transfers on one connection, a header and a query on each.
        var config = ""
        let h1Paths = ["/index.html?token=\(secretQuery)", "/1k.bin", "/gz/t.txt", "/missing", "/index.html"]
        for i in 0..<400 { config += "url = \"\(world.url(h1Paths[i % h1Paths.count]))\"\noutput = \"/dev/null\"\n" }
        let configPath = try box.write("h1.conf", config)
        var r = try world.curlThrough(tv, ["--http1.1", "-H", "X-Secret: \(secretHeader)", "-H", "Accept-Encoding: gzip", "-K", configPath])
        #expect(r.status == 0, "\(r)")
        // HTTP/2: 300 transfers multiplexed on one connection.
        config = ""
        for i in 0..<300 { config += "url = \"\(world.url(i % 3 == 0 ? "/1k.bin?n=\(i)&token=\(secretQuery)" : "/index.html"))\"\noutput = \"/dev/null\"\n" }
        let h2Config = try box.write("h2.conf", config)
        r = try world.curlThrough(tv, ["--http2", "--parallel", "--parallel-max", "20", "-H", "X-Secret: \(secretHeader)", "-K", h2Config])
        #expect(r.status == 0, "\(r)")
        // 304, HEAD, 100-continue (201, then 204 for the same file).
        r = try world.curlThrough(tv, ["--http1.1", "-o", "/dev/null", "-H", "If-Modified-Since: Tue, 01 Dec 2099 00:00:00 GMT", world.url("/cond.html"),
                                       "-I", world.url("/index.html")])
        #expect(r.status == 0, "\(r)")
        let upload = try box.write("upload.txt", String(repeating: "u", count: 3000))
        for _ in 0..<2 {
            r = try world.curlThrough(tv, ["--http1.1", "-o", "/dev/null", "-H", "Expect: 100-continue", "-T", upload, world.url("/echo/file.txt")])
            #expect(r.status == 0, "\(r)")
        }
        // A WebSocket upgrade and a request cut off mid-body.
        for mode in ["ws", "cut"] {
            let p = try box.python(Self.client, [String(tv.port), String(world.nginx.tlsPort), world.tvRoot, mode])
            #expect(p.status == 0, "\(mode): \(p)")
        }
        _ = try box.waitForNoOpenConnections()
        // --log requests printed a line per finished exchange, the query replaced by ?….
        let log = tv.log()
        #expect(matches(log, #"\n\d\d:\d\d:\d\d\.\d{3} GET https://localhost:\#(world.nginx.tlsPort)/index\.html\?… 200 17 B \d"#), "\(log.suffix(2000))")
        try tv.stop()

        // h2load through the reverse front-end: 300 requests, 10 streams at once.
        tv = try world.run("--inspect", "--mode", "reverse:https://localhost:\(world.nginx.tlsPort)")
        let h2 = try box.tool("h2load", ["-n", "300", "-c", "1", "-m", "10", "-H", "X-Secret: \(secretHeader)",
                                         "https://localhost:\(tv.port)/index.html?token=\(secretQuery)"], timeout: 60)
        #expect(h2.out.contains("300 succeeded, 0 failed, 0 errored"), "\(h2)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()

        // Every exchange row against nginx's log, as multisets.
        let page = try box.json("requests", "--limit", "10000")
        let rows = page["requests"] as? [JSON] ?? []
        let logged = Self.accessLog(box.text(world.nginx.dir + "/logs/access.log"))
        #expect(logged.count == 400 + 300 + 2 + 2 + 2 + 300, "\(logged.count) lines in nginx's log")
        #expect(rows.count == logged.count, "\(rows.count) rows")
        var expected: [Logged: Int] = [:]
        for var line in logged where line.path != "/echo/cut" && line.path != "/ws/chat" {
            // nginx counts the interim "HTTP/1.1 100 Continue\r\n\r\n" (25 bytes) it sent before a
            // PUT's body in $body_bytes_sent; the row counts the final response's body only.
            if line.method == "PUT" { line.bytes -= 25 }
            expected[line, default: 0] += 1
        }
        var found: [Logged: Int] = [:]
        for row in rows {
            guard let path = row.string("path"), path != "/echo/cut", path != "/ws/chat" else { continue }
            found[Logged(method: row.string("method") ?? "", path: path, status: row.int("status") ?? -1,
                         bytes: row.int("responseWireBytes") ?? -1), default: 0] += 1
        }
        #expect(found == expected, "differences: \(found.filter { expected[$0.key] != $0.value }) vs \(expected.filter { found[$0.key] != $0.value })")
        // The kinds asked for are there.
        let statuses = Set(rows.compactMap { $0.int("status") })
        #expect(statuses.isSuperset(of: [101, 200, 201, 204, 304, 404]), "\(statuses)")
        #expect(rows.contains { $0.string("method") == "HEAD" && $0.int("responseWireBytes") == 0 })
        #expect(rows.filter { $0.string("httpVersion") == "HTTP/2" }.count == 600)
        // Chunked: gzip over HTTP/1.1 is chunked, so bytes as sent exceed the content.
        let chunked = rows.first { $0.string("path") == "/gz/t.txt" }
        #expect(chunked?.string("contentEncoding") == "gzip")
        #expect((chunked?.int("responseWireBytes") ?? 0) > (chunked?.int("responseBodyBytes") ?? 0), "\(String(describing: chunked))")
        // 100-continue: the request body counted, the interim response skipped.
        let puts = rows.filter { $0.string("method") == "PUT" }.sorted { ($0.int("id") ?? 0) < ($1.int("id") ?? 0) }
        #expect(puts.map { $0.int("status") } == [201, 204])
        #expect(puts.map { $0.int("requestBodyBytes") } == [3000, 3000])
        // The upgrade and the cut-off request.
        let upgrade = try #require(rows.first { $0.string("path") == "/ws/chat" })
        #expect(upgrade.int("status") == 101)
        #expect(upgrade["upgrade"] as? Bool == true)
        #expect(upgrade.string("state") == "complete")
        #expect(logged.contains { $0.path == "/ws/chat" && $0.status == 101 })
        let cut = try #require(rows.first { $0.string("path") == "/echo/cut" })
        #expect(cut.string("state") == "incomplete")
        #expect(cut.int("requestBodyBytes") == 100)
        #expect(logged.contains { $0.method == "POST" && $0.path == "/echo/cut" })
        // Queries were there and were not kept.
        #expect(rows.filter { $0["queryRemoved"] as? Bool == true }.count == 80 + 100 + 300)

        // Nothing of a header value or a query string anywhere in the data folder.
        let grep = try box.tool("grep", ["-r", "-a", "-l", "-e", secretQuery, "-e", secretHeader, box.dataDir])
        #expect(grep.status == 1, "found in: \(grep.out)")

        // The commands: a list, one request, its curl command, and the flow listing its requests.
        let list = try box.tv("requests", "--limit", "3").out
        let listed = list.split(separator: "\n")
        #expect(listed.count == 5 && matches(String(listed[0]), #"^ +ID  TIME \(UTC\) +METHOD  HOST +PATH +STATUS  SIZES \(REQ → RESP\)  DURATION  TYPE$"#), "\(list)")
        #expect(listed.count == 5 && matches(String(listed[1]), #"^ *\d+  \d\d-\d\d \d\d:\d\d:\d\d  GET +localhost:\d+ +/index\.html\?… +200 +0 B → 17 B +\d"#), "\(list)")
        #expect(listed.last?.hasPrefix("More: tv requests --data-dir ") == true, "\(list)")
        let one = try #require(rows.first { $0.string("path") == "/1k.bin" && $0.string("httpVersion") == "HTTP/2" })
        let id = try #require(one.int("id"))
        let shown = try box.tv("request", String(id)).out
        #expect(shown.hasPrefix("Request \(id) — GET https://localhost:\(world.nginx.tlsPort)/1k.bin?…\n"), "\(shown)")
        #expect(shown.contains("Without content keeping tv keeps each request's method"), "\(shown)")
        let curl = try box.tv("request", String(id), "--curl")
        #expect(curl.out == "curl --http2 https://localhost:\(world.nginx.tlsPort)/1k.bin\n", "\(curl)")
        let flowID = one.int("flow") ?? 0
        let flowText = try box.tv("flow", String(flowID)).out
        // The first 50 and the count, as packets are shown (a trial's connection had 200,000).
        #expect(flowText.contains("HTTP requests (the first 50 of 300; `tv requests --flow \(flowID)` lists them all; `tv request ID` shows one):\n"),
                "\(flowText)")
        #expect(flowText.contains("\n  … 250 more\n"), "\(flowText)")
    }

    @Test("with content kept: tv request shows headers, the query and a JSON body pretty-printed; --curl repeats it")
    func keptContent() throws {
        let world = try RunWorld(nginxLocations: #"location = /api { default_type application/json; return 200 '{"a":1,"list":[true,null],"o":{}}'; }"#)
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        let r = try world.curlThrough(tv, ["--http1.1", "-o", "/dev/null", "-H", "X-Token: abc", world.url("/api?q=1")])
        #expect(r.status == 0, "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let rows = try box.json("requests")["requests"] as? [JSON] ?? []
        let row = try #require(rows.first)
        #expect(row.string("path") == "/api?q=1")
        #expect(row["queryRemoved"] as? Bool == false)
        #expect(row.string("contentType") == "application/json")
        let id = try #require(row.int("id"))
        let shown = try box.tv("request", String(id)).out
        #expect(shown.contains("    X-Token: abc\n"), "\(shown)")
        #expect(shown.contains("    body: 33 bytes of JSON\n      {\n        \"a\": 1,\n        \"list\": [\n          true,\n          null\n        ],\n        \"o\": {}\n      }\n"), "\(shown)")
        let curl = try box.tv("request", String(id), "--curl").out
        #expect(curl.hasPrefix("curl --http1.1 'https://localhost:\(world.nginx.tlsPort)/api?q=1' -H 'User-Agent: curl/"), "\(curl)")
        #expect(curl.contains(" -H 'X-Token: abc'"), "\(curl)")
    }

    @Test("a Host naming another server inside a CONNECT tunnel: tv request says where it went, and --curl's --connect-to replays it there")
    func hostNamingAnotherServer() throws {
        let world = try RunWorld(nginxLocations: #"location = /who { default_type text/plain; return 200 "port $server_port host $http_host\n"; }"#)
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        // CONNECT localhost:PORT, SNI localhost, then `Host: a.test`: nginx (whose certificate also
        // names a.test) answers it; a.test itself resolves nowhere. The flow is named by its SNI,
        // which the client only announced: the request went to the address tv dialled.
        let r = try world.curlThrough(tv, ["-s", "--http1.1", "-H", "Host: a.test", world.url("/who")])
        #expect(r.status == 0 && r.out == "port \(world.nginx.tlsPort) host a.test\n", "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let row = try #require((try box.json("requests")["requests"] as? [JSON] ?? []).first)
        #expect(row.string("authority") == "a.test", "\(row)")
        let id = try #require(row.int("id"))
        let shown = try box.tv("request", String(id)).out
        #expect(shown.contains("\n  sent to 127.0.0.1:\(world.nginx.tlsPort), not the a.test:443 its URL names (the URL's host is the request's own Host or :authority, RFC 9110 §7.2)\n"), "\(shown)")
        #expect(try box.json("request", String(id)).string("sentTo") == "127.0.0.1:\(world.nginx.tlsPort)")
        let curl = try box.tv("request", String(id), "--curl").out
        #expect(curl.hasPrefix("curl --http1.1 --connect-to a.test:443:127.0.0.1:\(world.nginx.tlsPort) https://a.test/who -H 'User-Agent: curl/"), "\(curl)")
        // The command, run as printed (plus the CA and quiet output), reaches the same server.
        let replay = try box.tool("sh", ["-c", curl.trimmingCharacters(in: .newlines) + " -s --max-time 10 --cacert '\(world.pki.upstreamCA)'"])
        #expect(replay.status == 0 && replay.out == "port \(world.nginx.tlsPort) host a.test\n", "\(replay)")
    }

    @Test("tv request shows a body over the preview in part, as tv turns does, and --full prints every kept byte")
    func bodyPreview() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        let r = try world.curlThrough(tv, ["--http1.1", "-o", "/dev/null", world.url("/1k.bin")])
        #expect(r.status == 0, "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let row = try #require((try box.json("requests")["requests"] as? [JSON] ?? []).first)
        let id = try #require(row.int("id"))
        let shown = try box.tv("request", String(id)).out
        #expect(shown.contains("… showing 256 of 1,024 bytes; --full prints all that was kept."), "\(shown)")
        let full = try box.tv("request", String(id), "--full").out
        #expect(!full.contains("… showing") && full.split(separator: "\n").count > shown.split(separator: "\n").count, "\(full)")
    }

    @Test("plain HTTP through the proxy: each request of a keep-alive connection is a row")
    func plainHTTP() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run()
        let base = "http://127.0.0.1:\(world.nginx.plainPort)"
        let r = try box.curl(["-x", tv.proxyURL, "-o", "/dev/null", base + "/index.html", "-o", "/dev/null", base + "/missing?token=x"])
        #expect(r.status == 0, "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let rows = (try box.json("requests")["requests"] as? [JSON] ?? []).reversed()
        #expect(rows.map { $0.string("method") } == ["GET", "GET"])
        #expect(rows.map { $0.string("scheme") } == ["http", "http"])
        #expect(rows.map { $0.string("authority") } == ["127.0.0.1:\(world.nginx.plainPort)", "127.0.0.1:\(world.nginx.plainPort)"])
        #expect(rows.map { $0.string("path") } == ["/index.html", "/missing"])
        #expect(rows.map { $0["queryRemoved"] as? Bool } == [false, true])
        #expect(rows.map { $0.int("status") } == [200, 404])
        #expect(rows.first?.int("responseBodyBytes") == 17)
        #expect(rows.map { $0.string("state") } == ["complete", "complete"])
        #expect(Set(rows.compactMap { $0.int("flow") }).count == 1)
    }

    /// Python's own HTTP/1.1 server (up to 100 fields of up to 64 KiB each, as `http.client`
    /// reads them): answers each request with the size of its body.
    static let pythonServer = #"""
    import sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def answer(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = str(len(self.rfile.read(n))).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        do_GET = do_POST = answer
        def log_message(self, *a):
            pass
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    """#

    @Test("plain HTTP in a CONNECT tunnel: a request head of 80 fields of 1,000 bytes (80 KB, past tv's one 64 KiB head limit) gets tv's 431, as the explicit proxy's own forwarding answers it, and its row reads 431 (it made the flow not HTTP and had no row, then went to the server read on past the limit: trials)")
    func requestHeadPastTheLimit() throws {
        let server = try PythonServer(Self.pythonServer)
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run()
        let big = (1 ... 80).flatMap { ["-H", "X-Big-\($0): " + String(repeating: "v", count: 1_000)] }
        let base = "http://127.0.0.1:\(server.port)"
        // Through a CONNECT tunnel (`-p`), where tv reads the requests beside the relay; the
        // explicit proxy's own plain-HTTP forwarding refuses the same head with the same 431
        // (nginx refuses past 32 KiB).
        let r = try box.curl(["-x", tv.proxyURL, "-p", "-sS", "-w", "\n%{http_code}"] + big + ["--data-binary", "small body", base + "/echo"])
        #expect(r.out == "tv: the client's request was not understood: The request head exceeds 65536 bytes without ending in an empty line.\n\n431",
                "\(r.out.prefix(600)) \(r.err.prefix(300))")
        let plain = try box.curl(["-x", tv.proxyURL, "-sS", "-w", "\n%{http_code}"] + big + ["--data-binary", "small body", base + "/echo"])
        #expect(plain.out == "tv is an HTTP proxy and could not read this request: The request head exceeds 65536 bytes without ending in an empty line.\n\n431",
                "\(plain.out.prefix(600)) \(plain.err.prefix(300))")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let rows = (try box.json("requests")["requests"] as? [JSON] ?? []).reversed()
        #expect(rows.map { "\($0.string("method") ?? "") \($0.string("path") ?? "") \($0.int("status") ?? 0) \($0.string("state") ?? "")" }
                == ["POST /echo 431 answered"], "\(rows)")
    }

    @Test("inspected request heads a server could read otherwise (a NUL in the target, a DEL, a NUL in a field value, Content-Length beside Transfer-Encoding with a request behind it) get tv's 400 and reach no server; each has a row, answered 400, and a request before them on the connection is served (they were forwarded with no row, or recorded as two requests where the server saw one: trials)")
    func refusedRequestHeads() throws {
        let world = try RunWorld(nginxLocations: "access_log logs/access.log;")
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let client = #"""
            import socket, ssl, sys
            proxy, port, root = int(sys.argv[1]), sys.argv[2], sys.argv[3]
            heads = [b"GET /nul\x00byte HTTP/1.1\r\nHost: h\r\n\r\n", b"GET /del\x7fchar HTTP/1.1\r\nHost: h\r\n\r\n",
                     b"GET /field HTTP/1.1\r\nHost: h\r\nX-Bad: a\x00b\r\n\r\n",
                     b"POST /clte HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n"]
            def tunnel():
                s = socket.create_connection(("127.0.0.1", proxy), timeout=10)
                s.sendall(f"CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode())
                data = b""
                while b"\r\n\r\n" not in data:
                    data += s.recv(4096)
                return ssl.create_default_context(cafile=root).wrap_socket(s, server_hostname="localhost")
            for head in heads:
                t = tunnel()
                # A request that is served first, on the same connection.
                t.sendall(b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n")
                got = b""
                while b"hello from nginx" not in got:
                    got += t.recv(4096)
                t.sendall(head)
                got = b""
                while True:
                    d = t.recv(4096)
                    if not d:
                        break
                    got += d
                print(got.split(b"\r\n")[0].decode())
                t.close()
            # Behind a request in the same write: that request is served first and its answer
            # comes first (a 400 at once would be read as its answer: a re-check's pipelined GET
            # took it), then tv's 400 and the close.
            t = tunnel()
            t.sendall(b"GET /piped HTTP/1.1\r\nHost: localhost\r\n\r\n" + heads[3])
            got = b""
            try:
                while True:
                    d = t.recv(4096)
                    if not d:
                        break
                    got += d
            except (ConnectionResetError, ssl.SSLError) as e:
                got += b"reset"
            print("piped: " + " ".join(l.decode() for l in got.split(b"\r\n") if l.startswith(b"HTTP/1.1 ")))
            """#
        let p = try box.python(client, [String(tv.port), String(world.nginx.tlsPort), world.tvRoot])
        #expect(p.status == 0 && p.out.hasPrefix(String(repeating: "HTTP/1.1 400 Bad Request\n", count: 4)), "tv's 400 each time: \(p)")
        #expect(p.out.hasSuffix("piped: HTTP/1.1 404 Not Found HTTP/1.1 400 Bad Request\n"), "the waiting request's answer, then tv's 400: \(p)")
        _ = try box.waitForNoOpenConnections()
        let rows = (try box.json("requests")["requests"] as? [JSON] ?? []).reversed().map { "\($0.string("method") ?? "") \($0.string("path") ?? "") \($0.int("status") ?? 0) \($0.string("state") ?? "")" }
        #expect(rows == ["GET /index.html 200 complete", "GET /nul%00byte 400 answered", "GET /index.html 200 complete", "GET /del%7Fchar 400 answered",
                         "GET /index.html 200 complete", "GET /field 400 answered", "GET /index.html 200 complete", "POST /clte 400 answered",
                         "GET /piped 404 complete", "POST /clte 400 answered"], "\(rows)")
        #expect(try box.status()?.int("exchangeReadingStopped") == 5)
        let flows = try box.closedFlows(5)
        #expect(flows.allSatisfy { $0.string("status") == "inspected" && ($0.string("error") ?? "").hasPrefix("the client's request was not understood: ") }, "\(flows)")
        try tv.stop()
        // nginx served the requests before them and saw none of the refused ones.
        let log = box.text(world.nginx.dir + "/logs/access.log")
        #expect(!log.contains("/nul") && !log.contains("/del") && !log.contains("/field") && !log.contains("/clte") && !log.contains("/smuggled")
                && log.components(separatedBy: "GET /piped").count - 1 == 1, "\(log)")
        #expect(log.components(separatedBy: "GET /index.html").count - 1 == 4, "\(log)")
    }

    @Test("plain HTTP in a CONNECT tunnel: a response with both Content-Length and Transfer-Encoding (which the client may read otherwise), or a header name that is not a token, is not passed on; the client gets tv's 502 saying why, the row reads 502 by tv (relayed as is, it was recorded as 3 bytes, or cut with no status: trials); one whose head is split across reads the same, the head held until whole (its first part went on and it was cut there: a trial)")
    func ambiguousResponseIsRefused() throws {
        let server = try PythonServer(#"""
            import sys, time
            from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
            class H(BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def do_GET(self):
                    if self.path == "/splitbad":
                        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"); self.wfile.flush(); time.sleep(0.3)
                        self.wfile.write(b"X@Bad: 1\r\n\r\nhello")
                        return
                    if self.path == "/badname":
                        self.wfile.write(b"HTTP/1.1 200 OK\r\nX@Bad: 1\r\nContent-Length: 3\r\n\r\nabc")
                        return
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
                def log_message(self, *a):
                    pass
            ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
            """#)
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run()
        let r = try box.curl(["-x", tv.proxyURL, "-p", "-sS", "-w", "\n%{http_code}", "http://127.0.0.1:\(server.port)/both"])
        #expect(r.out.hasPrefix("tv: the server's response was not understood: The response has both Content-Length and Transfer-Encoding") && r.out.hasSuffix("\n502"), "\(r)")
        let name = try box.curl(["-x", tv.proxyURL, "-p", "-sS", "-w", "\n%{http_code}", "http://127.0.0.1:\(server.port)/badname"])
        #expect(name.out == "tv: the server's response was not understood: A header name contains byte 0x40, which is not allowed in a token (RFC 9110 §5.1).\n\n502", "\(name)")
        // Its head split across reads: held until whole (none of it reached the client), so
        // refused as one in a single read (it was cut part way, the first part passed on).
        let split = try box.curl(["-x", tv.proxyURL, "-p", "-sS", "-w", "\n%{http_code}", "http://127.0.0.1:\(server.port)/splitbad"])
        #expect(split.out == name.out, "\(split)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let rows = (try box.json("requests")["requests"] as? [JSON] ?? [])
        #expect(rows.map { "\($0.string("path") ?? "") \($0.int("status") ?? 0) \($0.string("state") ?? "")" } == ["/splitbad 502 answered", "/badname 502 answered", "/both 502 answered"], "\(rows)")
        let flows = try box.json("flows")["flows"] as? [JSON] ?? []
        #expect(flows.filter { $0.string("error") == "the server's response was not understood: A header name contains byte 0x40, which is not allowed in a token (RFC 9110 §5.1)." }.count == 2, "\(flows)")
    }

    @Test("HTTP/2 server push through the reverse front-end (nghttpd pushing two stylesheets with its page, nghttp accepting them): each pushed response is a row of its own beside the page's (they had none: a trial)")
    func serverPushHasRows() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let docs = box.work + "/docs"
        try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
        for (name, text) in [("index.html", "<link rel=stylesheet href=/s1.css>\n"), ("s1.css", "a{}\n"), ("s2.css", "b{}\n")] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: docs + "/" + name))
        }
        let port = Shell.freePort()
        let server = try Background(["nghttpd", "--htdocs=" + docs, "-p/index.html=/s1.css,/s2.css", String(port),
                                     TestPKI.shared.serverKey, TestPKI.shared.serverCert], logPath: box.work + "/nghttpd.log")
        defer { server.stop() }
        #expect(Shell.waitForListener(port))
        let tv = try world.run("--inspect", "--mode", "reverse:https://localhost:\(port)")
        let got = try box.tool("nghttp", ["-ans", "https://localhost:\(tv.port)/index.html"], timeout: 30)
        #expect(got.status == 0 && got.out.contains("/s1.css") && got.out.contains("/s2.css"), "\(got)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let rows = (try box.json("requests")["requests"] as? [JSON] ?? []).map { "\($0.string("path") ?? "") \($0.int("status") ?? 0) \($0.int("stream").map { $0 % 2 == 0 ? "pushed" : "asked" } ?? "?")" }
        #expect(Set(rows) == ["/index.html 200 asked", "/s1.css 200 pushed", "/s2.css 200 pushed"] && rows.count == 3, "\(rows)")
    }

    @Test("an upload curl sends at 256 KiB/s for about 0.75 s: the row keeps when the request ended, and the HAR's send is that time, not the server's wait (send was always 0: a trial)")
    func uploadTimeIsSend() throws {
        let server = try PythonServer(Self.pythonServer)
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run()
        let body = try box.write("body.bin", String(repeating: "x", count: 192 * 1_024))
        let r = try box.curl(["-x", tv.proxyURL, "-p", "-sS", "--limit-rate", "256K", "--data-binary", "@" + body,
                              "http://127.0.0.1:\(server.port)/upload"])
        #expect(r.status == 0 && r.out == String(192 * 1_024), "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let row = try #require((try box.json("requests")["requests"] as? [JSON])?.first)
        let (start, sent) = (row.int("requestTime") ?? 0, row.int("requestEndTime") ?? 0)
        #expect(sent - start > 400_000, "\(row)")
        let har = box.work + "/upload.har"
        #expect(try box.tv("export", "har", String(row.int("flow") ?? 0), "-o", har).status == 0)
        let log = try #require(try JSONSerialization.jsonObject(with: box.read(har)) as? [String: Any])
        let timings = try #require(((log["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first?["timings"] as? [String: Double])
        // At least the rate limit's time (it cannot be quicker); the wait (the server's) is the smaller part.
        #expect((timings["send"] ?? 0) > 400 && (timings["wait"] ?? .infinity) < (timings["send"] ?? 0), "\(timings)")
    }

    @Test("requests.record off: the flow is recorded, no request row is (the switch the on/off benchmark uses)")
    func recordOff() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let set = try box.tvArgs(["settings", "set", "requests.record", "off"])
        #expect(set.status == 0, "\(set)")
        let tv = try world.run()
        let base = "http://127.0.0.1:\(world.nginx.plainPort)"
        let r = try box.curl(["-x", tv.proxyURL, "-o", "/dev/null", base + "/index.html"])
        #expect(r.status == 0, "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        #expect((try box.json("requests")["requests"] as? [JSON] ?? []).isEmpty)
        #expect(!(try box.flowRows()).isEmpty)
    }
}
