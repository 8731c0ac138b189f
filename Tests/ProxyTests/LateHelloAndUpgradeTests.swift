@testable import Proxy
import Testing
import Wire
import FlowTerms

/// Who speaks first, however late (issue 14 §5), and a TLS handshake inside a plain relay
/// (STARTTLS), playbook style: events and bursts in, the exact commands and facts out.
@Suite("ConnectionMachine: a late ClientHello, and TLS after plain bytes")
struct LateHelloAndUpgradeTests {
    typealias Machine = ConnectionMachine
    typealias T = ConnectionMachineTests

    static let hello = ProxyFixtures.clientHelloSNIAndALPN
    static let serverHello = RelayPhaseTests.serverHello

    /// The exact commands a ClientHello for a.test (h2, http/1.1) gets as the client's first bytes.
    static let inspectCommands: [Machine.Command] = [
        .armTimer(millis: 10_000),
        .startUpstreamTLS(.init(serverName: "a.test", alpn: [Array("h2".utf8), Array("http/1.1".utf8)],
                                verifyHost: "a.test", sessionKey: "a.test:443|a.test")),
        .updateFlow,
    ]

    /// A burst of these bytes.
    static func burst(_ m: inout Machine, _ bytes: [UInt8], _ direction: Direction, at now: Int64 = 5_000) -> Machine.Command? {
        bytes.withUnsafeBytes { m.moved($0, direction, atMicros: now) }
    }

    static func burst(_ m: inout Machine, _ text: String, _ direction: Direction) -> Machine.Command? {
        burst(&m, Array(text.utf8), direction)
    }

    /// Relaying raw because the server spoke first.
    static func serverSpokeFirst() -> Machine {
        var m = T.machine()
        T.connected(&m)
        #expect(m.handle(.upstreamSpokeFirst) == [.armTimer(millis: 0), .relay(.raw(plaintext: true, observeServerHello: false)), .updateFlow])
        #expect(m.relay.watchesUpgrade)
        #expect(m.relay.recordsContent)
        return m
    }

    @Test("after the 200 only the idle deadline is armed: no short wait turns a silent client into a raw relay")
    func noShortWait() {
        var m = T.machine()
        T.connected(&m)  // expects [.updateFlow, 200, .armTimer(300_000), .watchUpstreamFirstBytes, .peekClient]
        #expect(m.phase == .awaitingFirstBytes)
        #expect(m.relay.plan == nil)
    }

    @Test("a ClientHello however late, the server silent: the same commands as a prompt one (inspected)")
    func lateHelloInspected() {
        var prompt = T.machine()
        T.connected(&prompt)
        #expect(T.bytes(&prompt, Self.hello) == Self.inspectCommands)
        var late = T.machine()
        T.connected(&late)
        // Nothing happens while the client is silent; the idle event means nothing before the relay.
        #expect(late.handle(.idle(atMicros: 900_000, waiting: .nothing)) == [])
        #expect(late.phase == .awaitingFirstBytes)
        #expect(T.bytes(&late, Self.hello) == Self.inspectCommands)
        #expect(late.phase == .upstreamHandshake)
        #expect(late.facts.host == "a.test")
        #expect(late.facts.hostOrigin == .sni)
        #expect(late.handle(.upstreamSpokeFirst) == [])
    }

    @Test("a late ClientHello without inspection: an encrypted pass-through read from its ServerHello")
    func lateHelloPassedThrough() {
        var m = RelayPhaseTests.passedThrough()
        #expect(m.facts.status == .encrypted)
        #expect(!m.relay.watchesUpgrade)
        #expect(Self.burst(&m, Self.serverHello, .serverToClient) == .updateFlow)
        #expect(m.facts.clientTLSVersion == .tls12)
    }

    @Test("STARTTLS: banner, command, go-ahead, then a ClientHello: an encrypted pass-through with its SNI, offers and version")
    func startTLS() {
        var m = Self.serverSpokeFirst()
        #expect(Self.burst(&m, "220 mail.test ESMTP\r\n", .serverToClient) == nil)
        #expect(Self.burst(&m, "EHLO me\r\n", .clientToServer) == nil)
        #expect(Self.burst(&m, "250-mail.test\r\n250 STARTTLS\r\n", .serverToClient) == nil)
        #expect(Self.burst(&m, "STARTTLS\r\n", .clientToServer) == nil)
        #expect(Self.burst(&m, "220 go ahead\r\n", .serverToClient) == nil)
        #expect(m.facts.status == .notEncrypted)
        #expect(m.relay.recordsContent)
        // The ClientHello in two bursts: nothing until it is whole.
        #expect(Self.burst(&m, Array(Self.hello[0..<3]), .clientToServer) == nil)
        #expect(Self.burst(&m, Array(Self.hello[3...]), .clientToServer) == .updateFlow)
        #expect(m.facts.status == .encrypted)
        #expect(m.facts.host == "a.test")
        #expect(m.facts.hostOrigin == .sni)
        #expect(m.facts.offeredALPN == ["h2", "http/1.1"])
        #expect(m.serverName == "a.test")
        #expect(!m.relay.recordsContent)
        #expect(m.relay.recordingStarted)
        #expect(!m.relay.spliceAllowed)
        #expect(m.facts.clientTLSVersion == nil)
        // The server's answer, split: its version and protocol, then splicing may begin.
        #expect(Self.burst(&m, Array(Self.serverHello[0..<9]), .serverToClient) == nil)
        #expect(Self.burst(&m, Array(Self.serverHello[9...]), .serverToClient) == .updateFlow)
        #expect(m.facts.clientTLSVersion == .tls12)
        #expect(m.facts.alpn == "h2")
        #expect(m.facts.versionSource == .serverHello)
        #expect(m.relay.spliceAllowed)
        #expect(!m.relay.watchesUpgrade)
        #expect(m.facts.status == .encrypted)
        // Later bursts are not looked at; the totals still count.
        #expect(Self.burst(&m, Self.hello, .clientToServer) == nil)
        let plain = "220 mail.test ESMTP\r\nEHLO me\r\n250-mail.test\r\n250 STARTTLS\r\nSTARTTLS\r\n220 go ahead\r\n".utf8.count
        #expect(m.facts.bytesFromClient + m.facts.bytesFromServer == UInt64(plain + 2 * Self.hello.count + Self.serverHello.count))
        #expect(m.handle(.relayEnded(.init(failure: nil, atMicros: 9_000))) == [.close(reset: false)])
        #expect(m.facts.status == .encrypted)
    }

    @Test("the client's first bytes are plain (a PostgreSQL SSLRequest), then its ClientHello: encrypted pass-through")
    func clientFirstPlainThenTLS() {
        var m = T.machine()
        T.connected(&m)
        let sslRequest: [UInt8] = [0x00, 0x00, 0x00, 0x08, 0x04, 0xD2, 0x16, 0x2F]
        #expect(T.bytes(&m, sslRequest) == [.armTimer(millis: 0),
                                             .relay(.raw(plaintext: true, observeServerHello: false)), .updateFlow])
        #expect(m.facts.status == .notEncrypted)
        #expect(Self.burst(&m, sslRequest, .clientToServer) == nil)
        #expect(Self.burst(&m, "S", .serverToClient) == nil)
        #expect(Self.burst(&m, Self.hello, .clientToServer) == .updateFlow)
        #expect(m.facts.status == .encrypted)
        #expect(m.facts.host == "a.test")
    }

    @Test("either direction: a ClientHello from the server's side is read, and the ServerHello from the client's")
    func serverSideClientHello() {
        var m = Self.serverSpokeFirst()
        #expect(Self.burst(&m, "OK\n", .serverToClient) == nil)
        #expect(Self.burst(&m, Self.hello, .serverToClient) == .updateFlow)
        #expect(m.facts.status == .encrypted)
        // A ServerHello in the same direction as the ClientHello is not the answer.
        #expect(Self.burst(&m, Self.serverHello, .serverToClient) == nil)
        #expect(Self.burst(&m, Self.serverHello, .clientToServer) == .updateFlow)
        #expect(m.facts.clientTLSVersion == .tls12)
    }

    @Test("a ClientHello answered by an alert: still encrypted, no version; the watch ends and splicing may begin")
    func answeredByAlert() {
        var m = Self.serverSpokeFirst()
        #expect(Self.burst(&m, Self.hello, .clientToServer) == .updateFlow)
        #expect(Self.burst(&m, [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28], .serverToClient) == nil)
        #expect(m.facts.status == .encrypted)
        #expect(m.facts.clientTLSVersion == nil)
        #expect(m.relay.spliceAllowed)
        #expect(!m.relay.watchesUpgrade)
    }

    @Test("chance 16 03 … 01 bytes in a plain burst are no handshake: the flow stays plain and recorded, the watch goes on")
    func chanceBytes() {
        var m = Self.serverSpokeFirst()
        #expect(Self.burst(&m, [0x16, 0x03, 0x01, 0x00, 0x05, 0x01] + Array("hello".utf8), .clientToServer) == nil)
        // A record too short for the handshake header: the parser waits for more from this side…
        #expect(Self.burst(&m, [0x16, 0x03, 0x01, 0x00, 0x02, 0x01, 0x00], .serverToClient) == nil)
        #expect(m.facts.status == .notEncrypted)
        // …but the other side spoke meanwhile, which a real ClientHello's peer never does.
        #expect(Self.burst(&m, "ok\r\n", .clientToServer) == nil)
        #expect(m.relay.recordsContent)
        #expect(m.relay.watchesUpgrade)
        #expect(Self.burst(&m, Self.hello, .clientToServer) == .updateFlow)
    }

    @Test("a plain server-first exchange with no TLS stays not encrypted and recorded; past 64 KiB each way the watch stops")
    func budgetSpent() {
        var m = Self.serverSpokeFirst()
        let kib = Array(repeating: UInt8(0x61), count: 1024)
        for _ in 0..<64 { #expect(Self.burst(&m, kib, .clientToServer) == nil) }
        #expect(m.relay.watchesUpgrade) // the server's side still has its budget
        for _ in 0..<63 { #expect(Self.burst(&m, kib, .serverToClient) == nil) }
        #expect(m.relay.watchesUpgrade)
        // The client's budget is spent: its ClientHello is not looked at, and counts nothing.
        #expect(Self.burst(&m, Self.hello, .clientToServer) == nil)
        #expect(Self.burst(&m, kib, .serverToClient) == nil)
        #expect(!m.relay.watchesUpgrade)
        #expect(Self.burst(&m, Self.hello, .serverToClient) == nil)
        #expect(m.facts.status == .notEncrypted)
        #expect(m.relay.recordsContent)
        #expect(!m.relay.spliceAllowed)
    }

    @Test("not watched: an encrypted pass-through, an inspected relay, a plain client over tv's TLS leg to a reverse https target")
    func notWatched() {
        #expect(!RelayPhaseTests.passedThrough().relay.watchesUpgrade)
        #expect(!RelayPhaseTests.inspected().relay.watchesUpgrade)
        var reverse = T.machine(.fixed(OriginalDestination(host: "a.test", port: 8443, origin: .reverse), upstreamTLS: true))
        let address = SocketAddress(numericHost: "127.0.0.1", port: 8443)!
        _ = reverse.handle(.start)
        let head = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"
        #expect(T.text(&reverse, head).contains(.resolve(host: "a.test", port: 8443)))
        #expect(reverse.handle(.resolved([address])) == [.connect(address)])
        _ = reverse.handle(.connected(address))
        #expect(T.text(&reverse, head).contains(.startUpstreamTLS(.init(serverName: "a.test", alpn: [Array("http/1.1".utf8)],
                                                                          verifyHost: "a.test", sessionKey: "a.test:8443|a.test"))))
        #expect(reverse.handle(.upstreamHandshakeDone(T.upstreamDone)) == [.armTimer(millis: 0), .relay(.raw(plaintext: true, observeServerHello: false)), .updateFlow])
        #expect(!reverse.relay.watchesUpgrade)
        #expect(Self.burst(&reverse, Self.hello, .clientToServer) == nil)
        #expect(reverse.facts.status == .notEncrypted)
    }
}

/// The upgrade watch's own decisions (`TLSUpgradeWatch`).
@Suite("TLSUpgradeWatch")
struct TLSUpgradeWatchTests {
    static func begins(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { TLSUpgradeWatch.beginsClientHello($0) } }

    @Test("a burst may begin a ClientHello: content type 22, major version 3, handshake type 1, as far as it goes")
    func candidates() {
        #expect(TLSUpgradeWatch.budgetBytes == 65_536)
        #expect(Self.begins([0x16]))
        #expect(Self.begins([0x16, 0x03]))
        #expect(Self.begins([0x16, 0x03, 0x01, 0x02, 0x00]))
        #expect(Self.begins([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]))
        #expect(!Self.begins([]))
        #expect(!Self.begins([0x15, 0x03, 0x03, 0x00, 0x02, 0x02]))
        #expect(!Self.begins([0x16, 0x02]))
        #expect(!Self.begins([0x16, 0x03, 0x03, 0x00, 0x40, 0x02])) // a ServerHello
        #expect(!Self.begins(Array("STARTTLS\r\n".utf8)))
    }

    @Test("a ClientHello split three ways, then its ServerHello: two findings, then nothing more")
    func findings() {
        var watch = TLSUpgradeWatch()
        let hello = ProxyFixtures.clientHelloSNIAndALPN
        func see(_ bytes: [UInt8], _ direction: Direction) -> TLSUpgradeWatch.Finding? {
            bytes.withUnsafeBytes { watch.observe($0, direction) }
        }
        #expect(see(Array("+OK Begin TLS\r\n".utf8), .serverToClient) == nil)
        #expect(see([0x16], .clientToServer) == nil)
        #expect(watch.isReadingHandshake)
        #expect(see(Array(hello[1..<100]), .clientToServer) == nil)
        guard case .clientHello(let parsed, let from) = see(Array(hello[100...]), .clientToServer) else {
            Issue.record("no ClientHello")
            return
        }
        #expect(from == .clientToServer)
        #expect(parsed.normalizedServerName == "a.test")
        #expect(watch.isWatching)
        guard case .serverHello(let answer) = see(RelayPhaseTests.serverHello, .serverToClient) else {
            Issue.record("no ServerHello")
            return
        }
        #expect(answer.negotiatedVersion == 0x0303)
        #expect(!watch.isWatching)
        #expect(see(hello, .clientToServer) == nil)
    }
}
