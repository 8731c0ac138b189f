import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 14 §6 through the real `tv` binary: what tv remembers when a client refuses its leaf is
/// keyed by the client (address and ClientHello fingerprint), the host and the port, and told
/// apart as "lacks tv's root", "possible pinning" and "the client left" (flows, `tv status`,
/// `tv pinned`). Real clients (openssl s_client, curl, Python urllib) against nginx and openssl
/// s_server on 127.0.0.1.
@Suite("tv run: pinning memory keyed on the client, host and port (issue 14)", .serialized)
struct PinningRunTests {
    /// Python urllib through the proxy with its own trust (`cafile`): prints "ok BODY" or "failed REASON".
    static let urllib = """
    import ssl, sys, urllib.request
    ctx = ssl.create_default_context(cafile=sys.argv[2])
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({'https': sys.argv[1]}), urllib.request.HTTPSHandler(context=ctx))
    try:
        print("ok", opener.open(sys.argv[3], timeout=20).read().decode().strip())
    except Exception as e:
        print("failed", getattr(e, 'reason', e))
    """

    /// `openssl s_client -proxy … -connect TARGET [-servername NAME] </dev/null`: a probe that
    /// completes the handshake and closes without sending anything.
    static func probe(_ box: Sandbox, _ tv: TVSession, _ target: String, serverName: String? = nil) throws {
        _ = try box.tool("openssl", ["s_client", "-proxy", tv.proxyHostPort, "-connect", target] + (serverName.map { ["-servername", $0] } ?? []),
                         stdin: Data())
    }

    static func pinned(_ box: Sandbox) throws -> [JSON] {
        try JSONSerialization.jsonObject(with: try box.tvArgs(["pinned", "--json"]).stdout) as? [JSON] ?? []
    }

    @Test("two s_client probes with </dev/null (-servername a.test) pin a.test for s_client alone: curl is inspected")
    func probesPinOnlyThemselves() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let port = world.nginx.tlsPort
        try Self.probe(box, tv, "localhost:\(port)", serverName: "a.test")
        _ = try box.closedFlows(1)
        try Self.probe(box, tv, "localhost:\(port)", serverName: "a.test")
        _ = try box.closedFlows(2)
        let curl = try world.curlThrough(tv, ["--connect-to", "a.test:\(port):localhost:\(port)", "https://a.test:\(port)/index.html"])
        #expect(curl.out == "hello from nginx\n", "\(curl)")
        let rows = try box.closedFlows(3)
        try #require(rows.count == 3)
        #expect(rows.map { $0.string("status") } == ["inspected", "kept_private", "inspected"])
        #expect(rows.map { $0.string("host") } == ["a.test", "a.test", "a.test"])
        #expect(rows[0].string("error") == "the client closed right after the handshake without sending data (possible pinning); its next connection to a.test:\(port) passes through unread")
        #expect(rows[1].string("error") == "passed through unread: this client broke off tv's handshake with a.test:\(port), or closed right after it, and came back, so it pins its certificate, or checks it only after the handshake and lacks tv's root (curl built with GnuTLS does); remembered (`tv pinned forget a.test` tries inspecting again)")
        #expect(rows[2]["error"] is NSNull)
        let pins = try Self.pinned(box)
        #expect(pins.map { "\($0.string("host") ?? "") \($0.int("port") ?? 0) \($0.string("kind") ?? "") \($0.string("clientAddress") ?? "")" }
                == ["a.test \(port) pinned 127.0.0.1"])
        let status = try #require(try box.status())
        #expect(status.int("possiblePinning") == 1)
        #expect(status.int("clientLacksRoot") == 0)
        #expect(status.int("clientLeft") == 0)
        try tv.stop()
    }

    @Test("tv pinned forget HOST of a suspicion not yet listed (one probe): the running session drops it, and the probe's next connection is inspected")
    func forgetAPendingSuspicion() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let port = world.nginx.tlsPort
        try Self.probe(box, tv, "localhost:\(port)", serverName: "a.test")
        _ = try box.closedFlows(1)
        #expect(try Self.pinned(box).isEmpty)
        let forget = try box.tv("pinned", "forget", "a.test")
        #expect(forget.status == 0 && forget.out == "a.test is not listed by `tv pinned`; the running session forgot any suspicion it held against it, so its next connection is inspected (if inspection is on).\n", "\(forget)")
        try Self.probe(box, tv, "localhost:\(port)", serverName: "a.test")
        let rows = try box.closedFlows(2)
        #expect(rows.map { $0.string("status") } == ["inspected", "inspected"], "\(rows)")
        try tv.stop()
        // No session and nothing listed: nothing to forget, as before.
        let none = try box.tv("pinned", "forget", "a.test")
        #expect(none.status == 1 && none.err == "tv: a.test is not listed by `tv pinned`; nothing to forget.\n", "\(none)")
    }

    @Test("pins are keyed by port: two probes to 127.0.0.1:port1 pass port1 through, not 127.0.0.1:port2")
    func portsApart() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let one = try OpenSSLServer(cert: world.pki.ipCert, key: world.pki.ipKey, extra: [])
        defer { one.stop() }
        let two = try OpenSSLServer(cert: world.pki.ipCert, key: world.pki.ipKey, extra: [])
        defer { two.stop() }
        for (n, port) in [one.port, one.port, two.port, one.port].enumerated() {
            try Self.probe(box, tv, "127.0.0.1:\(port)")
            _ = try box.closedFlows(n + 1)
        }
        let rows = try box.closedFlows(4)
        try #require(rows.count == 4)
        #expect(rows.map { $0.string("status") } == ["inspected", "kept_private", "inspected", "kept_private"])
        #expect(rows.map { $0.int("serverPort") } == [Int(one.port), Int(one.port), Int(two.port), Int(one.port)])
        #expect(rows[2].string("error") == "the client closed right after the handshake without sending data (possible pinning); its next connection to 127.0.0.1:\(two.port) passes through unread")
        #expect(rows[3].string("error") == "passed through unread: this client pins its certificate for 127.0.0.1:\(one.port), or checks it only after the handshake and lacks tv's root (curl built with GnuTLS does) (`tv pinned forget 127.0.0.1` tries inspecting again)")
        let pins = try Self.pinned(box)
        #expect(pins.map { "\($0.string("host") ?? "") \($0.int("port") ?? 0) \($0.string("kind") ?? "")" } == ["127.0.0.1 \(one.port) pinned"])
        try tv.stop()
    }

    @Test("python urllib without tv's root: the flow says the client lacks the root, with the fix; curl with --cacert ROOT is still inspected; urllib's next attempt passes through")
    func lacksRootThenCurl() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let port = world.nginx.tlsPort
        // urllib trusts the real server's CA, not tv's root.
        let refused = try box.python(Self.urllib, [tv.proxyURL, world.pki.upstreamCA, world.url("/index.html")])
        #expect(refused.out.hasPrefix("failed [SSL: CERTIFICATE_VERIFY_FAILED]"), "\(refused)")
        _ = try box.closedFlows(1)
        let inspected = try world.curlThrough(tv, [world.url("/index.html")])
        #expect(inspected.out == "hello from nginx\n", "\(inspected)")
        _ = try box.closedFlows(2)
        let passed = try box.python(Self.urllib, [tv.proxyURL, world.pki.upstreamCA, world.url("/index.html")])
        #expect(passed.out == "ok hello from nginx\n", "\(passed)")
        let rows = try box.closedFlows(3)
        try #require(rows.count == 3)
        #expect(rows.map { $0.string("status") } == ["failed", "inspected", "kept_private"])
        let lacksRoot = "the client does not trust tv's root (alert unknown_ca): give it the root "
            + "(`tv ca export`; curl: --cacert or CURL_CA_BUNDLE, Python requests: REQUESTS_CA_BUNDLE, "
            + "Python and other OpenSSL programs: SSL_CERT_FILE, Node: NODE_EXTRA_CA_CERTS, Java: keytool -importcert into its truststore); "
            + "until then its connections to localhost:\(port) pass through unread (`tv pinned forget localhost` after giving it the root)"
        #expect(rows[0].string("failureReason") == lacksRoot)
        // (urllib ends the passed-through connection with a reset, which is what its row's error says.)
        // `tv flow` says it too.
        let detail = try box.tv("flow", String(try #require(rows[0].int("id"))))
        #expect(detail.out.contains("the client does not trust tv's root (alert unknown_ca)"), "\(detail.out)")
        let pins = try Self.pinned(box)
        try #require(pins.count == 1)
        #expect(pins[0].string("host") == "localhost")
        #expect(pins[0].int("port") == Int(port))
        #expect(pins[0].string("kind") == "lacks_root")
        #expect(pins[0].string("clientAddress") == "127.0.0.1")
        #expect(pins[0].string("clientHello")?.count == 12)
        #expect(pins[0].string("reason") == "the client does not trust tv's root (alert unknown_ca)")
        let hello = pins[0].string("clientHello") ?? ""
        let human = try box.tv("pinned")
        #expect(human.out.hasPrefix("localhost:\(port)  lacks tv's root  127.0.0.1 (hello \(hello))  refused tv 1×, last "), "\(human.out)")
        let status = try #require(try box.status())
        #expect(status.int("clientLacksRoot") == 1)
        #expect(status.int("possiblePinning") == 0)
        #expect(status.int("pinningDetections") == 1)
        // Said once, the way back once (not the flow's sentence inside it again).
        let said = tv.log().components(separatedBy: "tv: 127.0.0.1 (hello \(hello)) lacks tv's root for localhost:\(port): its connections there pass through unread from now on; "
            + "give it the root (`tv ca export`; curl: --cacert or CURL_CA_BUNDLE, Python requests: REQUESTS_CA_BUNDLE, "
            + "Python and other OpenSSL programs: SSL_CERT_FILE, Node: NODE_EXTRA_CA_CERTS, Java: keytool -importcert into its truststore), then `tv pinned forget localhost`.\n")
        #expect(said.count == 2, "\(tv.log())")
        let human2 = try box.tv("status")
        #expect(human2.out.contains("  clients           1 lacked tv's root (`tv pinned` lists what tv remembered)\n"), "\(human2.out)")
        // Forgotten (named as `tv pinned` lists it, HOST:PORT: a trial's copy was refused):
        // urllib is refused again (it still lacks the root), as a fresh refusal.
        let forget = try box.tv("pinned", "forget", "localhost:\(port)")
        #expect(forget.out == "Forgot localhost; the next connection to it will be inspected again (if inspection is on).\nThe running session applied it.\n", "\(forget)")
        #expect(try Self.pinned(box).isEmpty)
        let again = try box.python(Self.urllib, [tv.proxyURL, world.pki.upstreamCA, world.url("/index.html")])
        #expect(again.out.hasPrefix("failed [SSL: CERTIFICATE_VERIFY_FAILED]"), "\(again)")
        try tv.stop()
    }

    @Test("tv ca remake forgets the clients remembered as lacking the root before (rows and the running session's memory): urllib's next connection is inspected again, not passed through")
    func remakeForgetsLacksRoot() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let refused = try box.python(Self.urllib, [tv.proxyURL, world.pki.upstreamCA, world.url("/index.html")])
        #expect(refused.out.hasPrefix("failed [SSL: CERTIFICATE_VERIFY_FAILED]"), "\(refused)")
        _ = try box.closedFlows(1)
        #expect(try Self.pinned(box).map { $0.string("kind") } == ["lacks_root"])
        let remake = try box.tv("ca", "remake", "--yes")
        #expect(remake.status == 0 && remake.out.contains("Forgot 1 client remembered as lacking tv's root (said of the root before): their next connections are inspected again."), "\(remake)")
        #expect(try Self.pinned(box).isEmpty)
        // Inspected (and refused: it lacks the new root too), not passed through as remembered.
        let again = try box.python(Self.urllib, [tv.proxyURL, world.pki.upstreamCA, world.url("/index.html")])
        #expect(again.out.hasPrefix("failed [SSL: CERTIFICATE_VERIFY_FAILED]"), "\(again)")
        let rows = try box.closedFlows(2)
        #expect(rows.map { $0.string("status") } == ["failed", "failed"], "\(rows)")
        try tv.stop()
    }

    /// A trial's Python client, kept as lacking the root from its first attempt, still got the
    /// server's own certificate after following `tv ca trust --platform python`: the guide now
    /// ends with `tv pinned forget --lacks-root`, which forgets the rows and the running session's memory.
    @Test("after trusting the root, urllib is still passed through until `tv pinned forget --lacks-root`; then it is inspected")
    func forgetLacksRootAfterTrust() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let refused = try box.python(Self.urllib, [tv.proxyURL, world.pki.upstreamCA, world.url("/index.html")])
        #expect(refused.out.hasPrefix("failed [SSL: CERTIFICATE_VERIFY_FAILED]"), "\(refused)")
        _ = try box.closedFlows(1)
        // The guide's bundle: the roots it trusted, and tv's.
        let bundle = try box.write("roots.pem", box.text(world.pki.upstreamCA) + box.text(box.rootPEM))
        let kept = try box.python(Self.urllib, [tv.proxyURL, bundle, world.url("/index.html")])
        #expect(kept.out == "ok hello from nginx\n", "\(kept)")
        #expect(try box.closedFlows(2).last?.string("status") == "kept_private")
        let guide = try box.tv("ca", "trust", "--platform", "python")
        #expect(guide.out.contains("`tv pinned forget --lacks-root`"), "\(guide)")
        let forget = try box.tv("pinned", "forget", "--lacks-root")
        #expect(forget.status == 0 && forget.out == "Forgot 1 client remembered as lacking tv's root (said before the root was trusted): their next connections are inspected again, and one that still lacks it is remembered again.\n", "\(forget)")
        #expect(try Self.pinned(box).isEmpty)
        let inspected = try box.python(Self.urllib, [tv.proxyURL, bundle, world.url("/index.html")])
        #expect(inspected.out == "ok hello from nginx\n", "\(inspected)")
        #expect(try box.closedFlows(3).last?.string("status") == "inspected")
        try tv.stop()
    }

    @Test("curl --pinnedpubkey (pin of the real server's key) gets through on its second attempt, not its third")
    func pinnedPublicKey() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let pub = try box.tool("sh", ["-c", "openssl x509 -in \(world.pki.serverCert) -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"])
        let pin = "sha256//" + pub.out.trimmingCharacters(in: .whitespacesAndNewlines)
        // Both roots are trusted, so the handshake with tv's leaf succeeds; the pin check fails after it.
        let bundle = try box.write("bundle.pem", box.text(world.tvRoot) + box.text(world.pki.upstreamCA))
        let args = ["-x", tv.proxyURL, "--cacert", bundle, "--pinnedpubkey", pin, world.url("/index.html")]
        let first = try box.curl(args)
        #expect(first.status == 90, "\(first)")
        _ = try box.closedFlows(1)
        let second = try box.curl(args)
        #expect(second.status == 0, "\(second)")
        #expect(second.out == "hello from nginx\n", "\(second)")
        let rows = try box.closedFlows(2)
        try #require(rows.count == 2)
        #expect(rows.map { $0.string("status") } == ["inspected", "kept_private"])
        #expect(rows[0].string("error") == "the client closed right after the handshake without sending data (possible pinning); its next connection to localhost:\(world.nginx.tlsPort) passes through unread")
        #expect(try Self.pinned(box).map { "\($0.string("host") ?? "") \($0.string("kind") ?? "")" } == ["localhost pinned"])
        try tv.stop()
    }

    @Test("a port scan (connect, close) and CONNECT-then-close: the client left, counted, never pinned; curl is inspected after")
    func portScan() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let scan = """
        import socket, sys
        port, target = int(sys.argv[1]), sys.argv[2]
        for _ in range(3):
            socket.create_connection(("127.0.0.1", port)).close()
        for _ in range(2):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(("CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n" % (target, target)).encode())
            print(s.recv(100).decode().split("\\r\\n")[0])
            s.close()
        """
        let ran = try box.python(scan, [String(tv.port), "localhost:\(world.nginx.tlsPort)"])
        #expect(ran.out == "HTTP/1.1 200 Connection established\nHTTP/1.1 200 Connection established\n", "\(ran)")
        let rows = try box.closedFlows(5)
        try #require(rows.count == 5)
        // Each loop accepts on its own, so ids need not follow the script's order: compare as a multiset.
        #expect(rows.compactMap { $0.string("failureReason") }.sorted() == Array(repeating: "the client closed the connection before sending a proxy request", count: 3)
                + Array(repeating: "the client closed the connection before sending anything", count: 2))
        let good = try world.curlThrough(tv, [world.url("/index.html")])
        #expect(good.out == "hello from nginx\n", "\(good)")
        #expect(try box.closedFlows(6).last?.string("status") == "inspected")
        let status = try #require(try box.status())
        #expect(status.int("clientLeft") == 5)
        #expect(status.int("possiblePinning") == 0)
        #expect(status.int("clientLacksRoot") == 0)
        #expect(try Self.pinned(box).isEmpty)
        try tv.stop()
    }
}
