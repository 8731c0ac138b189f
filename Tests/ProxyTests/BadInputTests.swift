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
        // No socket leaked: none of this process's descriptors is a TCP socket of this proxy
        // (accepted on its port, or connected to the test's servers) other than its listener.
        let leaked = openSockets(localPort: harness.port, remotePorts: [nginx.tlsPort])
        #expect(leaked == 0, "\(leaked) sockets still open")
    }

    /// This process's TCP sockets (not listening) with that local port or one of those remote ports.
    func openSockets(localPort: UInt16, remotePorts: Set<UInt16>) -> Int {
        var inodes = Set<String>()
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let f = line.split(separator: " ")
                guard f.count > 9, f[3] != "0A" else { continue }
                let local = UInt16(f[1].split(separator: ":").last ?? "", radix: 16) ?? 0
                let remote = UInt16(f[2].split(separator: ":").last ?? "", radix: 16) ?? 0
                if local == localPort || remotePorts.contains(remote) { inodes.insert(String(f[9])) }
            }
        }
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { fd in
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                  link.hasPrefix("socket:[") else { return false }
            return inodes.contains(String(link.dropFirst(8).dropLast()))
        }.count
    }
}
