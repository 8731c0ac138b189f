import LocalCA
@testable import Proxy
import Testing
import FlowTerms

@Suite("PinningDetector")
struct PinningDetectorTests {
    let detector = PinningDetector(quietCloseWindowMicros: 2_000_000)

    @Test("certificate alerts mean pinning", arguments: [UInt8(42), 43, 46, 48])
    func certificateAlerts(_ code: UInt8) {
        let verdict = detector.judge(.alert(code))
        #expect(verdict.pinned)
        #expect(verdict.reason?.contains(TLSAlert.name(code)) == true)
    }

    @Test("other alerts do not", arguments: [UInt8(40), 47, 50, 70, 80, 90, 112, 120])
    func otherAlerts(_ code: UInt8) {
        let verdict = detector.judge(.alert(code))
        #expect(!verdict.pinned)
        #expect(verdict.reason?.contains(TLSAlert.name(code)) == true)
    }

    @Test("a close after our certificate is a suspicion; before it, nothing")
    func closes() {
        #expect(detector.judge(.closedDuringHandshake(certificateSent: true)).evidence == .suspicion)
        #expect(detector.judge(.closedDuringHandshake(certificateSent: false)).evidence == .none)
    }

    @Test("a quiet close right after the handshake is a suspicion; data or a late close is not")
    func afterHandshake() {
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 0, elapsedMicros: 50_000)).evidence == .suspicion)
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 0, elapsedMicros: 5_000_000)).evidence == .none)
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 120, elapsedMicros: 50_000)).evidence == .none)
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 120, elapsedMicros: 50_000)).reason == nil)
        #expect(!detector.judge(.otherError("x")).pinned)
    }

    @Test("suspicions count when sequential, with no success meanwhile; a success starts over")
    func evidence() {
        let rule = PinningEvidenceRule(threshold: 2)
        var r = PinningEvidenceRule.HostRecord()
        // A pinning client retrying: attempt 1 (t 0-10), attempt 2 (t 20-30): remembered.
        #expect(!rule.suspicion(&r, connectionStart: 0, now: 10))
        #expect(rule.suspicion(&r, connectionStart: 20, now: 30))
        // A burst of closes of connections that were all open at once is one episode.
        var burst = PinningEvidenceRule.HostRecord()
        #expect(!rule.suspicion(&burst, connectionStart: 5, now: 100))
        #expect(!rule.suspicion(&burst, connectionStart: 6, now: 100))
        #expect(!rule.suspicion(&burst, connectionStart: 90, now: 101))
        // A success while the suspicious connection was open cancels the suspicion.
        var busy = PinningEvidenceRule.HostRecord()
        rule.success(&busy, now: 50)
        #expect(!rule.suspicion(&busy, connectionStart: 40, now: 60))
        #expect(!rule.suspicion(&busy, connectionStart: 70, now: 80))
        rule.success(&busy, now: 85)
        #expect(!rule.suspicion(&busy, connectionStart: 90, now: 95))
        #expect(rule.suspicion(&busy, connectionStart: 96, now: 99))
        // Threshold 1: the first counted close remembers.
        var eager = PinningEvidenceRule.HostRecord()
        #expect(PinningEvidenceRule(threshold: 1).suspicion(&eager, connectionStart: 0, now: 1))
    }

    @Test("in-memory pinning memory remembers and forgets")
    func memory() {
        let memory = InMemoryPinningMemory()
        #expect(!memory.isPinned("a.test"))
        memory.remember("a.test", reason: "unknown_ca")
        #expect(memory.isPinned("a.test"))
        #expect(memory.all == ["a.test": "unknown_ca"])
        memory.forget("a.test")
        #expect(!memory.isPinned("a.test"))
    }
}

@Suite("ALPN selection")
struct ALPNSelectionTests {
    let offered = ALPNSelection.wireList([Array("h2".utf8), Array("http/1.1".utf8)])

    @Test("the wire list is length-prefixed, empty and oversized IDs dropped")
    func wireList() {
        #expect(offered == [2, 0x68, 0x32, 8] + Array("http/1.1".utf8))
        #expect(ALPNSelection.wireList([[], Array(repeating: 0x61, count: 256), [0x61]]) == [1, 0x61])
    }

    @Test("the client leg selects exactly what the server chose")
    func selectsServerChoice() {
        let h1 = ALPNSelection.select(serverChose: Array("http/1.1".utf8), clientOffered: offered)
        #expect(h1.map { Array(offered[$0]) } == Array("http/1.1".utf8))
        let h2 = ALPNSelection.select(serverChose: Array("h2".utf8), clientOffered: offered)
        #expect(h2.map { Array(offered[$0]) } == Array("h2".utf8))
    }

    @Test("nothing is selected when the server chose nothing, or something the client did not offer")
    func selectsNothing() {
        #expect(ALPNSelection.select(serverChose: nil, clientOffered: offered) == nil)
        #expect(ALPNSelection.select(serverChose: [], clientOffered: offered) == nil)
        #expect(ALPNSelection.select(serverChose: Array("h3".utf8), clientOffered: offered) == nil)
        #expect(ALPNSelection.select(serverChose: Array("h2".utf8), clientOffered: [5, 0x68]) == nil)
        #expect(ALPNSelection.select(serverChose: Array("h2".utf8), clientOffered: [UInt8]()) == nil)
    }
}

@Suite("Leaf names")
struct LeafNamePlanTests {
    @Test("the SNI, plus the server's SANs")
    func sni() throws {
        let identity = try LeafNamePlan.identity(sni: "a.test", destinationHost: "127.0.0.1",
                                                 upstreamSANs: [.dns("a.test"), .dns("www.a.test"), .ip(IPAddress("127.0.0.1")!)])
        #expect(identity.dnsNames == ["a.test", "www.a.test"])
        #expect(identity.ipAddresses == [IPAddress("127.0.0.1")!])
    }

    @Test("no SNI to an IP: the IP as an iPAddress SAN, never a DNS name")
    func ipOnly() throws {
        let identity = try LeafNamePlan.identity(sni: nil, destinationHost: "127.0.0.1", upstreamSANs: [.ip(IPAddress("127.0.0.1")!)])
        #expect(identity.dnsNames.isEmpty)
        #expect(identity.ipAddresses == [IPAddress("127.0.0.1")!])
    }

    @Test("no SNI to a name (CONNECT a.test): the name")
    func connectName() throws {
        let identity = try LeafNamePlan.identity(sni: nil, destinationHost: "a.test", upstreamSANs: [])
        #expect(identity.dnsNames == ["a.test"])
    }

    @Test("reverse mode, no SNI (curl https://127.0.0.1:LISTEN/): the target's name plus the listener address the client dialled, both families")
    func reverseDialledAddress() throws {
        let v4 = try LeafNamePlan.identity(sni: nil, destinationHost: "localhost", dialledAddress: IPAddress("127.0.0.1")!,
                                           upstreamSANs: [.dns("localhost")])
        #expect(v4.dnsNames == ["localhost"])
        #expect(v4.ipAddresses == [IPAddress("127.0.0.1")!])
        let v6 = try LeafNamePlan.identity(sni: nil, destinationHost: "localhost", dialledAddress: IPAddress("::1")!,
                                           upstreamSANs: [.dns("localhost"), .ip(IPAddress("127.0.0.1")!)])
        #expect(v6.dnsNames == ["localhost"])
        #expect(v6.ipAddresses == [IPAddress("::1")!, IPAddress("127.0.0.1")!])
        #expect(v6 != (try LeafNamePlan.identity(sni: nil, destinationHost: "localhost", upstreamSANs: [.dns("localhost"), .ip(IPAddress("127.0.0.1")!)])),
                "the dialled address changes the certificate, so it is part of the cache key")
    }

    @Test("reverse mode with an SNI: the SNI names the leaf; the dialled address is not added")
    func reverseWithSNI() throws {
        let identity = try LeafNamePlan.identity(sni: "a.test", destinationHost: "localhost", dialledAddress: IPAddress("127.0.0.1")!,
                                                 upstreamSANs: [.dns("localhost")])
        #expect(identity.dnsNames == ["a.test", "localhost"])
        #expect(identity.ipAddresses == [])
    }

    @Test("reverse mode, no SNI, an unusable target name: the dialled address and the server's names")
    func reverseUnusableTarget() throws {
        let identity = try LeafNamePlan.identity(sni: nil, destinationHost: "bad name", dialledAddress: IPAddress("::1")!,
                                                 upstreamSANs: [.dns("localhost")])
        #expect(identity.dnsNames == ["localhost"])
        #expect(identity.ipAddresses == [IPAddress("::1")!])
    }

    @Test("TUN and transparent modes, no SNI: the original destination's address (IPv4 and IPv6)")
    func originalDestination() throws {
        let v4 = try LeafNamePlan.identity(sni: nil, destinationHost: "93.184.216.34", upstreamSANs: [.dns("example.com")])
        #expect(v4.dnsNames == ["example.com"])
        #expect(v4.ipAddresses == [IPAddress("93.184.216.34")!])
        let v6 = try LeafNamePlan.identity(sni: nil, destinationHost: "2606:2800:220:1::1", upstreamSANs: [])
        #expect(v6.dnsNames == [])
        #expect(v6.ipAddresses == [IPAddress("2606:2800:220:1::1")!])
    }

    @Test("an SNI that cannot go in a certificate is refused")
    func badSNI() {
        #expect(throws: CAError.self) {
            try LeafNamePlan.identity(sni: String(repeating: "x", count: 64) + ".test", destinationHost: "1.2.3.4", upstreamSANs: [])
        }
    }
}

@Suite("Proxy mode and listen address")
struct ProxyModeTests {
    @Test func parse() throws {
        #expect(try ProxyMode.parse("regular") == .regular)
        #expect(try ProxyMode.parse("socks5") == .socks5)
        #expect(try ProxyMode.parse("reverse:https://127.0.0.1:18443") == .reverse(tls: true, host: "127.0.0.1", port: 18443))
        #expect(try ProxyMode.parse("reverse:http://example.com") == .reverse(tls: false, host: "example.com", port: 80))
        #expect(try ProxyMode.parse("reverse:https://[::1]:8443/") == .reverse(tls: true, host: "::1", port: 8443))
        #expect(throws: ProxyError.self) { try ProxyMode.parse("reverse:ftp://x") }
        #expect(throws: ProxyError.self) { try ProxyMode.parse("transparent-ish") }
        #expect(throws: ProxyError.self) { try ProxyMode.parse("reverse:https://x:99999") }
        var c = ProxyConfiguration()
        try c.setListen("127.0.0.1:9090")
        #expect(c.listenHost == "127.0.0.1" && c.listenPort == 9090)
        try c.setListen("[::1]:8081")
        #expect(c.listenHost == "::1" && c.listenPort == 8081)
        #expect(throws: ProxyError.self) { try c.setListen("nonsense") }
    }

    @Test("errors say what happened and what to do")
    func messages() {
        #expect(ProxyError.portInUse(host: "127.0.0.1", port: 8080).message ==
                "Port 8080 on 127.0.0.1 is already in use; stop the other program or pass --listen 127.0.0.1:PORT.")
        let usage = "use regular, socks5, transparent, tun, reverse:https://HOST:PORT or reverse:http://HOST:PORT."
        #expect(throws: ProxyError.invalidMode("sock5", reason: "did you mean 'socks5'?")) { try ProxyMode.parse("sock5") }
        #expect(ProxyError.invalidMode("sock5", reason: "did you mean 'socks5'?").message == "'sock5' is not a proxy mode (did you mean 'socks5'?); " + usage)
        #expect(throws: ProxyError.invalidMode("xyz", reason: "")) { try ProxyMode.parse("xyz") }
        #expect(ProxyError.invalidMode("xyz", reason: "").message == "'xyz' is not a proxy mode; " + usage)
    }
}
