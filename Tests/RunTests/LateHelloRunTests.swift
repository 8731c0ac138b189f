import Foundation
import Testing

/// Issue 14 §5 through the real `tv` binary: a ClientHello that comes late after the tunnel's
/// 200, and TLS that begins after plain bytes (STARTTLS), between Python clients and servers on
/// 127.0.0.1, read back with `tv flows --json`.
@Suite("tv run: a late ClientHello, and STARTTLS (issue 14 §5)", .serialized)
struct LateHelloRunTests {
    /// A CONNECT client (argv: proxy port, target host:port, CA file, server name, seconds to wait
    /// after the 200) that then does TLS over the tunnel and fetches /index.html: prints the
    /// status line, the TLS version and the body.
    static let lateClient = #"""
    import socket, ssl, sys, time
    port, target, cafile, name, delay = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        d = s.recv(1)
        if not d:
            sys.exit("tunnel closed: %r" % head)
        head += d
    if not head.startswith(b"HTTP/1.1 200"):
        sys.exit("tunnel refused: %r" % head)
    time.sleep(delay)
    t = ssl.create_default_context(cafile=cafile).wrap_socket(s, server_hostname=name)
    t.sendall(f"GET /index.html HTTP/1.1\r\nHost: {name}\r\nConnection: close\r\n\r\n".encode())
    got = b""
    while True:
        d = t.recv(65536)
        if not d:
            break
        got += d
    print(got.split(b"\r\n")[0].decode(), "|", t.version(), "|", got.split(b"\r\n\r\n", 1)[-1].decode().strip())
    """#

    /// Python: `line(sock)`, one line read a byte at a time (nothing after it is consumed),
    /// as bytes, newline included ("" at the end of the stream).
    static let readLine = "def line(c):\n    data = b\"\"\n    while not data.endswith(b\"\\n\"):\n        d = c.recv(1)\n        if not d:\n            break\n        data += d\n    return data\n"

    /// A server that speaks first (argv[1]: port): "220 upgrade.test ready"; on "STARTTLS" it
    /// answers "220 go ahead", turns TLS server (the test PKI's certificate, ALPN x-upgrade) and
    /// answers one line with "250 secret LINE"; on anything else "221 bye".
    static func upgradeServer(cert: String, key: String) -> String {
        #"""
        import socket, ssl, sys, threading
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain("\#(cert)", "\#(key)")
        ctx.set_alpn_protocols(["x-upgrade"])
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", int(sys.argv[1])))
        s.listen(16)
        \#(readLine)
        def serve(c):
            with c:
                c.sendall(b"220 upgrade.test ready\r\n")
                if line(c) != b"STARTTLS\r\n":
                    c.sendall(b"221 bye\r\n")
                    return
                c.sendall(b"220 go ahead\r\n")
                t = ctx.wrap_socket(c, server_side=True)
                t.sendall(b"250 secret " + line(t))
                t.close()
        while True:
            c, _ = s.accept()
            threading.Thread(target=serve, args=(c,), daemon=True).start()
        """#
    }

    /// A CONNECT client of `upgradeServer` (argv: proxy port, target, mode `starttls` or
    /// `plain`, CA file): prints the lines it read and, after STARTTLS, the TLS version and ALPN.
    static let upgradeClient = #"""
    import socket, ssl, sys
    port, target, mode, cafile = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    \#(readLine)
    def text(c):
        return line(c).decode().strip()
    head = ""
    while True:
        l = text(s)
        if l == "":
            break
        head = head or l
    banner = text(s)
    if mode == "plain":
        s.sendall(b"QUIT\r\n")
        print(head, "|", banner, "|", text(s))
    else:
        s.sendall(b"STARTTLS\r\n")
        go = text(s)
        ctx = ssl.create_default_context(cafile=cafile)
        ctx.set_alpn_protocols(["x-upgrade"])
        t = ctx.wrap_socket(s, server_hostname="a.test")
        t.sendall(b"hello\r\n")
        print(head, "|", banner, "|", go, "|", t.version(), "|", t.selected_alpn_protocol(), "|", text(t))
    """#

    @Test("a ClientHello 0.6 s after the 200: inspected with tv's root (--inspect), an encrypted pass-through with its version without")
    func lateClientHello() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let target = "localhost:\(world.nginx.tlsPort)"
        let inspecting = try world.run("--inspect")
        let inspected = try box.python(Self.lateClient, [String(inspecting.port), target, world.tvRoot, "localhost", "0.6"], timeout: 30)
        #expect(inspected.status == 0, "\(inspected)")
        #expect(inspected.out == "HTTP/1.1 200 OK | TLSv1.3 | hello from nginx\n", "\(inspected)")
        var rows = try box.closedFlows(1)
        try #require(rows.count == 1)
        #expect(rows[0].string("status") == "inspected")
        #expect(rows[0].string("host") == "localhost")
        #expect(rows[0].string("hostOrigin") == "sni")
        #expect(rows[0].string("serverTLSVersion") == "TLSv1.3")
        try inspecting.stop()

        let passing = try world.run()
        let passed = try box.python(Self.lateClient, [String(passing.port), target, world.pki.upstreamCA, "localhost", "0.6"], timeout: 30)
        #expect(passed.status == 0, "\(passed)")
        #expect(passed.out == "HTTP/1.1 200 OK | TLSv1.3 | hello from nginx\n", "\(passed)")
        rows = try box.closedFlows(2)
        try #require(rows.count == 2)
        #expect(rows[1].string("status") == "encrypted")
        #expect(rows[1].string("host") == "localhost")
        #expect(rows[1].string("serverTLSVersion") == "TLSv1.3")
        #expect(rows[1].string("chosenVersionSource") == "server_hello")
        try passing.stop()
    }

    @Test("STARTTLS after a banner: an encrypted pass-through with its TLS version, SNI and offers; the same server without STARTTLS stays not encrypted")
    func startTLS() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let server = try PythonServer(Self.upgradeServer(cert: world.pki.serverCert, key: world.pki.serverKey))
        defer { server.stop() }
        let tv = try world.run("--inspect")
        let target = "127.0.0.1:\(server.port)"
        let upgraded = try box.python(Self.upgradeClient, [String(tv.port), target, "starttls", world.pki.upstreamCA], timeout: 30)
        #expect(upgraded.status == 0, "\(upgraded)")
        #expect(upgraded.out == "HTTP/1.1 200 Connection established | 220 upgrade.test ready | 220 go ahead | TLSv1.3 | x-upgrade | 250 secret hello\n",
                "\(upgraded)")
        let plain = try box.python(Self.upgradeClient, [String(tv.port), target, "plain", world.pki.upstreamCA], timeout: 30)
        #expect(plain.status == 0, "\(plain)")
        #expect(plain.out == "HTTP/1.1 200 Connection established | 220 upgrade.test ready | 221 bye\n", "\(plain)")
        let rows = try box.closedFlows(2)
        try #require(rows.count == 2)
        #expect(rows[0].string("status") == "encrypted")
        #expect(rows[0].string("host") == "a.test")
        #expect(rows[0].string("hostOrigin") == "sni")
        #expect(rows[0].strings("clientALPN") == ["x-upgrade"])
        #expect(rows[0].string("serverTLSVersion") == "TLSv1.3")
        #expect(rows[0].string("chosenVersionSource") == "server_hello")
        #expect(rows[1].string("status") == "not_encrypted")
        #expect(rows[1]["host"] is NSNull)
        #expect(rows[1]["serverTLSVersion"] is NSNull)
        #expect(rows[1].int("bytesUp") == "QUIT\r\n".utf8.count)
        #expect(rows[1].int("bytesDown") == "220 upgrade.test ready\r\n221 bye\r\n".utf8.count)
        try tv.stop()
    }
}
