import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// How tv checks real servers and answers for them, through the real `tv run` (a new-user
/// trial's findings): a certificate naming its host only in the CN is refused (RFC 6125
/// §6.4.4), each kind of failure gets its own advice, `--upstream-insecure` still records what
/// the check found, a client that drops the handshake with a bare FIN is weighed as pinning or a
/// missing root (Node.js), and a client that speaks no HTTP gets no HTTP text. openssl s_server
/// upstreams with certificates from the test CA, curl, openssl s_client, Python and Node clients,
/// all on 127.0.0.1.
@Suite("tv run: checking upstream servers (trial 41)", .serialized)
struct UpstreamVerifyRunTests {
    static let skip = "or skip the check with --upstream-insecure"

    /// curl through `tv` to `https://HOST:PORT/`: (body, HTTP status).
    static func fetch(_ world: RunWorld, _ tv: TVSession, _ host: String, _ port: UInt16) throws -> (String, String) {
        let r = try world.curlThrough(tv, ["-s", "-w", "\n%{http_code}", "https://\(host):\(port)/"])
        let parts = r.out.split(separator: "\n", omittingEmptySubsequences: false)
        return (parts.dropLast().joined(separator: "\n"), String(parts.last ?? ""))
    }

    @Test("a certificate that names the host only in its subject's CN is refused, by name and by address, saying so (it was inspected and its leaf given the SAN browsers require)")
    func commonNameOnlyRefused() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let certs = try UpstreamCertificates.shared()
        let tv = try world.run("--inspect")
        let byName = try OpenSSLServer(cert: certs.cnOnly, key: certs.key, extra: [])
        defer { byName.stop() }
        let nameSentence = "the server's certificate does not verify (it names localhost only in its subject's CN, not in a subjectAltName, which browsers refuse); "
            + "nothing was sent to it; the server needs a certificate with DNS:localhost in its subjectAltName (RFC 6125 §6.4.4), " + Self.skip
        let (body, code) = try Self.fetch(world, tv, "localhost", byName.port)
        #expect(code == "502" && body == "tv: " + nameSentence + "\n", "\(code) \(body)")
        let rows = try box.closedFlows(1)
        try #require(rows.count == 1)
        #expect(rows[0].string("status") == "failed")
        #expect(rows[0].string("failureReason") == nameSentence)
        #expect(rows[0].object("certificate")?.string("subject") == "CN=localhost")
        #expect(rows[0].object("certificate")?.strings("sans") == [])
        #expect(rows[0].object("certificate")?["verified"] as? Bool == false)

        // By address: an iPAddress SAN is required; the CN is never read.
        let byAddress = try OpenSSLServer(cert: certs.cnOnlyAddress, key: certs.key, extra: [])
        defer { byAddress.stop() }
        let (ipBody, ipCode) = try Self.fetch(world, tv, "127.0.0.1", byAddress.port)
        let ipSentence = "the server's certificate does not verify (it names 127.0.0.1 only in its subject's CN, not in an iPAddress subjectAltName, which browsers refuse); "
            + "nothing was sent to it; the server needs a certificate with IP:127.0.0.1 in its subjectAltName (RFC 6125 §6.4.4), " + Self.skip
        #expect(ipCode == "502" && ipBody == "tv: " + ipSentence + "\n", "\(ipCode) \(ipBody)")
        // A certificate with the name in its SAN still verifies (nginx's: DNS:localhost, IP:127.0.0.1).
        let good = try world.curlThrough(tv, ["-s", world.url("/index.html")])
        #expect(good.out == "hello from nginx\n", "\(good)")
        let all = try box.closedFlows(3)
        #expect(all.map { $0.string("status") } == ["failed", "failed", "inspected"])
        #expect(all[2].object("certificate")?["verified"] as? Bool == true)
        try tv.stop()
    }

    @Test("each kind of failure gets its own advice: expired (the dates and the clock), wrong host (the name it holds), weak key, SHA-1, clientAuth only, self-signed and an unknown root in the chain (--upstream-ca)")
    func adviceFollowsTheKind() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let certs = try UpstreamCertificates.shared()
        let tv = try world.run("--inspect")
        let legacy = ["-cipher", "DEFAULT@SECLEVEL=0"]
        let cases: [(cert: String, key: String, extra: [String], expected: String)] = [
            (certs.wrongHost, certs.key, [], "hostname mismatch: it names other.test, not localhost); nothing was sent to it; "
                + "reach the server by a name its certificate holds (other.test), " + Self.skip),
            (certs.weakKey, certs.weakKeyKey, legacy, "EE certificate key too weak: its key, RSA 1024, is below the 2048-bit RSA or 224-bit EC keys "
                + "OpenSSL's security level 2 requires); nothing was sent to it; the server needs a certificate with a stronger key, " + Self.skip),
            (certs.sha1, certs.key, legacy, "CA signature digest algorithm too weak: it is signed with ecdsa-with-SHA1, which OpenSSL's security level 2 refuses); "
                + "nothing was sent to it; the server needs a certificate signed with SHA-256 or stronger, " + Self.skip),
            (certs.clientAuthOnly, certs.key, [], "unsuitable certificate purpose: its extendedKeyUsage allows clientAuth, not serverAuth (TLS servers)); "
                + "nothing was sent to it; the server needs a certificate for TLS servers (extendedKeyUsage serverAuth), " + Self.skip),
            (world.pki.selfSignedCert, world.pki.selfSignedKey, [], "self-signed certificate); nothing was sent to it; "
                + "trust the server's CA with --upstream-ca FILE, " + Self.skip),
            // The error is about the chain's root (depth 1), as the verify callback saw it.
            (certs.otherRootLeaf, certs.key, ["-cert_chain", certs.otherRoot], "self-signed certificate in certificate chain: its root CN=Other Root "
                + "is not a CA tv trusts); nothing was sent to it; trust the server's CA with --upstream-ca FILE, " + Self.skip),
        ]
        for (index, c) in cases.enumerated() {
            let server = try OpenSSLServer(cert: c.cert, key: c.key, extra: c.extra)
            defer { server.stop() }
            let sentence = "the server's certificate does not verify (" + c.expected
            let (body, code) = try Self.fetch(world, tv, "localhost", server.port)
            #expect(code == "502" && body == "tv: " + sentence + "\n", "\(code) \(body)")
            let rows = try box.closedFlows(index + 1)
            #expect(rows.last?.string("failureReason") == sentence)
            // Only what can make the certificate verify is offered: --upstream-ca for an issuer alone.
            #expect(sentence.contains("--upstream-ca") == c.expected.hasPrefix("self-signed certificate"), "\(sentence)")
        }
        // Expired: its end and this machine's clock (read at the check), and what follows from each.
        let expired = try OpenSSLServer(cert: certs.expired, key: certs.key, extra: [])
        defer { expired.stop() }
        let before = Int(Date().timeIntervalSince1970)
        let (body, code) = try Self.fetch(world, tv, "localhost", expired.port)
        let after = Int(Date().timeIntervalSince1970)
        let head = "tv: the server's certificate does not verify (certificate has expired: it was valid until 2024-02-01 00:00:00 UTC, and this machine's clock reads "
        let tail = " UTC); nothing was sent to it; if this machine's clock is right, the server must renew its certificate, " + Self.skip + "\n"
        #expect(code == "502" && body.hasPrefix(head) && body.hasSuffix(tail), "\(body)")
        let clock = String(body.dropFirst(head.count).dropLast(tail.count))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let read = Int(formatter.date(from: clock)?.timeIntervalSince1970 ?? 0)
        #expect(read >= before - 1 && read <= after + 1, "\(clock)")
        try tv.stop()
    }

    @Test("--upstream-insecure: flows to an expired and a self-signed server are inspected and say the check failed and why (tv flows, tv flow, --json); a good one says verified; tv status says the mode")
    func insecureRecordsTheCheck() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let certs = try UpstreamCertificates.shared()
        let tv = try world.run("--inspect", "--upstream-insecure")
        let expired = try OpenSSLServer(cert: certs.expired, key: certs.key, extra: [])
        defer { expired.stop() }
        let selfSigned = try OpenSSLServer(cert: world.pki.selfSignedCert, key: world.pki.selfSignedKey, extra: [])
        defer { selfSigned.stop() }
        #expect(try Self.fetch(world, tv, "localhost", expired.port).1 == "200")
        #expect(try Self.fetch(world, tv, "localhost", selfSigned.port).1 == "200")
        #expect(try world.curlThrough(tv, ["-s", world.url("/index.html")]).out == "hello from nginx\n")
        let rows = try box.closedFlows(3)
        try #require(rows.count == 3)
        #expect(rows.map { $0.string("status") } == ["inspected", "inspected", "inspected"])
        let verdicts = rows.map { $0.object("certificate")?["verified"] as? Bool }
        #expect(verdicts == [false, false, true])
        let expiredProblem = try #require(rows[0].object("certificate")?.string("problem"))
        #expect(expiredProblem.hasPrefix("certificate has expired: it was valid until 2024-02-01 00:00:00 UTC, and this machine's clock reads "), "\(expiredProblem)")
        #expect(rows[1].object("certificate")?.string("problem") == "self-signed certificate")
        #expect(rows[2].object("certificate")?["problem"] is NSNull)
        // The list says it where it read plain "inspected".
        let list = try box.tv("flows")
        #expect(list.out.contains("  inspected, server NOT verified: self-signed certificate\n"), "\(list.out)")
        #expect(list.out.contains("  inspected, server NOT verified: certificate has expired …\n"), "\(list.out)")
        // `tv flow ID`: the status and the certificate's verdict, text and JSON.
        let id = try #require(rows[1].int("id"))
        let text = try box.tv("flow", String(id)).out
        #expect(text.contains("  status       inspected — tv terminated TLS on both legs, though the server's certificate did NOT verify (tv run --upstream-insecure): "
                              + "anyone on the way to the server could have stood in for it\n"), "\(text)")
        #expect(text.contains("    verified   NO: self-signed certificate; inspected anyway (tv run --upstream-insecure)\n"), "\(text)")
        let detail = try box.json("flow", String(id))
        #expect(detail.object("certificate")?["verified"] as? Bool == false)
        #expect(detail.object("certificate")?.string("problem") == "self-signed certificate")
        let goodText = try box.tv("flow", String(try #require(rows[2].int("id")))).out
        #expect(goodText.contains("    verified   yes (its chain, name and dates)\n"), "\(goodText)")
        // `tv status` says the session's mode.
        let status = try box.tv("status").out
        #expect(status.contains("  servers           certificates NOT verified (--upstream-insecure): an impostor on the way to a server is shown to clients as that server; "
                                + "`tv flow ID` says what each check found\n"), "\(status)")
        #expect(try box.status()?.string("serverCertificates") == "not verified")
        // The export carries the verdict too (metadata).
        let exported = box.work + "/connections.json"
        #expect(try box.tv("export", "connections", "-o", exported).status == 0)
        let connections = ((try JSONSerialization.jsonObject(with: box.read(exported)) as? JSON)?["connections"] as? [JSON] ?? [])
            .sorted { ($0.int("id") ?? 0) < ($1.int("id") ?? 0) }
        #expect(connections.map { $0["certificateVerified"] as? Bool } == [false, false, true])
        #expect(connections.map { $0.string("certificateProblem") } == [expiredProblem, "self-signed certificate", nil])
        try tv.stop()
        // A session that checks says so too.
        let checking = try world.run("--inspect")
        #expect(try box.status()?.string("serverCertificates") == "verified")
        #expect(!(try box.tv("status").out.contains("  servers ")))
        try checking.stop()
    }

    /// Node.js without tv's root (its own CA list), through the proxy's CONNECT: it reads tv's
    /// certificate flight, refuses it, and closes with a FIN, no alert.
    static let node = #"""
    const tls = require('tls'), http = require('http');
    const [proxy, target, name] = process.argv.slice(2);
    const [host, port] = proxy.split(':');
    http.request({ host, port, method: 'CONNECT', path: target }).on('connect', (res, socket) => {
        const t = tls.connect({ socket, servername: name }, () => { console.log('authorized', t.authorized); t.end(); });
        t.on('error', e => console.log('error', e.code));
    }).end();
    """#

    /// Replays a ClientHello (Python's, no ALPN) over a CONNECT, reads tv's flight, then closes
    /// with a FIN and no alert, as Node does (the trial's finclient.py without the capture).
    static let finClient = #"""
    import socket, ssl, sys, time
    host, port = sys.argv[1].split(':')
    s = socket.create_connection((host, int(port)))
    s.sendall(f"CONNECT {sys.argv[2]} HTTP/1.1\r\nHost: {sys.argv[2]}\r\n\r\n".encode())
    print(s.recv(1000).split(b"\r\n")[0].decode())
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname=sys.argv[3])
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    s.sendall(outgoing.read())
    time.sleep(0.5)
    print("flight", len(s.recv(65536)) > 0)
    s.shutdown(socket.SHUT_WR)
    time.sleep(0.3)
    s.close()
    """#

    @Test("a client that drops tv's handshake with a bare FIN after its certificate (Node.js without the root; a replayed ClientHello): possible pinning with the root's advice (NODE_EXTRA_CA_CERTS), its next connection kept private and listed by tv pinned; curl without the root still lacks it")
    func finWithoutAlert() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let port = world.nginx.tlsPort
        let target = "localhost:\(port)"
        let script = try box.write("noroot.js", Self.node)
        let first = try box.tool("node", [script, tv.proxyHostPort, target, "localhost"])
        #expect(first.out.hasPrefix("error "), "\(first)")
        let rows = try box.closedFlows(1)
        let advice = "the client closed the connection after seeing tv's certificate, before finishing the handshake (possible pinning); "
            + "a client without tv's root that sends no alert closes so too (Node.js: give it the root with NODE_EXTRA_CA_CERTS=FILE, from `tv ca export`)"
        #expect(rows.first?.string("status") == "failed")
        #expect(rows.first?.string("failureReason") == advice + "; its next connection to \(target) passes through unread", "\(rows)")
        #expect(try box.status()?.int("possiblePinning") == 1)
        // Its next connection passes through and is remembered.
        _ = try box.tool("node", [script, tv.proxyHostPort, target, "localhost"])
        let again = try box.closedFlows(2)
        #expect(again.last?.string("status") == "kept_private", "\(again)")
        let pins = try PinningRunTests.pinned(box)
        #expect(pins.map { "\($0.string("host") ?? "") \($0.int("port") ?? 0) \($0.string("kind") ?? "")" } == ["localhost \(port) pinned"], "\(pins)")

        // The same close from a replayed ClientHello (another client: its own key).
        let replay = try box.write("finclient.py", Self.finClient)
        let fin = try box.tool("python3", [replay, tv.proxyHostPort, target, "a.test"])
        #expect(fin.out == "HTTP/1.1 200 Connection established\nflight True\n", "\(fin)")
        let third = try box.closedFlows(3)
        #expect(third.last?.string("failureReason") == advice + "; its next connection to a.test:\(port) passes through unread", "\(third)")
        // curl without the root sends unknown_ca: it lacks tv's root, as before.
        _ = try box.curl(["-s", "-x", tv.proxyURL, "--cacert", world.pki.upstreamCA, world.url("/index.html")])
        let fourth = try box.closedFlows(4)
        #expect(fourth.last?.string("failureReason")?.hasPrefix("the client does not trust tv's root (alert unknown_ca): ") == true, "\(fourth)")
        try tv.stop()
    }

    @Test("a client with no ALPN to a server tv refuses: an HTTP request gets tv's 502; PING or binary gets no HTTP text, tv's TLS session closed (close_notify); the help says so")
    func nonHTTPClientsGetNoHTTP() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let server = try OpenSSLServer(cert: world.pki.selfSignedCert, key: world.pki.selfSignedKey, extra: [])
        defer { server.stop() }
        let connect = ["s_client", "-proxy", tv.proxyHostPort, "-connect", "localhost:\(server.port)", "-servername", "localhost",
                       "-CAfile", world.tvRoot, "-quiet"]
        let ping = try box.tool("openssl", connect, stdin: Data("PING\n".utf8))
        #expect(!ping.out.contains("HTTP/1.1"), "\(ping)")
        let closed = "the server's certificate does not verify (self-signed certificate); nothing was sent to it, and the client's first bytes were no HTTP request, "
            + "so tv closed its TLS session unanswered; trust the server's CA with --upstream-ca FILE, " + Self.skip
        #expect(try box.closedFlows(1).last?.string("failureReason") == closed)
        // Binary from Python (no ALPN): a clean TLS end (close_notify), no bytes.
        let python = try box.write("binary.py", #"""
        import socket, ssl, sys
        host, port = sys.argv[1].split(':')
        s = socket.create_connection((host, int(port)))
        s.sendall(f"CONNECT {sys.argv[2]} HTTP/1.1\r\n\r\n".encode()); s.recv(1000)
        t = ssl.create_default_context(cafile=sys.argv[3]).wrap_socket(s, server_hostname="localhost")
        t.sendall(b"\x00\x01\x02\x03\xff")
        print("read", repr(t.recv(1000)))
        """#)
        let binary = try box.tool("python3", [python, tv.proxyHostPort, "localhost:\(server.port)", world.tvRoot])
        #expect(binary.out == "read b''\n", "\(binary)")
        #expect(try box.closedFlows(2).last?.string("failureReason") == closed)
        // An HTTP request from the same kind of client: tv's 502 saying why.
        let get = try box.tool("openssl", connect, stdin: Data("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        #expect(get.out.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), "\(get)")
        #expect(get.out.hasSuffix("\r\n\r\ntv: the server's certificate does not verify (self-signed certificate); nothing was sent to it; "
                                  + "trust the server's CA with --upstream-ca FILE, " + Self.skip + "\n"), "\(get)")
        try tv.stop()
        let help = try box.tv("run", "--help").out.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        #expect(help.contains("one with no ALPN that sends anything else the close of tv's TLS session (close_notify), unanswered"), "\(help)")
    }
}

/// Server certificates the trial used, made once with openssl and signed by the test upstream
/// CA (`TestPKI`): CN only (by name, by address), expired, another host, RSA-1024, SHA-1,
/// clientAuth only. All but the RSA one share one P-256 key.
final class UpstreamCertificates: @unchecked Sendable {
    // `@unchecked Sendable`: paths, immutable after init.
    let dir: String
    let key: String
    let cnOnly: String
    let cnOnlyAddress: String
    let expired: String
    let wrongHost: String
    let weakKey: String
    let weakKeyKey: String
    let sha1: String
    let clientAuthOnly: String
    /// A root the test CA is not (self-signed), and a leaf for localhost it signed.
    let otherRoot: String
    let otherRootLeaf: String

    private init(pki: TestPKI) throws {
        dir = Shell.tempDirectory("upstream-certs")
        key = dir + "/server.key"
        cnOnly = dir + "/cnonly.pem"
        cnOnlyAddress = dir + "/cnonly-ip.pem"
        expired = dir + "/expired.pem"
        wrongHost = dir + "/wrong.pem"
        weakKey = dir + "/rsa1024.pem"
        weakKeyKey = dir + "/rsa1024.key"
        sha1 = dir + "/sha1.pem"
        clientAuthOnly = dir + "/clientauth.pem"
        otherRoot = dir + "/other-root.pem"
        otherRootLeaf = dir + "/other-leaf.pem"
        func openssl(_ args: [String]) throws {
            let r = Shell.run(["openssl"] + args, timeout: 30)
            guard r.status == 0 else { throw TestError("openssl \(args.joined(separator: " ")): \(r.err)") }
        }
        let caKey = pki.dir + "/up-ca.key"
        let leaf = ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment"]
        func sign(_ out: String, subject: String, key: String, extensions: [String], digest: String = "-sha256", newKey: [String] = []) throws {
            let keyArgs = newKey.isEmpty ? ["-key", key] : newKey + ["-keyout", key]
            try openssl(["req", "-new"] + keyArgs + ["-subj", subject, "-days", "30", digest, "-CA", pki.upstreamCA, "-CAkey", caKey, "-out", out]
                        + extensions.flatMap { ["-addext", $0] })
        }
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
        try sign(cnOnly, subject: "/CN=localhost", key: key, extensions: leaf + ["extendedKeyUsage=serverAuth"])
        try sign(cnOnlyAddress, subject: "/CN=127.0.0.1", key: key, extensions: leaf + ["extendedKeyUsage=serverAuth"])
        try sign(wrongHost, subject: "/CN=other.test", key: key, extensions: leaf + ["extendedKeyUsage=serverAuth", "subjectAltName=DNS:other.test"])
        try sign(sha1, subject: "/CN=localhost", key: key, extensions: leaf + ["extendedKeyUsage=serverAuth", "subjectAltName=DNS:localhost"], digest: "-sha1")
        try sign(clientAuthOnly, subject: "/CN=localhost", key: key, extensions: leaf + ["extendedKeyUsage=clientAuth", "subjectAltName=DNS:localhost"])
        try sign(weakKey, subject: "/CN=localhost", key: weakKeyKey, extensions: leaf + ["extendedKeyUsage=serverAuth", "subjectAltName=DNS:localhost"],
                 newKey: ["-newkey", "rsa:1024", "-nodes"])
        let otherRootKey = dir + "/other-root.key"
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", otherRootKey,
                     "-subj", "/CN=Other Root", "-days", "30", "-out", otherRoot,
                     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"])
        try openssl(["req", "-new", "-key", key, "-subj", "/CN=localhost", "-days", "30", "-CA", otherRoot, "-CAkey", otherRootKey, "-out", otherRootLeaf]
                    + (leaf + ["extendedKeyUsage=serverAuth", "subjectAltName=DNS:localhost"]).flatMap { ["-addext", $0] })
        // Expired: `openssl ca` sets past dates (`req -CA` cannot).
        let db = dir + "/ca"
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: db + "/index.txt", contents: Data())
        try "01\n".write(toFile: db + "/serial", atomically: true, encoding: .utf8)
        try """
        [ca]
        default_ca = c
        [c]
        database = \(db)/index.txt
        serial = \(db)/serial
        new_certs_dir = \(db)
        default_md = sha256
        policy = p
        unique_subject = no
        [p]
        commonName = supplied
        [leaf]
        basicConstraints = critical,CA:FALSE
        keyUsage = critical,digitalSignature
        extendedKeyUsage = serverAuth
        subjectAltName = DNS:localhost
        """.write(toFile: db + "/ca.cnf", atomically: true, encoding: .utf8)
        try openssl(["req", "-new", "-key", key, "-subj", "/CN=localhost", "-out", db + "/expired.csr"])
        try openssl(["ca", "-batch", "-config", db + "/ca.cnf", "-cert", pki.upstreamCA, "-keyfile", caKey, "-in", db + "/expired.csr", "-out", expired,
                     "-startdate", "20240101000000Z", "-enddate", "20240201000000Z", "-extensions", "leaf", "-notext"])
    }

    private static let made = Mutex<UpstreamCertificates?>(nil)

    /// Made once per test process.
    static func shared() throws -> UpstreamCertificates {
        try made.withLock { made in
            if let made { return made }
            let certs = try UpstreamCertificates(pki: .shared)
            made = certs
            return certs
        }
    }
}
