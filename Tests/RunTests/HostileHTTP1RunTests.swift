import Foundation
import Testing

/// HTTP/1 edges from a hostile peer through `tv run`, on the inspected path (HTTPS through
/// CONNECT, HTTP/1.1 inside TLS) and the plain proxy path alike: a head past tv's one limit, and
/// a 101 nobody asked for. Python raw sockets on both ends; what the server received is in its
/// log (a hostile-input trial: a 1.29 MB request head went through the inspected path while the
/// plain path answered 431; a fake 101 ended tv's reading and smuggled a response past it).
@Suite("tv run: hostile HTTP/1 heads and 101s", .serialized)
struct HostileHTTP1RunTests {
    /// argv: port, `tls` or `plain`, certificate, key, log file. Each connection: reads request
    /// heads and answers each by its path; at the close, appends the request lines it read and
    /// the bytes it received ("<n> bytes: GET /a, GET /b") to the log.
    static let server = #"""
    import base64, hashlib, socket, ssl, sys, threading
    port, mode, cert, key, log = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
    ctx = None
    if mode == "tls":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        ctx.set_alpn_protocols(["http/1.1"])
    big = b"".join(b"X-Big-%d: %s\r\n" % (n, b"v" * 1000) for n in range(80))
    def answer(head):
        line = head.split(b"\r\n", 1)[0]
        path = line.split(b" ")[1] if line.count(b" ") >= 2 else b"?"
        fields = {l.split(b":", 1)[0].strip().lower(): l.split(b":", 1)[1].strip() for l in head.split(b"\r\n")[1:] if b":" in l}
        if path == b"/fake101":
            return b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nsmuggled", True
        if path == b"/ws":
            accept = base64.b64encode(hashlib.sha1(fields.get(b"sec-websocket-key", b"") + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
            if fields.get(b"x-wrong-accept"):
                accept = b"AAAAAAAAAAAAAAAAAAAAAAAAAAA="
            return b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n\x81\x02hi", True
        if path == b"/bighead":
            return b"HTTP/1.1 200 OK\r\n" + big + b"Content-Length: 2\r\n\r\nok", False
        return b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nok\r\n", False
    def serve(c):
        got, lines, buf = 0, [], b""
        try:
            if ctx:
                c = ctx.wrap_socket(c, server_side=True)
            switched = False
            while True:
                d = c.recv(65536)
                if not d:
                    break
                got += len(d)
                if switched:
                    continue
                buf += d
                while b"\r\n\r\n" in buf:
                    head, buf = buf.split(b"\r\n\r\n", 1)
                    lines.append(head.split(b"\r\n", 1)[0].decode(errors="replace")[:40])
                    out, switched = answer(head)
                    c.sendall(out)
                    if switched:
                        break
                if switched:
                    break
        except (OSError, ssl.SSLError):
            pass
        finally:
            with open(log, "a") as f:
                f.write("%d bytes: %s\n" % (got, ", ".join(lines)))
            c.close()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
    """#

    /// argv: proxy port, server port, `tls` or `plain`, CA file, the request (Python bytes
    /// literal). `tls`: through a CONNECT tunnel, TLS with ALPN http/1.1 to localhost; `plain`:
    /// to the explicit proxy as it is (an absolute-form request). Sends the request from a
    /// thread while reading everything that comes back until the close (or a reset), and prints
    /// each status line, then what came after the last head (bytes outside UTF-8 as `\xNN`).
    static let client = #"""
    import socket, ssl, sys, threading
    proxy, port, mode, ca, request = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], eval(sys.argv[5])
    s = socket.create_connection(("127.0.0.1", proxy), timeout=10)
    if mode == "tls":
        s.sendall(f"CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(4096)
        ctx = ssl.create_default_context(cafile=ca)
        ctx.set_alpn_protocols(["http/1.1"])
        s = ctx.wrap_socket(s, server_hostname="localhost")
    def send():
        try:
            s.sendall(request)
        except (OSError, ssl.SSLError):
            pass
    threading.Thread(target=send, daemon=True).start()
    got = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            got += d
    except (OSError, ssl.SSLError):
        pass
    for line in got.split(b"\r\n"):
        if line.startswith(b"HTTP/1.1 "):
            print(line.decode())
    print("after: " + got.rsplit(b"\r\n\r\n", 1)[-1][:300].decode(errors="backslashreplace").rstrip("\n"))
    """#

    /// A 1.29 MB request head, as the trial's.
    static let bigRequest = "b'GET /big HTTP/1.1\\r\\nHost: localhost\\r\\n' + b''.join(b'X-Big-%d: %s\\r\\n' % (n, b'v' * 1000) for n in range(1300)) + b'\\r\\n'"

    struct Peers {
        let world: RunWorld
        let server: PythonServer
        let log: String
        let tv: TVSession

        init(_ mode: String) throws {
            world = try RunWorld()
            log = world.sandbox.work + "/server.log"
            server = try PythonServer(HostileHTTP1RunTests.server, arguments: [mode, world.pki.serverCert, world.pki.serverKey, log])
            tv = try world.run("--inspect")
        }

        func request(_ mode: String, _ request: String) throws -> String {
            let r = try world.sandbox.python(HostileHTTP1RunTests.client, [String(tv.port), String(server.port), mode, world.tvRoot, request], timeout: 30)
            #expect(r.status == 0, "\(r)")
            return r.out
        }

        /// The server's log lines, once every connection closed and at least `lines` are written
        /// (the server writes its line after its connection closes: read at once, a loaded run's
        /// log was still empty), waiting at most 10 s for them.
        func received(atLeast lines: Int = 0) throws -> [String] {
            _ = try world.sandbox.waitForNoOpenConnections()
            var read: [String] = []
            for _ in 0..<100 {
                read = world.sandbox.text(log).split(separator: "\n").map(String.init)
                if read.count >= lines { break }
                usleep(100_000)
            }
            return read
        }

        func rows() throws -> [String] {
            (try world.sandbox.json("requests")["requests"] as? [JSON] ?? []).reversed()
                .map { "\($0.string("method") ?? "") \($0.string("path") ?? "") \($0.int("status") ?? 0) \($0.string("state") ?? "")" }
        }

        func errors() throws -> [String] {
            (try world.sandbox.json("flows")["flows"] as? [JSON] ?? []).reversed().compactMap { $0.string("error") }
        }
    }

    @Test("a 1.29 MB request head gets tv's 431 on the inspected path as on the plain path, and none of it reaches the server; the row is answered 431 and the flow says the head exceeds 65536 bytes", arguments: ["tls", "plain"])
    func requestHeadPastTheLimit(_ mode: String) throws {
        let peers = try Peers(mode)
        let target = mode == "tls" ? "/big" : "http://127.0.0.1:\(peers.server.port)/big"
        let out = try peers.request(mode, Self.bigRequest.replacingOccurrences(of: "GET /big", with: "GET \(target)"))
        // The same status and reason; the explicit proxy's first head is its proxy request, said so.
        let said = mode == "tls" ? "tv: the client's request was not understood: " : "tv is an HTTP proxy and could not read this request: "
        #expect(out == "HTTP/1.1 431 Request Header Fields Too Large\nafter: " + said + "The request head exceeds 65536 bytes without ending in an empty line.\n", "\(out)")
        // The inspected path's upstream leg was opened before the request (TLS): it got nothing.
        #expect(try peers.received(atLeast: mode == "tls" ? 1 : 0) == (mode == "tls" ? ["0 bytes: "] : []))
        try peers.tv.stop()
        if mode == "tls" { #expect(try peers.rows() == ["GET /big 431 answered"]) }
        let errors = try peers.errors()
        #expect(errors.count == 1 && errors.allSatisfy { $0.hasSuffix(": The request head exceeds 65536 bytes without ending in an empty line.") }, "\(errors)")
        if mode == "tls" { #expect(errors == ["the client's request was not understood: The request head exceeds 65536 bytes without ending in an empty line."]) }
    }

    @Test("a response head past 64 KiB from the server gets the client tv's 502 on the inspected path as on the plain path; the row is answered 502 and the flow says the server's head was too large", arguments: ["tls", "plain"])
    func responseHeadPastTheLimit(_ mode: String) throws {
        let peers = try Peers(mode)
        let target = mode == "tls" ? "/bighead" : "http://127.0.0.1:\(peers.server.port)/bighead"
        let out = try peers.request(mode, "b'GET \(target) HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n'")
        #expect(out == "HTTP/1.1 502 Bad Gateway\nafter: tv: the server's response was not understood: The response head exceeds 65536 bytes without ending in an empty line.\n", "\(out)")
        try peers.tv.stop()
        #expect(try peers.rows() == ["GET /bighead 502 answered"])
        #expect(try peers.errors() == ["the server's response was not understood: The response head exceeds 65536 bytes without ending in an empty line."])
    }

    @Test("a 101 to a request that asked for no upgrade, or a WebSocket 101 with a wrong accept, gets the client tv's 502 and nothing after it (the smuggled response never arrives); a right accept switches, its frame reaching the client", arguments: ["tls", "plain"])
    func fakeSwitchingProtocols(_ mode: String) throws {
        let peers = try Peers(mode)
        let base = mode == "tls" ? "" : "http://127.0.0.1:\(peers.server.port)"
        let ws = "Upgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\nSec-WebSocket-Version: 13\\r\\n"
        let fake = try peers.request(mode, "b'GET \(base)/fake101 HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n'")
        #expect(fake == "HTTP/1.1 502 Bad Gateway\nafter: tv: the server's 101 Switching Protocols was refused, since the request asked for no upgrade, and RFC 9110 §15.2.2 forbids a server to switch to a protocol the client did not ask for; tv answered 502 in its place and closed the connection\n", "\(fake)")
        let wrong = try peers.request(mode, "b'GET \(base)/ws HTTP/1.1\\r\\nHost: localhost\\r\\n\(ws)X-Wrong-Accept: 1\\r\\n\\r\\n'")
        #expect(wrong.hasPrefix("HTTP/1.1 502 Bad Gateway\n"), "\(wrong)")
        let right = try peers.request(mode, "b'GET \(base)/ws HTTP/1.1\\r\\nHost: localhost\\r\\n\(ws)\\r\\n'")
        #expect(right == "HTTP/1.1 101 Switching Protocols\nafter: \\x81\u{02}hi\n", "\(right)")
        try peers.tv.stop()
        #expect(try peers.rows() == ["GET /fake101 502 answered", "GET /ws 502 answered", "GET /ws 101 complete"])
        let errors = try peers.errors()
        #expect(errors.count == 2 && errors.allSatisfy { $0.hasPrefix("the server's 101 Switching Protocols was refused, since ") }, "\(errors)")
        #expect(errors.last?.contains("carries Sec-WebSocket-Accept 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=' where the client's key calls for 's3pPLMBiTxaQ9kYGzzhZRbK+xOo='") == true, "\(errors)")
    }

    @Test("the plain proxy path: a broken request pipelined behind a good one waits; the good one's response reaches the client whole, then tv's 400 and the close (tv reset the connection and the response never came: the trial); the server saw only the good one")
    func badRequestBehindAGoodOne() throws {
        let peers = try Peers("plain")
        let base = "http://127.0.0.1:\(peers.server.port)"
        let out = try peers.request("plain", "b'GET \(base)/good HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\nG\\x01T \(base)/bad HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n'")
        #expect(out.hasPrefix("HTTP/1.1 200 OK\nHTTP/1.1 400 Bad Request\nafter: tv: the client's request was not understood: "), "\(out)")
        let received = try peers.received(atLeast: 1)
        #expect(received.count == 1 && received[0].hasSuffix(" bytes: GET /good HTTP/1.1"), "\(received)")
        try peers.tv.stop()
        #expect(try peers.rows() == ["GET /good 200 complete"])
    }
}
