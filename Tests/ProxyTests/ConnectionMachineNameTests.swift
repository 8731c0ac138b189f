@testable import Proxy
import Testing
import FlowTerms

/// Issue 18: a connection handed in by the TUN with the live DNS names of its address is named
/// after them (`HostOrigin.dns`) until it announces its own name, which always wins.
@Suite("ConnectionMachine: names inferred from DNS")
struct ConnectionMachineNameTests {
    typealias Machine = ConnectionMachine
    static let address = SocketAddress(numericHost: "203.0.113.100", port: 443)!

    static func tunnelMachine(_ names: [String]) -> Machine {
        var m = ConnectionMachineTests.machine(.fixed(OriginalDestination(host: "203.0.113.100", port: 443, origin: .none, inferredNames: names),
                                                      upstreamTLS: nil))
        #expect(m.handle(.start) == [.openFlow, .armTimer(millis: 5_000), .connect(address)])
        _ = m.handle(.connected(address))
        return m
    }

    @Test("no announced name: the first live name heads, the others are kept")
    func inferred() {
        var m = Self.tunnelMachine(["www.example", "edge.cdn.example"])
        #expect(m.facts.host == "www.example" && m.facts.hostOrigin == .dns && m.facts.otherHosts == ["edge.cdn.example"])
        _ = ConnectionMachineTests.text(&m, "GET / HTTP/1.0\r\n\r\n")
        #expect(m.facts.host == "www.example" && m.facts.hostOrigin == .dns && m.facts.status == .notEncrypted)
    }

    @Test("the ClientHello's SNI replaces the inferred name; the names looked up stay its other names, said to be not the one announced")
    func announcedWins() {
        var m = Self.tunnelMachine(["www.example", "edge.cdn.example"])
        #expect(m.facts.otherHostsOrigin == .lookups)
        _ = ConnectionMachineTests.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        #expect(m.facts.host == "a.test" && m.facts.hostOrigin == .sni && !m.facts.hostIsECHPublicName)
        // A trial's lookup of alias-a and SNI of www.bank.example kept no trace of the lookup.
        #expect(m.facts.otherHosts == ["www.example", "edge.cdn.example"] && m.facts.otherHostsOrigin == .lookupsNotAnnounced)
    }

    @Test("an SNI that is one of the names looked up: the others stay, and it is said to be among them")
    func announcedLookedUp() {
        var m = Self.tunnelMachine(["edge.cdn.example", "a.test"])
        _ = ConnectionMachineTests.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        #expect(m.facts.host == "a.test" && m.facts.otherHosts == ["edge.cdn.example"] && m.facts.otherHostsOrigin == .lookups)
    }

    @Test("no live name: the flow stays the address")
    func unnamed() {
        let m = Self.tunnelMachine([])
        #expect(m.facts.host == nil && m.facts.hostOrigin == .none && m.facts.otherHosts.isEmpty && m.facts.otherHostsOrigin == nil)
    }
}
