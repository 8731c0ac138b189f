import FlowTerms
@testable import Proxy
import Testing

/// How a closed connection counts in `tv diag`: offered or not, and what became of the offer.
@Suite struct InspectionOutcomeTests {
    typealias D = InterceptionPolicy.Decision

    static func of(_ decision: D?, _ status: FlowStatus = .failed, on: Bool = true, done: Bool = false,
                   outcome: ClientLegOutcome? = nil, failure: ConnectionFailure? = nil) -> String? {
        InspectionOutcome.of(decision: decision, status: status, inspectionOn: on, handshakeDone: done, outcome: outcome, failure: failure)?.key
    }

    @Test("no ClientHello first: not TLS while inspection is on; not offered when off or when it failed before any bytes")
    func withoutDecision() {
        #expect(Self.of(nil, .notEncrypted) == "notTLS")
        #expect(Self.of(nil, .encrypted) == "notTLS")  // STARTTLS: plain first
        #expect(Self.of(nil, .notEncrypted, on: false) == nil)
        #expect(Self.of(nil, .failed) == nil)
    }

    @Test("each decision reason, and an inspect decision's end: inspected, refused by the client, failed on a leg")
    func decisions() {
        let key = PinKey(client: ClientIdentity(address: "127.0.0.1", helloFingerprint: "f"), host: "a.test", port: 443)
        #expect(Self.of(D(action: .passThrough, reason: .inspectionOff), .encrypted) == nil)
        #expect(Self.of(D(action: .passThrough, reason: .noCertificateAuthority), .encrypted) == "noCA")
        #expect(Self.of(D(action: .passThrough, reason: .remembered(.remembered(.lacksRoot))), .keptPrivate) == "keptPrivate.lacksRoot")
        #expect(Self.of(D(action: .passThrough, reason: .remembered(.remembered(.pinned))), .keptPrivate) == "keptPrivate.pinned")
        #expect(Self.of(D(action: .passThrough, reason: .remembered(.retry)), .keptPrivate) == "keptPrivate.pinned")
        #expect(Self.of(D(action: .passThrough, reason: .remembered(.hostWide)), .keptPrivate) == "keptPrivate.pinned")
        #expect(Self.of(D(action: .passThrough, reason: .ignored(pattern: "a")), .encrypted) == "passedByRule")
        #expect(Self.of(D(action: .passThrough, reason: .notAllowed), .encrypted) == "passedByRule")
        #expect(Self.of(D(action: .passThrough, reason: .clientVersionTooOld), .encrypted) == "passedByRule")
        let inspect = D(action: .inspect, reason: .inspect)
        #expect(Self.of(inspect, .inspected, done: true) == "inspected")
        // A reset mid-relay after both handshakes: still taken over.
        #expect(Self.of(inspect, .failed, done: true, failure: .read(from: .server, reset: true, .tlsClosed)) == "inspected")
        #expect(Self.of(inspect, .failed, outcome: .lacksRoot, failure: .clientLacksRoot(alert: 48, passThrough: key)) == "clientRefused.lacksRoot")
        #expect(Self.of(inspect, .inspected, done: true, outcome: .possiblePinning) == "clientRefused.possiblePinning")
        #expect(Self.of(inspect, .failed, failure: .upstreamCertificate(UpstreamCertificateProblemTests.selfSigned, answer: .alert)) == "failed.server.certificate")
        #expect(Self.of(inspect, .failed, failure: .upstreamHandshakeTimeout(seconds: 5, answer: .badGateway)) == "failed.server.timeout")
        #expect(Self.of(inspect, .failed, failure: .leafMint("x")) == "failed.client.leafCertificate")
        #expect(Self.of(inspect, .failed, failure: .stopped) == "failed.client.other")
        #expect(Self.of(inspect, .failed) == "failed.client.other")
    }
}
