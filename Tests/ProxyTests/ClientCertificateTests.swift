import Foundation
import LocalCA
@testable import Proxy
import Testing
import TVHome
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// A server that asks for a client certificate: which certificate answers it
/// (`ClientCertificateChoice`), when a failed leg means "the server requires a client
/// certificate" (`ClientCertificateVerdict`), what the machine answers (playbooks), and the
/// start-up checks of a `--client-cert` file.
@Suite("Client certificates")
struct ClientCertificateTests {
    typealias Machine = ConnectionMachine
    typealias T = ConnectionMachineTests

    static func failure(alert: UInt8?, requested: Bool, presented: Bool = false, eof: Bool = false, reset: Bool = false,
                        serverWentOn: Bool = false) -> TLSFailure {
        var f = TLSFailure(peerAlert: alert, systemError: reset ? ECONNRESET : nil, eof: eof,
                           text: alert.map { "alert \(TLSAlert.name($0))" } ?? "the peer closed the connection")
        f.clientCertificate = ClientCertificateAsk(requested: requested, presented: presented, serverWentOn: serverWentOn)
        return f
    }

    @Test("the first pattern that matches the server's name (or name:port) picks the certificate; none: nil")
    func choice() throws {
        let patterns = try ["^api\\.corp\\.test$", "\\.corp\\.test:8443$", "corp\\.test$"].map(HostPattern.init)
        #expect(ClientCertificateChoice.select(host: "api.corp.test", port: 443, patterns: patterns) == 0)
        #expect(ClientCertificateChoice.select(host: "API.Corp.Test", port: 443, patterns: patterns) == 0)
        #expect(ClientCertificateChoice.select(host: "www.corp.test", port: 8443, patterns: patterns) == 1)
        #expect(ClientCertificateChoice.select(host: "www.corp.test", port: 443, patterns: patterns) == 2)
        #expect(ClientCertificateChoice.select(host: "corp.test.example", port: 443, patterns: patterns) == nil)
        #expect(ClientCertificateChoice.select(host: "a.test", port: 443, patterns: []) == nil)
    }

    @Test("classification: certificate_required always; after a CertificateRequest the refusal alerts or a close; else not about certificates")
    func verdict() {
        typealias V = ClientCertificateVerdict
        #expect(V.failure(Self.failure(alert: 116, requested: false)) == .clientCertificateRequired(presented: false, alert: 116))
        #expect(V.failure(Self.failure(alert: 116, requested: true, presented: true)) == .clientCertificateRequired(presented: true, alert: 116))
        #expect(V.failure(Self.failure(alert: 40, requested: true)) == .clientCertificateRequired(presented: false, alert: 40))
        #expect(V.failure(Self.failure(alert: 48, requested: true, presented: true)) == .clientCertificateRequired(presented: true, alert: 48))
        #expect(V.failure(Self.failure(alert: nil, requested: true, eof: true)) == .clientCertificateRequired(presented: false, alert: nil))
        #expect(V.failure(Self.failure(alert: nil, requested: true, presented: true, reset: true)) == .clientCertificateRequired(presented: true, alert: nil))
        // Asked, answered, and the server went on sending data: a close or reset after that is not a refusal…
        #expect(V.failure(Self.failure(alert: nil, requested: true, presented: true, eof: true, serverWentOn: true)) == nil)
        #expect(V.failure(Self.failure(alert: nil, requested: true, presented: true, reset: true, serverWentOn: true)) == nil)
        // …but an alert still says what it says.
        #expect(V.failure(Self.failure(alert: 42, requested: true, presented: true, serverWentOn: true)) == .clientCertificateRequired(presented: true, alert: 42))
        // Not asked: a handshake_failure is just that; so is an EOF.
        #expect(V.failure(Self.failure(alert: 40, requested: false)) == nil)
        #expect(V.failure(Self.failure(alert: nil, requested: false, eof: true)) == nil)
        // Asked, but an alert that says something else.
        #expect(V.failure(Self.failure(alert: 70, requested: true)) == nil)
        #expect(V.failure(Self.failure(alert: 80, requested: true)) == nil)
        // Asked, and a failure that is neither an alert nor a close.
        var other = Self.failure(alert: nil, requested: true)
        other.text = "bad record mac"
        #expect(V.failure(other) == nil)
        // Data phase: reading from or sending to the server's TLS leg; not the client's.
        let tls = LegFailure.tls(Self.failure(alert: 116, requested: false))
        #expect(V.failure(ConnectionFailure.read(from: .server, reset: false, tls)) == .clientCertificateRequired(presented: false, alert: 116))
        #expect(V.failure(ConnectionFailure.send(to: .server, tls)) == .clientCertificateRequired(presented: false, alert: 116))
        #expect(V.failure(ConnectionFailure.read(from: .client, reset: false, tls)) == nil)
        #expect(V.failure(ConnectionFailure.idle(seconds: 5)) == nil)
    }

    @Test("the server went on after the answer: only data read in a call that began after the latest request counts; a new request starts over")
    func serverWentOn() {
        var ask = ClientCertificateAsk()
        ask.noteServerData(requestsBefore: 0)  // data before any request
        #expect(!ask.serverWentOn && !ask.requested)
        ask.noteRequest()
        ask.noteServerData(requestsBefore: 0)  // the read that brought the request also returned data
        #expect(!ask.serverWentOn && ask.requested)
        ask.noteServerData(requestsBefore: 1)  // a later read
        #expect(ask.serverWentOn)
        ask.noteRequest()  // a renegotiation asks again
        #expect(!ask.serverWentOn && ask.requests == 2)
        ask.noteServerData(requestsBefore: 1)
        #expect(!ask.serverWentOn)
        ask.noteServerData(requestsBefore: 2)
        #expect(ask.serverWentOn)
    }

    @Test("the sentences: what happened and what to do")
    func sentences() {
        #expect(ConnectionFailure.clientCertificateRequired(presented: false, alert: 116).sentence
                == "the server requires a client certificate (alert certificate_required) and tv has none for this host; give one with --client-cert HOST_PATTERN=FILE")
        #expect(ConnectionFailure.clientCertificateRequired(presented: false, alert: nil).sentence
                == "the server requires a client certificate and tv has none for this host; give one with --client-cert HOST_PATTERN=FILE")
        #expect(ConnectionFailure.clientCertificateRequired(presented: true, alert: 48).sentence
                == "the server requires a client certificate and refused the one tv presented (alert unknown_ca); check the file given with --client-cert")
    }

    @Test("an HTTP/1 request line begins with a capital-letter method and a space; h2's preface and TLS do not")
    func http1Start() {
        func check(_ text: String) -> Bool { Array(text.utf8).withUnsafeBytes { RelayState.beginsHTTP1Request($0) } }
        #expect(check("GET / HTTP/1.1\r\n"))
        #expect(check("OPTIONS * HTTP/1.1\r\n"))
        #expect(check("PROPFIND /x HTTP/1.1"))
        #expect(!check("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
        #expect(!check("get / HTTP/1.1"))
        #expect(!check(" GET /"))
        #expect(!check("GET"))
        #expect(!check("\u{16}\u{03}\u{01}"))
        #expect(!check("ABCDEFGHIJKLMNOPQRSTU /"))
    }

    // MARK: machine playbooks

    @Test("inspected CONNECT, TLS 1.2, an h2-only client: the upstream handshake fails after a CertificateRequest: the client gets handshake_failure, the flow says why (an HTTP/1 client gets a 502: UpstreamFailureAnswerTests)")
    func handshakeFailureAfterRequest() {
        var m = T.machine()
        T.connected(&m)
        _ = T.bytes(&m, ProxyFixtures.clientHelloH2Only)
        let out = m.handle(.upstreamHandshakeFailed(Self.failure(alert: 40, requested: true)))
        #expect(out == [.armTimer(millis: 0), .refuseClientTLS(alert: TLSAlert.handshakeFailure)])
        #expect(m.facts.status == .failed)
        #expect(m.facts.failureReason == ConnectionFailure.clientCertificateRequired(presented: false, alert: 40).sentence)
        #expect(m.facts.error == m.facts.failureReason)
    }

    /// A reverse:https machine whose plain client's head went to the server over tv's TLS leg.
    static func reversePlain() -> Machine {
        var m = T.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8443, origin: .reverse), upstreamTLS: true))
        let address = SocketAddress(numericHost: "127.0.0.1", port: 8443)!
        _ = m.handle(.start)
        _ = T.text(&m, "GET / HTTP/1.1\r\n\r\n")
        _ = m.handle(.connected(address))
        _ = T.text(&m, "GET / HTTP/1.1\r\n\r\n")
        #expect(m.phase == .upstreamHandshake)
        return m
    }

    @Test("reverse:https, a plain client, TLS 1.2: the failed handshake is a 502 that says the server requires a client certificate")
    func reverseHandshake502() {
        var m = Self.reversePlain()
        let out = m.handle(.upstreamHandshakeFailed(Self.failure(alert: 40, requested: true)))
        let reason = ConnectionFailure.clientCertificateRequired(presented: false, alert: 40).sentence
        #expect(out == [.sendClient(Machine.errorResponse(502, body: "tv: " + reason)), .armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.status == .failed)
        #expect(m.facts.failureReason == reason)
    }

    @Test("reverse:https, a plain client, TLS 1.3: certificate_required as the first read after the handshake is a 502, and the close lingers")
    func reverseRelay502() {
        var m = Self.reversePlain()
        let done = Machine.UpstreamHandshake(version: .tls13, alpn: Array("http/1.1".utf8), certificateProblem: nil, certificate: nil, certificateSANs: [], resumed: false)
        _ = m.handle(.upstreamHandshakeDone(done))
        #expect(m.phase == .relaying)
        _ = Array("GET / HTTP/1.1\r\n\r\n".utf8).withUnsafeBytes { m.moved($0, .clientToServer, atMicros: 2_000) }
        let failure = ConnectionFailure.read(from: .server, reset: false, .tls(Self.failure(alert: 116, requested: false)))
        let out = m.handle(.relayEnded(.init(failure: failure, atMicros: 3_000)))
        let reason = ConnectionFailure.clientCertificateRequired(presented: false, alert: 116).sentence
        #expect(out == [.sendClient(Machine.errorResponse(502, body: "tv: " + reason)), .armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.status == .failed)
        #expect(m.facts.failureReason == reason)
        #expect(m.closeLingers)
    }

    /// An inspected relay whose upstream chose `alpn` (nil: none).
    static func inspected(alpn: String?) -> Machine {
        var m = T.machine()
        T.connected(&m)
        _ = T.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        var done = T.upstreamDone
        done.version = .tls13
        done.alpn = alpn.map { Array($0.utf8) }
        _ = m.handle(.upstreamHandshakeDone(done))
        _ = m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false, atMicros: 1_000_000)))
        #expect(m.phase == .relaying)
        return m
    }

    @Test("inspected TLS 1.3: certificate_required in the data phase: a 502 over tv's leg to an HTTP/1 client that heard nothing yet; else a close")
    func inspectedRelay() {
        let failure = ConnectionFailure.read(from: .server, reset: false, .tls(Self.failure(alert: 116, requested: false)))
        let reason = ConnectionFailure.clientCertificateRequired(presented: false, alert: 116).sentence
        let answer: [Machine.Command] = [.sendClient(Machine.errorResponse(502, body: "tv: " + reason)), .armTimer(millis: 0), .close(reset: false)]
        let closeOnly: [Machine.Command] = [.armTimer(millis: 0), .close(reset: false)]
        // (upstream ALPN, what the client sent first (nil: nothing yet), server bytes already relayed, expected)
        let cases: [(String?, String?, Int, [Machine.Command])] = [
            ("http/1.1", nil, 0, answer),            // ALPN http/1.1: it will speak HTTP/1
            (nil, nil, 0, answer),                   // no ALPN, and the client offered http/1.1
            ("h2", nil, 0, closeOnly),               // h2: a 502 in HTTP/1 would mean nothing
            ("h2", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 0, closeOnly),
            (nil, "GET / HTTP/1.1\r\n", 0, answer),
            (nil, "\u{0}\u{1}binary", 0, closeOnly), // not HTTP
            (nil, "GET / HTTP/1.1\r\n", 100, closeOnly), // the server already answered something
        ]
        for (alpn, first, serverBytes, expected) in cases {
            var m = Self.inspected(alpn: alpn)
            if let first { _ = Array(first.utf8).withUnsafeBytes { m.moved($0, .clientToServer, atMicros: 1_100_000) } }
            if serverBytes > 0 { _ = T.moved(&m, serverBytes, .serverToClient, at: 1_150_000) }
            let out = m.handle(.relayEnded(.init(failure: failure, atMicros: 1_200_000)))
            #expect(out == expected, "\(String(describing: alpn)) \(String(describing: first)) \(serverBytes)")
            #expect(m.facts.status == .failed)
            #expect(m.facts.failureReason == reason)
        }
    }

    @Test("a data-phase handshake_failure with no CertificateRequest is an ordinary read failure")
    func notAboutCertificates() {
        var m = Self.inspected(alpn: "http/1.1")
        _ = Array("GET / HTTP/1.1\r\n".utf8).withUnsafeBytes { m.moved($0, .clientToServer, atMicros: 1_100_000) }
        let failure = ConnectionFailure.read(from: .server, reset: false, .tls(Self.failure(alert: 40, requested: false)))
        // An ordinary read failure: what tv holds for the client goes first (RelayPhaseTests).
        #expect(m.handle(.relayEnded(.init(failure: failure, atMicros: 1_200_000))) == [.deliverThenClose(to: .client, reset: false)])
        #expect(m.facts.error == "reading from the server failed: alert handshake_failure")
        #expect(m.facts.status == .inspected)
    }

    // MARK: --client-cert rules and files

    @Test("HOST_PATTERN=FILE splits at the last '='; either side empty is refused with the form to use")
    func ruleParsing() throws {
        #expect(try ClientCertificateRule(parsing: "\\.corp\\.test$=/k/c.pem") == ClientCertificateRule(pattern: "\\.corp\\.test$", file: "/k/c.pem"))
        #expect(try ClientCertificateRule(parsing: "a(?=b)=/c.pem") == ClientCertificateRule(pattern: "a(?=b)", file: "/c.pem"))
        for bad in ["/only/a/file.pem", "=/c.pem", "host="] {
            #expect(throws: ProxyError.clientCertificateRuleUnreadable(bad)) { try ClientCertificateRule(parsing: bad) }
        }
        #expect(ProxyError.clientCertificateRuleUnreadable("x").message
                == "'x' is not HOST_PATTERN=FILE; give a client certificate as --client-cert '\\.example\\.com$=/path/client.pem'.")
    }

    @Test("start-up checks of a client certificate file: readable, a secret file, a certificate and its key, valid now")
    func fileChecks() throws {
        let dir = Shell.tempDirectory("clientcert")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func openssl(_ args: [String]) throws {
            let r = Shell.run(["openssl"] + args)
            guard r.status == 0 else { throw TestError("openssl \(args): \(r.err)") }
        }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try openssl(["req", "-x509"] + ec + ["-keyout", dir + "/a.key", "-out", dir + "/a.crt", "-subj", "/CN=client a", "-days", "2"])
        try openssl(["req", "-x509"] + ec + ["-keyout", dir + "/b.key", "-out", dir + "/b.crt", "-subj", "/CN=client b", "-days", "2"])
        try openssl(["pkey", "-in", dir + "/a.key", "-out", dir + "/a-enc.key", "-aes128", "-passout", "pass:x"])
        func file(_ name: String, _ parts: [String], mode: mode_t = 0o600) throws -> String {
            let path = dir + "/" + name
            let text = try parts.map { try String(contentsOfFile: dir + "/" + $0, encoding: .utf8) }.joined()
            try text.write(toFile: path, atomically: false, encoding: .utf8)
            chmod(path, mode)
            return path
        }
        // Read at each check: a certificate made later in the test starts at the second it was
        // made (notBefore), which a clock read once before could precede (the CI run saw
        // "not valid now" for the server-only certificate).
        var now: Int64 { Int64(Date().timeIntervalSince1970) }
        func problem(_ path: String) -> ProxyError? {
            do { try ClientCertificateRule(pattern: "a", file: path).check(now: now); return nil } catch { return error as? ProxyError }
        }
        let good = try file("good.pem", ["a.crt", "a.key"])
        #expect(problem(good) == nil)
        let identity = try ClientCertificate.load(ClientCertificateRule(pattern: "a", file: good), now: now)
        #expect(identity.certificate.subject.contains("client a"))
        #expect(identity.chain.isEmpty)
        let chained = try file("chain.pem", ["a.crt", "b.crt", "a.key"])
        #expect(try ClientCertificate.load(ClientCertificateRule(pattern: "a", file: chained), now: now).chain.count == 1)
        let open = try file("open.pem", ["a.crt", "a.key"], mode: 0o644)
        #expect(problem(open) == .clientCertificateUnusable(file: open, pattern: "a", .untrusted(.openToOthers(mode: 0o644))))
        #expect(problem(dir + "/none.pem") == .clientCertificateUnusable(file: dir + "/none.pem", pattern: "a", .unreadable("no such file")))
        let keyOnly = try file("key.pem", ["a.key"])
        #expect(problem(keyOnly) == .clientCertificateUnusable(file: keyOnly, pattern: "a", .noCertificate))
        let certOnly = try file("cert.pem", ["a.crt"])
        #expect(problem(certOnly) == .clientCertificateUnusable(file: certOnly, pattern: "a", .noKey))
        // A certificate alone, readable by all (as certificates are): told it lacks the key, not
        // that a key it does not hold is exposed.
        #expect(throws: ProxyError.invalidHostPattern("*.example.com", use: .clientCertificate)) {
            try ClientCertificateRule(pattern: "*.example.com", file: good).check(now: now)
        }
        #expect(ProxyError.invalidHostPattern("*.example.com", use: .clientCertificate).message
                == "'*.example.com' is not a regular expression; fix the --client-cert HOST_PATTERN (e.g. '\\.example\\.com$').")
        let publicCert = try file("public.pem", ["a.crt"], mode: 0o644)
        #expect(problem(publicCert) == .clientCertificateUnusable(file: publicCert, pattern: "a", .noKey))
        // A server-only certificate (extendedKeyUsage serverAuth, as `tv ca issue` makes): servers
        // refuse it for a client (OpenSSL error 26), so tv refuses it first.
        try openssl(["req", "-x509"] + ec + ["-keyout", dir + "/s.key", "-out", dir + "/s.crt", "-subj", "/CN=server only", "-days", "2",
                                             "-addext", "extendedKeyUsage=serverAuth"])
        let serverOnly = try file("server-only.pem", ["s.crt", "s.key"])
        #expect(problem(serverOnly) == .clientCertificateUnusable(file: serverOnly, pattern: "a", .notForClients))
        #expect(problem(serverOnly)?.message == "The client certificate file \(serverOnly) (for 'a') holds a certificate whose extended key usage "
                + "leaves out clientAuth, so servers refuse it for a client (a `tv ca issue` certificate is a server's); issue one with extendedKeyUsage=clientAuth.")
        let mismatch = try file("mismatch.pem", ["a.crt", "b.key"])
        #expect(problem(mismatch) == .clientCertificateUnusable(file: mismatch, pattern: "a", .keyMismatch))
        let encrypted = try file("enc.pem", ["a.crt", "a-enc.key"])
        #expect(problem(encrypted) == .clientCertificateUnusable(file: encrypted, pattern: "a", .encryptedKey))
        #expect(throws: (any Error).self) { try ClientCertificateRule(pattern: "a", file: good).check(now: now + 5 * 86_400) }
        #expect(problem(mismatch)?.message
                == "The client certificate file \(mismatch) (for 'a') holds a private key that is not the key of its first certificate; put the certificate first, with its own key.")
        #expect(problem(open)?.message
                == "The client certificate file \(open) (for 'a') can be read by other users (mode 0644), and it holds a private key; `chmod 600 \(open)` or use a file of your own.")
    }

    // MARK: a TLS 1.2 renegotiation that asks (in process: see `RenegotiatingServer`)

    /// A self-signed client certificate (CN "tv test client") and its key in one 0600 PEM file.
    static func makeClientPEM(in dir: String) throws -> String {
        let r = Shell.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                           "-keyout", dir + "/client.key", "-out", dir + "/client.crt", "-subj", "/CN=tv test client", "-days", "2"])
        guard r.status == 0 else { throw TestError("openssl req: \(r.err)") }
        let path = dir + "/client.pem"
        let text = try String(contentsOfFile: dir + "/client.crt", encoding: .utf8) + String(contentsOfFile: dir + "/client.key", encoding: .utf8)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o600)
        return path
    }

    @Test("a TLS 1.2 server renegotiates after the request to ask for a certificate: with --client-cert it gets it; without, the client gets a 502 and the flow says why")
    func renegotiation() throws {
        let dir = Shell.tempDirectory("clientcert-reneg")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pem = try Self.makeClientPEM(in: dir)
        let pki = TestPKI.shared
        let server = try RenegotiatingServer(cert: pki.serverCert, key: pki.serverKey)
        defer { server.stop() }
        let url = "https://localhost:\(server.port)/"

        let with = try Harness { $0.clientCertificates = [ClientCertificateRule(pattern: "^localhost$", file: pem)] }
        let ok = Shell.run(["curl", "-sS", "--max-time", "15", "-x", with.proxyURL, "--cacert", pki.tvRoot, "--http1.1", url], timeout: 20)
        #expect(ok.out == "client certificate: /CN=tv test client\n", "\(ok.out)\(ok.err)")
        let accepted = with.sink.waitForClosed(1).first
        #expect(accepted?.status == .inspected, "\(String(describing: accepted?.error))")

        let without = try Harness()
        let started = Date()
        let refused = Shell.run(["curl", "-sS", "--max-time", "15", "-x", without.proxyURL, "--cacert", pki.tvRoot, "--http1.1",
                                 "-w", "\n%{http_code}", url], timeout: 20)
        let reason = ConnectionFailure.clientCertificateRequired(presented: false, alert: TLSAlert.handshakeFailure).sentence
        #expect(refused.out == "tv: \(reason)\n\n502", "\(refused.out)\(refused.err)")
        #expect(Date().timeIntervalSince(started) < 10, "no hang: the server's alert ends it")
        let flow = try #require(without.sink.waitForClosed(1).first)
        #expect(flow.status == .failed, "\(String(describing: flow.error))")
        #expect(flow.failureReason == reason)
        #expect(with.waitIdle() && without.waitIdle())
    }
}
