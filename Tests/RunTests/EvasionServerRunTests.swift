import Foundation
import Testing

/// The hostile-input trial's server side and slow heads, through the real `tv run` with
/// inspection: a Python HTTPS server (the test PKI's certificate) answering by path, and a client
/// trickling a request head inside inspected TLS.
@Suite("tv run: hostile servers and slow heads inside inspected TLS (hostile-input trial)", .serialized)
struct EvasionServerRunTests {
    /// A TLS HTTP/1 server (argv: port, log file, certificate, key) reading pipelined requests in
    /// order and answering each by its path (closing after one that asks to); it appends "PATH"
    /// to the log for each request read.
    static let server = #"""
    import socket, ssl, sys, threading
    port, log, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["http/1.1"])
    lock = threading.Lock()
    CH = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    answers = {
        "/cext2k": CH + b"2;x=" + b"e" * 2000 + b"\r\nok\r\n0\r\n\r\n",
        "/zeros16": CH + b"0000000000000002\r\nok\r\n0\r\n\r\n",
        "/trailers": CH + b"2\r\nok\r\n0\r\n" + b"".join(b"X-T%d: v\r\n" % i for i in range(50000)) + b"\r\n",
        "/chunkovf2": CH + b"10000000000000002\r\nab\r\n0\r\n\r\n",
        "/obsfold": b"HTTP/1.1 200 OK\r\nX-Fold: a\r\n  folded\r\nContent-Length: 2\r\n\r\nok",
        "/larger": b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"
                   + b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\nX-Smuggled: yes\r\n\r\nsmuggled",
    }
    def serve(c):
        try:
            t = ctx.wrap_socket(c, server_side=True)
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    d = t.recv(65536)
                    if not d:
                        return
                    buf += d
                head, buf = buf.split(b"\r\n\r\n", 1)
                path = head.split(b" ")[1].decode()
                with lock, open(log, "a") as f:
                    f.write(path + "\n")
                t.sendall(answers.get(path, b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nafter\n"))
                if b"connection: close" in head.lower():
                    t.close()
                    return
        except (OSError, ssl.SSLError):
            pass
        finally:
            c.close()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
    """#

    /// A client through tv's CONNECT tunnel and TLS (argv: tv's port, target, tv's root, then
    /// PATH or PATH+NEXT items): per item one connection; `PATH+NEXT` sends both pipelined
    /// (NEXT with Connection: close); `PATH/then/NEXT` sends NEXT only once PATH's response
    /// came whole. Prints "ITEM STATUS,… smuggled=yes|no" per item, reading until the close.
    static let client = #"""
    import re, socket, ssl, sys
    proxy, target, cafile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    def get(path, close=False):
        return ("GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (path, target, "Connection: close\r\n" if close else "")).encode()
    def rest(s, out=b""):
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                out += d
        except (OSError, ssl.SSLError):
            pass
        return out
    for item in sys.argv[4:]:
        s = socket.create_connection(("127.0.0.1", proxy), timeout=20)
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(1)
        ctx = ssl.create_default_context(cafile=cafile)
        ctx.set_alpn_protocols(["http/1.1"])
        s = ctx.wrap_socket(s, server_hostname="localhost")
        if "/then" in item:
            first, second = item.split("/then")
            s.sendall(get(first))
            out = b""
            while b"0123456789" not in out:
                d = s.recv(65536)
                if not d:
                    break
                out += d
            try:
                s.sendall(get(second, close=True))
            except (OSError, ssl.SSLError):
                pass
            out = rest(s, out)
        elif "+" in item:
            first, second = item.split("+")
            s.sendall(get(first) + get(second, close=True))
            out = rest(s)
        else:
            s.sendall(get(item, close=True))
            out = rest(s)
        s.close()
        statuses = [code.decode() for code in re.findall(rb"(?:^|\n)HTTP/1\.1 (\d{3}) ", out)]
        print(item, ",".join(statuses) or "-", "smuggled=" + ("yes" if b"X-Smuggled" in out else "no"))
    """#

    @Test("valid chunked responses (a 2 KB extension, a 16-digit size, 50,000 trailer lines) keep the next response's row; a 2^64+2 size and an obs-fold get tv's 502; a response nobody asked for never reaches the client, whose connection then closes (the trial's smuggled response was its next request's answer)")
    func hostileServer() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let log = box.work + "/served.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let server = try PythonServer(Self.server, arguments: [log, world.pki.serverCert, world.pki.serverKey])
        let tv = try world.run("--inspect")
        let items = ["/cext2k+/after-cext2k", "/zeros16+/after-zeros16", "/trailers+/after-trailers", "/chunkovf2", "/obsfold", "/larger/then/ok"]
        let r = try box.python(Self.client, [String(tv.port), "localhost:\(server.port)", world.tvRoot] + items)
        #expect(r.status == 0 && r.out == """
            /cext2k+/after-cext2k 200,200 smuggled=no
            /zeros16+/after-zeros16 200,200 smuggled=no
            /trailers+/after-trailers 200,200 smuggled=no
            /chunkovf2 502 smuggled=no
            /obsfold 502 smuggled=no
            /larger/then/ok 200 smuggled=no

            """, "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        server.stop()
        let rows = try EvasionRunTests.rows(box)
        #expect(rows == ["GET /cext2k 200 complete", "GET /after-cext2k 200 complete", "GET /zeros16 200 complete", "GET /after-zeros16 200 complete",
                         "GET /trailers 200 complete", "GET /after-trailers 200 complete", "GET /chunkovf2 502 answered", "GET /obsfold 502 answered",
                         "GET /larger 200 complete"], "\(rows)")
        // Every request the server read has a row; /ok never reached it (the connection closed).
        let served = box.text(log).split(separator: "\n").map(String.init)
        #expect(!served.contains("/ok"), "\(served)")
        for path in served { #expect(rows.contains { $0.hasPrefix("GET \(path) ") }, "\(path) was served with no row: \(rows)") }
        let errors = try box.closedFlows(items.count).map { $0.string("error") ?? "" }
        #expect(errors == [
            "", "", "",
            "the server's chunked body is past a limit of tv's: A chunk size has more than 15 significant hexadecimal digits (2^60 bytes or more), more than tv counts; a 64-bit reader would wrap it around (RFC 9112 §7.1).",
            "the server's response was not understood: A header line of the response starts with whitespace (obs-fold), which RFC 9112 §5.2 has a proxy refuse with 502.",
            "the server sent 63 bytes no request asked for (a response the client would have taken for its next request's); tv dropped them and closed the connection to the server",
        ], "\(errors)")
    }

    /// A slow client inside inspected TLS (argv: tv's port, nginx's port, tv's root, `first` or
    /// `second`): `second` is served one request first; then a head trickles a header line every
    /// 0.2 s until tv answers or closes (at most 60 s). Prints the first line it got, or "closed".
    static let slowClient = #"""
    import socket, ssl, sys, time
    proxy, port, cafile, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    s = socket.create_connection(("127.0.0.1", proxy), timeout=20)
    s.sendall(("CONNECT localhost:%s HTTP/1.1\r\nHost: localhost\r\n\r\n" % port).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.set_alpn_protocols(["http/1.1"])
    s = ctx.wrap_socket(s, server_hostname="localhost")
    if mode == "second":
        s.sendall(b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n")
        got = b""
        while b"hello from nginx" not in got:
            got += s.recv(4096)
    s.sendall(b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n")
    s.settimeout(0.2)
    got = b""
    deadline = time.time() + 60
    while time.time() < deadline and b"\r\n" not in got:
        try:
            s.sendall(b"X-a: b\r\n")
        except (OSError, ssl.SSLError):
            break
        try:
            d = s.recv(4096)
            if not d:
                break
            got += d
        except socket.timeout:
            pass
        except (OSError, ssl.SSLError):
            break
    print(got.split(b"\r\n")[0].decode() if got else "closed")
    """#

    @Test("--head-timeout applies to each request head inside inspected TLS: a head trickling one line at a time gets tv's 408 and the close, first on the connection or after a request served, counted, the flow saying why (it trickled on past 20 s: the trial)")
    func slowHeadInsideTLS() throws {
        let world = try RunWorld(nginxLocations: "access_log logs/access.log;")
        let box = world.sandbox
        let tv = try world.run("--inspect", "--head-timeout", "1")
        for mode in ["first", "second"] {
            let r = try box.python(Self.slowClient, [String(tv.port), String(world.nginx.tlsPort), world.tvRoot, mode])
            #expect(r.status == 0 && r.out == "HTTP/1.1 408 Request Timeout\n", "\(mode): \(r)")
        }
        _ = try box.waitForNoOpenConnections()
        #expect(try box.status()?.int("headTimeouts") == 2)
        try tv.stop()
        let flows = try box.closedFlows(2)
        #expect(flows.map { $0.string("error") ?? "" } == Array(repeating: "the client sent no complete request head within 1 s (tv closed the connection)", count: 2), "\(flows)")
        // The one request served is the only one nginx served (it logs the two cut heads as
        // 400s) and has its row.
        #expect(EvasionRunTests.served(world) == ["GET /index.html"], "\(EvasionRunTests.logged(world))")
        #expect(try EvasionRunTests.rows(box) == ["GET /index.html 200 complete"])
    }
}
