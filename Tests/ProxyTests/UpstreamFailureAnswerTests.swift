import LocalCA
@testable import Proxy
import Testing
import FlowTerms
#if canImport(Glibc)
import Glibc
#endif

/// An inspected connection whose upstream TLS handshake failed: a client that will speak HTTP/1
/// gets tv's leg completed and a 502 that says why on its first request; an h2-only client keeps
/// the alert; pinning memory learns nothing from that leg (playbooks: events in, commands out).
@Suite("Upstream failure answered with a 502")
struct UpstreamFailureAnswerTests {
    typealias Machine = ConnectionMachine
    typealias T = ConnectionMachineTests

    static let unverified: Machine.UpstreamHandshake = {
        var done = T.upstreamDone
        done.certificateProblem = UpstreamCertificateProblemTests.selfSigned
        return done
    }()

    static let unverifiedSentence = "the server's certificate does not verify (self-signed certificate); nothing was sent to it; "
        + "trust the server's CA with --upstream-ca FILE, or skip the check with --upstream-insecure"

    static func response(_ sentence: String) -> Machine.Command {
        .sendClient(Array(("HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(("tv: " + sentence + "\n").utf8.count)\r\nConnection: close\r\n\r\ntv: \(sentence)\n").utf8))
    }

    /// A first request over tv's leg.
    static let request = Array("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8)

    /// The client sends `bytes` over tv's leg.
    static func ask(_ m: inout Machine, _ bytes: [UInt8] = request) -> [Machine.Command] {
        bytes.withUnsafeBytes { m.handle(.clientRequestBytes($0)) }
    }

    /// What answers a request (`bytes`): its row, tv's 502 saying `sentence`, the close.
    static func answered(_ sentence: String, _ bytes: [UInt8] = request) -> [Machine.Command] {
        [.readRequestRow(bytes, http2: false), response(sentence), .armTimer(millis: 0), .close(reset: false)]
    }

    /// CONNECT a.test:443 (or `host`), then `hello`: the upstream handshake is under way.
    static func upstreamHandshake(_ hello: [UInt8], host: String = "a.test") -> Machine {
        var m = T.machine()
        T.connected(&m, host: host)
        _ = T.bytes(&m, hello)
        #expect(m.phase == .upstreamHandshake)
        return m
    }

    @Test("an unverified server and a client offering h2 and http/1.1: tv's leg is completed (ALPN http/1.1, a leaf from the SNI alone), its first request gets a 502 naming --upstream-ca, then the close")
    func unverifiedHTTP1Client() throws {
        var m = Self.upstreamHandshake(ProxyFixtures.clientHelloSNIAndALPN)
        let plan = Machine.ClientTLSPlan(identity: try LeafIdentity(names: ["a.test"]), alpn: Array("http/1.1".utf8), keyTypes: [.ecdsaP256])
        #expect(m.handle(.upstreamHandshakeDone(Self.unverified)) == [.armTimer(millis: 10_000), .startClientTLS(plan), .updateFlow])
        #expect(m.handle(.clientTLSStarted(clientAlreadyClosed: false)) == [])
        #expect(m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false))) == [.armTimer(millis: 10_000), .readClientRequest])
        #expect(m.phase == .answering)
        #expect(m.phase.io == .answer)
        #expect(Self.ask(&m) == Self.answered(Self.unverifiedSentence))
        #expect(m.facts.status == .failed)
        #expect(m.facts.failureReason == Self.unverifiedSentence)
        #expect(m.facts.upstreamVerified == false)
        // The client leg carried the 502: its version is the flow's client leg.
        #expect(m.facts.clientTLSVersion == .tls13 && m.facts.clientResumed == false)
        #expect(m.closeLingers)
        #expect(m.outcome == nil)
        // Nothing more after the close.
        #expect(Self.ask(&m) == [])
    }

    @Test("a client without ALPN, CONNECT to an address: tv's leg selects no protocol, the leaf names the address; the 502 comes on its first request")
    func noALPNClient() throws {
        var m = Self.upstreamHandshake(ProxyFixtures.clientHelloNoSNI, host: "127.0.0.1")
        let plan = Machine.ClientTLSPlan(identity: try LeafIdentity(names: ["127.0.0.1"]), alpn: nil, keyTypes: [.ecdsaP256])
        #expect(m.handle(.upstreamHandshakeDone(Self.unverified)) == [.armTimer(millis: 10_000), .startClientTLS(plan), .updateFlow])
        #expect(m.handle(.clientHandshakeDone(.init(version: .tls12, resumed: false))) == [.armTimer(millis: 10_000), .readClientRequest])
        #expect(Self.ask(&m) == Self.answered(Self.unverifiedSentence))
        #expect(m.facts.failureReason == Self.unverifiedSentence)
    }

    @Test("an h2-only client keeps the handshake_failure alert (an answer would need HTTP/2 framing); the sentence names --upstream-ca")
    func h2OnlyClient() {
        var m = Self.upstreamHandshake(ProxyFixtures.clientHelloH2Only)
        #expect(m.facts.offeredALPN == ["h2"])
        #expect(m.handle(.upstreamHandshakeDone(Self.unverified)) == [.armTimer(millis: 0), .refuseClientTLS(alert: TLSAlert.handshakeFailure)])
        #expect(m.facts.status == .failed)
        #expect(m.facts.failureReason == "the server's certificate does not verify (self-signed certificate); nothing was forged and the client was refused; "
                + "trust the server's CA with --upstream-ca FILE, or skip the check with --upstream-insecure")
    }

    @Test("TLS 1.2, the server requires a client certificate (handshake_failure after a CertificateRequest): an HTTP/1 client gets a 502 that says so")
    func clientCertificateRequired() throws {
        var m = Self.upstreamHandshake(ProxyFixtures.clientHelloSNIAndALPN)
        let plan = Machine.ClientTLSPlan(identity: try LeafIdentity(names: ["a.test"]), alpn: Array("http/1.1".utf8), keyTypes: [.ecdsaP256])
        let failed = m.handle(.upstreamHandshakeFailed(ClientCertificateTests.failure(alert: 40, requested: true)))
        #expect(failed == [.armTimer(millis: 10_000), .startClientTLS(plan), .updateFlow])
        #expect(m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false))) == [.armTimer(millis: 10_000), .readClientRequest])
        let sentence = "the server requires a client certificate (alert handshake_failure) and tv has none for this host; give one with --client-cert HOST_PATTERN=FILE"
        #expect(Self.ask(&m) == Self.answered(sentence))
        #expect(m.facts.status == .failed)
        #expect(m.facts.failureReason == sentence)
    }

    @Test("any other handshake failure: an HTTP/1 client gets a 502 with OpenSSL's reason; h2-only keeps protocol_version for a version mismatch")
    func otherFailure() throws {
        let failure = TLSFailure(peerAlert: nil, systemError: nil, eof: false, text: "unsupported protocol", versionMismatch: true)
        var m = Self.upstreamHandshake(ProxyFixtures.clientHelloSNIAndALPN)
        let plan = Machine.ClientTLSPlan(identity: try LeafIdentity(names: ["a.test"]), alpn: Array("http/1.1".utf8), keyTypes: [.ecdsaP256])
        #expect(m.handle(.upstreamHandshakeFailed(failure)) == [.armTimer(millis: 10_000), .startClientTLS(plan), .updateFlow])
        _ = m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false)))
        let sentence = "the TLS handshake with the server failed (unsupported protocol)"
        #expect(Self.ask(&m) == Self.answered(sentence))
        var h2 = Self.upstreamHandshake(ProxyFixtures.clientHelloH2Only)
        #expect(h2.handle(.upstreamHandshakeFailed(failure)) == [.armTimer(millis: 0), .refuseClientTLS(alert: TLSAlert.protocolVersion)])
        #expect(h2.facts.failureReason == sentence + "; the client was refused")
    }

    @Test("the server's handshake does not finish in time: an HTTP/1 client gets a 502 that says so, an h2-only client the alert, a plain client of reverse:https a 502")
    func upstreamTimeout() throws {
        var m = Self.upstreamHandshake(ProxyFixtures.clientHelloSNIAndALPN)
        let plan = Machine.ClientTLSPlan(identity: try LeafIdentity(names: ["a.test"]), alpn: Array("http/1.1".utf8), keyTypes: [.ecdsaP256])
        #expect(m.handle(.timeout) == [.armTimer(millis: 10_000), .startClientTLS(plan), .updateFlow])
        _ = m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false)))
        let sentence = "the TLS handshake with the server did not finish within 10 s"
        #expect(Self.ask(&m) == Self.answered(sentence))
        #expect(m.facts.failureReason == sentence)
        var h2 = Self.upstreamHandshake(ProxyFixtures.clientHelloH2Only)
        #expect(h2.handle(.timeout) == [.armTimer(millis: 0), .refuseClientTLS(alert: TLSAlert.handshakeFailure)])
        #expect(h2.facts.failureReason == sentence + "; the client was refused")
        var plain = ClientCertificateTests.reversePlain()
        #expect(plain.handle(.timeout) == [Self.response(sentence), .armTimer(millis: 0), .close(reset: false)])
        #expect(plain.facts.failureReason == sentence)
    }

    @Test("pinning memory learns nothing from the answering leg: an unknown_ca alert or a close after tv's certificate is neither remembered nor weighed; the flow keeps the server's reason")
    func pinningUntouched() {
        let endings: [Machine.Event] = [
            .clientHandshakeFailed(.init(failure: TLSFailure(peerAlert: 48, systemError: nil, eof: false, text: "alert unknown_ca"), flightSent: true)),
            .clientHandshakeFailed(.init(failure: TLSFailure(peerAlert: nil, systemError: nil, eof: true, text: "eof"), flightSent: true)),
            .clientGone(reset: false),
            .timeout,
        ]
        for ending in endings {
            var m = Self.upstreamHandshake(ProxyFixtures.clientHelloSNIAndALPN)
            _ = m.handle(.upstreamHandshakeDone(Self.unverified))
            _ = m.handle(.clientTLSStarted(clientAlreadyClosed: false))
            #expect(m.handle(ending) == [.armTimer(millis: 0), .close(reset: false)], "\(ending)")
            #expect(m.facts.failureReason == Self.unverifiedSentence)
            #expect(!m.facts.pinningDetected)
            #expect(m.outcome == nil)
        }
    }

    @Test("no leaf for tv's error page: the client gets internal_error, the flow keeps the server's reason")
    func leafMintFailed() {
        var m = Self.upstreamHandshake(ProxyFixtures.clientHelloSNIAndALPN)
        _ = m.handle(.upstreamHandshakeDone(Self.unverified))
        #expect(m.handle(.leafMintFailed("key too small")) == [.armTimer(millis: 0), .refuseClientTLS(alert: TLSAlert.internalError)])
        #expect(m.facts.status == .failed)
        #expect(m.facts.failureReason == Self.unverifiedSentence)
    }

    @Test("after tv's leg is up, a client that leaves or asks nothing within the head time closes with the server's reason, and no request answered")
    func answeringEnds() {
        for (ending, reset) in [(Machine.Event.clientGone(reset: true), true), (.timeout, false)] {
            var m = Self.upstreamHandshake(ProxyFixtures.clientHelloSNIAndALPN)
            _ = m.handle(.upstreamHandshakeDone(Self.unverified))
            _ = m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false)))
            #expect(m.handle(ending) == [.armTimer(millis: 0), .close(reset: reset)])
            #expect(m.facts.failureReason == Self.unverifiedSentence)
        }
    }

    @Test("transparent mode, a server tv cannot reach (connected before the client spoke): a request head gets tv's 502 saying why (curl read an empty reply: a trial), a ClientHello tv's leg and the 502 on its request, silence for a second the close; the flow fails with the reason each time")
    func transparentUnreachable() throws {
        let destination = OriginalDestination(host: "10.36.2.9", port: 80, origin: .none)
        let address = SocketAddress(numericHost: "10.36.2.9", port: 80)!
        let failure = ConnectionFailure.unreachable(target: "10.36.2.9:80", .connect(Errno(EHOSTUNREACH)))
        func unreachable() -> Machine {
            var m = T.machine(.fixed(destination, upstreamTLS: nil))
            #expect(m.handle(.start) == [.openFlow, .armTimer(millis: 5_000), .connect(address)])
            #expect(m.handle(.connectFailed(Errno(EHOSTUNREACH))) == [.armTimer(millis: 1_000), .peekClient])
            #expect(m.facts.status != .failed)
            return m
        }
        var plain = unreachable()
        let answer = T.text(&plain, "GET / HTTP/1.1\r\nHost: site.test\r\n\r\n")
        #expect(answer.first == .sendClient(Machine.errorResponse(502, failure)), "\(answer)")
        #expect(plain.facts.status == .failed && plain.facts.failureReason == failure.sentence)
        // Not a request: closed with the reason, no HTTP bytes.
        var other = unreachable()
        #expect(!T.text(&other, "SSH-2.0-OpenSSH_9.2\r\n").contains { if case .sendClient = $0 { return true }; return false })
        #expect(other.facts.failureReason == failure.sentence)
        var silent = unreachable()
        _ = silent.handle(.timeout)
        #expect(silent.facts.status == .failed && silent.facts.failureReason == failure.sentence)
        var tls = unreachable()
        let plan = Machine.ClientTLSPlan(identity: try LeafIdentity(names: ["a.test"]), alpn: Array("http/1.1".utf8), keyTypes: [.ecdsaP256])
        #expect(T.bytes(&tls, ProxyFixtures.clientHelloSNIAndALPN) == [.armTimer(millis: 10_000), .startClientTLS(plan), .updateFlow])
        _ = tls.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false)))
        #expect(Self.ask(&tls) == [.readRequestRow(Self.request, http2: false), .sendClient(Machine.errorResponse(502, failure)), .armTimer(millis: 0), .close(reset: false)])
        #expect(tls.facts.failureReason == failure.sentence)
    }

    /// A client without ALPN, CONNECT to a.test (SNI none), whose server's certificate did not
    /// verify: tv's leg is up and waits for its first bytes.
    static func answeringNoALPN() -> Machine {
        var m = Self.upstreamHandshake(ProxyFixtures.clientHelloNoSNI)
        #expect(m.facts.offeredALPN.isEmpty)
        _ = m.handle(.upstreamHandshakeDone(Self.unverified))
        _ = m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false)))
        #expect(m.phase == .answering)
        return m
    }

    static let closedSentence = "the server's certificate does not verify (self-signed certificate); nothing was sent to it, and the client's first bytes "
        + "were no HTTP request, so tv closed its TLS session unanswered; trust the server's CA with --upstream-ca FILE, or skip the check with --upstream-insecure"

    @Test("no ALPN, then bytes that are no HTTP request (openssl s_client's PING, binary, an SMTP EHLO): no HTTP text, tv's TLS session closed (close_notify); the flow says so")
    func noALPNNotHTTP() {
        for first in ["PING\n", "\u{0}\u{1}\u{2}\u{3}binary", "EHLO client.test\r\n", "ping me later\r\n"] {
            var m = Self.answeringNoALPN()
            #expect(Self.ask(&m, Array(first.utf8)) == [.closeClientTLS, .armTimer(millis: 0), .close(reset: false)], "\(first)")
            #expect(m.facts.status == .failed)
            #expect(m.facts.failureReason == Self.closedSentence)
            #expect(Self.ask(&m) == [])
        }
    }

    @Test("no ALPN, an HTTP/1 request in pieces: nothing until it tells, then its row from every byte and tv's 502")
    func noALPNRequestInPieces() {
        var m = Self.answeringNoALPN()
        #expect(Self.ask(&m, Array("GE".utf8)) == [])
        #expect(Self.ask(&m, Array("T /index.html HT".utf8)) == [])
        #expect(Self.ask(&m, Array("TP/1.0\r\n\r\n".utf8)) == Self.answered(Self.unverifiedSentence, Array("GET /index.html HTTP/1.0\r\n\r\n".utf8)))
        #expect(m.facts.failureReason == Self.unverifiedSentence)
    }

    @Test("no ALPN, HTTP/2's connection preface: HTTP/2's SETTINGS and GOAWAY saying why, not an HTTP/1 502")
    func noALPNHTTP2Preface() {
        var m = Self.answeringNoALPN()
        let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        #expect(Self.ask(&m, Array(preface[..<10])) == [])
        let failure = ConnectionFailure.upstreamCertificate(UpstreamCertificateProblemTests.selfSigned, answer: .badGateway)
        #expect(Self.ask(&m, Array(preface[10...])) == [.readRequestRow(preface, http2: true),
                                                         .sendClient(HTTP2Preface.settingsThenGoaway(code: HTTP2Preface.internalError, debug: failure.answer)),
                                                         .armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.failureReason == Self.unverifiedSentence)
    }

    @Test("a client that offered http/1.1 said it speaks HTTP: its first bytes are its request, whatever they are")
    func http1ClientAnsweredAtOnce() {
        var m = Self.upstreamHandshake(ProxyFixtures.clientHelloSNIAndALPN)
        _ = m.handle(.upstreamHandshakeDone(Self.unverified))
        _ = m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false)))
        #expect(Self.ask(&m, Array("G".utf8)) == Self.answered(Self.unverifiedSentence, Array("G".utf8)))
    }
}

