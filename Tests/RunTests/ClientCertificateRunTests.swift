import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 14 §2 through the real `tv` binary: servers that ask for a client certificate
/// (`openssl s_server -Verify 1`, a Python server asking after the handshake with TLS 1.3
/// post-handshake authentication), with and without `--client-cert` / the
/// `tls.clientCerts` setting; the flow's reason and the 502 an HTTP client gets.
@Suite("tv run: servers that ask for a client certificate (issue 14 §2)", .serialized)
struct ClientCertificateRunTests {
    static let missing = "the server requires a client certificate (alert %@) and tv has none for this host; give one with --client-cert HOST_PATTERN=FILE"

    static func reason(_ alert: String) -> String { String(format: missing, alert) }

    /// A sandbox with tv's CA and a client certificate (self-signed, CN "tv test client") in
    /// `client.pem`, 0600.
    final class World {
        let box: Sandbox
        let pki = TestPKI.shared
        let clientPEM: String

        init() throws {
            box = try Sandbox()
            do {
                try box.createCA()
                let key = box.work + "/client.key", cert = box.work + "/client.crt"
                let made = try box.tool("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                    "-keyout", key, "-out", cert, "-subj", "/CN=tv test client", "-days", "2"])
                guard made.status == 0 else { throw Sandbox.Failed(output: made) }
                clientPEM = try box.write("client.pem", box.text(cert) + box.text(key))
                chmod(clientPEM, 0o600)
            } catch {
                box.remove()
                throw error
            }
        }

        deinit { box.remove() }

        /// `tv run --upstream-ca <test CA> --inspect ARGS…`
        func run(_ arguments: String...) throws -> TVSession {
            try TVSession(box, ["--upstream-ca", pki.upstreamCA, "--inspect"] + arguments)
        }

        /// `openssl s_server -www -Verify 1` with `version` (-tls1_2, -tls1_3).
        func server(_ version: String) throws -> OpenSSLServer {
            try OpenSSLServer(cert: pki.serverCert, key: pki.serverKey, extra: [version, "-Verify", "1"])
        }

        /// curl through `tv` as an explicit proxy, trusting tv's root: (body, HTTP code, exit status).
        func curlThrough(_ tv: TVSession, _ arguments: [String]) throws -> ProcessOutput {
            try box.curl(["-s", "-x", tv.proxyURL, "--cacert", box.rootPEM, "--max-time", "15", "-w", "\n%{http_code}"] + arguments)
        }
    }

    @Test("TLS 1.2 s_server -Verify 1, no certificate: a plain client through reverse:https and an inspected CONNECT client speaking HTTP/1 get a 502 that says so; an h2-only client gets the alert; the flows say why")
    func tls12WithoutCertificate() throws {
        let world = try World()
        let server = try world.server("-tls1_2")
        defer { server.stop() }
        let reverse = try world.run("--mode", "reverse:https://localhost:\(server.port)")
        let plain = try world.box.curl(["-s", "--max-time", "15", "-w", "\n%{http_code}", "http://127.0.0.1:\(reverse.port)/"])
        #expect(plain.out == "tv: \(Self.reason("handshake_failure"))\n\n502", "\(plain)")
        var rows = try world.box.closedFlows(1)
        #expect(rows.first?.string("status") == "failed")
        #expect(rows.first?.string("failureReason") == Self.reason("handshake_failure"), "\(rows)")
        try reverse.stop()

        let explicit = try world.run()
        let answered = try world.curlThrough(explicit, ["https://localhost:\(server.port)/"])
        #expect(answered.out == "tv: \(Self.reason("handshake_failure"))\n\n502", "\(answered)")
        rows = try world.box.closedFlows(2)
        #expect(rows.last?.string("status") == "failed")
        #expect(rows.last?.string("failureReason") == Self.reason("handshake_failure"), "\(rows)")
        // A client offering only h2 is refused with the alert (an answer would need HTTP/2 framing).
        let h2 = try world.box.tool("openssl", ["s_client", "-proxy", explicit.proxyHostPort, "-connect", "localhost:\(server.port)",
                                                "-servername", "localhost", "-alpn", "h2", "-CAfile", world.box.rootPEM], stdin: Data())
        #expect(h2.status != 0, "\(h2)")
        #expect(h2.err.contains("alert handshake failure"), "\(h2)")
        rows = try world.box.closedFlows(3)
        #expect(rows.last?.string("failureReason") == Self.reason("handshake_failure"), "\(rows)")
        try explicit.stop()
    }

    @Test("TLS 1.3 s_server -Verify 1, no certificate: certificate_required comes after the handshake; an HTTP/1 client (inspected, or plain through reverse:https) gets a 502 that says so; the flow fails with the reason")
    func tls13WithoutCertificate() throws {
        let world = try World()
        let server = try world.server("-tls1_3")
        defer { server.stop() }
        let explicit = try world.run()
        for flags in [["--http1.1"], []] {
            let r = try world.curlThrough(explicit, flags + ["https://localhost:\(server.port)/"])
            #expect(r.out == "tv: \(Self.reason("certificate_required"))\n\n502", "\(flags) \(r)")
        }
        var rows = try world.box.closedFlows(2)
        #expect(rows.map { $0.string("status") } == ["failed", "failed"])
        #expect(rows.map { $0.string("failureReason") } == [Self.reason("certificate_required"), Self.reason("certificate_required")], "\(rows)")
        try explicit.stop()

        let reverse = try world.run("--mode", "reverse:https://localhost:\(server.port)")
        let plain = try world.box.curl(["-s", "--max-time", "15", "-w", "\n%{http_code}", "http://127.0.0.1:\(reverse.port)/"])
        #expect(plain.out == "tv: \(Self.reason("certificate_required"))\n\n502", "\(plain)")
        rows = try world.box.closedFlows(3)
        #expect(rows.last?.string("failureReason") == Self.reason("certificate_required"), "\(rows)")
        try reverse.stop()
    }

    @Test("--client-cert 'localhost=FILE': s_server -Verify 1 (TLS 1.2 and 1.3) answers, and its page shows the certificate tv presented")
    func withClientCertificate() throws {
        let world = try World()
        let tv = try world.run("--client-cert", "^nomatch$=\(world.clientPEM)",
                               "--client-cert", "^localhost$=\(world.clientPEM)")
        for version in ["-tls1_2", "-tls1_3"] {
            let server = try world.server(version)
            defer { server.stop() }
            let r = try world.curlThrough(tv, ["--http1.1", "https://localhost:\(server.port)/"])
            #expect(r.out.hasSuffix("\n200"), "\(version) \(r)")
            #expect(r.out.contains("Client certificate"), "\(version) \(r)")
            #expect(r.out.contains("Subject: CN=tv test client"), "\(version) \(r)")
        }
        let rows = try world.box.closedFlows(2)
        #expect(rows.map { $0.string("status") } == ["inspected", "inspected"], "\(rows)")
        try tv.stop()
    }

    @Test("a server that refuses the certificate tv presented (s_server -verify_return_error, another CA): the flow and the 502 say it was refused")
    func refusedCertificate() throws {
        let world = try World()
        let server = try OpenSSLServer(cert: world.pki.serverCert, key: world.pki.serverKey,
                                       extra: ["-tls1_2", "-Verify", "1", "-verify_return_error", "-CAfile", world.pki.upstreamCA])
        defer { server.stop() }
        let tv = try world.run("--mode", "reverse:https://localhost:\(server.port)", "--client-cert", "localhost=\(world.clientPEM)")
        let reason = "the server requires a client certificate and refused the one tv presented (alert unknown_ca); check the file given with --client-cert"
        let plain = try world.box.curl(["-s", "--max-time", "15", "-w", "\n%{http_code}", "http://127.0.0.1:\(tv.port)/"])
        #expect(plain.out == "tv: \(reason)\n\n502", "\(plain)")
        let rows = try world.box.closedFlows(1)
        #expect(rows.first?.string("failureReason") == reason, "\(rows)")
        try tv.stop()
    }

    /// A TLS 1.3 server that asks for a client certificate only after reading a request head
    /// (post-handshake authentication, RFC 8446 §4.6.2), and answers with the name it saw.
    /// - Parameter thenReset: after the response, close with a reset (SO_LINGER 0) instead of a FIN.
    static func postHandshakeServer(cert: String, key: String, ca: String, thenReset: Bool = false) -> String {
        """
        import socket, ssl, struct, sys
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.load_cert_chain("\(cert)", "\(key)")
        ctx.load_verify_locations("\(ca)")
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.post_handshake_auth = True
        srv = socket.create_server(("127.0.0.1", int(sys.argv[1])))
        while True:
            conn, _ = srv.accept()
            conn.settimeout(5)
            try:
                s = ctx.wrap_socket(conn, server_side=True)
                head = b""
                while b"\\r\\n\\r\\n" not in head:
                    chunk = s.recv(4096)
                    if not chunk: raise EOFError()
                    head += chunk
                s.verify_client_post_handshake()
                s.do_handshake()
                s.settimeout(1)
                try:
                    s.recv(1)
                except (socket.timeout, TimeoutError):
                    pass
                subject = dict(x[0] for x in s.getpeercert()["subject"])
                body = ("client certificate: %s\\n" % subject["commonName"]).encode()
                s.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\nConnection: close\\r\\n\\r\\n" % len(body) + body)
                if \(thenReset ? "True" : "False"):
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
            except Exception as e:
                print("error:", repr(e), flush=True)
                conn.close()
        """
    }

    @Test("TLS 1.3 post-handshake authentication (a Python server asks after the request): with --client-cert the server sees it; without, a 502 and the reason")
    func postHandshakeAuthentication() throws {
        let world = try World()
        let server = try PythonServer(Self.postHandshakeServer(cert: world.pki.serverCert, key: world.pki.serverKey, ca: world.clientPEM))
        defer { server.stop() }
        let with = try world.run("--client-cert", "localhost=\(world.clientPEM)")
        let r = try world.curlThrough(with, ["--http1.1", "https://localhost:\(server.port)/"])
        #expect(r.out == "client certificate: tv test client\n\n200", "\(r)")
        try with.stop()

        let without = try world.run()
        let started = Date()
        let refused = try world.curlThrough(without, ["--http1.1", "https://localhost:\(server.port)/"])
        #expect(refused.out == "tv: \(Self.reason("certificate_required"))\n\n502", "\(refused)")
        #expect(Date().timeIntervalSince(started) < 10, "no hang: the server's alert ends it")
        let rows = try world.box.closedFlows(2)
        #expect(rows.map { $0.string("status") } == ["inspected", "failed"], "\(rows)")
        #expect(rows.last?.string("failureReason") == Self.reason("certificate_required"), "\(rows)")
        try without.stop()
    }

    @Test("TLS 1.3 post-handshake authentication answered, then the server resets after its response: inspected with the reset, not a refused certificate")
    func postHandshakeThenReset() throws {
        let world = try World()
        let server = try PythonServer(Self.postHandshakeServer(cert: world.pki.serverCert, key: world.pki.serverKey, ca: world.clientPEM,
                                                               thenReset: true))
        defer { server.stop() }
        let tv = try world.run("--client-cert", "localhost=\(world.clientPEM)")
        let r = try world.curlThrough(tv, ["--http1.1", "https://localhost:\(server.port)/"])
        // tv delivers what it read before it passes the server's reset on (ServerResetRunTests),
        // so curl has the whole response before the reset.
        #expect(r.out == "client certificate: tv test client\n\n200", "\(r)")
        let rows = try world.box.closedFlows(1)
        #expect(rows.map { $0.string("status") } == ["inspected"], "\(rows)")
        #expect(rows.first?.string("failureReason") == nil, "\(rows)")
        // The reset is read, or met by tv's next send to the server (its close_notify): both say so.
        #expect(["the server reset the connection", "sending to the server failed: broken pipe"].contains(rows.first?.string("error") ?? ""), "\(rows)")
        #expect(rows.first?.int("bytesDown") == 93, "the response was read from the server: \(rows)")
        try tv.stop()
    }

    @Test("the tls.clientCerts setting is checked when set and used by tv run")
    func setting() throws {
        let world = try World()
        let bad = try world.box.tv("settings", "set", "tls.clientCerts", "localhost=\(world.box.work)/none.pem")
        #expect(bad.status != 0)
        #expect(bad.err.contains("The client certificate file \(world.box.work)/none.pem (for 'localhost') cannot be read (no such file); check the path given with --client-cert."), "\(bad)")
        let saved = try world.box.tv("settings", "set", "tls.clientCerts", "[\"^localhost$=\(world.clientPEM)\"]")
        #expect(saved.status == 0, "\(saved)")
        let shown = try world.box.tv("settings", "get", "tls.clientCerts")
        #expect(shown.out == "[\"^localhost$=\(world.clientPEM)\"]\n", "\(shown)")
        let server = try world.server("-tls1_3")
        defer { server.stop() }
        let tv = try world.run()
        let r = try world.curlThrough(tv, ["--http1.1", "https://localhost:\(server.port)/"])
        #expect(r.out.contains("Subject: CN=tv test client") && r.out.hasSuffix("\n200"), "\(r)")
        // The running session does not take a new list: said, not claimed as applied.
        let live = try world.box.tv("settings", "set", "tls.clientCerts", "")
        #expect(live.out == "Saved tls.clientCerts = [] (was [\"^localhost$=\(world.clientPEM)\"]).\nThe running session keeps the value it started with (client certificates are read when a session starts).\nIt applies when the next session starts (`tv stop`, then `tv run`).\n", "\(live)")
        try tv.stop()
    }

    @Test("tv run refuses a client certificate file it cannot use, in one sentence, before listening")
    func startUpChecks() throws {
        let world = try World()
        let open = try world.box.write("open.pem", world.box.text(world.clientPEM))
        chmod(open, 0o644)
        let certOnly = try world.box.write("cert.pem", world.box.text(world.box.work + "/client.crt"))
        chmod(certOnly, 0o600)
        let cases: [(String, String)] = [
            ("a=\(world.box.work)/none.pem", "The client certificate file \(world.box.work)/none.pem (for 'a') cannot be read (no such file); check the path given with --client-cert."),
            ("a=\(open)", "The client certificate file \(open) (for 'a') can be read by other users (mode 0644), and it holds a private key; `chmod 600 \(open)` or use a file of your own."),
            ("a=\(certOnly)", "The client certificate file \(certOnly) (for 'a') holds no PEM private key; put the certificate's unencrypted key in it."),
            ("no-file-here", "'no-file-here' is not HOST_PATTERN=FILE; give a client certificate as --client-cert '\\.example\\.com$=/path/client.pem'."),
        ]
        for (argument, sentence) in cases {
            let r = try world.box.tv("run", "--listen", "127.0.0.1:\(freeLoopbackPort())", "--client-cert", argument)
            #expect(r.status != 0, "\(r)")
            #expect(r.err.contains(sentence), "\(r)")
        }
    }
}
