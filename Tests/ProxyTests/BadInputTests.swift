import Foundation
import Proxy
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Integration: bad input", .serialized)
struct BadInputTests {
    @Test("1,000 bad connections in a row (garbage, truncated ClientHellos, vanishing clients, refused upstreams), then a good request; nothing leaks")
    func thousandBadConnections() throws {
        let nginx = try TestNginx()
        defer { nginx.stop() }
        let pki = TestPKI.shared
        let harness = try Harness { $0.handshakeTimeout = 5 }
        let fdsBefore = openDescriptors()
        let script = """
        import os, socket, ssl, sys, random
        proxy, tls_port, closed_port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
        random.seed(4)
        ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
        inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = ctx.wrap_bio(inc, out, server_hostname="vanish.test")
        try: tls.do_handshake()
        except ssl.SSLWantReadError: pass
        hello = out.read()
        def connect(target):
            s = socket.create_connection(("127.0.0.1", proxy), timeout=5)
            s.sendall(b"CONNECT " + target + b" HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
            head = b""
            while b"\\r\\n\\r\\n" not in head:
                b = s.recv(1)
                if not b: break
                head += b
            return s, head
        counts = {}
        for i in range(1000):
            kind = i % 5
            counts[kind] = counts.get(kind, 0) + 1
            if kind == 0:      # garbage instead of a proxy request
                s = socket.create_connection(("127.0.0.1", proxy), timeout=5)
                try:
                    s.sendall(os.urandom(random.randint(1, 300)))
                    s.shutdown(socket.SHUT_WR)
                    s.recv(1000)
                except OSError: pass
                s.close()
            elif kind == 1:    # a truncated ClientHello, then gone
                s, head = connect(b"127.0.0.1:%d" % tls_port)
                s.sendall(hello[:random.randint(1, len(hello) - 1)])
                s.close()
            elif kind == 2:    # a whole ClientHello, then gone mid-handshake (sometimes with a reset)
                s, head = connect(b"127.0.0.1:%d" % tls_port)
                s.sendall(hello)
                if i % 2:
                    try: s.recv(10)
                    except OSError: pass
                else:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00")
                s.close()
            elif kind == 3:    # an upstream that refuses
                s, head = connect(b"127.0.0.1:%d" % closed_port)
                assert head.startswith(b"HTTP/1.1 502"), head
                s.close()
            else:              # TLS-looking garbage after CONNECT
                s, head = connect(b"127.0.0.1:%d" % tls_port)
                s.sendall(b"\\x16\\x03\\x01\\x00\\x05hello" + os.urandom(20))
                try: s.recv(100)
                except OSError: pass
                s.close()
        print(sorted(counts.items()))
        """
        let r = Clients.python(script, [String(harness.port), String(nginx.tlsPort), String(Shell.freePort())], timeout: 120)
        #expect(r.status == 0, "\(r.out) \(r.err)")
        let good = Shell.run(["curl", "-sS", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "https://localhost:\(nginx.tlsPort)/index.html"], timeout: 20)
        #expect(good.out == "hello from nginx\n", "\(good.err)")
        #expect(harness.waitIdle(timeout: 20), "open: \(harness.server.counters.openConnections)")
        let counters = harness.server.counters
        #expect(counters.accepted == 1001)
        #expect(counters.openConnections == 0)
        #expect(harness.sink.waitForClosed(1001, timeout: 20).count == 1001)
        #expect(counters.closedByStatus[.inspected] == 1)
        // No descriptor leaked (a few may belong to other threads of the test process).
        #expect(openDescriptors() <= fdsBefore + 4, "before \(fdsBefore), after \(openDescriptors())")
    }

    func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }
}
