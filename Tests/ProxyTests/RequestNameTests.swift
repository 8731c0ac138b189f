@testable import Proxy
import Testing
import Wire
import FlowTerms

/// A relay that reached tv without a name is named by its first request's authority (the
/// `Host` header or an absolute-form target, RFC 9110 §7.2): `ConnectionMachine.requestNamed`,
/// `FlowFacts.nameFromRequest`, `HostOrigin.httpHost`.
@Suite("ConnectionMachine: a nameless relay named by its request's Host")
struct RequestNameTests {
    typealias Machine = ConnectionMachine
    typealias T = ConnectionMachineTests

    /// A transparent-mode machine (original destination `10.0.0.1:80`, names inferred from DNS
    /// when given) relaying plain HTTP.
    static func plainRelay(inferred: [String] = []) -> Machine {
        var m = T.machine(.fixed(OriginalDestination(host: "10.0.0.1", port: 80, origin: .none, inferredNames: inferred), upstreamTLS: nil))
        let address = SocketAddress(numericHost: "10.0.0.1", port: 80)!
        #expect(m.handle(.start) == [.openFlow, .armTimer(millis: 5_000), .connect(address)])
        _ = m.handle(.connected(address))
        #expect(T.text(&m, "GET / HTTP/1.1\r\nHost: plain.test\r\n\r\n") == [.armTimer(millis: 0), .relay(.raw(plaintext: true, observeServerHello: false)), .updateFlow])
        #expect(m.phase == .relaying)
        return m
    }

    @Test("an unnamed plain relay takes its first request's host (lowercased, no port), once; later requests change nothing")
    func unnamedRelay() {
        var m = Self.plainRelay()
        #expect(m.facts.host == nil && m.facts.hostOrigin == .none && m.wantsRequestName)
        #expect(m.requestNamed("Plain.TEST:8080") == .updateFlow)
        #expect(m.facts.host == "plain.test" && m.facts.hostOrigin == .httpHost && m.facts.port == 80)
        #expect(!m.wantsRequestName)
        #expect(m.requestNamed("other.test") == nil)
        #expect(m.facts.host == "plain.test")
    }

    @Test("a name inferred from DNS yields to the Host header (announced wins); the other names looked up stay, the Host among them")
    func inferredYields() {
        var m = Self.plainRelay(inferred: ["cdn.test", "www.test"])
        #expect(m.facts.host == "cdn.test" && m.facts.hostOrigin == .dns && m.facts.otherHosts == ["www.test"])
        #expect(m.wantsRequestName)
        #expect(m.requestNamed("www.test") == .updateFlow)
        #expect(m.facts.host == "www.test" && m.facts.hostOrigin == .httpHost && m.facts.otherHosts == ["cdn.test"])
        #expect(m.facts.otherHostsOrigin == .lookups)
    }

    @Test("a Host header no lookup gave the address: the names looked up stay, and it is said that the announced one is not among them")
    func hostNotLookedUp() {
        var m = Self.plainRelay(inferred: ["alias-a.t41.test"])
        #expect(m.requestNamed("www.bank.example") == .updateFlow)
        #expect(m.facts.host == "www.bank.example" && m.facts.otherHosts == ["alias-a.t41.test"] && m.facts.otherHostsOrigin == .lookupsNotAnnounced)
    }

    @Test("addresses and text that is no host name nothing; a trailing dot and U-labels are normalised")
    func whatNames() {
        for authority in ["10.0.0.1", "10.0.0.1:80", "[fd00::1]:80", "", ":80", "a b.test", "host:99999", "a.test:80:80", "[fd00::1"] {
            var m = Self.plainRelay()
            #expect(m.requestNamed(authority) == nil, "\(authority)")
            #expect(m.facts.host == nil && m.facts.hostOrigin == .none, "\(authority)")
        }
        var dotted = Self.plainRelay()
        #expect(dotted.requestNamed("Example.TEST.") == .updateFlow)
        #expect(dotted.facts.host == "example.test")
        var international = Self.plainRelay()
        #expect(international.requestNamed("bücher.test:8080") == .updateFlow)
        #expect(international.facts.host == "xn--bcher-kva.test")
    }

    @Test("an announced name (CONNECT, SNI) stays; before the relay nothing is named")
    func announcedStays() {
        var inspected = RelayPhaseTests.inspected()
        #expect(inspected.facts.hostOrigin == .sni && !inspected.wantsRequestName)
        #expect(inspected.requestNamed("b.test") == nil)
        #expect(inspected.facts.host == "a.test")

        var early = T.machine(.fixed(OriginalDestination(host: "10.0.0.1", port: 80, origin: .none), upstreamTLS: nil))
        _ = early.handle(.start)
        #expect(!early.wantsRequestName && early.requestNamed("plain.test") == nil && early.facts.host == nil)
    }
}
