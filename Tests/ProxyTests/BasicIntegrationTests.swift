import Foundation
import Proxy
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

@Suite("Integration: real clients through the explicit proxy, reverse and SOCKS5", .serialized)
final class BasicIntegrationTests {
    let nginx: TestNginx
    let pki = TestPKI.shared

    init() throws { nginx = try TestNginx() }
    deinit { nginx.stop() }

    @Test("CONNECT + curl HTTP/1.1: body intact, flow inspected with host, ALPN, versions")
    func connectCurlH1() throws {
        let harness = try Harness()
        let out = NSTemporaryDirectory() + "tv-h1-\(UUID().uuidString.prefix(6)).bin"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = Shell.run(["curl", "-sS", "--http1.1", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "-o", out,
                           "https://localhost:\(nginx.tlsPort)/10m.bin"], timeout: 60)
        #expect(r.status == 0, "\(r.err)")
        #expect(Shell.run(["sha256sum", out]).out.prefix(64) == nginx.bigFileSHA256)
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.status == .inspected)
        #expect(flow.host == "localhost")
        #expect(flow.hostOrigin == .sni)
        #expect(flow.alpn == "http/1.1")
        #expect(flow.clientTLSVersion == .tls13)
        #expect(flow.upstreamTLSVersion == .tls13)
        #expect(flow.versionSource == .upstreamLeg)
        #expect(flow.offeredALPN == ["http/1.1"])
        #expect(flow.offeredVersions.contains(.tls13))
        #expect(flow.serverCertificate?.issuer.contains("UpCA") == true)
        #expect(flow.serverCertificate?.sha256.count == 64)
        #expect(flow.upstreamVerified == true)
        #expect(flow.bytesFromServer >= 10_485_760)
        #expect(flow.server?.port == nginx.tlsPort)
        #expect(harness.waitIdle())
    }

    @Test("CONNECT + curl --http2: ALPN h2 end to end, 10 MiB intact")
    func connectCurlH2() throws {
        let harness = try Harness()
        let out = NSTemporaryDirectory() + "tv-h2-\(UUID().uuidString.prefix(6)).bin"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = Shell.run(["curl", "-sS", "--http2", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "-o", out,
                           "-w", "%{http_version}", "https://localhost:\(nginx.tlsPort)/10m.bin"], timeout: 60)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out == "2")
        #expect(Shell.run(["sha256sum", out]).out.prefix(64) == nginx.bigFileSHA256)
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.status == .inspected)
        #expect(flow.alpn == "h2")
        #expect(flow.offeredALPN == ["h2", "http/1.1"])
        #expect(harness.waitIdle())
    }

    @Test("python urllib through the proxy")
    func pythonUrllib() throws {
        let harness = try Harness()
        let script = """
        import ssl, sys, urllib.request
        ctx = ssl.create_default_context(cafile=sys.argv[2])
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({'https': sys.argv[1]}), urllib.request.HTTPSHandler(context=ctx))
        body = opener.open(sys.argv[3], timeout=20).read()
        print(len(body))
        """
        let r = Clients.python(script, [harness.proxyURL, pki.tvRoot, "https://localhost:\(nginx.tlsPort)/1k.bin"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.trimmingCharacters(in: .whitespacesAndNewlines) == "1024")
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.status == .inspected)
        #expect(flow.host == "localhost")
        #expect(harness.waitIdle())
    }

    @Test("openssl s_client -proxy sees tv's leaf for the SNI, verified by tv's root")
    func sClientProxy() throws {
        let harness = try Harness()
        let r = Shell.run(["openssl", "s_client", "-proxy", "127.0.0.1:\(harness.port)", "-connect", "localhost:\(nginx.tlsPort)",
                           "-servername", "a.test", "-CAfile", pki.tvRoot, "-verify_hostname", "a.test", "-verify_return_error", "-brief", "-ign_eof"],
                          timeout: 20, stdin: Data("GET /index.html HTTP/1.0\r\n\r\n".utf8))
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.contains("Verification: OK"), "\(r.err)")
        #expect(r.out.contains("hello from nginx"))
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.host == "a.test")
        #expect(flow.status == .inspected)
        #expect(harness.waitIdle())
    }

    @Test("inspection off: the client sees the real certificate; status encrypted, version from the ServerHello")
    func inspectionOff() throws {
        let harness = try Harness()
        harness.server.setInspection(enabled: false)
        let text = Clients.presentedCertificate(connect: "localhost:\(nginx.tlsPort)", proxy: "127.0.0.1:\(harness.port)", serverName: "localhost")
        #expect(text.contains("Issuer: CN = UpCA"), "\(text)")
        let r = Shell.run(["curl", "-sS", "-x", harness.proxyURL, "--cacert", pki.upstreamCA, "https://localhost:\(nginx.tlsPort)/index.html"], timeout: 20)
        #expect(r.out == "hello from nginx\n", "\(r.err)")
        let flows = harness.sink.waitForClosed(2)
        #expect(flows.count == 2)
        for flow in flows {
            #expect(flow.status == .encrypted)
            #expect(flow.clientTLSVersion == .tls13)
            #expect(flow.versionSource == .serverHello)
            #expect(flow.upstreamTLSVersion == nil)
        }
        // TLS 1.3 sends ALPN in EncryptedExtensions: a passed-through flow cannot read it.
        #expect(flows.last?.alpn == nil)
        // Switched back on: the next connection is inspected at once.
        harness.server.setInspection(enabled: true)
        let again = Shell.run(["curl", "-sS", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "https://localhost:\(nginx.tlsPort)/index.html"], timeout: 20)
        #expect(again.status == 0, "\(again.err)")
        #expect(harness.sink.waitForClosed(3).last?.status == .inspected)
        #expect(harness.waitIdle())
    }

    @Test("reverse mode: curl (h1 and h2) and h2load")
    func reverse() throws {
        let harness = try Harness(mode: .reverse(tls: true, host: "127.0.0.1", port: nginx.tlsPort))
        for version in ["--http1.1", "--http2"] {
            let r = Shell.run(["curl", "-sS", version, "--cacert", pki.tvRoot, "https://127.0.0.1:\(harness.port)/index.html"], timeout: 20)
            #expect(r.status == 0, "\(r.err)")
            #expect(r.out == "hello from nginx\n")
        }
        let h2 = Shell.run(["h2load", "-n", "400", "-c", "4", "-m", "8", "https://127.0.0.1:\(harness.port)/1k.bin"], timeout: 60)
        #expect(h2.status == 0, "\(h2.out)\(h2.err)")
        #expect(h2.out.contains("400 succeeded"), "\(h2.out)")
        let flows = harness.sink.waitForClosed(6)
        #expect(flows.count == 6)
        #expect(flows.allSatisfy { $0.status == .inspected && $0.hostOrigin == .reverse })
        #expect(flows.first?.host == nil)
        #expect(harness.waitIdle())
    }

    @Test("reverse:https and plain-HTTP curl: tv speaks TLS to nginx itself; the body arrives, the flow is not encrypted with the upstream TLS facts")
    func reversePlainClient() throws {
        let harness = try Harness(mode: .reverse(tls: true, host: "localhost", port: nginx.tlsPort))
        let r = Shell.run(["curl", "-sS", "http://127.0.0.1:\(harness.port)/index.html", "http://127.0.0.1:\(harness.port)/1k.bin", "-o", "/dev/null"], timeout: 20)
        #expect(r.status == 0, "\(r.err)")
        let body = Shell.run(["curl", "-sS", "http://127.0.0.1:\(harness.port)/index.html"], timeout: 20)
        #expect(body.out == "hello from nginx\n", "\(body.err)")
        let flows = harness.sink.waitForClosed(2)
        #expect(flows.count == 2)
        #expect(flows.allSatisfy { $0.status == .notEncrypted && $0.upstreamTLSVersion == .tls13 && $0.upstreamVerified == true })
        #expect(harness.waitIdle())
    }

    @Test("--busy-poll: loops that poll before sleeping relay the same bytes (reverse mode, h1 and h2load)")
    func busyPoll() throws {
        let harness = try Harness(mode: .reverse(tls: true, host: "127.0.0.1", port: nginx.tlsPort)) { $0.busyPollMicros = 200 }
        let r = Shell.run(["curl", "-sS", "--http1.1", "--cacert", pki.tvRoot, "https://127.0.0.1:\(harness.port)/index.html"], timeout: 20)
        #expect(r.out == "hello from nginx\n", "\(r.err)")
        let h2 = Shell.run(["h2load", "-n", "400", "-c", "2", "-m", "8", "https://127.0.0.1:\(harness.port)/1k.bin"], timeout: 60)
        #expect(h2.out.contains("400 succeeded"), "\(h2.out)")
        // The loops spun: each spin is counted as finding work or not (the window adapts between).
        let counters = harness.server.counters
        #expect(counters.busyPollsFoundWork + counters.busyPollsFoundNothing > 0, "\(counters)")
        #expect(harness.sink.waitForClosed(3).count == 3)
        #expect(harness.waitIdle())
    }

    @Test("SOCKS5: curl --socks5-hostname")
    func socks5() throws {
        let harness = try Harness(mode: .socks5)
        let r = Shell.run(["curl", "-sS", "--socks5-hostname", "127.0.0.1:\(harness.port)", "--cacert", pki.tvRoot,
                           "https://localhost:\(nginx.tlsPort)/index.html"], timeout: 20)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out == "hello from nginx\n")
        let plain = Shell.run(["curl", "-sS", "--socks5", "127.0.0.1:\(harness.port)", "http://127.0.0.1:\(nginx.plainPort)/index.html"], timeout: 20)
        #expect(plain.out == "hello from nginx\n", "\(plain.err)")
        let flows = harness.sink.waitForClosed(2)
        #expect(flows.first?.status == .inspected)
        #expect(flows.first?.host == "localhost")
        #expect(flows.last?.status == .notEncrypted)
        #expect(flows.last?.hostOrigin == FlowFacts.HostOriginNone)
        #expect(harness.waitIdle())
    }

    @Test("plain HTTP absolute-form: keep-alive, a second host opens a second upstream, chunked upload")
    func plainHTTP() throws {
        let harness = try Harness()
        let r = Shell.run(["curl", "-sS", "-x", harness.proxyURL,
                           "http://localhost:\(nginx.plainPort)/index.html", "http://localhost:\(nginx.plainPort)/1k.bin",
                           "http://127.0.0.1:\(nginx.plainPort)/index.html", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null",
                           "-w", "%{http_code} %{num_connects}\n"], timeout: 20)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out == "200 1\n200 0\n200 0\n", "one client connection for all three: \(r.out)")
        var flows = harness.sink.waitForClosed(2)
        #expect(flows.count == 2)
        #expect(flows.first?.host == "localhost")
        #expect(flows.first?.status == .notEncrypted)
        #expect(flows.last?.host == nil)
        #expect(flows.last?.server?.address == "127.0.0.1")

        // A chunked upload, then the same bytes back.
        let file = nginx.dir + "/www/10m.bin"
        let put = Shell.run(["curl", "-sS", "-x", harness.proxyURL, "-T", file, "-H", "Transfer-Encoding: chunked",
                             "-w", "%{http_code}", "http://localhost:\(nginx.plainPort)/upload/copy.bin"], timeout: 60)
        #expect(put.out.hasPrefix("201") || put.out.hasPrefix("204"), "\(put.out) \(put.err)")
        #expect(Shell.run(["sha256sum", nginx.dir + "/www/upload/copy.bin"]).out.prefix(64) == nginx.bigFileSHA256)
        flows = harness.sink.waitForClosed(3)
        #expect(flows.count == 3)

        // Pipelined: the request for another host waits for the first response, then goes over
        // a new upstream; the answers come back in order.
        let script = """
        import socket, sys
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
        p = sys.argv[2]
        s.sendall(("GET http://localhost:%s/1k.bin HTTP/1.1\\r\\nHost: localhost:%s\\r\\n\\r\\n" % (p, p) +
                   "GET http://127.0.0.1:%s/index.html HTTP/1.1\\r\\nHost: 127.0.0.1:%s\\r\\nConnection: close\\r\\n\\r\\n" % (p, p)).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk: break
            data += chunk
        print(data.count(b"HTTP/1.1 200 OK"), data.endswith(b"hello from nginx\\n"), len(data) > 1024)
        """
        let pipelined = Clients.python(script, [String(harness.port), String(nginx.plainPort)])
        #expect(pipelined.out == "2 True True\n", "\(pipelined.out) \(pipelined.err)")
        #expect(harness.sink.waitForClosed(5).count == 5)
        #expect(harness.waitIdle())
    }

    @Test("plain HTTP to an address where nothing listens: a 502 naming tv once, and the failed flow keeps the address")
    func plainHTTPRefused() throws {
        let harness = try Harness()
        let closed = Shell.freePort()
        let r = Shell.run(["curl", "-sS", "-x", harness.proxyURL, "-w", "\n%{http_code}", "http://127.0.0.1:\(closed)/"], timeout: 20)
        #expect(r.out == "tv could not connect to 127.0.0.1:\(closed) (connection refused)\n\n502", "\(r.out) \(r.err)")
        let flows = harness.sink.waitForClosed(1)
        #expect(flows.first?.host == nil)
        #expect(flows.first?.server == Endpoint(address: "127.0.0.1", port: closed))
        #expect(flows.first?.status == .failed && flows.first?.failureReason == "tv could not connect to 127.0.0.1:\(closed) (connection refused)")
        #expect(harness.waitIdle())
    }
}

extension FlowFacts {
    static let HostOriginNone = HostOrigin.none
}
