import LocalCA
@testable import Proxy
import Testing
import Wire
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// The relay phase of `ConnectionMachine`, playbook style: events (and bursts) in, the exact
/// commands and facts out.
@Suite("ConnectionMachine: relay phase")
struct RelayPhaseTests {
    typealias Machine = ConnectionMachine
    typealias T = ConnectionMachineTests

    static let quietClose = "the client closed right after the handshake without sending data (possible pinning)"

    /// An explicit-proxy machine relaying an inspected flow whose client handshake finished at 1 s.
    static func inspected() -> Machine {
        var m = T.machine()
        T.connected(&m)
        _ = T.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        _ = m.handle(.upstreamHandshakeDone(T.upstreamDone))
        #expect(m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false, atMicros: 1_000_000)))
                == [.armTimer(millis: 0), .relay(.decrypted), .updateFlow])
        return m
    }

    /// A pass-through machine (inspection off), relaying, waiting for the ServerHello.
    static func passedThrough(splice: Bool = true) -> Machine {
        let policy = InterceptionPolicy(inspectionEnabled: false, caAvailable: true, ignoreHosts: [])
        let settings = Machine.Settings(frontEnd: .explicitHTTP, policy: policy, spliceEncryptedPassThrough: splice)
        var m = Machine(settings: settings, facts: FlowFacts(id: 7, startMicros: 1_000, client: Endpoint(address: "127.0.0.1", port: 50000)),
                        recall: { _, _ in nil })
        T.connected(&m)
        #expect(T.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
                == [.noClientSecret(clientRandom: ProxyFixtures.clientHelloSNIAndALPNRandom),
                    .armTimer(millis: 0), .relay(.raw(plaintext: false, observeServerHello: true)), .updateFlow])
        return m
    }

    /// A TLS 1.2 ServerHello choosing h2 (RFC 5246 §7.4.1.3, RFC 7301 §3.1), in one record.
    static let serverHello: [UInt8] = {
        let alpn: [UInt8] = [0x00, 0x10, 0x00, 0x05, 0x00, 0x03, 0x02, 0x68, 0x32]
        let body: [UInt8] = [0x03, 0x03] + Array(repeating: 0x11, count: 32) + [0x00, 0xC0, 0x2F, 0x00, 0x00, UInt8(alpn.count)] + alpn
        let handshake: [UInt8] = [0x02, 0x00, 0x00, UInt8(body.count)] + body
        return [0x16, 0x03, 0x03, 0x00, UInt8(handshake.count)] + handshake
    }()

    @Test("bursts: totals and last activity kept; the client's first data over our leaf is an acceptance, once")
    func burstTotals() {
        var m = Self.inspected()
        #expect(T.moved(&m, 300, .clientToServer, at: 1_100_000) == .clientAccepted(T.fixtureKey()))
        #expect(T.moved(&m, 200, .clientToServer, at: 1_200_000) == nil)
        #expect(T.moved(&m, 4_000, .serverToClient, at: 1_300_000) == nil)
        #expect(m.facts.bytesFromClient == 500)
        #expect(m.facts.bytesFromServer == 4_000)
        #expect(m.facts.lastActivityMicros == 1_300_000)
        m.spliced(1_000, .serverToClient, atMicros: 1_400_000)
        #expect(m.facts.bytesFromServer == 5_000)
        #expect(m.facts.lastActivityMicros == 1_400_000)
        #expect(m.relay.recordsContent)
        #expect(!m.relay.spliceAllowed)
    }

    @Test("a pass-through's first client data is no acceptance (nothing of ours to accept)")
    func passThroughNoAcceptance() {
        var m = Self.passedThrough()
        #expect(T.moved(&m, 100, .clientToServer, at: 2_000) == nil)
    }

    @Test("pass-through: the ServerHello in the server's bytes fills the facts, then splicing may begin")
    func serverHelloThenSplice() {
        var m = Self.passedThrough()
        #expect(!m.relay.spliceAllowed)
        #expect(!m.relay.recordsContent)
        let hello = Self.serverHello
        let first = Array(hello[0..<20]).withUnsafeBytes { m.moved($0, .serverToClient, atMicros: 2_000) }
        #expect(first == nil)
        let rest = Array(hello[20...]).withUnsafeBytes { m.moved($0, .serverToClient, atMicros: 3_000) }
        #expect(rest == .updateFlow)
        #expect(m.facts.clientTLSVersion == .tls12)
        #expect(m.facts.alpn == "h2")
        #expect(m.facts.versionSource == .serverHello)
        #expect(m.facts.bytesFromServer == UInt64(hello.count))
        #expect(m.relay.spliceAllowed)
        // Read once: later bytes are not parsed.
        #expect(T.moved(&m, 10, .serverToClient, at: 4_000) == nil)
        var off = Self.passedThrough(splice: false)
        _ = hello.withUnsafeBytes { off.moved($0, .serverToClient, atMicros: 2_000) }
        #expect(!off.relay.spliceAllowed)
    }

    @Test("the ServerHello parser is boxed: 8 bytes of every connection's relay state, not the parser inline")
    func helloParserBoxed() {
        #expect(MemoryLayout<HelloReading?>.size == 8)
        #expect(MemoryLayout<ServerHelloParser>.size > 100)
    }

    @Test("relay end, both sides closed in order after data: nothing to weigh, a plain close")
    func relayEndClean() {
        var m = Self.inspected()
        _ = T.moved(&m, 10, .clientToServer, at: 1_100_000)
        #expect(m.handle(.relayEnded(.init(failure: nil, atMicros: 1_500_000))) == [.close(reset: false)])
        #expect(m.phase == .closed)
        #expect(m.facts.error == nil)
        #expect(m.facts.status == .inspected)
        #expect(m.handle(.relayEnded(.init(failure: nil, atMicros: 1_600_000))) == [])
    }

    @Test("relay end by a leg: the sentence says which leg and how; a reset is carried as a reset; after a read failure, what tv holds for the other leg is delivered first")
    func relayEndFailures() {
        // A read failure leaves what tv read from that leg to be delivered to the other first.
        let cases: [(ConnectionFailure, Bool, String, Machine.Command)] = [
            (.read(from: .client, reset: true, .system(Errno(ECONNRESET))), true, "the client reset the connection",
             .deliverThenClose(to: .server, reset: true)),
            (.read(from: .server, reset: true, .system(Errno(ECONNRESET))), true, "the server reset the connection",
             .deliverThenClose(to: .client, reset: true)),
            (.read(from: .server, reset: false, .tls(TLSFailure(peerAlert: nil, systemError: nil, eof: false, text: "bad record mac"))), false,
             "reading from the server failed: bad record mac", .deliverThenClose(to: .client, reset: false)),
            (.send(to: .client, .system(Errno(EPIPE))), false, "sending to the client failed: broken pipe", .close(reset: false)),
        ]
        for (failure, reset, sentence, close) in cases {
            var m = Self.inspected()
            _ = T.moved(&m, 10, .clientToServer, at: 1_100_000)
            #expect(m.handle(.relayEnded(.init(failure: failure, reset: reset, atMicros: 9_000_000))) == [close])
            #expect(m.facts.error == sentence)
        }
    }

    @Test("idle: the relay ends with the sentence for what it waited for (nothing, a leg that stopped reading, a response: tv's 504 answers the request); outside the relay the idle event means nothing")
    func idle() {
        var m = Self.inspected()
        _ = T.moved(&m, 10, .clientToServer, at: 1_100_000)
        #expect(m.handle(.idle(atMicros: 400_000_000, waiting: .nothing)) == [.close(reset: false)])
        #expect(m.facts.error == "closed after 300 s without traffic")
        // A client that stopped reading is not "without traffic" (a trial).
        var stalled = Self.inspected()
        _ = T.moved(&stalled, 10, .serverToClient, at: 1_100_000)
        #expect(stalled.handle(.idle(atMicros: 400_000_000, waiting: .reading(.client))) == [.close(reset: false)])
        #expect(stalled.facts.error == "closed after 300 s in which the client took nothing of what tv held for it (it stopped reading)")
        // A whole HTTP/1 request and no byte of its response: tv answers 504, as the plain-HTTP
        // path does (a trial's inspected request got a bare close), and the flow says why.
        var waiting = Self.inspected()
        _ = T.moved(&waiting, 40, .clientToServer, at: 1_100_000)
        let body = "tv: no response from the server within 300 s of the request\n"
        let answer = Array(("HTTP/1.1 504 Gateway Timeout\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
                            + "Connection: close\r\n\r\n" + body).utf8)
        #expect(waiting.handle(.idle(atMicros: 400_000_000, waiting: .response)) == [.answerWaitingRequest(answer), .close(reset: false)])
        #expect(waiting.facts.error == "no response from the server within 300 s of the request" && waiting.facts.status == .inspected)
        var early = T.machine()
        T.connected(&early)
        #expect(early.handle(.idle(atMicros: 400_000_000, waiting: .response)) == [])
    }

    @Test("a quiet close within the window is a suspicion; weighed as tipped it remembers the host and says so once")
    func suspicionTipped() {
        var m = Self.inspected()
        #expect(m.handle(.relayEnded(.init(failure: nil, atMicros: 1_500_000)))
                == [.suspectPinning(T.fixtureKey(), .quietCloseAfterHandshake), .close(reset: false)])
        // Said once weighed: nothing yet.
        #expect(m.facts.error == nil)
        #expect(m.outcome == nil)
        #expect(!m.facts.pinningDetected)
        // Tipped: nothing is remembered yet (only when the client comes back), the flow says its
        // next connection passes through.
        #expect(m.handle(.pinningWeighed(T.fixtureKey(), .quietCloseAfterHandshake, .counted(tipped: true))) == [])
        #expect(!m.facts.pinningDetected)
        #expect(m.facts.error == Self.quietClose + "; its next connection to a.test:443 passes through unread")
        #expect(m.outcome == .possiblePinning)
        #expect(m.facts.status == .inspected)
    }

    @Test("a suspicion counted without tipping the balance, or in an episode already counted, is possible pinning")
    func suspicionNotTipped() {
        for weight in [PinningEvidenceRule.Weight.counted(tipped: false), .sameEpisode] {
            var m = Self.inspected()
            _ = m.handle(.relayEnded(.init(failure: nil, atMicros: 1_500_000)))
            #expect(m.handle(.pinningWeighed(T.fixtureKey(), .quietCloseAfterHandshake, weight)) == [])
            #expect(!m.facts.pinningDetected)
            #expect(m.facts.error == Self.quietClose)
            #expect(m.outcome == .possiblePinning)
        }
    }

    /// A trial's `tv diag` after Chromium runs: "13 of 20 TLS connections offered were inspected
    /// … 7 possible pinning", each a spare Chromium closed 0.3 ms after its handshake because
    /// another connection to the host won the race (measured through tv with tcpdump).
    @Test("a quiet close not held against the client (another connection of its held tv's leaf, or it used it) is no error and no possible pinning")
    func quietCloseOfAnUnusedConnection() {
        for weight in [PinningEvidenceRule.Weight.anotherConnectionOpen, .usedTVCertificate] {
            var m = Self.inspected()
            #expect(m.handle(.relayEnded(.init(failure: nil, atMicros: 1_500_000)))
                    == [.suspectPinning(T.fixtureKey(), .quietCloseAfterHandshake), .close(reset: false)])
            #expect(m.handle(.pinningWeighed(T.fixtureKey(), .quietCloseAfterHandshake, weight)) == [])
            #expect(m.facts.error == nil)
            #expect(m.outcome == nil)
            #expect(m.facts.status == .inspected)
            #expect(!m.facts.pinningDetected)
        }
    }

    /// Chromium's spare through tv on this machine: the server's SETTINGS reached tv after the
    /// spare had closed, so the relay ended "sending to the client failed: broken pipe", and
    /// that error stood on a connection the client merely did not use.
    @Test("a quiet close met on the client's leg (its reset, tv's bytes refused): no error when it was a spare, pinning's sentence when counted")
    func quietCloseMetOnTheClientsLeg() {
        let failures: [(ConnectionFailure, Bool, Machine.Command)] = [
            (.send(to: .client, .system(Errno(EPIPE))), false, .close(reset: false)),
            (.read(from: .client, reset: true, .system(Errno(ECONNRESET))), true, .deliverThenClose(to: .server, reset: true)),
        ]
        for (failure, reset, close) in failures {
            var spare = Self.inspected()
            #expect(spare.handle(.relayEnded(.init(failure: failure, reset: reset, atMicros: 1_000_300)))
                    == [.suspectPinning(T.fixtureKey(), .quietCloseAfterHandshake), close])
            #expect(spare.handle(.pinningWeighed(T.fixtureKey(), .quietCloseAfterHandshake, .anotherConnectionOpen)) == [])
            #expect(spare.facts.error == nil)
            #expect(spare.outcome == nil)
            var pinning = Self.inspected()
            _ = pinning.handle(.relayEnded(.init(failure: failure, reset: reset, atMicros: 1_000_300)))
            #expect(pinning.handle(.pinningWeighed(T.fixtureKey(), .quietCloseAfterHandshake, .counted(tipped: false))) == [])
            #expect(pinning.facts.error == Self.quietClose)
            #expect(pinning.outcome == .possiblePinning)
        }
        // The server's failure is the flow's error still (it is no part of the client's close).
        var server = Self.inspected()
        _ = server.handle(.relayEnded(.init(failure: .read(from: .server, reset: true, .system(Errno(ECONNRESET))), reset: true, atMicros: 1_000_300)))
        _ = server.handle(.pinningWeighed(T.fixtureKey(), .quietCloseAfterHandshake, .anotherConnectionOpen))
        #expect(server.facts.error == "the server reset the connection")
    }

    @Test("a silent close after the window, or a pass-through's, is no suspicion")
    func noSuspicion() {
        var late = Self.inspected()
        #expect(late.handle(.relayEnded(.init(failure: nil, atMicros: 3_000_001))) == [.close(reset: false)])
        var passed = Self.passedThrough()
        #expect(passed.handle(.relayEnded(.init(failure: nil, atMicros: 1_500))) == [.close(reset: false)])
    }

    @Test("a client handshake closed after our certificate is a suspicion; one closed before our flight is not")
    func handshakeCloseSuspicion() {
        let eof = TLSFailure(peerAlert: nil, systemError: nil, eof: true, text: "the peer closed the connection")
        var m = T.machine()
        T.connected(&m)
        _ = T.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        _ = m.handle(.upstreamHandshakeDone(T.upstreamDone))
        #expect(m.handle(.clientTLSStarted(clientAlreadyClosed: false)) == [])
        // Without an alert: pinning, or a client without tv's root that says nothing (Node.js).
        let reason = "the client closed the connection after seeing tv's certificate, before finishing the handshake (possible pinning); "
            + "a client without tv's root that sends no alert closes so too (Node.js: give it the root with NODE_EXTRA_CA_CERTS=FILE, from `tv ca export`)"
        #expect(m.handle(.clientHandshakeFailed(.init(failure: eof, flightSent: true)))
                == [.suspectPinning(T.fixtureKey(), .closedAfterCertificate), .armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.error == reason)
        #expect(m.outcome == .possiblePinning)
        #expect(m.handle(.pinningWeighed(T.fixtureKey(), .closedAfterCertificate, .counted(tipped: true))) == [])
        #expect(m.facts.failureReason == reason + "; its next connection to a.test:443 passes through unread")
        var gone = T.machine()
        T.connected(&gone)
        _ = T.bytes(&gone, ProxyFixtures.clientHelloSNIAndALPN)
        _ = gone.handle(.upstreamHandshakeDone(T.upstreamDone))
        _ = gone.handle(.clientTLSStarted(clientAlreadyClosed: true))
        #expect(gone.handle(.clientHandshakeFailed(.init(failure: eof, flightSent: true))) == [.armTimer(millis: 0), .close(reset: false)])
        #expect(gone.facts.error == "the client closed the connection before the handshake")
        #expect(gone.outcome == .clientLeft)
    }

    @Test("tv stopping: the relay ends as a reset and keeps an error it already had; before the relay, a reset close")
    func shutdown() {
        var m = Self.inspected()
        _ = T.moved(&m, 10, .clientToServer, at: 1_100_000)
        #expect(m.handle(.shutdown(atMicros: 9_000_000)) == [.close(reset: true)])
        #expect(m.facts.error == "tv stopped")
        var early = T.machine()
        _ = early.handle(.start)
        #expect(early.handle(.shutdown(atMicros: 9_000_000)) == [.close(reset: true)])
        #expect(early.facts.error == "tv stopped")
        #expect(early.handle(.shutdown(atMicros: 9_000_001)) == [])
    }

    @Test("tv stopping a relay between exchanges with nothing held: closed with FINs (the client reads what its socket holds); either fact missing, a reset")
    func shutdownBetweenExchanges() {
        for (between, holdsNothing, reset) in [(true, true, false), (true, false, true), (false, true, true), (false, false, true)] {
            var m = Self.inspected()
            _ = T.moved(&m, 10, .clientToServer, at: 1_100_000)
            #expect(m.handle(.shutdown(atMicros: 9_000_000, betweenExchanges: between, holdsNothing: holdsNothing)) == [.close(reset: reset)],
                    "between \(between), holds nothing \(holdsNothing)")
            #expect(m.facts.error == "tv stopped")
        }
        // Before the relay there is nothing to deliver: a reset whatever the driver says.
        var early = T.machine()
        _ = early.handle(.start)
        #expect(early.handle(.shutdown(atMicros: 9_000_000, betweenExchanges: true, holdsNothing: true)) == [.close(reset: true)])
    }

    @Test("the server's handshake failure, an h2-only client: protocol_version alert for a version mismatch, handshake_failure otherwise")
    func upstreamFailureAlert() {
        for (mismatch, alert) in [(true, TLSAlert.protocolVersion), (false, TLSAlert.handshakeFailure)] {
            var m = T.machine()
            T.connected(&m)
            _ = T.bytes(&m, ProxyFixtures.clientHelloH2Only)
            let failure = TLSFailure(peerAlert: nil, systemError: nil, eof: false, text: "some reason", versionMismatch: mismatch)
            #expect(m.handle(.upstreamHandshakeFailed(failure)) == [.armTimer(millis: 0), .refuseClientTLS(alert: alert)])
            #expect(m.facts.error == "the TLS handshake with the server failed (some reason); the client was refused")
        }
        // The server offered none of the client's ALPN ids: the client hears no_application_protocol, as directly.
        var m = T.machine()
        T.connected(&m)
        _ = T.bytes(&m, ProxyFixtures.clientHelloH2Only)
        let failure = TLSFailure(peerAlert: TLSAlert.noApplicationProtocol, systemError: nil, eof: false, text: "no application protocol", versionMismatch: false)
        #expect(m.handle(.upstreamHandshakeFailed(failure)) == [.armTimer(millis: 0), .refuseClientTLS(alert: TLSAlert.noApplicationProtocol)])
    }

    @Test("what the driver could not do is a failure the machine closes with; a leaf it could not mint is an internal_error alert")
    func driverFailures() {
        var m = T.machine()
        T.connected(&m)
        _ = T.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        #expect(m.handle(.failed(.tlsSession("no memory"))) == [.armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.error == "tv could not create a TLS session (no memory)")
        #expect(m.facts.status == .failed && m.facts.failureReason == "tv could not create a TLS session (no memory)")
        var mint = T.machine()
        T.connected(&mint)
        _ = T.bytes(&mint, ProxyFixtures.clientHelloSNIAndALPN)
        _ = mint.handle(.upstreamHandshakeDone(T.upstreamDone))
        #expect(mint.handle(.leafMintFailed("key too small")) == [.armTimer(millis: 0), .refuseClientTLS(alert: TLSAlert.internalError)])
        #expect(mint.facts.error == "tv could not mint a certificate: key too small")
    }
}
