import Foundation
import Testing

/// A server that resets its connection once its whole response is acknowledged, through the real
/// `tv` binary to a client that reads slower than the server sends: the client still gets every
/// byte the server sent, as it does directly (Linux keeps what a socket acknowledged readable
/// after a reset). tv used to pass the reset on at once, discarding what it still held for the
/// client (an 8 MiB response read at 4 MB/s: 6.8 MB arrived through a CONNECT tunnel).
@Suite("tv run: a server's reset after its response (the relay delivers first)", .serialized)
struct ServerResetRunTests {
    /// Answers each request with an HTTP/1.1 200 of `size` bytes, waits until the peer has
    /// acknowledged all of it (TIOCOUTQ 0), then closes with SO_LINGER 0: a reset.
    static func server(size: Int) -> String {
        """
        import fcntl, socket, struct, sys, termios, time
        l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        l.bind(('127.0.0.1', int(sys.argv[1]))); l.listen(8)
        def answer(c):
            data = b''
            while b'\\r\\n\\r\\n' not in data:
                chunk = c.recv(65536)
                if not chunk: return  # the readiness probe: a connect and a close
                data += chunk
            c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Length: \(size)\\r\\n\\r\\n' + b'x' * \(size))
            while struct.unpack('i', fcntl.ioctl(c, termios.TIOCOUTQ, b'\\0\\0\\0\\0'))[0] > 0: time.sleep(0.005)
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
        while True:
            c, _ = l.accept()
            try: answer(c)
            except OSError as e: print(e, flush=True)
            c.close()
        """
    }

    /// A slow reader: a 64 KiB receive buffer, 64 KiB read every 10 ms (~6 MB/s), so tv's send
    /// queue toward it stays full. Through a proxy (argv 3) it sends CONNECT first, or with argv 4
    /// `plain` an absolute-form GET to the proxy (tv's plain HTTP proxy). Prints the
    /// body bytes it got and how the connection ended.
    static let reader = """
    import socket, sys, time
    host, port, size = '127.0.0.1', int(sys.argv[1]), int(sys.argv[2])
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    target = '%s:%d' % (host, port)
    s.connect((host, int(sys.argv[3]) if len(sys.argv) > 3 else port))
    if len(sys.argv) == 4:  # a proxy without argv 4 'plain': CONNECT first
        s.sendall(('CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % (target, target)).encode())
        got = b''
        while b'\\r\\n\\r\\n' not in got: got += s.recv(1)
    s.sendall(('GET %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % ('http://%s/big' % target if len(sys.argv) > 4 else '/big', target)).encode())
    data, ending = b'', 'eof'
    while True:
        try: chunk = s.recv(65536)
        except ConnectionResetError: ending = 'reset'; break
        if not chunk: break
        data += chunk
        time.sleep(0.01)
    print(len(data.split(b'\\r\\n\\r\\n', 1)[1]) if b'\\r\\n\\r\\n' in data else 0, ending)
    """

    /// 8 MiB read slowly through `tv run` (a CONNECT tunnel, or the plain proxy's absolute-form
    /// GET), first directly when `direct`: every byte arrives, then the reset; the one flow says
    /// the server reset it and counts the head and body it read.
    func slowReadOfAResetResponse(plain: Bool, direct: Bool) throws {
        let size = 8 << 20
        let world = try RunWorld(createCA: false)
        let server = try PythonServer(Self.server(size: size))
        defer { server.stop() }
        if direct {
            let r = try world.sandbox.python(Self.reader, [String(server.port), String(size)])
            #expect(r.out == "\(size) reset\n", "direct: \(r)")
        }
        let tv = try world.run()
        let through = try world.sandbox.python(Self.reader, [String(server.port), String(size), String(tv.port)] + (plain ? ["plain"] : []))
        #expect(through.out == "\(size) reset\n", "through tv: \(through)")
        let rows = try world.sandbox.closedFlows(1)
        #expect(rows.first?.string("error") == "the server reset the connection", "\(rows)")
        // The server's head and body, as `server(size:)` writes them.
        #expect(rows.first?.int("bytesDown") == size + "HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n".utf8.count, "\(rows)")
        try tv.stop()
    }

    @Test("through a CONNECT tunnel (pass-through, spliced), a client reading 8 MiB slowly gets all of it, then the reset, as it does directly; the flow says the server reset")
    func tunnelDeliversBeforeTheReset() throws {
        try slowReadOfAResetResponse(plain: false, direct: true)
    }

    @Test("through the plain HTTP proxy (an absolute-form GET), the same: all 8 MiB, then the reset; the request's flow says the server reset")
    func plainProxyDeliversBeforeTheReset() throws {
        try slowReadOfAResetResponse(plain: true, direct: false)
    }

    @Test("inspected: an HTTP/1 server answers an HTTP/2 client's preface with an error page and closes (a reset: the client's frames were unread); the client, which cannot read it, closes too: the flow ends at once with the page's bytes, not after the 10-minute idle timeout (a trial's stayed open, holding both sockets)")
    func deliveryToAClientThatResetEndsAtOnce() throws {
        let server = try PythonServer(#"""
            import ssl, sys
            from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
            class H(BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def log_message(self, *a):
                    pass
            srv = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(sys.argv[2], sys.argv[3])
            srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
            srv.serve_forever()
            """#, arguments: [TestPKI.shared.serverCert, TestPKI.shared.serverKey])
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let r = try box.curl(["-sS", "--http2-prior-knowledge", "-x", tv.proxyURL, "--cacert", world.tvRoot, "https://localhost:\(server.port)/h2"])
        #expect(r.status != 0, "curl cannot read an HTTP/1 error page as HTTP/2: \(r)")
        let flows = try box.closedFlows(1, timeout: 10)
        #expect(flows.first.map { ($0.int("bytesDown") ?? 0) > 0 } == true, "the page's bytes were relayed: \(flows)")
        try tv.stop()
    }
}
