import Foundation
import Proxy
import Testing

/// The interop cases of ../shared/notes/interop-cases.md, on loopback with real tools.
@Suite("Integration: interop cases", .serialized)
final class InteropTests {
    let pki = TestPKI.shared

    @Test("upstream TLS 1.2-only and 1.3-only: versions negotiated per leg", arguments: ["-tls1_2", "-tls1_3"])
    func upstreamVersions(_ flag: String) throws {
        let server = try OpenSSLServer(cert: pki.serverCert, key: pki.serverKey, extra: [flag])
        defer { server.stop() }
        let harness = try Harness()
        let r = Shell.run(["curl", "-sS", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "-o", "/dev/null", "-w", "%{http_code}",
                           "https://localhost:\(server.port)/"], timeout: 20)
        #expect(r.out == "200", "\(r.err)")
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.status == .inspected)
        #expect(flow.upstreamTLSVersion == (flag == "-tls1_2" ? .tls12 : .tls13))
        #expect(flow.clientTLSVersion == .tls13)
        #expect(harness.waitIdle())
    }

    @Test("no SNI to an IP: no SNI upstream, the leaf carries IP:127.0.0.1 and no DNS name")
    func noSNIToIP() throws {
        let server = try OpenSSLServer(cert: pki.ipCert, key: pki.ipKey, extra: [])
        defer { server.stop() }
        let harness = try Harness()
        let r = Shell.run(["openssl", "s_client", "-proxy", "127.0.0.1:\(harness.port)", "-connect", "127.0.0.1:\(server.port)",
                           "-noservername", "-CAfile", pki.tvRoot, "-verify_ip", "127.0.0.1", "-verify_return_error"],
                          timeout: 20, stdin: Data())
        #expect(r.out.contains("Verify return code: 0 (ok)"), "\(r.out)\(r.err)")
        let leaf = Clients.presentedCertificate(connect: "127.0.0.1:\(server.port)", proxy: "127.0.0.1:\(harness.port)", serverName: nil)
        #expect(leaf.contains("IP Address:127.0.0.1"), "\(leaf)")
        #expect(!leaf.contains("DNS:"), "\(leaf)")
        let flows = harness.sink.waitForClosed(2)
        #expect(flows.first?.host == nil)
        #expect(flows.first?.status == .inspected)
        #expect(harness.waitIdle())
    }

    @Test("an upstream certificate that does not verify: an HTTP/1-capable client (explicit proxy or SOCKS5) gets a 502 with the reason, which is recorded")
    func upstreamNotVerified() throws {
        let server = try OpenSSLServer(cert: pki.selfSignedCert, key: pki.selfSignedKey, extra: [])
        defer { server.stop() }
        let harness = try Harness()
        let r = Shell.run(["curl", "-sS", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "-w", "\n%{http_code}",
                           "https://localhost:\(server.port)/"], timeout: 20)
        #expect(r.status == 0, "\(r.err)")
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.status == .failed)
        #expect(flow.error?.contains("does not verify (self-signed certificate") == true, "\(flow.error ?? "")")
        #expect(flow.error?.contains("--upstream-ca") == true, "\(flow.error ?? "")")
        #expect(r.out == "tv: \(flow.error ?? "")\n\n502", "\(r.out)")
        // The SOCKS5 front-end answers the same way.
        let socks = try Harness(mode: .socks5)
        let viaSocks = Shell.run(["curl", "-sS", "--socks5-hostname", "127.0.0.1:\(socks.port)", "--cacert", pki.tvRoot, "-w", "\n%{http_code}",
                                  "https://localhost:\(server.port)/"], timeout: 20)
        #expect(viaSocks.out == r.out, "\(viaSocks.out) \(viaSocks.err)")
        #expect(socks.sink.waitForClosed(1).first?.error == flow.error)
        #expect(socks.waitIdle())
        #expect(flow.serverCertificate?.subject == "CN=localhost")
        #expect(flow.upstreamVerified == false)
        // --upstream-insecure: the same server is inspected.
        let insecure = try Harness { $0.upstreamInsecure = true }
        let ok = Shell.run(["curl", "-sS", "-x", insecure.proxyURL, "--cacert", pki.tvRoot, "-o", "/dev/null", "-w", "%{http_code}",
                            "https://localhost:\(server.port)/"], timeout: 20)
        #expect(ok.out == "200", "\(ok.err)")
        #expect(insecure.sink.waitForClosed(1).first?.upstreamVerified == false)
        #expect(harness.waitIdle() && insecure.waitIdle())
    }

    @Test("a server that accepts but never answers the ClientHello: after the handshake time an HTTP/1 client gets a 502 that says so")
    func upstreamHandshakeTimeout() throws {
        let port = Shell.freePort()
        let server = Background.python("""
            import socket, sys, time
            s = socket.create_server(("127.0.0.1", int(sys.argv[1])))
            held = []
            while True:
                c, _ = s.accept()
                held.append(c)
            """, ["\(port)"])
        defer { server.stop() }
        #expect(Shell.waitForPort(port))
        let harness = try Harness { $0.handshakeTimeout = 1 }
        let r = Shell.run(["curl", "-sS", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "-w", "\n%{http_code}",
                           "https://localhost:\(port)/"], timeout: 20)
        let sentence = "the TLS handshake with the server did not finish within 1 s"
        #expect(r.out == "tv: \(sentence)\n\n502", "\(r.out) \(r.err)")
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.status == .failed)
        #expect(flow.error == sentence)
        #expect(harness.waitIdle())
    }

    @Test("a client that trusts only the real CA (alert unknown_ca: it lacks tv's root) fails once, then its next connection passes through as kept private")
    func pinningClient() throws {
        let nginx = try TestNginx()
        defer { nginx.stop() }
        let harness = try Harness()
        let args = ["openssl", "s_client", "-proxy", "127.0.0.1:\(harness.port)", "-connect", "localhost:\(nginx.tlsPort)",
                    "-servername", "pin.test", "-CAfile", pki.upstreamCA, "-verify_return_error", "-verify_hostname", "pin.test"]
        let first = Shell.run(args, timeout: 20, stdin: Data())
        #expect(first.status != 0)
        let failed = try #require(harness.sink.waitForClosed(1).first)
        #expect(failed.pinningDetected)
        #expect(failed.error?.contains("unknown_ca") == true, "\(failed.error ?? "")")
        // Remembered for this client (s_client from 127.0.0.1) and pin.test's port only, as lacking tv's root.
        #expect(harness.pinning.all.map { "\($0.key.client.address) \($0.key.target) \($0.value)" } == ["127.0.0.1 pin.test:\(nginx.tlsPort) lacksRoot"])
        let second = Shell.run(args, timeout: 20, stdin: Data())
        #expect(second.out.contains("Verify return code: 0 (ok)"), "\(second.out)")
        let kept = harness.sink.waitForClosed(2)
        #expect(kept.last?.status == .keptPrivate)
        #expect(harness.server.counters.pinningDetections == 1)
        #expect(harness.waitIdle())
    }

    @Test("curl --pinnedpubkey: a quiet close after the handshake, then the second attempt is kept private and succeeds (reverse mode)")
    func pinnedPublicKey() throws {
        let nginx = try TestNginx()
        defer { nginx.stop() }
        let harness = try Harness(mode: .reverse(tls: true, host: "127.0.0.1", port: nginx.tlsPort))
        let pub = Shell.run(["sh", "-c", "openssl x509 -in \(pki.serverCert) -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"])
        let pin = "sha256//" + pub.out.trimmingCharacters(in: .whitespacesAndNewlines)
        // Both roots are trusted, so the handshake with tv's leaf succeeds; the pin check fails after it.
        let bundle = NSTemporaryDirectory() + "tv-bundle-\(UUID().uuidString.prefix(6)).pem"
        defer { try? FileManager.default.removeItem(atPath: bundle) }
        try (String(contentsOfFile: pki.tvRoot, encoding: .utf8) + String(contentsOfFile: pki.upstreamCA, encoding: .utf8)).write(toFile: bundle, atomically: true, encoding: .utf8)
        let args = ["curl", "-sS", "--resolve", "quiet.test:\(harness.port):127.0.0.1", "--cacert", bundle, "--pinnedpubkey", pin,
                    "-o", "/dev/null", "-w", "%{http_code}", "https://quiet.test:\(harness.port)/index.html"]
        // The first run sees tv's leaf: the public key differs, curl closes right after the
        // handshake (exit 90): possible pinning, and the same client's next connection passes.
        let first = Shell.run(args, timeout: 20)
        #expect(first.status == 90, "\(first.err)")
        let quiet = try #require(harness.sink.waitForClosed(1).last)
        #expect(quiet.error == "the client closed right after the handshake without sending data (possible pinning); its next connection to quiet.test:\(nginx.tlsPort) passes through unread", "\(quiet.error ?? "")")
        #expect(!quiet.pinningDetected)
        #expect(harness.pinning.all.isEmpty)
        // The second attempt gets through, and now (it came back) the client is remembered as pinning.
        let second = Shell.run(args, timeout: 20)
        #expect(second.out == "200", "\(second.err)")
        let kept = try #require(harness.sink.waitForClosed(2).last)
        #expect(kept.status == .keptPrivate)
        #expect(kept.pinningDetected)
        #expect(harness.pinning.all.map { "\($0.key.target) \($0.value)" } == ["quiet.test:\(nginx.tlsPort) pinned"])
        #expect(harness.server.counters.possiblePinning == 1)
        #expect(harness.waitIdle())
    }

    @Test("a non-TLS protocol through CONNECT is relayed as is")
    func nonTLSThroughConnect() throws {
        let nginx = try TestNginx()
        defer { nginx.stop() }
        let harness = try Harness()
        let r = Shell.run(["curl", "-sS", "-p", "-x", harness.proxyURL, "http://localhost:\(nginx.plainPort)/index.html"], timeout: 20)
        #expect(r.out == "hello from nginx\n", "\(r.err)")
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.status == .notEncrypted)
        #expect(flow.hostOrigin == .connect)
        #expect(flow.host == "localhost")
        #expect(harness.waitIdle())
    }

    @Test("server speaks first: the banner reaches a client that sends nothing")
    func serverSpeaksFirst() throws {
        let banner = try PythonServer("""
        import socket, sys
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
        while True:
            c, _ = s.accept()
            c.sendall(b"220 banner.test ESMTP ready\\r\\n")
            data = c.recv(100)
            if data: c.sendall(b"250 " + data)
            c.close()
        """)
        defer { banner.stop() }
        let harness = try Harness()
        let client = """
        import socket, sys, time
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
        s.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % sys.argv[2].encode())
        head = b""
        while b"\\r\\n\\r\\n" not in head: head += s.recv(1)
        t = time.time()
        line = s.recv(100)
        waited = time.time() - t
        s.sendall(b"HELO me\\r\\n")
        echo = s.recv(100)
        print(head.split(b"\\r\\n")[0].decode(), "|", line.decode().strip(), "|", echo.decode().strip(), "|", round(waited, 2))
        """
        let r = Clients.python(client, [String(harness.port), String(banner.port)], timeout: 20)
        #expect(r.status == 0, "\(r.err)")
        let parts = r.out.split(separator: "|").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(parts.count == 4)
        #expect(parts.first == "HTTP/1.1 200 Connection established")
        #expect(parts.dropFirst().first == "220 banner.test ESMTP ready")
        #expect(parts.dropFirst(2).first == "250 HELO me")
        #expect((Double(parts.last ?? "9") ?? 9) < 1.0)
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.status == .notEncrypted)
        #expect(harness.waitIdle())
    }

    @Test("a ClientHello split in two TCP writes 200 ms apart is reassembled")
    func splitClientHello() throws {
        let nginx = try TestNginx()
        defer { nginx.stop() }
        let harness = try Harness()
        let client = """
        import socket, ssl, sys, time
        proxy, port, cafile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
        s = socket.create_connection(("127.0.0.1", proxy), timeout=10)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(("CONNECT localhost:%s HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n" % port).encode())
        head = b""
        while b"\\r\\n\\r\\n" not in head: head += s.recv(1)
        ctx = ssl.create_default_context(cafile=cafile)
        ctx.set_alpn_protocols(["p" * 200] * 9 + ["http/1.1"])
        inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = ctx.wrap_bio(inc, out, server_hostname="a.test")
        first = True
        while True:
            try:
                tls.do_handshake(); break
            except ssl.SSLWantReadError:
                data = out.read()
                if first:
                    first = False
                    print("hello bytes", len(data), file=sys.stderr)
                    s.sendall(data[:300]); time.sleep(0.2); s.sendall(data[300:])
                elif data:
                    s.sendall(data)
                chunk = s.recv(65536)
                if not chunk: raise SystemExit("closed")
                inc.write(chunk)
        s.sendall(out.read())
        tls.write(b"GET /index.html HTTP/1.1\\r\\nHost: a.test\\r\\nConnection: close\\r\\n\\r\\n")
        s.sendall(out.read())
        body = b""
        while True:
            try:
                data = tls.read(65536)
                if not data: break
                body += data
            except ssl.SSLWantReadError:
                chunk = s.recv(65536)
                if not chunk: break
                inc.write(chunk)
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                break
        print(body.split(b"\\r\\n")[0].decode(), body.endswith(b"hello from nginx\\n"))
        """
        let r = Clients.python(client, [String(harness.port), String(nginx.tlsPort), pki.tvRoot], timeout: 30)
        #expect(r.out.trimmingCharacters(in: .whitespacesAndNewlines) == "HTTP/1.1 200 OK True", "\(r.out) \(r.err)")
        #expect(r.err.contains("hello bytes"))
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.host == "a.test")
        #expect(flow.status == .inspected)
        #expect(flow.alpn == "http/1.1")
        #expect(harness.waitIdle())
    }

    @Test("key log: NSS lines for both legs, file 0600")
    func keyLog() throws {
        let nginx = try TestNginx()
        defer { nginx.stop() }
        let path = NSTemporaryDirectory() + "tv-keylog-\(UUID().uuidString.prefix(6)).txt"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let harness = try Harness { $0.keylogPath = path }
        for _ in 0..<2 {
            let r = Shell.run(["curl", "-sS", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "https://localhost:\(nginx.tlsPort)/index.html"], timeout: 20)
            #expect(r.status == 0, "\(r.err)")
        }
        _ = harness.sink.waitForClosed(2)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(lines.allSatisfy { $0.split(separator: " ").count == 3 })
        let secrets = lines.filter { $0.hasPrefix("CLIENT_TRAFFIC_SECRET_0 ") }
        let randoms = Set(secrets.map { $0.split(separator: " ")[1] })
        #expect(randoms.count == 4, "two connections × two legs: \(randoms.count)")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(harness.waitIdle())
    }

    @Test("the connection cap refuses new connections clearly and counts them")
    func connectionCap() throws {
        let harness = try Harness { $0.maxConnections = 2 }
        let script = """
        import socket, sys, time
        port = int(sys.argv[1])
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
        time.sleep(0.2)
        third = socket.create_connection(("127.0.0.1", port))
        third.settimeout(5)
        print(third.recv(200).split(b"\\r\\n")[0].decode())
        """
        let r = Clients.python(script, [String(harness.port)])
        #expect(r.out.trimmingCharacters(in: .whitespacesAndNewlines) == "HTTP/1.1 503 Service Unavailable", "\(r.out) \(r.err)")
        #expect(harness.server.counters.refusedByCap == 1)
        #expect(harness.waitIdle())
        #expect(harness.server.counters.accepted == 2)
    }
}

@Suite("Integration: names, ALPN and versions (interop cases 2, 3, 6, 7)", .serialized)
final class InteropNameTests {
    let pki = TestPKI.shared

    @Test("case 2: a 79-character name gets a leaf without CN and a critical SAN; a 64-character label is refused alone")
    func longNames() throws {
        let server = try OpenSSLServer(cert: pki.serverCert, key: pki.serverKey, extra: [])
        defer { server.stop() }
        let harness = try Harness { $0.upstreamInsecure = true }
        let long = String(repeating: "a", count: 63) + ".bbbbbbbbbb.test"
        #expect(long.count == 79)
        let leaf = Clients.presentedCertificate(connect: "127.0.0.1:\(server.port)", proxy: "127.0.0.1:\(harness.port)", serverName: long)
        #expect(leaf.contains("DNS:\(long)"), "\(leaf)")
        #expect(leaf.contains("X509v3 Subject Alternative Name: critical"))
        #expect(!leaf.contains("CN = aaaa"))
        let bad = String(repeating: "x", count: 64) + ".test"
        let refused = Shell.run(["openssl", "s_client", "-proxy", "127.0.0.1:\(harness.port)", "-connect", "127.0.0.1:\(server.port)",
                                 "-servername", bad], timeout: 20, stdin: Data())
        #expect(!refused.out.contains("BEGIN CERTIFICATE"))
        let flows = harness.sink.waitForClosed(2)
        #expect(flows.last?.error?.contains("cannot make a certificate") == true, "\(flows.last?.error ?? "")")
        let after = Shell.run(["curl", "-sS", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "-o", "/dev/null", "-w", "%{http_code}",
                               "https://localhost:\(server.port)/"], timeout: 20)
        #expect(after.out == "200")
        #expect(harness.waitIdle())
    }

    @Test("case 3: a trailing dot in the SNI is dropped everywhere")
    func trailingDot() throws {
        let server = try OpenSSLServer(cert: pki.serverCert, key: pki.serverKey, extra: [])
        defer { server.stop() }
        let harness = try Harness()
        let r = Shell.run(["openssl", "s_client", "-proxy", "127.0.0.1:\(harness.port)", "-connect", "127.0.0.1:\(server.port)",
                           "-servername", "a.test.", "-CAfile", pki.tvRoot, "-verify_hostname", "a.test", "-verify_return_error"],
                          timeout: 20, stdin: Data())
        #expect(r.out.contains("Verify return code: 0 (ok)"), "\(r.out)\(r.err)")
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.host == "a.test")
        #expect(flow.upstreamVerified == true)
        #expect(harness.waitIdle())
    }

    @Test("case 7: the client leg gets exactly the upstream's ALPN (http/1.1, or none)", arguments: [true, false])
    func alpnFollowsUpstream(_ upstreamSaysHTTP1: Bool) throws {
        let server = try OpenSSLServer(cert: pki.serverCert, key: pki.serverKey, extra: upstreamSaysHTTP1 ? ["-alpn", "http/1.1"] : [])
        defer { server.stop() }
        let harness = try Harness()
        let r = Shell.run(["curl", "-sS", "-v", "--http2", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "-o", "/dev/null",
                           "-w", "%{http_code} %{http_version}", "https://localhost:\(server.port)/"], timeout: 20)
        #expect(r.out.hasPrefix("200 1"), "never h2: \(r.out) \(r.err)")   // s_server -www answers HTTP/1.0
        if upstreamSaysHTTP1 {
            #expect(r.err.contains("ALPN: server accepted http/1.1"))
        } else {
            #expect(r.err.contains("ALPN: server did not agree on a protocol"))
        }
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.alpn == (upstreamSaysHTTP1 ? "http/1.1" : nil))
        #expect(flow.offeredALPN == ["h2", "http/1.1"])
        #expect(harness.waitIdle())
    }

    @Test("case 6: a TLS 1.0-only server fails with a protocol-version reason (curl, speaking HTTP/1 too, reads it in a 502); legacy allowed on request")
    func legacyUpstream() throws {
        let server = try OpenSSLServer(cert: pki.serverCert, key: pki.serverKey, extra: ["-tls1", "-cipher", "DEFAULT:@SECLEVEL=0"])
        defer { server.stop() }
        let harness = try Harness()
        let r = Shell.run(["curl", "-sS", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "-w", "\n%{http_code}",
                           "https://localhost:\(server.port)/"], timeout: 20)
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.status == .failed)
        #expect(flow.error?.contains("version") == true, "\(flow.error ?? "")")
        #expect(r.out == "tv: \(flow.error ?? "")\n\n502", "\(r.out) \(r.err)")
        let legacy = try Harness { $0.minimumTLSVersion = .tls10 }
        let ok = Shell.run(["curl", "-sS", "-x", legacy.proxyURL, "--cacert", pki.tvRoot, "-o", "/dev/null", "-w", "%{http_code}",
                            "https://localhost:\(server.port)/"], timeout: 20)
        #expect(ok.out == "200", "\(ok.err)")
        #expect(legacy.sink.waitForClosed(1).first?.upstreamTLSVersion == .tls10)
        #expect(harness.waitIdle() && legacy.waitIdle())
    }
}
