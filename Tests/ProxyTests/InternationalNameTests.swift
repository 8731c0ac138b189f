@testable import Proxy
import Testing
import Wire
import FlowTerms

/// A raw international name (UTF-8 U-labels) in CONNECT, SOCKS5, an absolute-form request and
/// SNI: dialled, certified and recorded as its A-label; refused only when IDNA refuses it.
@Suite("International host names at the front end")
struct InternationalNameTests {
    typealias Machine = ConnectionMachine

    static let disallowed = IDNARefusal(host: "a☃.test", code: -304)

    @Test("the refusal's sentence: what IDNA said, and what to do")
    func sentence() {
        #expect(ConnectionFailure.hostNameRefused(Self.disallowed).sentence
                == "the host name 'a☃.test' is not a valid international domain name (IDNA: string contains a disallowed character); use the name's registered spelling or its xn-- form")
    }

    @Test("CONNECT bücher.test:443 resolves xn--bcher-kva.test, and the flow records the A-label")
    func connect() {
        var m = ConnectionMachineTests.machine()
        _ = m.handle(.start)
        let request = "CONNECT bücher.test:443 HTTP/1.1\r\nHost: bücher.test:443\r\n\r\n"
        let out = ConnectionMachineTests.text(&m, request)
        #expect(out.first == .consumeClient(request.utf8.count))
        #expect(out.contains(.resolve(host: "xn--bcher-kva.test", port: 443)))
        #expect(m.facts.host == "xn--bcher-kva.test")
        #expect(m.facts.hostOrigin == .connect)
    }

    @Test("CONNECT to a name IDNA refuses: a 400 with the reason, the flow failed with it")
    func connectRefused() {
        var m = ConnectionMachineTests.machine()
        _ = m.handle(.start)
        let out = ConnectionMachineTests.text(&m, "CONNECT a☃.test:443 HTTP/1.1\r\nHost: a☃.test:443\r\n\r\n")
        let sentence = ConnectionFailure.hostNameRefused(Self.disallowed).sentence
        #expect(out.first == .sendClient(Machine.errorResponse(400, body: "tv: " + sentence)))
        #expect(out.last == .close(reset: false))
        #expect(m.facts.status == .failed)
        #expect(m.facts.error == sentence)
    }

    @Test("SOCKS5 with a UTF-8 domain resolves its A-label; one IDNA refuses gets REP 04 and the reason")
    func socks() {
        var m = ConnectionMachineTests.machine(.socks5)
        _ = m.handle(.start)
        _ = ConnectionMachineTests.bytes(&m, [5, 1, 0])
        let name = Array("BÜCHER.test".utf8)
        let request: [UInt8] = [5, 1, 0, 3, UInt8(name.count)] + name + [0x01, 0xBB]
        let out = ConnectionMachineTests.bytes(&m, request)
        #expect(out.first == .consumeClient(request.count))
        #expect(out.contains(.resolve(host: "xn--bcher-kva.test", port: 443)))
        #expect(m.facts.host == "xn--bcher-kva.test")

        var refused = ConnectionMachineTests.machine(.socks5)
        _ = refused.handle(.start)
        _ = ConnectionMachineTests.bytes(&refused, [5, 1, 0])
        let bad = Array("a☃.test".utf8)
        let badOut = ConnectionMachineTests.bytes(&refused, [5, 1, 0, 3, UInt8(bad.count)] + bad + [0x01, 0xBB])
        #expect(badOut.first == .sendClient([5, 4, 0, 1, 0, 0, 0, 0, 0, 0]))
        #expect(badOut.last == .close(reset: false))
        #expect(refused.facts.error == ConnectionFailure.hostNameRefused(Self.disallowed).sentence)
    }

    /// The captured ClientHello (SNI a.test) with its 6-byte name replaced by `name` (6 UTF-8 bytes).
    static func hello(sni name: String) -> [UInt8] {
        var bytes = ProxyFixtures.clientHelloSNIAndALPN
        let old = Array("a.test".utf8)
        let new = Array(name.utf8)
        precondition(new.count == old.count)
        let at = (0 ... bytes.count - old.count).first { Array(bytes[$0 ..< $0 + old.count]) == old }!
        bytes.replaceSubrange(at ..< at + old.count, with: new)
        return bytes
    }

    @Test("a U-label SNI (ü.xyz in UTF-8) is certified, sent upstream and recorded as xn--tda.xyz")
    func sni() {
        var m = ConnectionMachineTests.machine()
        ConnectionMachineTests.connected(&m)
        let out = ConnectionMachineTests.bytes(&m, Self.hello(sni: "ü.xyz"))
        let plan = Machine.UpstreamTLSPlan(serverName: "xn--tda.xyz", alpn: [Array("h2".utf8), Array("http/1.1".utf8)],
                                           verifyHost: "xn--tda.xyz", sessionKey: "a.test:443|xn--tda.xyz")
        #expect(out == [.armTimer(millis: 10_000), .startUpstreamTLS(plan), .updateFlow])
        #expect(m.facts.host == "xn--tda.xyz")
        #expect(m.facts.hostOrigin == .sni)
    }

    @Test("an SNI IDNA refuses (☃.te) closes this flow with the reason")
    func sniRefused() {
        var m = ConnectionMachineTests.machine()
        ConnectionMachineTests.connected(&m)
        let out = ConnectionMachineTests.bytes(&m, Self.hello(sni: "☃.te"))
        #expect(out.last == .close(reset: false))
        #expect(m.facts.status == .failed)
        #expect(m.facts.error == ConnectionFailure.hostNameRefused(IDNARefusal(host: "☃.te", code: -304)).sentence)
    }

    @Test("plain HTTP: GET http://bücher.test/ dials xn--bcher-kva.test:80 and sends that as Host")
    func plainHTTP() {
        var m = PlainHTTPMachineTests.started()
        let out = PlainHTTPMachineTests.client(&m, "GET http://bücher.test/a HTTP/1.1\r\nHost: bücher.test\r\nAccept: */*\r\n\r\n", at: 2)
        var flow = PlainHTTPMachineTests.flow(port: 80)
        flow.host = "xn--bcher-kva.test"
        flow.hostOrigin = .connect
        #expect(out == [
            .armTimer(at: 12_000_000_000), .updateFlow(flow), .newServerLeg, .armTimer(at: 12_000_000_000),
            .resolve(host: "xn--bcher-kva.test", port: 80, attempt: 1),
            .sendServer(Array("GET /a HTTP/1.1\r\nHost: xn--bcher-kva.test\r\nAccept: */*\r\n\r\n".utf8), record: nil),
        ])
    }

    @Test("plain HTTP: a name IDNA refuses is a 400 with the reason")
    func plainHTTPRefused() {
        var m = PlainHTTPMachineTests.started()
        let out = PlainHTTPMachineTests.client(&m, "GET http://a☃.test/ HTTP/1.1\r\nHost: a☃.test\r\n\r\n", at: 2)
        let sentence = ConnectionFailure.hostNameRefused(Self.disallowed).sentence
        #expect(out.contains(.answerClient(ConnectionMachine.errorResponse(400, body: "tv: " + sentence), linger: false)))
        let closed = out.compactMap { command -> FlowFacts? in
            if case .closeFlow(let flow, _) = command { return flow }
            return nil
        }
        #expect(closed.map(\.error) == [sentence])
        #expect(closed.map(\.status) == [.failed])
    }
}
