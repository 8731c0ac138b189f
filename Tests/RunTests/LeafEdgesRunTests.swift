import Foundation
import Testing

/// Issue 14 §1 and §3 through the real `tv` binary: the leaf's key type follows what the client
/// accepts (`openssl s_client` limited to RSA or to ECDSA), and a client without SNI in reverse
/// mode gets a leaf naming the address it dialled (curl to 127.0.0.1 and [::1] listeners).
@Suite("tv run: the leaf a client gets, its key type and the name it dialled (issue 14)", .serialized)
struct LeafEdgesRunTests {
    /// The one-algorithm clients of issue 14 §1, the version and the "Signature type" `-brief` must print.
    static let clients: [(arguments: [String], version: String, signature: String)] = [
        (["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"], "TLSv1.2", "RSA"),
        (["-tls1_3", "-sigalgs", "rsa_pss_rsae_sha256"], "TLSv1.3", "RSA-PSS"),
        (["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256"], "TLSv1.2", "ECDSA"),
        (["-tls1_3", "-sigalgs", "ecdsa_secp256r1_sha256"], "TLSv1.3", "ECDSA"),
        // Every suite, but no P-256 in supported_groups: TLS 1.2 cannot use a P-256 leaf.
        (["-tls1_2", "-groups", "X25519"], "TLSv1.2", "RSA"),
    ]

    /// `openssl s_client -proxy tv … ARGS` to nginx as localhost, verifying tv's leaf, with one GET.
    static func sClient(_ world: RunWorld, _ tv: TVSession, _ arguments: [String]) throws -> ProcessOutput {
        try world.sandbox.tool("openssl", ["s_client", "-proxy", tv.proxyHostPort, "-connect", "localhost:\(world.nginx.tlsPort)",
                                           "-servername", "localhost", "-CAfile", world.tvRoot, "-verify_hostname", "localhost",
                                           "-verify_return_error", "-brief", "-ign_eof"] + arguments,
                               stdin: Data("GET /index.html HTTP/1.0\r\nHost: localhost\r\n\r\n".utf8))
    }

    @Test("RSA-only and ECDSA-only openssl s_client (TLS 1.2 suite, TLS 1.3 sigalgs) through tv to nginx, under an ECDSA and an RSA leaf key: every one is served and inspected",
          arguments: ["ecdsa-p256", "rsa-2048"])
    func oneAlgorithmClients(leafKey: String) throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        try box.createCA("--leaf-key", leafKey)
        let tv = try world.run("--inspect")
        for client in Self.clients {
            let s = try Self.sClient(world, tv, client.arguments)
            #expect(s.status == 0, "\(client.arguments): \(s)")
            #expect(s.err.contains("Verification: OK"), "\(client.arguments): \(s)")
            #expect(s.err.contains("Protocol version: \(client.version)\n"), "\(client.arguments): \(s)")
            #expect(s.err.contains("Signature type: \(client.signature)"), "\(client.arguments): \(s)")
            #expect(s.out.hasSuffix("\r\n\r\nhello from nginx\n"), "\(client.arguments): \(s)")
        }
        // A client that takes either gets the CA's own type.
        let plain = try Self.sClient(world, tv, [])
        #expect(plain.status == 0, "\(plain)")
        #expect(plain.err.contains(leafKey == "rsa-2048" ? "Signature type: RSA" : "Signature type: ECDSA"), "\(plain)")
        let rows = try box.closedFlows(Self.clients.count + 1)
        #expect(rows.map { $0.string("status") } == Array(repeating: "inspected", count: Self.clients.count + 1), "\(rows)")
        try tv.stop()
    }

    @Test("an imported root constrained to localhost (RFC 5280 §4.2.1.10): curl --cacert ROOT through tv to nginx, whose certificate also names a.test and others, verifies tv's leaf (the copied names outside made curl refuse it, error 60)")
    func nameConstrainedRoot() throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        let made = try box.tool("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                            "-keyout", box.work + "/nc.key", "-out", box.work + "/nc.pem", "-days", "30",
                                            "-subj", "/CN=Constrained CA", "-addext", "basicConstraints=critical,CA:TRUE",
                                            "-addext", "keyUsage=critical,keyCertSign", "-addext", "nameConstraints=critical,permitted;DNS:localhost"])
        #expect(made.status == 0, "\(made)")
        let imported = try box.tv("ca", "import", "--cert", box.work + "/nc.pem", "--key", box.work + "/nc.key")
        #expect(imported.status == 0, "\(imported)")
        let tv = try world.run("--inspect")
        let r = try world.curlThrough(tv, ["-sS", world.url("/index.html")])
        #expect(r.status == 0, "\(r)")
        #expect(r.out == "hello from nginx\n", "\(r)")
        let rows = try box.closedFlows(1)
        #expect(rows.map { $0.string("status") } == ["inspected"], "\(rows)")
        try tv.stop()
    }

    @Test("reverse:https://localhost:PORT to a server whose certificate names only localhost: curl --cacert ROOT to the 127.0.0.1 and [::1] listeners (no SNI) verifies tv's leaf")
    func reverseModeDialledAddress() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let issued = try box.issue(["localhost"])
        let server = try OpenSSLServer(cert: issued.chain, key: issued.key, extra: [])
        defer { server.stop() }
        let sans = try box.tool("openssl", ["x509", "-noout", "-ext", "subjectAltName", "-in", issued.cert])
        #expect(sans.out.contains("DNS:localhost") && !sans.out.contains("IP Address"), "the server names only localhost: \(sans)")
        for (round, listen) in ["127.0.0.1", "[::1]"].enumerated() {
            let port = freeLoopbackPort()
            let tv = try TVSession(box, ["--inspect", "--mode", "reverse:https://localhost:\(server.port)"], listen: "\(listen):\(port)")
            let r = try box.curl(["-v", "--cacert", world.tvRoot, "https://\(listen):\(port)/"])
            #expect(r.status == 0, "\(listen): \(r)")
            #expect(r.out.contains("s_server"), "\(listen): \(r)")
            #expect(r.err.contains("matched cert's IP address"), "\(listen): \(r.err)")
            let rows = try box.closedFlows(round + 1)
            #expect(rows.map { $0.string("status") } == Array(repeating: "inspected", count: round + 1), "\(rows)")
            try tv.stop()
        }
    }
}
