import LocalCA
@testable import Proxy
import Testing
import Wire
import FlowTerms

@Suite("PinningDetector: the three kinds")
struct PinningDetectorTests {
    let detector = PinningDetector(quietCloseWindowMicros: 2_000_000)

    @Test("unknown_ca, bad_certificate, certificate_unknown: the client does not trust tv's root",
          arguments: [UInt8(42), 46, 48])
    func lacksRoot(_ code: UInt8) {
        #expect(detector.judge(.alert(code)) == .lacksRoot(alert: code))
        #expect(detector.judge(.alert(code)).outcome == .lacksRoot)
    }

    @Test("other alerts abort the handshake and are none of the three", arguments: [UInt8(0), 40, 43, 47, 50, 70, 80, 90, 112, 120])
    func otherAlerts(_ code: UInt8) {
        #expect(detector.judge(.alert(code)) == .aborted(alert: code))
        #expect(detector.judge(.alert(code)).outcome == nil)
    }

    @Test("a close without alert: after tv's certificate, possible pinning; before it, the client left")
    func closesDuringHandshake() {
        #expect(detector.judge(.closedDuringHandshake(certificateSent: true)) == .possiblePinning(.closedAfterCertificate))
        #expect(detector.judge(.closedDuringHandshake(certificateSent: true)).outcome == .possiblePinning)
        #expect(detector.judge(.closedDuringHandshake(certificateSent: false)) == .clientLeft)
        #expect(detector.judge(.closedDuringHandshake(certificateSent: false)).outcome == .clientLeft)
    }

    @Test("after the handshake: no bytes within the window is possible pinning; a byte, or a later close, is fine")
    func afterHandshake() {
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 0, elapsedMicros: 0)) == .possiblePinning(.quietCloseAfterHandshake))
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 0, elapsedMicros: 50_000)) == .possiblePinning(.quietCloseAfterHandshake))
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 0, elapsedMicros: 2_000_000)) == .possiblePinning(.quietCloseAfterHandshake))
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 0, elapsedMicros: 2_000_001)) == .fine)
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 1, elapsedMicros: 50_000)) == .fine)
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 120, elapsedMicros: 5_000_000)) == .fine)
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 120, elapsedMicros: 50_000)).outcome == nil)
        #expect(PinningDetector(quietCloseWindowMicros: 10).judge(.closedAfterHandshake(applicationBytes: 0, elapsedMicros: 11)) == .fine)
    }

    /// Measured through tv (tcpdump on the proxy port): curl --pinnedpubkey closes 0.3 ms after
    /// its Finished, Python checking a pinned hash 20 ms after; Chromium closed a connection it
    /// had opened ahead and left idle 1.44 s after (it read "possible pinning" under the 2 s window).
    @Test("the default window: a pin check's close is possible pinning, a spare's after an idle wait is not")
    func defaultWindow() {
        let detector = PinningDetector()
        #expect(detector.quietCloseWindowMicros == 500_000)
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 0, elapsedMicros: 300)) == .possiblePinning(.quietCloseAfterHandshake))
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 0, elapsedMicros: 20_000)) == .possiblePinning(.quietCloseAfterHandshake))
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 0, elapsedMicros: 500_000)) == .possiblePinning(.quietCloseAfterHandshake))
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 0, elapsedMicros: 500_001)) == .fine)
        #expect(detector.judge(.closedAfterHandshake(applicationBytes: 0, elapsedMicros: 1_440_000)) == .fine)
    }

    @Test("another TLS failure is none of the three")
    func otherError() {
        #expect(detector.judge(.otherError("wrong version number")) == .failed("wrong version number"))
        #expect(detector.judge(.otherError("x")).outcome == nil)
    }

    @Test("repeats: a counted close tips the balance; the client's next connection (begun after it) is the retry, once")
    func evidence() {
        let rule = PinningEvidenceRule()
        var r = PinningEvidenceRule.Record()
        #expect(!rule.retry(&r, connectionStart: 5))
        // curl --pinnedpubkey: attempt 1 (t 0-10) closes quietly: tipped.
        #expect(rule.suspicion(&r, connectionStart: 0, now: 10))
        // A connection that began before the close is no retry; the next attempt (t 20) is, once.
        #expect(!rule.retry(&r, connectionStart: 9))
        #expect(rule.retry(&r, connectionStart: 20))
        #expect(r == PinningEvidenceRule.Record())
        #expect(!rule.retry(&r, connectionStart: 30))
        // A burst of closes of connections that were all open at once is one episode.
        let twice = PinningEvidenceRule(threshold: 2)
        var burst = PinningEvidenceRule.Record()
        #expect(!twice.suspicion(&burst, connectionStart: 5, now: 100))
        #expect(!twice.suspicion(&burst, connectionStart: 6, now: 100))
        #expect(!twice.suspicion(&burst, connectionStart: 90, now: 101))
        #expect(burst.count == 1)
        #expect(!twice.retry(&burst, connectionStart: 200))
        #expect(twice.suspicion(&burst, connectionStart: 200, now: 210))
        #expect(twice.retry(&burst, connectionStart: 220))
        // A success while the closing connection was open cancels it; so does one in the
        // trust memory before it began (a browser's spare connection, dropped unused after its
        // first one succeeded: a trial's Chromium); a success starts over.
        var busy = PinningEvidenceRule.Record()
        rule.success(&busy, now: 50)
        #expect(!rule.suspicion(&busy, connectionStart: 40, now: 60))
        #expect(!rule.retry(&busy, connectionStart: 70))
        #expect(!rule.suspicion(&busy, connectionStart: 70, now: 80))
        #expect(!rule.suspicion(&busy, connectionStart: 50 + 600_000_000, now: 50 + 600_000_010))
        #expect(rule.suspicion(&busy, connectionStart: 51 + 600_000_000, now: 51 + 600_000_010))
        rule.success(&busy, now: 52 + 600_000_010)
        #expect(!rule.retry(&busy, connectionStart: 53 + 600_000_010))
        // Threshold below 1 is 1.
        #expect(PinningEvidenceRule(threshold: 0).threshold == 1)
    }

    /// Chromium through tv (tcpdump on the proxy port): it opens two connections to a host at
    /// once and closes the one that finishes its handshake second 0.3 ms after its Finished, as
    /// fast as curl --pinnedpubkey closes (0.3 ms): a trial's `tv diag` counted 7 of 20 so. The
    /// other connection, open with tv's leaf, tells the spare from a pin check.
    @Test("what a close weighs: counted, the same episode, or not held against the client (another connection open, tv's certificate used)")
    func weights() {
        let rule = PinningEvidenceRule()
        var spare = PinningEvidenceRule.Record()
        #expect(rule.weigh(&spare, connectionStart: 0, now: 10, othersOpen: 1) == .anotherConnectionOpen)
        #expect(rule.weigh(&spare, connectionStart: 0, now: 10, othersOpen: 3) == .anotherConnectionOpen)
        #expect(spare == PinningEvidenceRule.Record())
        #expect(!rule.retry(&spare, connectionStart: 20))
        // Alone: counted and tipped (curl --pinnedpubkey's first attempt).
        #expect(rule.weigh(&spare, connectionStart: 0, now: 10, othersOpen: 0) == .counted(tipped: true))
        #expect(rule.weigh(&spare, connectionStart: 5, now: 12, othersOpen: 0) == .sameEpisode)
        #expect(spare.count == 1 && spare.lastCountedMicros == 10)
        // A pinning client's two parallel connections: the first closes beside the other (not
        // counted), the last alone (counted): its retry passes through.
        var parallel = PinningEvidenceRule.Record()
        #expect(rule.weigh(&parallel, connectionStart: 0, now: 10, othersOpen: 1) == .anotherConnectionOpen)
        #expect(rule.weigh(&parallel, connectionStart: 1, now: 11, othersOpen: 0) == .counted(tipped: true))
        #expect(rule.retry(&parallel, connectionStart: 20))
        // A success in memory wins over everything.
        var used = PinningEvidenceRule.Record()
        rule.success(&used, now: 5)
        #expect(rule.weigh(&used, connectionStart: 0, now: 10, othersOpen: 1) == .usedTVCertificate)
        #expect(rule.weigh(&used, connectionStart: 0, now: 10, othersOpen: 0) == .usedTVCertificate)
        let twice = PinningEvidenceRule(threshold: 2)
        var notYet = PinningEvidenceRule.Record()
        #expect(twice.weigh(&notYet, connectionStart: 0, now: 10) == .counted(tipped: false))
        #expect(PinningEvidenceRule.Weight.counted(tipped: false).isEvidence)
        #expect(PinningEvidenceRule.Weight.sameEpisode.isEvidence)
        #expect(!PinningEvidenceRule.Weight.anotherConnectionOpen.isEvidence)
        #expect(!PinningEvidenceRule.Weight.usedTVCertificate.isEvidence)
    }

    @Test("the connections of a key that hold tv's leaf: a close beside another is a spare's; each counts itself once")
    func leafHolders() {
        let evidence = PinningEvidence(rule: PinningEvidenceRule())
        let chromium = PinKey(client: ClientIdentity(address: "127.0.0.1", helloFingerprint: "cccccccccccc"), host: "localhost", port: 21443)
        let other = PinKey(client: ClientIdentity(address: "127.0.0.1", helloFingerprint: "cccccccccccc"), host: "localhost", port: 21444)
        evidence.leafOffered(chromium)   // the connection kept
        evidence.leafOffered(chromium)   // the spare
        evidence.leafOffered(other)
        #expect(evidence.weigh(chromium, connectionStart: 0, now: 10) == .anotherConnectionOpen)
        evidence.leafConnectionEnded(chromium)
        // The kept one alone now: its own close (had it sent nothing) counts.
        #expect(evidence.weigh(chromium, connectionStart: 0, now: 20) == .counted(tipped: true))
        evidence.leafConnectionEnded(chromium)
        evidence.leafConnectionEnded(chromium)  // more ends than offers: never below none
        evidence.leafOffered(chromium)
        #expect(evidence.weigh(chromium, connectionStart: 30, now: 40) == .counted(tipped: true))
        // A connection that held no leaf (a close during the handshake) counts every holder.
        #expect(evidence.weigh(chromium, connectionStart: 50, now: 60, heldLeaf: false) == .anotherConnectionOpen)
    }

    @Test("per key: one client's closes are never held against another client, host or port")
    func evidencePerKey() {
        let evidence = PinningEvidence(rule: PinningEvidenceRule())
        let curl = ClientIdentity(address: "127.0.0.1", helloFingerprint: "aaaaaaaaaaaa")
        let python = ClientIdentity(address: "127.0.0.1", helloFingerprint: "bbbbbbbbbbbb")
        let key = PinKey(client: curl, host: "A.test.", port: 443)
        #expect(key.host == "a.test")
        #expect(evidence.suspicion(key, connectionStart: 0, now: 10))
        #expect(!evidence.retry(PinKey(client: python, host: "a.test", port: 443), connectionStart: 20))
        #expect(!evidence.retry(PinKey(client: curl, host: "a.test", port: 8443), connectionStart: 20))
        #expect(!evidence.retry(PinKey(client: ClientIdentity(address: "127.0.0.2", helloFingerprint: "aaaaaaaaaaaa"), host: "a.test", port: 443), connectionStart: 20))
        #expect(evidence.retry(PinKey(client: curl, host: "a.test", port: 443), connectionStart: 20))
        #expect(!evidence.retry(key, connectionStart: 30))
        // `tv pinned forget HOST` drops a suspicion not yet tipped into memory, for that host only.
        #expect(evidence.suspicion(key, connectionStart: 40, now: 50))
        #expect(evidence.suspicion(PinKey(client: curl, host: "b.test", port: 443), connectionStart: 40, now: 50))
        evidence.forget(host: "A.test")
        #expect(!evidence.retry(key, connectionStart: 60))
        #expect(evidence.retry(PinKey(client: curl, host: "b.test", port: 443), connectionStart: 60))
    }

    @Test("in-memory pinning memory recalls by client, host and port, and forgets a host")
    func memory() {
        let memory = InMemoryPinningMemory()
        let key = PinKey(client: ClientIdentity(address: "127.0.0.1", helloFingerprint: "aaaaaaaaaaaa"), host: "a.test", port: 443)
        #expect(memory.recall(key) == nil)
        memory.remember(key, kind: .lacksRoot, reason: "unknown_ca")
        #expect(memory.recall(key) == .remembered(.lacksRoot))
        #expect(memory.recall(PinKey(client: key.client, host: "a.test", port: 444)) == nil)
        #expect(memory.recall(PinKey(client: ClientIdentity(address: "127.0.0.1", helloFingerprint: "bbbbbbbbbbbb"), host: "a.test", port: 443)) == nil)
        memory.remember(key, kind: .pinned, reason: "quiet")
        #expect(memory.all == [key: .pinned])
        memory.forget(host: "A.TEST")
        #expect(memory.recall(key) == nil)
    }

    @Test("keys and the flow's sentences name the target with its port, IPv6 in brackets")
    func keyWords() {
        let client = ClientIdentity(address: "::1", helloFingerprint: "0123456789ab")
        #expect(PinKey(client: client, host: "::1", port: 8443).target == "[::1]:8443")
        #expect(PinKey(client: client, host: "a.test", port: 443).description == "a.test:443 from ::1 (hello 0123456789ab)")
    }
}

@Suite("ClientHello fingerprint")
struct ClientHelloFingerprintTests {
    static func hello(ciphers: [UInt16] = [0x1302, 0x1301], extensions: [UInt16] = [0, 10, 16, 43, 51],
                      alpn: [String] = ["h2", "http/1.1"], versions: [UInt16] = [0x0304, 0x0303]) -> ClientHello {
        ClientHello(legacyVersion: 0x0303, random: Array(repeating: 1, count: 32), sessionIDLength: 32, cipherSuites: ciphers,
                    serverName: "a.test", alpnProtocolIDs: alpn.map { Array($0.utf8) }, supportedVersions: versions,
                    offersSessionTicket: false, offersPreSharedKey: false, keyShareGroups: [0x1d],
                    extensionTypes: extensions, handshakeLength: 300)
    }

    @Test("the canonical text: versions, ciphers in order, extensions sorted without the unstable ones, ALPN; GREASE left out")
    func canonical() {
        #expect(ClientHelloFingerprint.canonical(Self.hello()) == "304,303|1302,1301|a,10,2b,33|h2,http/1.1")
        let greased = Self.hello(ciphers: [0x0A0A, 0x1302, 0x1301], extensions: [0x1A1A, 51, 43, 0, 21, 41, 42, 44, 16, 10],
                                 versions: [0x2A2A, 0x0304, 0x0303])
        #expect(ClientHelloFingerprint.canonical(greased) == "304,303|1302,1301|a,10,2b,33|h2,http/1.1")
        #expect(ClientHelloFingerprint.of(greased) == ClientHelloFingerprint.of(Self.hello()))
    }

    @Test("the fingerprint: the first 12 hex digits of the SHA-256 of the canonical text")
    func digest() {
        // printf '304,303|1302,1301|a,10,2b,33|h2,http/1.1' | sha256sum
        #expect(ClientHelloFingerprint.of(Self.hello()) == "e5915b4b20de")
    }

    @Test("what tells programs apart changes it: ALPN, cipher order, an extension")
    func differs() {
        let base = ClientHelloFingerprint.of(Self.hello())
        #expect(ClientHelloFingerprint.of(Self.hello(alpn: ["http/1.1"])) != base)
        #expect(ClientHelloFingerprint.of(Self.hello(ciphers: [0x1301, 0x1302])) != base)
        #expect(ClientHelloFingerprint.of(Self.hello(extensions: [0, 10, 16, 43, 49, 51])) != base)
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

    @Test("an SNI with a wildcard is refused (no wildcard leaf is minted for `*.example.com`); the server's wildcard SAN still goes in")
    func wildcardSNI() throws {
        #expect(throws: CAError.invalidName("*.example.com", reason: "a server name indication names one host, and '*' is not part of a host name")) {
            _ = try LeafNamePlan.identity(sni: "*.example.com", destinationHost: "example.com", upstreamSANs: [.dns("*.example.com")])
        }
        let identity = try LeafNamePlan.identity(sni: "www.example.com", destinationHost: "example.com", upstreamSANs: [.dns("*.example.com")])
        #expect(identity.dnsNames == ["www.example.com", "*.example.com"])
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
        // A URI authority's rules: userinfo, extra colons, spaces and unclosed brackets are refused
        // at start (each was taken as a name to resolve, and every request failed with 502: a trial).
        #expect(throws: ProxyError.invalidMode("reverse:https://user:pw@localhost:18211", reason: "the reverse target cannot carry a user name or password; tv sends the client's own credentials")) {
            try ProxyMode.parse("reverse:https://user:pw@localhost:18211")
        }
        #expect(throws: ProxyError.invalidMode("reverse:https://a:b:c", reason: "the reverse target \"a:b:c\" has several colons; an IPv6 address must be written in brackets")) {
            try ProxyMode.parse("reverse:https://a:b:c")
        }
        #expect(throws: ProxyError.self) { try ProxyMode.parse("reverse:https://localhost:18201:5") }
        #expect(throws: ProxyError.self) { try ProxyMode.parse("reverse:https://exa mple:1") }
        #expect(throws: ProxyError.self) { try ProxyMode.parse("reverse:https://[::1") }
        #expect(throws: ProxyError.self) { try ProxyMode.parse("reverse:https://:443") }
        // An international name in its A-label form (what is dialled and verified).
        #expect(try ProxyMode.parse("reverse:https://bücher.test:8443") == .reverse(tls: true, host: "xn--bcher-kva.test", port: 8443))
        var c = ProxyConfiguration()
        try c.setListen("127.0.0.1:9090")
        #expect(c.listenHost == "127.0.0.1" && c.listenPort == 9090)
        try c.setListen("[::1]:8081")
        #expect(c.listenHost == "::1" && c.listenPort == 8081)
        #expect(throws: ProxyError.self) { try c.setListen("nonsense") }
    }

    @Test("a reverse target that is tv's own listener is told apart (one request looped 1,023 times: a trial)")
    func reverseTargetIsListener() throws {
        func loops(_ mode: String, _ host: String, _ port: UInt16) throws -> Bool {
            try ProxyMode.parse(mode).reverseTargetIsListener(host: host, port: port)
        }
        #expect(try loops("reverse:http://127.0.0.1:18221", "127.0.0.1", 18221))
        #expect(try loops("reverse:https://localhost:18221", "127.0.0.1", 18221))
        #expect(try loops("reverse:http://LOCALHOST:18221", "::1", 18221))
        #expect(try loops("reverse:http://127.0.0.1:18221", "localhost", 18221))
        #expect(try loops("reverse:http://[::1]:18221", "::", 18221))
        #expect(try loops("reverse:http://127.0.0.1:18221", "0.0.0.0", 18221))
        #expect(try loops("reverse:http://[::1]:18221", "[::1]".trimmingCharacters(in: ["[", "]"]), 18221))
        // Any spelling of the address (they were let through: a re-check), and the unspecified one.
        for target in ["[::ffff:127.0.0.1]", "127.1", "2130706433", "0x7f000001", "localhost.", "a.localhost", "0.0.0.0"] {
            #expect(try loops("reverse:http://\(target):18221", "127.0.0.1", 18221), "\(target)")
        }
        #expect(try loops("reverse:http://[::]:18221", "::1", 18221))
        #expect(ProxyMode.canonicalHost("[::FFFF:7F00:1]".trimmingCharacters(in: ["[", "]"])) == "127.0.0.1")
        #expect(ProxyMode.canonicalHost("2001:DB8::0:1") == "2001:db8::1")
        // Another port, another loopback address tv does not listen on, a name not resolved.
        #expect(try !loops("reverse:http://127.0.0.1:18222", "127.0.0.1", 18221))
        #expect(try !loops("reverse:http://127.0.0.2:18221", "127.0.0.1", 18221))
        #expect(try !loops("reverse:http://example.test:18221", "0.0.0.0", 18221))
        #expect(!ProxyMode.regular.reverseTargetIsListener(host: "127.0.0.1", port: 8080))
        let error = ProxyError.reverseTargetIsListener(mode: "reverse:http://127.0.0.1:18221", listen: "127.0.0.1:18221")
        #expect(error.exitCode == 2)
        #expect(error.message == "reverse:http://127.0.0.1:18221 points at tv's own listening address 127.0.0.1:18221, so every request would come back to tv; give the server's address after reverse:, or listen elsewhere with --listen.")
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
