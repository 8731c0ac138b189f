import Foundation
import Testing

/// HTTP/2 clients that kept requests out of tv's rows on an inspected connection (a hostile-input
/// trial), end to end: a python3 client speaking raw frames through `tv run --inspect`'s CONNECT
/// tunnel to a lax python3 HTTP/2 server (TLS, ALPN h2) whose SETTINGS set no concurrency limit
/// and which answers every request, even one the client reset, with a 200 whose body is the first
/// `:path` it was sent (as a server that looks a name up by its first match does).
@Suite("tv run: HTTP/2 requests a client tried to keep out of the rows", .serialized)
struct HTTP2StreamRowsRunTests {
    /// argv: port file, certificate, key, log (a line "STREAM PATH" a request).
    static let server = #"""
    import socket, ssl, struct, sys, threading
    port_file, cert, key, log = sys.argv[1:5]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(cert, key); ctx.set_alpn_protocols(["h2"])
    ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(8)
    logf = open(log, "a")
    STATIC = {2: (":method", "GET"), 4: (":path", "/"), 7: (":scheme", "https")}
    NAMES = {1: ":authority", 2: ":method", 4: ":path"}
    def fields(block):
        # What the clients send: static indexes and literals without indexing (RFC 7541 §6.2.2).
        out, i = [], 0
        while i < len(block):
            b = block[i]; i += 1
            if b & 0x80: out.append(STATIC[b & 0x7f]); continue
            if b & 0x0f: name = NAMES[b & 0x0f]
            else: n = block[i]; name = block[i + 1:i + 1 + n].decode(); i += 1 + n
            n = block[i]; out.append((name, block[i + 1:i + 1 + n].decode())); i += 1 + n
        return out
    def frame(t, f, s, p): return struct.pack(">I", len(p))[1:] + bytes([t, f]) + struct.pack(">I", s) + p
    def serve(c):
        s = ctx.wrap_socket(c, server_side=True)
        buf = b""
        while len(buf) < 24: buf += s.recv(65536)
        buf = buf[24:]
        s.sendall(frame(4, 0, 0, b""))  # no SETTINGS_MAX_CONCURRENT_STREAMS: no limit (RFC 9113 §6.5.2)
        while True:
            out = b""
            while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
                n = int.from_bytes(buf[:3], "big"); t, fl = buf[3], buf[4]; sid = int.from_bytes(buf[5:9], "big") & 0x7fffffff
                payload = buf[9:9 + n]; buf = buf[9 + n:]
                if t == 4 and not fl & 1: out += frame(4, 1, 0, b"")
                if t == 1:
                    path = [v for k, v in fields(payload) if k == ":path"][0]
                    logf.write("%d %s\n" % (sid, path)); logf.flush()
                    out += frame(1, 4, sid, b"\x88") + frame(0, 1, sid, path.encode())
            if out: s.sendall(out)
            d = s.recv(65536)
            if not d: return
            buf += d
    open(port_file + ".tmp", "w").write(str(ls.getsockname()[1]))
    import os; os.rename(port_file + ".tmp", port_file)
    while True:
        c, _ = ls.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
    """#

    /// argv: proxy port, server port, tv's root, mode, count. `open`: COUNT streams opened at once
    /// without END_STREAM, then (their answers in) three requests one at a time; `dup`: one
    /// request with `:path /dup-a` then `:path /dup-hidden-b`; `rapid`: COUNT requests each reset
    /// (CANCEL) at once, in batches of 200; `batches`: COUNT requests in batches of 200, each
    /// batch's answers waited for. Prints "answered N" once the server's answers are in.
    static let client = #"""
    import select, socket, ssl, struct, sys, time
    proxy, port, cafile, mode, count = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
    def frame(t, f, s, p): return struct.pack(">I", len(p))[1:] + bytes([t, f]) + struct.pack(">I", s) + p
    raw = socket.create_connection(("127.0.0.1", proxy), timeout=60)
    raw.sendall(b"CONNECT localhost:%d HTTP/1.1\r\nHost: localhost:%d\r\n\r\n" % (port, port))
    head = b""
    while b"\r\n\r\n" not in head: head += raw.recv(1)
    assert head.startswith(b"HTTP/1.1 200"), head
    ctx = ssl.create_default_context(cafile=cafile); ctx.set_alpn_protocols(["h2"])
    s = ctx.wrap_socket(raw, server_hostname="localhost")
    assert s.selected_alpn_protocol() == "h2", s.selected_alpn_protocol()
    def lit(index, value): return bytes([index, len(value)]) + value  # literal without indexing, indexed name
    authority = b"localhost:%d" % port
    def request(path, *more): return b"\x82\x87" + lit(1, authority) + lit(4, path) + b"".join(more)
    answered, buf = set(), b""
    def pump(timeout):
        # One thread reads and writes: an SSL object is not for two at once (OpenSSL).
        global buf
        if not s.pending() and not select.select([s], [], [], timeout)[0]: return False
        d = s.recv(65536)
        if not d: raise EOFError("the connection closed")
        buf += d
        while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
            n = int.from_bytes(buf[:3], "big")
            if buf[3] == 0 and buf[4] & 1: answered.add(int.from_bytes(buf[5:9], "big") & 0x7fffffff)
            buf = buf[9 + n:]
        return True
    def wait(ids):
        deadline = time.time() + 60
        while not set(ids) <= answered and time.time() < deadline: pump(0.05)
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b""))
    if mode == "open":
        s.sendall(b"".join(frame(1, 4, 1 + 2 * i, request(b"/open%d" % i)) for i in range(count)))
        wait(range(1, 2 * count, 2))
        for i in range(3):
            sid = 1 + 2 * (count + i)
            s.sendall(frame(1, 5, sid, request(b"/hidden-%d" % i)))
            wait([sid])
    elif mode == "dup":
        s.sendall(frame(1, 5, 1, request(b"/dup-a", lit(4, b"/dup-hidden-b"))))
        wait([1])
    elif mode == "rapid":
        for start in range(0, count, 200):
            s.sendall(b"".join(frame(1, 5, 1 + 2 * i, request(b"/rr%d" % i)) + frame(3, 0, 1 + 2 * i, b"\x00\x00\x00\x08")
                               for i in range(start, min(count, start + 200))))
            while pump(0): pass
        wait(range(1, 2 * count, 2))
    elif mode == "batches":
        for start in range(0, count, 200):
            s.sendall(b"".join(frame(1, 5, 1 + 2 * i, request(b"/rr%d" % i)) for i in range(start, min(count, start + 200))))
            wait(range(1 + 2 * start, 1 + 2 * min(count, start + 200), 2))
    print("answered", len(answered))
    s.close()
    """#

    /// Starts the server; returns it and its port.
    static func startServer(_ world: RunWorld) throws -> (Background, String) {
        let box = world.sandbox
        let portFile = box.work + "/h2.port"
        let server = try Background(["python3", "-c", Self.server, portFile, world.pki.serverCert, world.pki.serverKey, box.work + "/h2.log"],
                                    logPath: box.work + "/h2-server.log")
        var port = ""
        for _ in 0..<200 where port.isEmpty {
            port = (try? String(contentsOfFile: portFile, encoding: .utf8)) ?? ""
            if port.isEmpty { usleep(50_000) }
        }
        guard !port.isEmpty else {
            server.stop()
            throw TestError("the HTTP/2 server did not start: \(box.text(box.work + "/h2-server.log"))")
        }
        return (server, port)
    }

    /// `tv requests --flow ID --limit 10000 --json`'s rows, oldest first.
    static func rows(_ box: Sandbox, flow: Int) throws -> [JSON] {
        let page = try box.json("requests", "--flow", String(flow), "--limit", "10000")
        return (page["requests"] as? [JSON] ?? []).sorted { ($0.int("sequence") ?? 0) < ($1.int("sequence") ?? 0) }
    }

    @Test("300 streams held open at once, then 3 requests: reading goes on, the 44 streams past 256 are counted, the 3 get rows once the answered streams are let go (the trial's 3 reached the server with no row: 'More than 256 streams were open at once')")
    func streamsPastTheBound() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let (server, port) = try Self.startServer(world)
        defer { server.stop() }
        let run = try box.python(Self.client, [String(tv.port), port, world.tvRoot, "open", "300"], timeout: 120)
        #expect(run.out == "answered 303\n", "\(run)")
        let flow = try #require(try box.closedFlows(1).first)
        let id = try #require(flow.int("id"))
        #expect(flow["error"] is NSNull, "\(flow)")
        let detail = try box.json("flow", String(id))
        #expect(detail.int("requestsLeftOut") == 44, "\(detail)")
        let rows = try Self.rows(box, flow: id)
        // Streams 1…511 (/open0…/open255) opened with rows; /open256…/open299 counted; each
        // hidden request let the oldest answered stream go (complete) and got its row.
        #expect(rows.count == 259)
        #expect(rows.prefix(256).map { $0.string("path") ?? "" } == (0..<256).map { "/open\($0)" })
        #expect(rows.suffix(3).map { "\($0.string("path") ?? "") \($0.int("stream") ?? 0) \($0.int("status") ?? 0) \($0.string("state") ?? "")" }
                == ["/hidden-0 601 200 complete", "/hidden-1 603 200 complete", "/hidden-2 605 200 complete"])
        #expect(rows.prefix(3).map { "\($0.string("state") ?? "") \($0.int("status") ?? 0)" } == ["complete 200", "complete 200", "complete 200"])
        let listed = try box.tv("requests", "--flow", String(id))
        #expect(listed.err.contains("tv: Flow \(id) had 44 requests read and counted without rows: tv writes a connection's first 10,000 requests"), "\(listed)")
        try tv.stop()
    }

    @Test("a request repeating :path: its row, tv request, tv turns --http and the HAR name the first (/dup-a, as the server used it; the row named the last), and the flow says it was malformed (RFC 9113 §8.3)")
    func repeatedPath() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        let (server, port) = try Self.startServer(world)
        defer { server.stop() }
        let run = try box.python(Self.client, [String(tv.port), port, world.tvRoot, "dup", "1"], timeout: 60)
        #expect(run.out == "answered 1\n", "\(run)")
        #expect(box.text(box.work + "/h2.log") == "1 /dup-a\n")
        let flow = try #require(try box.closedFlows(1).first)
        let id = try #require(flow.int("id"))
        #expect(flow.string("error") == "the client's request on stream 1 was malformed: it repeats :path (RFC 9113 §8.3); tv passed it on as sent"
                + " (it does not take a stream out of an HTTP/2 connection), and the server may have read it otherwise than its row,"
                + " which names the first of each repeated field", "\(flow)")
        let rows = try Self.rows(box, flow: id)
        #expect(rows.map { $0.string("path") ?? "" } == ["/dup-a"])
        let request = try #require(rows.first?.int("id"))
        let shown = try box.tv("request", String(request))
        #expect(shown.out.contains(" — GET https://localhost:\(port)/dup-a\n") && shown.out.contains("    GET /dup-a HTTP/2\n"), "\(shown)")
        let turns = try box.tv("turns", String(id), "--http")
        #expect(turns.out.contains("    GET /dup-a HTTP/2\n"), "\(turns)")
        let harPath = box.work + "/dup.har"
        #expect(try box.tv("export", "har", String(id), "-o", harPath).status == 0)
        let urls = try box.python("""
        import json, sys
        print([e["request"]["url"] for e in json.load(open(sys.argv[1]))["log"]["entries"]])
        """, [harPath])
        #expect(urls.out == "['https://localhost:\(port)/dup-a']\n", "\(urls)")
        try tv.stop()
    }

    @Test("100 requests each reset at once, answered all the same (as nginx answered the trial's): every row is cancelled with the server's 200, and tv requests, tv request and the HAR say so (they read 'incomplete: its end was never read')")
    func rapidResetAnswered() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let (server, port) = try Self.startServer(world)
        defer { server.stop() }
        let run = try box.python(Self.client, [String(tv.port), port, world.tvRoot, "rapid", "100"], timeout: 120)
        #expect(run.out == "answered 100\n", "\(run)")
        let flow = try #require(try box.closedFlows(1).first)
        let id = try #require(flow.int("id"))
        let rows = try Self.rows(box, flow: id)
        #expect(rows.count == 100)
        #expect(Set(rows.map { "\($0.string("state") ?? "") \($0.int("status") ?? 0)" }) == ["cancelled 200"], "\(rows.prefix(3))")
        let listed = try box.tv("requests", "--flow", String(id), "--limit", "1")
        #expect(listed.out.contains(" /rr99  200 cancelled "), "\(listed)")
        let request = try #require(rows.last?.int("id"))
        let shown = try box.tv("request", String(request))
        #expect(shown.out.contains("\n  status 200 — cancelled: the client reset the stream after its request, before the response ended (HTTP/2 RST_STREAM)\n"),
                "\(shown)")
        let harPath = box.work + "/cancelled.har"
        #expect(try box.tv("export", "har", String(id), "-o", harPath).status == 0)
        let comments = try box.python("""
        import json, sys
        entries = json.load(open(sys.argv[1]))["log"]["entries"]
        print(len(entries), sum(1 for e in entries if "cancelled: the client reset the stream" in e.get("comment", "") and e["response"]["status"] == 200))
        """, [harPath])
        #expect(comments.out == "100 100\n", "\(comments)")
        try tv.stop()
    }

    /// (Each reset at once, a rapid reset, it now ends at the client's 1,001st reset:
    /// `HTTP2FloodPolicy`; `HTTP2HostilePeerTests` shows that.)
    @Test("10,500 requests on one connection, 200 at a time: tv requests (text, --json, --filter) and tv export har say how many were counted without rows, and of which flow (only tv flow said it)")
    func rapidResetPastTheAllowance() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let (server, port) = try Self.startServer(world)
        defer { server.stop() }
        let run = try box.python(Self.client, [String(tv.port), port, world.tvRoot, "batches", "10500"], timeout: 300)
        #expect(run.out == "answered 10500\n", "\(run)")
        let flow = try #require(try box.closedFlows(1, timeout: 60).first)
        let id = try #require(flow.int("id"))
        let detail = try box.json("flow", String(id))
        let rows = try #require(detail.int("requestCount"), "\(detail)")
        let leftOut = try #require(detail.int("requestsLeftOut"), "\(detail)")
        #expect(rows + leftOut == 10_500 && rows >= 10_000)
        let sentence = "tv: Flow \(id) had \(grouped(leftOut)) requests read and counted without rows: tv writes a connection's first 10,000 requests, then 10 a second"
        let text = try box.tv("requests")
        #expect(text.status == 0 && text.err.contains(sentence), "\(text)")
        let json = try box.tvArgs(["requests", "--json"])
        let page = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? JSON, "\(json)")
        let said = (page["requestsLeftOut"] as? [JSON])?.map { "\($0.int("flow") ?? 0) \($0.int("count") ?? 0)" }
        #expect(said == ["\(id) \(leftOut)"], "\(page["requestsLeftOut"] ?? "none")")
        let filtered = try box.tv("requests", "--filter", "~u /rr1")
        #expect(filtered.status == 0 && filtered.err.contains(sentence), "\(filtered)")
        let harPath = box.work + "/rr.har"
        let har = try box.tv("export", "har", String(id), "-o", harPath)
        #expect(har.status == 0 && har.err.contains(sentence), "\(har)")
        let comment = try box.python("""
        import json, sys
        print(json.load(open(sys.argv[1]))["log"]["comment"])
        """, [harPath])
        #expect(comment.out.contains("; flow \(id) (\(grouped(leftOut))) had \(grouped(leftOut)) requests read and counted without rows,"), "\(comment)")
        try tv.stop()
    }
}
