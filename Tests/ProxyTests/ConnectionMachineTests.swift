import LocalCA
@testable import Proxy
import Testing
import Wire
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// The connection state machine, driven by events alone (no sockets).
@Suite("ConnectionMachine")
struct ConnectionMachineTests {
    typealias Machine = ConnectionMachine

    static let localhost = SocketAddress(numericHost: "127.0.0.1", port: 443)!

    /// The pinning key of `ProxyFixtures.clientHelloSNIAndALPN` sent by 127.0.0.1 to `host`:443.
    static func fixtureKey(_ host: String = "a.test", port: UInt16 = 443) -> PinKey {
        var parser = ClientHelloParser()
        let hello: ClientHello? = ProxyFixtures.clientHelloSNIAndALPN.withUnsafeBytes {
            if case .clientHello(let hello) = parser.feed($0) { return hello }
            return nil
        }
        return PinKey(client: ClientIdentity(address: "127.0.0.1", helloFingerprint: ClientHelloFingerprint.of(hello!)), host: host, port: port)
    }

    static func machine(_ frontEnd: FrontEndKind = .explicitHTTP, inspection: Bool = true,
                        recall: @escaping (PinKey, Int64) -> PinningRecall? = { _, _ in nil },
                        insecure: Bool = false, ignore: [String] = []) -> Machine {
        let policy = InterceptionPolicy(inspectionEnabled: inspection, caAvailable: true,
                                        ignoreHosts: ignore.map { try! HostPattern($0) })
        let settings = Machine.Settings(frontEnd: frontEnd, policy: policy, upstreamInsecure: insecure,
                                        handshakeTimeoutMillis: 10_000, connectTimeoutMillis: 5_000)
        let facts = FlowFacts(id: 7, startMicros: 1_000, client: Endpoint(address: "127.0.0.1", port: 50000))
        return Machine(settings: settings, facts: facts, recall: recall)
    }

    @Test("a flow the front end already reported opened (the TUN's slow connect) is reported updated at start, never opened twice")
    func flowAlreadyOpened() {
        let destination = OriginalDestination(host: "10.0.0.1", port: 80, origin: .none)
        let policy = InterceptionPolicy(inspectionEnabled: true, caAvailable: true, ignoreHosts: [])
        var settings = Machine.Settings(frontEnd: .fixed(destination, upstreamTLS: nil), policy: policy, connectTimeoutMillis: 5_000)
        var fresh = Machine(settings: settings, facts: FlowFacts(id: 7, startMicros: 1_000, client: Endpoint(address: "10.77.0.1", port: 50000)),
                            recall: { _, _ in nil })
        let address = SocketAddress(numericHost: "10.0.0.1", port: 80)!
        #expect(fresh.handle(.start) == [.openFlow, .armTimer(millis: 5_000), .connect(address)])
        settings.flowAlreadyOpened = true
        var announced = Machine(settings: settings, facts: FlowFacts(id: 7, startMicros: 1_000, client: Endpoint(address: "10.77.0.1", port: 50000)),
                                recall: { _, _ in nil })
        #expect(announced.handle(.start) == [.updateFlow, .armTimer(millis: 5_000), .connect(address)])
    }

    static func bytes(_ m: inout Machine, _ data: [UInt8]) -> [Machine.Command] {
        data.withUnsafeBytes { m.handle(.clientBytes($0)) }
    }

    static func text(_ m: inout Machine, _ s: String) -> [Machine.Command] { bytes(&m, Array(s.utf8)) }

    /// Drives an explicit-proxy machine to "connected, waiting for the client's first bytes".
    static func connected(_ m: inout Machine, host: String = "a.test") {
        _ = m.handle(.start)
        let connect = "CONNECT \(host):443 HTTP/1.1\r\nHost: \(host):443\r\n\r\n"
        let out = text(&m, connect)
        #expect(out.first == .consumeClient(connect.utf8.count))
        if IPAddress(host) == nil {
            #expect(out.contains(.resolve(host: host, port: 443)))
            #expect(m.handle(.resolved([localhost])) == [.connect(localhost)])
        } else {
            #expect(out.contains(.connect(SocketAddress(numericHost: host, port: 443)!)))
        }
        let done = m.handle(.connected(localhost))
        #expect(done == [.updateFlow, .sendClient(Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8)),
                         .armTimer(millis: 300_000), .watchUpstreamFirstBytes, .peekClient])
        #expect(m.phase == .awaitingFirstBytes)
    }

    /// One relay burst of `count` bytes.
    static func moved(_ m: inout Machine, _ count: Int, _ direction: Direction, at now: Int64) -> Machine.Command? {
        Array(repeating: UInt8(0x41), count: count).withUnsafeBytes { m.moved($0, direction, atMicros: now) }
    }

    static let upstreamDone = Machine.UpstreamHandshake(
        version: .tls12, alpn: Array("h2".utf8), certificateProblem: nil, certificate: nil,
        certificateSANs: [.dns("a.test"), .dns("www.a.test")], resumed: false)

    @Test("start of an explicit proxy connection: open the flow, wait for the request")
    func start() {
        var m = Self.machine()
        #expect(m.handle(.start) == [.openFlow, .armTimer(millis: 10_000), .peekClient])
        #expect(m.phase == .frontEnd)
    }

    @Test("CONNECT, a ClientHello in two pieces, both handshakes: inspected, ALPN as the server chose")
    func inspectHappyPath() throws {
        var m = Self.machine()
        Self.connected(&m)
        let hello = ProxyFixtures.clientHelloSNIAndALPN
        // The peek gives all unread bytes each time; the first 100 are not a ClientHello yet.
        #expect(Self.bytes(&m, Array(hello[0..<100])) == [.armTimer(millis: 10_000)])
        // Waiting for its first bytes, the flow's status is the default; a ClientHello makes it
        // TLS (encrypted) while the handshakes run (live views read "not encrypted": a trial).
        #expect(m.facts.status == .notEncrypted)
        let out = Self.bytes(&m, hello)
        let plan = Machine.UpstreamTLSPlan(serverName: "a.test", alpn: [Array("h2".utf8), Array("http/1.1".utf8)],
                                           verifyHost: "a.test", sessionKey: "a.test:443|a.test")
        #expect(out == [.armTimer(millis: 10_000), .startUpstreamTLS(plan), .updateFlow])
        #expect(m.facts.status == .encrypted)
        #expect(m.facts.host == "a.test")
        #expect(m.facts.hostOrigin == .sni)
        #expect(m.facts.offeredALPN == ["h2", "http/1.1"])
        #expect(m.facts.offeredVersions == [.tls13, .tls12, .tls11, .tls10])

        let client = m.handle(.upstreamHandshakeDone(Self.upstreamDone))
        let identity = try LeafIdentity(names: ["a.test"]).adding([.dns("a.test"), .dns("www.a.test")])
        #expect(client == [.armTimer(millis: 10_000), .startClientTLS(.init(identity: identity, alpn: Array("h2".utf8), keyTypes: [.ecdsaP256])), .updateFlow])
        #expect(m.facts.upstreamTLSVersion == .tls12)
        #expect(m.facts.alpn == "h2")
        #expect(m.facts.versionSource == .upstreamLeg)

        #expect(m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false))) == [.armTimer(millis: 0), .relay(.decrypted), .updateFlow])
        #expect(m.facts.status == .inspected)
        #expect(m.facts.clientTLSVersion == .tls13)
        #expect(Self.moved(&m, 500, .clientToServer, at: 2_000) == .clientAccepted(Self.fixtureKey()))
        #expect(m.handle(.relayEnded(.init(failure: nil, atMicros: 9_000_000))) == [.close(reset: false)])
        #expect(m.facts.status == .inspected)
    }

    /// An explicit-proxy machine relaying an inspected connection.
    static func relaying() -> Machine {
        var m = Self.machine()
        Self.connected(&m)
        _ = Self.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        _ = m.handle(.upstreamHandshakeDone(Self.upstreamDone))
        _ = m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false)))
        return m
    }

    @Test("relayed bytes the reader refused: tv answers 400 or 502 saying why and delivers it, resets where no answer fits, closes after the responses asked for; the flow keeps its status and says why; later events change nothing")
    func refusedBytesAreAnswered() {
        var m = Self.relaying()
        _ = Self.moved(&m, 100, .clientToServer, at: 2_000)
        let reason = "The request has both Content-Length and Transfer-Encoding, a request-smuggling risk RFC 9112 §6.3 lets a server refuse."
        let failure = ConnectionFailure.requestUnreadable(reason)
        #expect(m.handle(.exchangeRefused(ExchangeRefusal(failure: failure, answer: .status(400))))
                == [.sendClient(Machine.errorResponse(400, failure)), .deliverThenClose(to: .client, reset: false)])
        let body = "tv: the client's request was not understood: \(reason)\n"
        #expect(String(decoding: Machine.errorResponse(400, failure), as: UTF8.self)
                == "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
        #expect(m.phase == .closed && m.facts.status == .inspected && m.facts.error == failure.sentence)
        #expect(m.handle(.exchangeRefused(ExchangeRefusal(failure: failure, answer: .status(400)))) == [])
        #expect(m.handle(.relayEnded(.init(failure: nil, atMicros: 9_000_000))) == [])
        // Behind a request waiting for its response: no 400 (it would be read as that one's),
        // a reset; the flow still says why.
        var piped = Self.relaying()
        #expect(piped.handle(.exchangeRefused(ExchangeRefusal(failure: failure, answer: .reset))) == [.close(reset: true)])
        #expect(piped.phase == .closed && piped.facts.error == failure.sentence)
        // A server's response the client could read otherwise: tv's 502 in its place.
        var r = Self.relaying()
        let splitting = ConnectionFailure.responseUnreadable(HTTP1ResponseSummary.lengthAndCoding)
        #expect(r.handle(.exchangeRefused(ExchangeRefusal(failure: splitting, answer: .status(502), passing: 40)))
                == [.sendClient(Machine.errorResponse(502, splitting)), .deliverThenClose(to: .client, reset: false)])
        #expect(r.phase == .closed && r.facts.error == splitting.sentence)
        // Bytes nobody asked for, after the responses that were: closed once those are delivered.
        var u = Self.relaying()
        let unasked = ConnectionFailure.responseUnasked(bytes: 63)
        #expect(u.handle(.exchangeRefused(ExchangeRefusal(failure: unasked, answer: .close, passing: 49))) == [.deliverThenClose(to: .client, reset: false)])
        #expect(u.facts.error == "the server sent 63 bytes no request asked for (a response the client would have taken for its next request's); tv dropped them and closed the connection to the server")
        // A chunked body: which side, and malformed or past tv's limit, in one sentence each.
        #expect(ConnectionFailure.chunkedBodyRefused(.client, .sizeFollowedBy(0x67)).sentence
                == "the client's chunked body is malformed: A chunk size is followed by byte 0x67 instead of a ';' or the line end (RFC 9112 §7.1).")
        #expect(ConnectionFailure.chunkedBodyRefused(.server, .sizeTooLarge).sentence
                == "the server's chunked body is past a limit of tv's: A chunk size has more than 15 significant hexadecimal digits (2^60 bytes or more), more than tv counts; a 64-bit reader would wrap it around (RFC 9112 §7.1).")
        #expect(ConnectionFailure.pipelinedPastLimit(256).sentence
                == "more than 256 requests waited for their responses on this connection, more than tv follows at once: tv passed on the first 256 and their responses, then closed the connection (a client sends the rest again on a new one)")
    }

    @Test("a relayed HTTP/1 request head not whole within the head timeout: 408 and the close, counted, as on the plain path; no 408 behind a request waiting for its response; once only")
    func relayedHeadTimeout() {
        var m = Self.relaying()
        let failure = ConnectionFailure.headTimeout(limitMillis: 10_000)
        #expect(m.handle(.requestHeadLate(answerable: true))
                == [.countHeadTimeout, .sendClient(HeadDeadline.requestTimeoutResponse(limitMillis: 10_000)), .deliverThenClose(to: .client, reset: false)])
        #expect(m.phase == .closed && m.facts.status == .inspected && m.facts.error == failure.sentence)
        #expect(m.facts.error == "the client sent no complete request head within 10 s (tv closed the connection)")
        #expect(m.handle(.requestHeadLate(answerable: true)) == [])
        var piped = Self.relaying()
        #expect(piped.handle(.requestHeadLate(answerable: false)) == [.countHeadTimeout, .close(reset: false)])
        #expect(piped.facts.error == failure.sentence)
        // Not relaying: nothing.
        var early = Self.machine()
        #expect(early.handle(.requestHeadLate(answerable: true)) == [])
    }

    @Test("inspection off: pass through untouched, the ServerHello read for the facts")
    func inspectionOff() {
        var m = Self.machine(inspection: false)
        Self.connected(&m)
        let out = Self.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        #expect(out.contains(.relay(.raw(plaintext: false, observeServerHello: true))))
        #expect(m.facts.status == .encrypted)
        #expect(m.decision?.reason == .inspectionOff)
    }

    @Test("a note the flow carries stays when the relay then fails: the failure follows it (a reset after the answer replaced it, by timing)")
    func relayFailureFollowsANote() {
        var m = Self.machine(inspection: false)
        Self.connected(&m)
        _ = Self.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        // The server answers no TLS: a note on the flow.
        #expect(Self.moved(&m, 5, .serverToClient, at: 1_500) == .updateFlow)
        let note = ConnectionFailure.serverAnsweredNotTLS.sentence
        #expect(m.facts.error == note)
        _ = m.handle(.relayEnded(.init(failure: .read(from: .server, reset: true, .system(Errno(ECONNRESET))), atMicros: 2_000_000)))
        let failure = ConnectionFailure.read(from: .server, reset: true, .system(Errno(ECONNRESET))).sentence
        #expect(m.facts.error == note + "; then " + failure)
        var plain = Self.machine(inspection: false)
        Self.connected(&plain)
        _ = Self.bytes(&plain, ProxyFixtures.clientHelloSNIAndALPN)
        _ = plain.handle(.relayEnded(.init(failure: .read(from: .server, reset: true, .system(Errno(ECONNRESET))), atMicros: 2_000_000)))
        #expect(plain.facts.error == failure)
    }

    @Test("a pinned host passes through as kept private; an ignored one as encrypted")
    func pinnedAndIgnored() {
        var asked: [PinKey] = []
        var pinned = Self.machine(recall: { key, start in
            asked.append(key)
            #expect(start == 1_000)
            return .remembered(.pinned)
        })
        Self.connected(&pinned)
        #expect(Self.bytes(&pinned, ProxyFixtures.clientHelloSNIAndALPN)
                == [.noClientSecret(clientRandom: ProxyFixtures.clientHelloSNIAndALPNRandom),
                    .armTimer(millis: 0), .relay(.raw(plaintext: false, observeServerHello: true)), .updateFlow])
        #expect(asked == [Self.fixtureKey()])
        #expect(pinned.facts.status == .keptPrivate)
        #expect(pinned.facts.error == "passed through unread: this client pins its certificate for a.test:443, or checks it only after the handshake and lacks tv's root (curl built with GnuTLS does) (`tv pinned forget a.test` tries inspecting again)")
        var ignored = Self.machine(ignore: ["^a\\.test:443$"])
        Self.connected(&ignored)
        _ = Self.bytes(&ignored, ProxyFixtures.clientHelloSNIAndALPN)
        #expect(ignored.facts.status == .encrypted)
        #expect(ignored.decision?.reason == .ignored(pattern: "^a\\.test:443$"))
    }

    @Test("not TLS: relayed as is, recorded as plaintext")
    func notTLS() {
        var m = Self.machine()
        Self.connected(&m)
        let out = Self.text(&m, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
        #expect(out.contains(.relay(.raw(plaintext: true, observeServerHello: false))))
        #expect(m.facts.status == .notEncrypted)
    }

    @Test("server speaks first: its bytes start the raw relay; silence alone decides nothing until the idle time")
    func serverFirst() {
        var byBanner = Self.machine()
        Self.connected(&byBanner)
        #expect(byBanner.handle(.upstreamSpokeFirst) == [.armTimer(millis: 0), .relay(.raw(plaintext: true, observeServerHello: false)), .updateFlow])
        #expect(byBanner.facts.status == .notEncrypted)
        var silent = Self.machine()
        Self.connected(&silent)
        #expect(silent.handle(.timeout) == [.armTimer(millis: 0), .close(reset: false)])
        #expect(silent.facts.status == .notEncrypted)
        #expect(silent.facts.error == "closed after 300 s without traffic")
        // The server closing with nothing said is no plain-text relay (a trial's empty tunnel
        // read "not encrypted"): failed, with the server's part said.
        var closed = Self.machine()
        Self.connected(&closed)
        #expect(closed.handle(.upstreamClosedFirst) == [.armTimer(millis: 0), .close(reset: false)])
        #expect(closed.facts.status == .failed && closed.facts.error == "the server closed the connection before either side said anything")
    }

    @Test("a ClientHello that never completes fails after the handshake time, not the short wait")
    func truncatedHello() {
        var m = Self.machine()
        Self.connected(&m)
        _ = Self.bytes(&m, Array(ProxyFixtures.clientHelloSNIAndALPN[0..<50]))
        #expect(m.handle(.upstreamSpokeFirst) == [])
        let out = m.handle(.timeout)
        #expect(out == [.armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.error?.contains("ClientHello did not complete") == true)
    }

    @Test("a malformed ClientHello closes only this flow, with the reason")
    func malformedHello() {
        var m = Self.machine()
        Self.connected(&m)
        let out = Self.bytes(&m, [0x16, 0x03, 0x01, 0x00, 0x05] + Array("hello".utf8))
        #expect(out.last == .close(reset: false))
        #expect(m.facts.error?.contains("malformed") == true)
        #expect(m.facts.status == .failed)
    }

    @Test("connect: the next address after a failure; 502 with the reason when none is left")
    func connectFailures() {
        var m = Self.machine()
        _ = m.handle(.start)
        _ = Self.text(&m, "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n")
        let second = SocketAddress(numericHost: "::1", port: 443)!
        #expect(m.handle(.resolved([Self.localhost, second])) == [.connect(Self.localhost)])
        #expect(m.handle(.connectFailed(Errno(ECONNREFUSED))) == [.connect(second)])
        let out = m.handle(.connectFailed(Errno(ECONNREFUSED)))
        guard case .sendClient(let reply) = out.first else { Issue.record("no reply"); return }
        #expect(String(decoding: reply, as: UTF8.self).hasPrefix("HTTP/1.1 502 Bad Gateway"))
        #expect(out.last == .close(reset: false))
        #expect(m.facts.error == "tv could not connect to a.test:443 (connection refused)")
    }

    @Test("connect refused to an address: the 502 body names tv once, and the flow keeps the address it went to")
    func connectRefusedToAnAddress() {
        var m = Self.machine()
        _ = m.handle(.start)
        let target = SocketAddress(numericHost: "127.0.0.1", port: 44999)!
        #expect(Self.text(&m, "CONNECT 127.0.0.1:44999 HTTP/1.1\r\nHost: 127.0.0.1:44999\r\n\r\n").contains(.connect(target)))
        let out = m.handle(.connectFailed(Errno(ECONNREFUSED)))
        guard case .sendClient(let reply) = out.first else { Issue.record("no reply"); return }
        let body = "tv could not connect to 127.0.0.1:44999 (connection refused)\n"
        #expect(String(decoding: reply, as: UTF8.self) == "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
        #expect(m.facts.host == nil)
        #expect(m.facts.server == Endpoint(address: "127.0.0.1", port: 44999))
    }

    @Test("error bodies put \"tv: \" before a failure whose sentence does not already have tv as its subject")
    func errorBodyNamesTvOnce() {
        let plain = String(decoding: Machine.errorResponse(400, .requestUnreadable("the request line is malformed")), as: UTF8.self)
        #expect(plain.hasSuffix("\r\n\r\ntv: the client's request was not understood: the request line is malformed\n"))
        let named = String(decoding: Machine.errorResponse(502, .unreachable(target: "a.test:443", .connect(Errno(ECONNREFUSED)))), as: UTF8.self)
        #expect(named.hasSuffix("\r\n\r\ntv could not connect to a.test:443 (connection refused)\n"))
    }

    @Test("an upstream certificate that does not verify, an h2-only client: refused with an alert, nothing forged (an HTTP/1 client gets a 502: UpstreamFailureAnswerTests)")
    func upstreamDoesNotVerify() {
        var m = Self.machine()
        Self.connected(&m)
        _ = Self.bytes(&m, ProxyFixtures.clientHelloH2Only)
        var done = Self.upstreamDone
        done.certificateProblem = UpstreamCertificateProblemTests.selfSigned
        let out = m.handle(.upstreamHandshakeDone(done))
        #expect(out == [.armTimer(millis: 0), .refuseClientTLS(alert: TLSAlert.handshakeFailure)])
        #expect(m.facts.error?.contains("does not verify (self-signed certificate)") == true)
        #expect(m.facts.upstreamVerified == false)
    }

    @Test("--upstream-insecure forges anyway, and says the certificate did not verify")
    func upstreamInsecure() {
        var m = Self.machine(insecure: true)
        Self.connected(&m)
        _ = Self.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        var done = Self.upstreamDone
        done.certificateProblem = UpstreamCertificateProblemTests.selfSigned
        #expect(m.handle(.upstreamHandshakeDone(done)).contains { if case .startClientTLS = $0 { return true }; return false })
        #expect(m.facts.upstreamVerified == false)
        // What the check found is kept on the flow, though tv went on.
        #expect(m.facts.upstreamCertificateProblem == "self-signed certificate")
        #expect(m.facts.error == nil)
    }

    static let lacksRootSentence = "the client does not trust tv's root (alert unknown_ca): give it the root "
        + "(`tv ca export`; curl: --cacert or CURL_CA_BUNDLE, Python requests: REQUESTS_CA_BUNDLE, "
        + "Python and other OpenSSL programs: SSL_CERT_FILE, Node: NODE_EXTRA_CA_CERTS, Java: keytool -importcert into its truststore); "
        + "until then its connections to a.test:443 pass through unread (`tv pinned forget a.test` after giving it the root)"

    @Test("a client alert unknown_ca: the client lacks tv's root, said with the fix; this client, host and port are remembered as such")
    func lacksRootAlert() {
        var m = Self.machine()
        Self.connected(&m)
        _ = Self.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        _ = m.handle(.upstreamHandshakeDone(Self.upstreamDone))
        let out = m.handle(.clientHandshakeFailed(.init(failure: TLSFailure(peerAlert: 48, systemError: nil, eof: false, text: "alert unknown_ca"),
                                                        flightSent: true)))
        // Memory keeps the cause alone (`tv pinned`); the flow's sentence carries the way back.
        #expect(out == [.remember(Self.fixtureKey(), .lacksRoot, reason: "the client does not trust tv's root (alert unknown_ca)"), .armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.pinningDetected)
        #expect(m.facts.status == .failed)
        #expect(m.facts.failureReason == Self.lacksRootSentence)
        #expect(m.outcome == .lacksRoot)
    }

    @Test("--no-pinning-detection: the three kinds are still told apart, nothing is remembered or weighed, and the flow promises nothing")
    func notRemembering() {
        func machine() -> Machine {
            var settings = Machine.Settings(frontEnd: .explicitHTTP, policy: InterceptionPolicy(inspectionEnabled: true, caAvailable: true))
            settings.remembersClients = false
            var m = Machine(settings: settings, facts: FlowFacts(id: 7, startMicros: 1_000, client: Endpoint(address: "127.0.0.1", port: 50000)),
                            recall: { _, _ in nil })
            Self.connected(&m)
            _ = Self.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
            _ = m.handle(.upstreamHandshakeDone(Self.upstreamDone))
            return m
        }
        var refused = machine()
        #expect(refused.handle(.clientHandshakeFailed(.init(failure: TLSFailure(peerAlert: 48, systemError: nil, eof: false, text: "alert unknown_ca"),
                                                            flightSent: true))) == [.armTimer(millis: 0), .close(reset: false)])
        #expect(refused.outcome == .lacksRoot)
        #expect(!refused.facts.pinningDetected)
        #expect(refused.facts.failureReason == ConnectionFailure.clientLacksRoot(alert: 48, passThrough: nil).sentence)
        #expect(refused.facts.failureReason?.hasSuffix("Java: keytool -importcert into its truststore)") == true)
        var quiet = machine()
        _ = quiet.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false, atMicros: 1_000_000)))
        #expect(quiet.handle(.relayEnded(.init(failure: nil, atMicros: 1_030_000))) == [.close(reset: false)])
        #expect(quiet.outcome == .possiblePinning)
        #expect(quiet.facts.error == "the client closed right after the handshake without sending data (possible pinning)")
    }

    @Test("a lacks-root client's next connection passes through, kept private, and says why")
    func lacksRootRecalled() {
        var m = Self.machine(recall: { key, _ in key == Self.fixtureKey() ? .remembered(.lacksRoot) : nil })
        Self.connected(&m)
        _ = Self.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        #expect(m.facts.status == .keptPrivate)
        #expect(m.facts.error == "passed through unread: this client lacked tv's root for a.test:443 before; give it the root, then `tv pinned forget a.test`")
        // The row's reason is the same sentence (a new-user trial found "this host pins its
        // certificate" in the JSON beside it).
        #expect(m.facts.failureReason == m.facts.error)
        #expect(m.outcome == nil)
        // The relay ending in the client's reset (curl lacking the root resets) keeps the reason
        // (it was replaced by "the client reset the connection": a re-check).
        let reason = m.facts.error
        _ = m.handle(.relayEnded(.init(failure: .read(from: .client, reset: true, .system(Errno(ECONNRESET))), atMicros: 2_000_000)))
        #expect(m.facts.error == reason && m.facts.status == .keptPrivate)
        // How the relay ended is kept beside: the decrypted capture ends the stream with RST
        // (it wrote FINs for every reset flow: a re-check).
        #expect(m.failure == nil && m.relayEndedBy == .read(from: .client, reset: true, .system(Errno(ECONNRESET))))
        #expect(ConnectionFailure.cutsOff(status: m.facts.status, failure: m.failure ?? m.relayEndedBy))
        // The same client to another port of the host is inspected.
        var other = Self.machine(recall: { key, _ in key == Self.fixtureKey() ? .remembered(.lacksRoot) : nil })
        _ = other.handle(.start)
        _ = Self.text(&other, "CONNECT a.test:8443 HTTP/1.1\r\nHost: a.test:8443\r\n\r\n")
        _ = other.handle(.resolved([SocketAddress(numericHost: "127.0.0.1", port: 8443)!]))
        _ = other.handle(.connected(SocketAddress(numericHost: "127.0.0.1", port: 8443)!))
        let out = Self.bytes(&other, ProxyFixtures.clientHelloSNIAndALPN)
        #expect(out.contains { if case .startUpstreamTLS = $0 { return true }; return false }, "\(out)")
    }

    @Test("a retry after a quiet close passes through and is remembered as pinned")
    func pinningRetry() {
        var m = Self.machine(recall: { _, _ in .retry })
        Self.connected(&m)
        // Either sign brought it back, and the memory keeps no more: the reason says both.
        let returned = "the client broke off tv's handshake, or closed right after it without sending data, and came back (pinning)"
        #expect(Self.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
                == [.noClientSecret(clientRandom: ProxyFixtures.clientHelloSNIAndALPNRandom), .remember(Self.fixtureKey(), .pinned, reason: returned),
                    .armTimer(millis: 0), .relay(.raw(plaintext: false, observeServerHello: true)), .updateFlow])
        #expect(m.facts.status == .keptPrivate)
        #expect(m.facts.pinningDetected)
        #expect(m.facts.error == "passed through unread: this client broke off tv's handshake with a.test:443, or closed right after it, and came back, so it pins its certificate, or checks it only after the handshake and lacks tv's root (curl built with GnuTLS does); remembered (`tv pinned forget a.test` tries inspecting again)")
    }

    @Test("other client alerts abort the handshake: not one of the three kinds, nothing remembered")
    func otherAlert() {
        var m = Self.machine()
        Self.connected(&m)
        _ = Self.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        _ = m.handle(.upstreamHandshakeDone(Self.upstreamDone))
        let out = m.handle(.clientHandshakeFailed(.init(failure: TLSFailure(peerAlert: 40, systemError: nil, eof: false, text: "alert handshake_failure"),
                                                        flightSent: true)))
        #expect(out == [.armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.failureReason == "the client aborted the handshake (alert handshake_failure)")
        #expect(m.outcome == nil)
        var broken = Self.machine()
        Self.connected(&broken)
        _ = Self.bytes(&broken, ProxyFixtures.clientHelloSNIAndALPN)
        _ = broken.handle(.upstreamHandshakeDone(Self.upstreamDone))
        _ = broken.handle(.clientHandshakeFailed(.init(failure: TLSFailure(peerAlert: nil, systemError: nil, eof: false, text: "wrong version number"),
                                                       flightSent: false)))
        #expect(broken.facts.failureReason == "the client's TLS handshake failed (wrong version number)")
        #expect(broken.outcome == nil)
    }

    @Test("a port scan (connect, close) and a CONNECT then close: the client left; never pinning")
    func clientLeft() {
        var scan = Self.machine()
        _ = scan.handle(.start)
        #expect(scan.handle(.clientGone(reset: false)) == [.armTimer(millis: 0), .close(reset: false)])
        #expect(scan.outcome == .clientLeft)
        #expect(scan.facts.failureReason == "the client closed the connection before sending a proxy request")
        var probe = Self.machine()
        Self.connected(&probe)
        #expect(probe.handle(.clientGone(reset: true)) == [.armTimer(millis: 0), .close(reset: true)])
        #expect(probe.outcome == .clientLeft)
        #expect(probe.facts.failureReason == "the client reset the connection before sending anything")
    }

    @Test("a quiet close right after the handshake is a pinning suspicion")
    func pinningQuietClose() {
        var m = Self.machine()
        Self.connected(&m)
        _ = Self.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        _ = m.handle(.upstreamHandshakeDone(Self.upstreamDone))
        _ = m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false, atMicros: 1_000_000)))
        let out = m.handle(.relayEnded(.init(failure: nil, atMicros: 1_030_000)))
        #expect(out == [.suspectPinning(Self.fixtureKey(), .quietCloseAfterHandshake), .close(reset: false)])
        #expect(m.handle(.pinningWeighed(Self.fixtureKey(), .quietCloseAfterHandshake, .counted(tipped: false))) == [])
        #expect(m.facts.error == "the client closed right after the handshake without sending data (possible pinning)")
        #expect(m.outcome == .possiblePinning)
        #expect(m.facts.status == .inspected)
    }

    @Test("no SNI to an IP: no SNI upstream, verified against the IP, leaf for the IP")
    func noSNI() throws {
        var m = Self.machine()
        Self.connected(&m, host: "127.0.0.1")
        let out = Self.bytes(&m, ProxyFixtures.clientHelloNoSNI)
        let plan = Machine.UpstreamTLSPlan(serverName: nil, alpn: [], verifyHost: "127.0.0.1", sessionKey: "127.0.0.1:443|")
        #expect(out.contains(.startUpstreamTLS(plan)))
        #expect(m.facts.host == nil)
        #expect(m.facts.hostOrigin == .none)
        var done = Self.upstreamDone
        done.alpn = nil
        done.certificateSANs = [.ip(IPAddress("127.0.0.1")!)]
        let client = m.handle(.upstreamHandshakeDone(done))
        let identity = try LeafIdentity(names: ["127.0.0.1"])
        #expect(client.contains(.startClientTLS(.init(identity: identity, alpn: nil, keyTypes: [.ecdsaP256]))))
    }

    @Test("SOCKS5: greeting answered, request consumed exactly, success after connect")
    func socks5() {
        var m = Self.machine(.socks5)
        _ = m.handle(.start)
        #expect(Self.bytes(&m, [5, 1, 0]) == [.consumeClient(3), .sendClient([5, 0])])
        let request: [UInt8] = [5, 1, 0, 3, 6] + Array("a.test".utf8) + [0x01, 0xBB]
        let out = Self.bytes(&m, request)
        #expect(out.first == .consumeClient(request.count))
        #expect(out.contains(.resolve(host: "a.test", port: 443)))
        #expect(m.facts.hostOrigin == .socks)
        _ = m.handle(.resolved([Self.localhost]))
        #expect(m.handle(.connected(Self.localhost)).contains(.sendClient([5, 0, 0, 1, 0, 0, 0, 0, 0, 0])))
    }

    @Test("SOCKS5 with authentication only is refused with its reply")
    func socks5Refused() {
        var m = Self.machine(.socks5)
        _ = m.handle(.start)
        let out = Self.bytes(&m, [5, 1, 2])
        #expect(out.first == .sendClient([5, 0xFF]))
        #expect(out.last == .close(reset: false))
    }

    @Test("absolute-form requests go to the plain HTTP forwarder; anything else gets a 400")
    func explicitHTTPForms() {
        var plain = Self.machine()
        _ = plain.handle(.start)
        #expect(Self.text(&plain, "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n") == [.armTimer(millis: 0), .startPlainHTTP])
        var origin = Self.machine()
        _ = origin.handle(.start)
        let out = Self.text(&origin, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
        guard case .sendClient(let reply) = out.first else { Issue.record("no reply"); return }
        #expect(String(decoding: reply, as: UTF8.self).hasPrefix("HTTP/1.1 400"))
        var garbage = Self.machine()
        _ = garbage.handle(.start)
        #expect(Self.bytes(&garbage, [0x16, 0x03, 0x01, 0, 1, 0]).last == .close(reset: false))
        // A head past 64 KiB: 431 for its fields, 414 for its request line (a trial read 400).
        var fields = Self.machine()
        _ = fields.handle(.start)
        let long = Self.text(&fields, "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nX-Filler: " + String(repeating: "a", count: 70_000))
        guard case .sendClient(let tooLarge) = long.first else { Issue.record("\(long)"); return }
        #expect(String(decoding: tooLarge, as: UTF8.self).hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
        #expect(fields.facts.error?.contains("The request head exceeds 65536 bytes without ending in an empty line.") == true)
        var line = Self.machine()
        _ = line.handle(.start)
        let longLine = Self.text(&line, "GET http://a.test/" + String(repeating: "a", count: 70_000))
        guard case .sendClient(let tooLong) = longLine.first else { Issue.record("\(longLine)"); return }
        #expect(String(decoding: tooLong, as: UTF8.self).hasPrefix("HTTP/1.1 414 URI Too Long\r\n"))
    }

    @Test("a client speaking another protocol than the port's is told apart from its first byte and said as the setting to change")
    func wrongProxyProtocol() {
        var tls = Self.machine()
        _ = tls.handle(.start)
        #expect(Self.bytes(&tls, [0x16, 0x03, 0x01, 0, 1, 0]).last == .close(reset: false))
        #expect(tls.facts.error == "the client spoke TLS to tv's explicit proxy, which speaks plain HTTP (a client given an https:// proxy URL does this): give it http://HOST:PORT as its proxy")
        var socks = Self.machine()
        _ = socks.handle(.start)
        _ = Self.bytes(&socks, [0x05, 0x01, 0x00])
        #expect(socks.facts.error == "the client spoke SOCKS to tv's HTTP proxy port: give it an http:// proxy, or run tv with --mode socks5 for SOCKS clients")
        var http = Self.machine(.socks5)
        _ = http.handle(.start)
        let out = Self.text(&http, "GET http://a.test/ HTTP/1.1\r\n")
        guard case .sendClient(let answer) = out.first else { Issue.record("\(out)"); return }
        #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(String(decoding: answer, as: UTF8.self).hasSuffix("tv: the client spoke HTTP to tv's SOCKS5 port: give it a socks5:// proxy, or run tv without --mode socks5 for an HTTP proxy\n"))
        // Lower-case letters are no method (RFC 9110 §9.1: methods are case-sensitive); a SOCKS4
        // greeting on the SOCKS5 port is the SOCKS parser's to say.
        #expect(ProxyProtocol.spoken(first: UInt8(ascii: "g")) == nil)
        #expect(ProxyProtocol.spoken(first: 0x04) == .socks4)
        // SOCKS4 is told apart: tv speaks SOCKS5 only (it was told `--mode socks5` on the HTTP
        // port, and only "version 4" on the SOCKS port: a re-check). Its client gets SOCKS4's
        // refusal (CD 91).
        var four = Self.machine()
        _ = four.handle(.start)
        _ = Self.bytes(&four, [0x04, 0x01, 0x01, 0xBB, 127, 0, 0, 1, 0])
        #expect(four.facts.error == "the client spoke SOCKS4 to tv's HTTP proxy port, and tv speaks SOCKS5 only: give it an http:// proxy, or a socks5:// one with tv run --mode socks5")
        var fourOnSocks = Self.machine(.socks5)
        _ = fourOnSocks.handle(.start)
        #expect(Self.bytes(&fourOnSocks, [0x04, 0x01, 0x01, 0xBB, 127, 0, 0, 1, 0]).first == .sendClient([0x00, 0x5B, 0, 0, 0, 0, 0, 0]))
        #expect(fourOnSocks.facts.error == "the client spoke SOCKS4, and tv's SOCKS port speaks SOCKS5 only: give it a socks5:// (or socks5h://) proxy")
    }

    @Test("reverse mode: a TLS client's first byte connects; reverse:http passes TLS through")
    func reverse() {
        var m = Self.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8080, origin: .reverse), upstreamTLS: false))
        let address = SocketAddress(numericHost: "127.0.0.1", port: 8080)!
        #expect(m.handle(.start) == [.openFlow, .armTimer(millis: 10_000), .peekClient])
        #expect(m.phase == .awaitingHead)
        #expect(m.facts.hostOrigin == .reverse)
        #expect(m.facts.port == 8080)
        #expect(Self.bytes(&m, Array(ProxyFixtures.clientHelloSNIAndALPN[0..<1])) == [.armTimer(millis: 5_000), .connect(address)])
        #expect(m.handle(.connected(address)) == [.updateFlow, .armTimer(millis: 300_000), .watchUpstreamFirstBytes, .peekClient])
        #expect(Self.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN).contains(.relay(.raw(plaintext: false, observeServerHello: true))))
        // A plain server answers the ClientHello in plain text: said on the flow (it read
        // "encrypted — passed through" and that the client reset, nothing more: a trial).
        let answer = Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8).withUnsafeBytes { m.moved($0, .serverToClient, atMicros: 2_000) }
        #expect(answer == .updateFlow)
        #expect(m.facts.error == "the server answered the client's TLS ClientHello with bytes that are not TLS: it does not speak TLS on that port (tv passed both sides through untouched)")
        #expect(m.facts.status == .encrypted)
    }

    @Test("reading a relay's HTTP/2 exchanges stopped: the flow says why once (of exchanges, not requests: the reason may be the server's), and an error it already has stays")
    func exchangeReadingStopped() {
        var m = Self.machine()
        #expect(m.handle(.readingNote(.exchangeReadingStopped("A header name contains byte 0x40, which is not allowed in a token (RFC 9110 §5.1)."))) == [.updateFlow])
        #expect(m.facts.error == "tv stopped reading this connection's exchanges, its bytes going on as they came: A header name contains byte 0x40, which is not allowed in a token (RFC 9110 §5.1)")
        #expect(m.handle(.readingNote(.exchangeReadingStopped("Another."))) == [])
    }

    @Test("a side ended HTTP/2 with an error (GOAWAY): the flow says so when it says nothing else; an error it has stays")
    func http2GoAway() {
        let goaway = HTTP2GoAway(sentBy: .server, errorCode: 1, lastStreamID: 3, debug: nil)
        var m = Self.machine()
        #expect(m.handle(.readingNote(.http2GoAway(goaway))) == [.updateFlow])
        #expect(m.facts.error == "the server ended HTTP/2 with GOAWAY PROTOCOL_ERROR; streams after 3 went unprocessed (RFC 9113 §6.8)")
        #expect(m.handle(.readingNote(.http2GoAway(HTTP2GoAway(sentBy: .client, errorCode: 2, lastStreamID: 0, debug: nil)))) == [])
        var stopped = Self.machine()
        _ = stopped.handle(.readingNote(.exchangeReadingStopped("A reason.")))
        #expect(stopped.handle(.readingNote(.http2GoAway(goaway))) == [])
        #expect(stopped.facts.error?.hasPrefix("tv stopped reading") == true)
    }

    @Test("reverse mode: a server tv cannot reach answers a plain client's request with a 502 that says why; a TLS client's ClientHello is read and its leg completed to answer the same (it read SSL_ERROR_SYSCALL: a trial), unless inspection is off")
    func reverseUnreachable() throws {
        let destination = OriginalDestination(host: "127.0.0.1", port: 1, origin: .reverse)
        let address = SocketAddress(numericHost: "127.0.0.1", port: 1)!
        var plain = Self.machine(.fixed(destination, upstreamTLS: false))
        _ = plain.handle(.start)
        #expect(Self.text(&plain, "GET /x HTTP/1.1\r\nHost: a.test\r\n\r\n") == [.armTimer(millis: 5_000), .connect(address)])
        let out = plain.handle(.connectFailed(Errno(ECONNREFUSED)))
        guard case .sendClient(let reply) = out.first else { Issue.record("no reply: \(out)"); return }
        let body = "tv could not connect to 127.0.0.1:1 (connection refused)\n"
        #expect(String(decoding: reply, as: UTF8.self) == "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
        #expect(plain.facts.status == .failed)
        var tls = Self.machine(.fixed(destination, upstreamTLS: true))
        _ = tls.handle(.start)
        _ = Self.bytes(&tls, Array(ProxyFixtures.clientHelloSNIAndALPN[0..<1]))
        #expect(tls.handle(.connectFailed(Errno(ECONNREFUSED))) == [.armTimer(millis: 10_000), .peekClient])
        #expect(tls.facts.status != .failed)
        let identity = try LeafIdentity(names: ["a.test"])
        #expect(Self.bytes(&tls, ProxyFixtures.clientHelloSNIAndALPN)
                == [.armTimer(millis: 10_000), .startClientTLS(.init(identity: identity, alpn: Array("http/1.1".utf8), keyTypes: [.ecdsaP256])), .updateFlow])
        let failure = ConnectionFailure.unreachable(target: "127.0.0.1:1", .connect(Errno(ECONNREFUSED)))
        #expect(tls.answering == failure)
        _ = tls.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false)))
        #expect(UpstreamFailureAnswerTests.ask(&tls) == [.readRequestRow(UpstreamFailureAnswerTests.request, http2: false), .sendClient(Machine.errorResponse(502, failure)), .armTimer(millis: 0), .close(reset: false)])
        #expect(tls.facts.status == .failed && tls.facts.failureReason == "tv could not connect to 127.0.0.1:1 (connection refused)")
        // Inspection off: tv makes no certificate for it; closed, the flow failed, as before.
        var off = Self.machine(.fixed(destination, upstreamTLS: true), inspection: false)
        _ = off.handle(.start)
        _ = Self.bytes(&off, Array(ProxyFixtures.clientHelloSNIAndALPN[0..<1]))
        let closed = off.handle(.connectFailed(Errno(ECONNREFUSED)))
        #expect(!closed.contains(.peekClient) && !closed.contains { if case .sendClient = $0 { return true }; return false }, "\(closed)")
        #expect(off.facts.status == .failed)
    }

    @Test("reverse mode: a plain client's head opens nothing upstream until it is whole; then the same bytes are relayed")
    func reverseWaitsForTheWholeHead() {
        var m = Self.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8080, origin: .reverse), upstreamTLS: false))
        let address = SocketAddress(numericHost: "127.0.0.1", port: 8080)!
        _ = m.handle(.start)
        let head = "GET /a HTTP/1.1\r\nHost: example.test\r\n\r\n"
        for n in [1, 5, 20, head.utf8.count - 1] {
            #expect(Self.bytes(&m, Array(head.utf8.prefix(n))) == [], "\(n) bytes")
        }
        #expect(m.phase == .awaitingHead)
        #expect(Self.text(&m, head) == [.armTimer(millis: 5_000), .connect(address)])
        #expect(m.handle(.connected(address)) == [.updateFlow, .armTimer(millis: 300_000), .watchUpstreamFirstBytes, .peekClient])
        #expect(Self.text(&m, head) == [.armTimer(millis: 0), .relay(.raw(plaintext: true, observeServerHello: false)), .updateFlow])
        #expect(m.facts.status == .notEncrypted)

        // HTTP/2 with prior knowledge: the 24-byte preface is the head.
        var h2 = Self.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8080, origin: .reverse), upstreamTLS: false))
        _ = h2.handle(.start)
        #expect(Self.text(&h2, "PRI * HTTP/2.0\r\n\r\nSM") == [])
        #expect(Self.text(&h2, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0") == [.armTimer(millis: 5_000), .connect(address)])
    }

    @Test("reverse mode: a head not whole in time is a 408, counted, and nothing was opened upstream")
    func reverseHeadDeadline() {
        var m = Self.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8080, origin: .reverse), upstreamTLS: true))
        _ = m.handle(.start)
        #expect(Self.text(&m, "GET / HT") == [])
        let reason = "the client sent no complete request head within 10 s (tv closed the connection)"
        #expect(m.handle(.timeout) == [.countHeadTimeout, .sendClient(HeadDeadline.requestTimeoutResponse(limitMillis: 10_000)),
                                       .armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.status == .failed && m.facts.failureReason == reason)
        #expect(m.facts.server == nil)
    }

    @Test("reverse mode: a whole head tv would not accept goes to the server to judge; one that cannot end is a 414 or 431; a client leaving early is said as such")
    func reverseBadHeadAndEarlyClose() {
        let address = SocketAddress(numericHost: "127.0.0.1", port: 8080)!
        for whole in ["GET / HTTP/1.1\r\nBad Header\r\n\r\n", "GET / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\n\n"] {
            var m = Self.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8080, origin: .reverse), upstreamTLS: false))
            _ = m.handle(.start)
            #expect(Self.text(&m, whole) == [.armTimer(millis: 5_000), .connect(address)], "\(whole)")
        }
        #expect(FrontEndReader.containsHeadEnd(UnsafeRawBufferPointer(start: nil, count: 0)) == false)
        for (text, ends) in [("a\r\n\r\n", true), ("a\n\r\n", true), ("a\r\nb\r\n", false), ("a\r\r\n", false)] {
            #expect(Array(text.utf8).withUnsafeBytes { FrontEndReader.containsHeadEnd($0) } == ends, "\(text)")
        }
        var m = Self.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8080, origin: .reverse), upstreamTLS: false))
        _ = m.handle(.start)
        let out = Self.text(&m, "GET /" + String(repeating: "a", count: 70_000))
        #expect(out.last == .close(reset: false))
        guard case .sendClient(let bytes) = out.first else { Issue.record("\(out)"); return }
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 414 URI Too Long\r\n"))
        #expect(m.facts.error?.contains("The request line exceeds 65536 bytes without ending.") == true, "\(m.facts.error ?? "")")
        // Fields that do not end within the bound: 431 (RFC 6585 §5), not a 400 "could not read".
        var fields = Self.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8080, origin: .reverse), upstreamTLS: false))
        _ = fields.handle(.start)
        let long = Self.text(&fields, "GET / HTTP/1.1\r\nHost: a\r\nX-Filler: " + String(repeating: "a", count: 70_000))
        guard case .sendClient(let answer) = long.first else { Issue.record("\(long)"); return }
        #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
        var gone = Self.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8080, origin: .reverse), upstreamTLS: false))
        _ = gone.handle(.start)
        #expect(gone.handle(.clientGone(reset: false)) == [.armTimer(millis: 0), .close(reset: false)])
        #expect(gone.facts.error == "the client closed the connection before sending anything")
        var half = Self.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8080, origin: .reverse), upstreamTLS: false))
        _ = half.handle(.start)
        #expect(Self.text(&half, "GET / HT") == [])
        #expect(half.handle(.clientGone(reset: true)) == [.armTimer(millis: 0), .close(reset: true)])
        #expect(half.facts.error == "the client reset the connection before sending a complete request")
    }

    @Test("explicit proxy: a request head not whole within the head timeout is a 408 and counted; SOCKS5 keeps the handshake timeout")
    func explicitHeadDeadline() {
        let policy = InterceptionPolicy(inspectionEnabled: true, caAvailable: true, ignoreHosts: [])
        let settings = Machine.Settings(frontEnd: .explicitHTTP, policy: policy, handshakeTimeoutMillis: 10_000, headTimeoutMillis: 1_500)
        var m = Machine(settings: settings, facts: FlowFacts(id: 1, startMicros: 0, client: Endpoint(address: "127.0.0.1", port: 1)), recall: { _, _ in nil })
        #expect(m.handle(.start) == [.openFlow, .armTimer(millis: 1_500), .peekClient])
        #expect(Self.text(&m, "CONNECT a.test:443 HTTP/1.1\r\nHo") == [])
        #expect(m.handle(.timeout) == [.countHeadTimeout, .sendClient(HeadDeadline.requestTimeoutResponse(limitMillis: 1_500)),
                                       .armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.error == "the client sent no complete request head within 1.5 s (tv closed the connection)")

        var socks = Machine(settings: Machine.Settings(frontEnd: .socks5, policy: policy, handshakeTimeoutMillis: 10_000, headTimeoutMillis: 1_500),
                            facts: FlowFacts(id: 2, startMicros: 0, client: Endpoint(address: "127.0.0.1", port: 1)), recall: { _, _ in nil })
        #expect(socks.handle(.start) == [.openFlow, .armTimer(millis: 10_000), .peekClient])
        #expect(socks.handle(.timeout) == [.armTimer(millis: 0), .close(reset: false)])
    }

    @Test("reverse:https: the upstream certificate is checked against the target, not the client's SNI, which is still sent")
    func reverseVerifiesTheTarget() {
        var m = Self.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8443, origin: .reverse), upstreamTLS: true))
        let address = SocketAddress(numericHost: "127.0.0.1", port: 8443)!
        _ = m.handle(.start)
        #expect(Self.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN) == [.armTimer(millis: 5_000), .connect(address)])
        _ = m.handle(.connected(address))
        let out = Self.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        let plan = Machine.UpstreamTLSPlan(serverName: "a.test", alpn: [Array("h2".utf8), Array("http/1.1".utf8)],
                                           verifyHost: "127.0.0.1", sessionKey: "127.0.0.1:8443|a.test")
        #expect(out.contains(.startUpstreamTLS(plan)), "\(out)")
    }

    @Test("reverse:https and a plain-HTTP client: tv opens the TLS leg itself (SNI the target's name, ALPN http/1.1) and relays the plaintext; not encrypted")
    func reversePlainClientToTLSServer() {
        var m = Self.machine(.fixed(OriginalDestination(host: "API.Test.", port: 443, origin: .reverse), upstreamTLS: true))
        _ = m.handle(.start)
        let address = SocketAddress(numericHost: "127.0.0.1", port: 443)!
        #expect(Self.text(&m, "GET / HTTP/1.1\r\nHost: api.test\r\n\r\n") == [.armTimer(millis: 5_000), .resolve(host: "api.test", port: 443)])
        _ = m.handle(.resolved([address]))
        _ = m.handle(.connected(address))
        let out = Self.text(&m, "GET / HTTP/1.1\r\nHost: api.test\r\n\r\n")
        let plan = Machine.UpstreamTLSPlan(serverName: "api.test", alpn: [Array("http/1.1".utf8)],
                                           verifyHost: "api.test", sessionKey: "API.Test.:443|api.test")
        #expect(out == [.armTimer(millis: 10_000), .startUpstreamTLS(plan), .updateFlow], "\(out)")
        let done = Machine.UpstreamHandshake(version: .tls13, alpn: Array("http/1.1".utf8), certificateProblem: nil,
                                             certificate: nil, certificateSANs: [], resumed: false)
        #expect(m.handle(.upstreamHandshakeDone(done)) == [.armTimer(millis: 0), .relay(.raw(plaintext: true, observeServerHello: false)), .updateFlow])
        #expect(m.facts.status == .notEncrypted)
        #expect(m.facts.upstreamTLSVersion == .tls13)
    }

    @Test("reverse:https and a plain HTTP/2 client (prior knowledge): the TLS leg offers h2; chosen, the plaintext is relayed; not chosen, the client gets HTTP/2's SETTINGS and GOAWAY HTTP_1_1_REQUIRED, not an HTTP/1 502")
    func reversePlainH2Client() {
        let preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
        for chosen in ["h2", "http/1.1", nil] as [String?] {
            var m = Self.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8443, origin: .reverse), upstreamTLS: true))
            let address = SocketAddress(numericHost: "127.0.0.1", port: 8443)!
            _ = m.handle(.start)
            _ = Self.text(&m, preface)
            _ = m.handle(.connected(address))
            let start = Self.text(&m, preface)
            #expect(start.contains(.startUpstreamTLS(.init(serverName: nil, alpn: [Array("h2".utf8)], verifyHost: "127.0.0.1",
                                                            sessionKey: "127.0.0.1:8443|"))), "\(start)")
            let done = Machine.UpstreamHandshake(version: .tls13, alpn: chosen.map { Array($0.utf8) }, certificateProblem: nil,
                                                 certificate: nil, certificateSANs: [], resumed: false)
            let out = m.handle(.upstreamHandshakeDone(done))
            if chosen == "h2" {
                #expect(out == [.armTimer(millis: 0), .relay(.raw(plaintext: true, observeServerHello: false)), .updateFlow])
                continue
            }
            let failure = ConnectionFailure.serverLacksHTTP2(chosen: chosen)
            #expect(m.facts.error == failure.sentence)
            let said = HTTP2Preface.settingsThenGoaway(code: 0xd, debug: failure.answer)
            #expect(out == [.sendClient(said), .armTimer(millis: 0), .close(reset: false)], "\(out)")
            // SETTINGS (empty), then GOAWAY: length 8 + the sentence, type 7, last stream 0, code 0xd.
            #expect(Array(said.prefix(9)) == [0, 0, 0, 4, 0, 0, 0, 0, 0])
            #expect(said[12] == 7 && Array(said[18..<26]) == [0, 0, 0, 0, 0, 0, 0, 0x0d])
            #expect(Int(said[9]) << 16 | Int(said[10]) << 8 | Int(said[11]) == 8 + failure.answer.utf8.count)
        }
        // A server that refuses h2 in its handshake (nginx without http2: alert 120) lacks it too.
        var refusing = Self.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8443, origin: .reverse), upstreamTLS: true))
        _ = refusing.handle(.start)
        _ = Self.text(&refusing, preface)
        _ = refusing.handle(.connected(SocketAddress(numericHost: "127.0.0.1", port: 8443)!))
        _ = Self.text(&refusing, preface)
        let alert = refusing.handle(.upstreamHandshakeFailed(TLSFailure(peerAlert: 120, systemError: nil, eof: false,
                                                                        text: "no application protocol", versionMismatch: false)))
        #expect(refusing.facts.error == ConnectionFailure.serverLacksHTTP2(chosen: nil).sentence, "\(alert)")
        #expect(alert.first == .sendClient(HTTP2Preface.settingsThenGoaway(code: 0xd, debug: ConnectionFailure.serverLacksHTTP2(chosen: nil).answer)))
        // A request line is no preface; "PRI" alone is as far as one can tell.
        #expect(!"GET / HTTP/1.1\r\n".utf8.withContiguousStorageIfAvailable { HTTP2Preface.begins(UnsafeRawBufferPointer($0)) }!)
        #expect("PRI".utf8.withContiguousStorageIfAvailable { HTTP2Preface.begins(UnsafeRawBufferPointer($0)) }!)
        #expect(!"PR".utf8.withContiguousStorageIfAvailable { HTTP2Preface.begins(UnsafeRawBufferPointer($0)) }!)
    }

    @Test("reverse:https and a plain-HTTP client: a server certificate that does not verify, or a failed handshake, is a 502 in HTTP, not a TLS alert")
    func reversePlainClientBadGateway() {
        for event in [Machine.Event.upstreamHandshakeDone(.init(version: .tls13, alpn: nil, certificateProblem: UpstreamCertificateProblemTests.selfSigned,
                                                                 certificate: nil, certificateSANs: [], resumed: false)),
                      .upstreamHandshakeFailed(TLSFailure(peerAlert: nil, systemError: nil, eof: false, text: "wrong version number", versionMismatch: true))] {
            var m = Self.machine(.fixed(OriginalDestination(host: "127.0.0.1", port: 8443, origin: .reverse), upstreamTLS: true))
            let address = SocketAddress(numericHost: "127.0.0.1", port: 8443)!
            _ = m.handle(.start)
            #expect(Self.text(&m, "GET / HTTP/1.1\r\n\r\n") == [.armTimer(millis: 5_000), .connect(address)])
            _ = m.handle(.connected(address))
            let start = Self.text(&m, "GET / HTTP/1.1\r\n\r\n")
            // An IP target: no SNI (RFC 6066 §3), the certificate must carry the IP.
            #expect(start.contains(.startUpstreamTLS(.init(serverName: nil, alpn: [Array("http/1.1".utf8)], verifyHost: "127.0.0.1",
                                                            sessionKey: "127.0.0.1:8443|"))), "\(start)")
            let out = m.handle(event)
            let reason = m.facts.error ?? ""
            #expect(out == [.sendClient(Machine.errorResponse(502, body: "tv: " + reason)), .armTimer(millis: 0), .close(reset: false)], "\(out)")
            #expect(reason == "the server's certificate does not verify (self-signed certificate); nothing was sent to it; "
                        + "trust the server's CA with --upstream-ca FILE, or skip the check with --upstream-insecure"
                    || reason == "the TLS handshake with the server failed (wrong version number)", "\(reason)")
        }
    }

    @Test("the client leaving early is a failure with a sentence saying when")
    func clientGone() {
        var m = Self.machine()
        _ = m.handle(.start)
        #expect(m.handle(.clientGone(reset: false)) == [.armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.error == "the client closed the connection before sending a proxy request")
        var r = Self.machine()
        Self.connected(&r)
        #expect(r.handle(.clientGone(reset: true)) == [.armTimer(millis: 0), .close(reset: true)])
    }
}
