import Foundation
import Testing

/// The hostile-input trial's two ways past the record, through the real `tv run`: bytes that do
/// not begin like a request on a connection tv knows is HTTP (ALPN http/1.1 inside inspected
/// TLS, reverse mode), which it relayed raw while a lax server answered them and the request
/// after them; and a refusal pipelined behind good requests, which took the good ones down with
/// it (300 pipelined GETs got no response; `GET /first` before a `G\x01T` got a bare close).
@Suite("tv run: first bytes that begin no request, and refusals behind pipelined requests (hostile-input trial)", .serialized)
struct FrontRefusalRunTests {
    /// nginx answering `/first`, `/hidden-…` and `/pf-…` with what it saw; its access log on.
    static let locations = #"""
    access_log logs/access.log;
                location /first { return 200 "nginx saw $request_method $uri\n"; }
                location /hidden- { return 200 "nginx saw $request_method $uri\n"; }
                location /pf- { return 200 "ok\n"; }
    """#

    /// A raw client (argv: tv's port, target host:port, `tls` (ALPN http/1.1), `tls-noalpn`
    /// or `plain` (straight to a reverse listener), tv's root, case names): per case one
    /// connection carrying the case and then `GET /hidden-CASE?secret=1` (Connection: close) in
    /// one write; prints "CASE STATUS,STATUS… tv|server" (tv: the last answer is tv's own),
    /// reading until the close. `flood`: 300 pipelined GETs instead, printing how many answers.
    static let client = #"""
    import re, socket, ssl, sys
    proxy, target, mode, cafile = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    H = target.encode()
    def get(path, method=b"GET"):
        return method + b" " + path + b" HTTP/1.1\r\nHost: " + H + b"\r\n\r\n"
    cases = {
        "nul_first": b"\x00" + get(b"/first"),
        "ctl_method": get(b"/first", method=b"G\x01T"),
        "junk_line": b"hello\r\n" + get(b"/first"),
        "tab_sep": b"GET\t/first HTTP/1.1\r\nHost: " + H + b"\r\n\r\n",
        "valid_then_ctl": get(b"/first") + get(b"/second", method=b"G\x01T"),
        "valid_then_nul": get(b"/first") + get(b"/a\x00b"),
        "flood": b"".join(get(b"/pf-%d" % i) for i in range(300)),
    }
    def connect():
        s = socket.create_connection(("127.0.0.1", proxy), timeout=30)
        if mode.startswith("tls"):
            s.sendall(b"CONNECT " + H + b" HTTP/1.1\r\nHost: " + H + b"\r\n\r\n")
            head = b""
            while b"\r\n\r\n" not in head:
                head += s.recv(1)
            ctx = ssl.create_default_context(cafile=cafile)
            if mode == "tls":
                ctx.set_alpn_protocols(["http/1.1"])
            s = ctx.wrap_socket(s, server_hostname=target.split(":")[0])
        return s
    for name in sys.argv[5:]:
        s = connect()
        hidden = b"" if name == "flood" else b"GET /hidden-" + name.encode() + b"?secret=1 HTTP/1.1\r\nHost: " + H + b"\r\nConnection: close\r\n\r\n"
        s.sendall(cases[name] + hidden)
        out = b""
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                out += d
        except (OSError, ssl.SSLError):
            pass
        s.close()
        statuses = [code.decode() for code in re.findall(rb"(?:^|\n)HTTP/1\.1 (\d{3}) ", out)]
        if name == "flood":
            print(name, len(statuses), ",".join(sorted(set(statuses))))
        else:
            print(name, ",".join(statuses) or "-", "tv" if b"\ntv: " in out else "server")
    """#

    /// A lax plain HTTP/1 server (argv: port, log): each head it finds (split at an empty line,
    /// whatever its bytes) is logged by its first line and answered 200, as the trial's was.
    static let laxServer = #"""
    import socket, sys, threading
    port, log = int(sys.argv[1]), sys.argv[2]
    lock = threading.Lock()
    def serve(c):
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    d = c.recv(65536)
                    if not d:
                        return
                    buf += d
                head, buf = buf.split(b"\r\n\r\n", 1)
                line = head.split(b"\r\n")[0]
                with lock, open(log, "ab") as f:
                    f.write(line + b"\n")
                body = b"lax saw " + line + b"\n"
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        except OSError:
            pass
        finally:
            c.close()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(sys.argv[1])))
    s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
    """#

    static let reasons = [
        "nul_first": "The stream starts with byte 0x0, which cannot begin an HTTP method (RFC 9112 §3).",
        "ctl_method": "The request method contains byte 0x1, which is not allowed in a token (RFC 9110 §9.1).",
        "junk_line": "The request line is not a method, a target and a version separated by single spaces (RFC 9112 §3).",
        "tab_sep": "The request line is not a method, a target and a version separated by single spaces (RFC 9112 §3).",
    ]

    static func unread(_ name: String) -> String { "the client's request was not understood: " + reasons[name]! }

    @Test("inside inspected TLS whose ALPN chose http/1.1: a NUL first, a control byte in the method, a junk first line, a TAB after the method get tv's 400 and the close, nothing reaches nginx, the flow says why (relayed raw with no row and no error: the trial); a good request before a bad one in the same burst is served, then tv's 400, its row complete, the error line once (a bare close, the row incomplete, the error twice: the trial)")
    func knownHTTPInsideTLS() throws {
        let world = try RunWorld(nginxLocations: Self.locations)
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let names = ["nul_first", "ctl_method", "junk_line", "tab_sep", "valid_then_ctl", "valid_then_nul"]
        let r = try box.python(Self.client, [String(tv.port), "localhost:\(world.nginx.tlsPort)", "tls", world.tvRoot] + names)
        #expect(r.status == 0 && r.out == """
            nul_first 400 tv
            ctl_method 400 tv
            junk_line 400 tv
            tab_sep 400 tv
            valid_then_ctl 200,400 tv
            valid_then_nul 200,400 tv

            """, "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        #expect(EvasionRunTests.logged(world) == ["GET /first 200", "GET /first 200"], "\(EvasionRunTests.logged(world))")
        #expect(try EvasionRunTests.rows(box) == ["GET /first 200 complete", "GET /first 200 complete", "GET /a%00b 400 answered"])
        let flows = try box.closedFlows(names.count)
        #expect(flows.map { $0.string("error") ?? "" } == ["nul_first", "ctl_method", "junk_line", "tab_sep", "ctl_method"].map(Self.unread)
                + ["the client's request was not understood: The request target contains byte 0x0, which is not visible ASCII (RFC 9112 §3.2)."],
                "\(flows)")
        #expect(flows.allSatisfy { $0.string("status") == "inspected" })
        // `tv flow` says the error once.
        let shown = try box.tv("flow", String(flows[4].int("id") ?? 0))
        #expect(shown.out.components(separatedBy: Self.reasons["ctl_method"]!).count == 2, "\(shown.out)")
    }

    @Test("inside inspected TLS without ALPN (tv cannot know it is HTTP): the same bytes go on as another protocol, nginx answers them itself, and the flow says it was not read as HTTP and why, from its first bytes (it said nothing: the trial)")
    func unknownInsideTLS() throws {
        let world = try RunWorld(nginxLocations: Self.locations)
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let r = try box.python(Self.client, [String(tv.port), "localhost:\(world.nginx.tlsPort)", "tls-noalpn", world.tvRoot, "nul_first"])
        #expect(r.status == 0 && r.out == "nul_first 400 server\n", "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        #expect(try EvasionRunTests.rows(box) == [])
        let flows = try box.closedFlows(1)
        #expect(flows.map { $0.string("error") ?? "" } == [
            "tv did not read this connection as HTTP, its bytes going on as they came: the client's first bytes, the bytes 00 47 45 54 20 2f 66 69 72 73 74 20 48 54 54 50 …, begin neither an HTTP/1 request line nor HTTP/2's preface",
        ], "\(flows)")
    }

    @Test("reverse mode to a lax http:// server: bytes that begin no request get tv's 400 and reach it not, nor does the request after them (it answered both, no rows: the trial); a good request before a bad one is served, then tv's 400")
    func reverseModeToLaxServer() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let log = box.work + "/lax.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let server = try PythonServer(Self.laxServer, arguments: [log])
        let tv = try world.run("--mode", "reverse:http://127.0.0.1:\(server.port)")
        let names = ["nul_first", "junk_line", "valid_then_ctl"]
        let r = try box.python(Self.client, [String(tv.port), "127.0.0.1:\(server.port)", "plain", world.tvRoot] + names)
        #expect(r.status == 0 && r.out == "nul_first 400 tv\njunk_line 400 tv\nvalid_then_ctl 200,400 tv\n", "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        server.stop()
        #expect(box.text(log) == "GET /first HTTP/1.1\n", "\(box.text(log))")
        #expect(try EvasionRunTests.rows(box) == ["GET /first 200 complete"])
        let errors = try box.closedFlows(names.count).map { $0.string("error") ?? "" }
        #expect(errors == ["nul_first", "junk_line", "ctl_method"].map(Self.unread), "\(errors)")
    }

    @Test("300 GETs pipelined in one burst inside inspected TLS: the 256 tv follows are served and answered, then the close, and no row says incomplete (0 answers and 256 incomplete rows for requests never sent: the trial)")
    func pipelineFlood() throws {
        let world = try RunWorld(nginxLocations: Self.locations)
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let r = try box.python(Self.client, [String(tv.port), "localhost:\(world.nginx.tlsPort)", "tls", world.tvRoot, "flood"])
        #expect(r.status == 0 && r.out == "flood 256 200\n", "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        #expect(EvasionRunTests.logged(world) == (0 ..< 256).map { "GET /pf-\($0) 200" })
        let rows = try EvasionRunTests.rows(box)
        #expect(rows == (0 ..< 256).map { "GET /pf-\($0) 200 complete" }, "\(rows.count) rows, \(rows.filter { !$0.hasSuffix(" complete") })")
        let flows = try box.closedFlows(1)
        #expect(flows.map { $0.string("error") ?? "" } == [
            "more than 256 requests waited for their responses on this connection, more than tv follows at once: tv passed on the first 256 and their responses, then closed the connection (a client sends the rest again on a new one)",
        ])
    }
}
