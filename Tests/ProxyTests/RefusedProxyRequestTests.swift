@testable import Proxy
import FlowTerms
import Testing

/// An explicit-proxy request tv cannot read (obs-fold, two Content-Lengths: RFC 9112 §5.2,
/// §6.3) is refused with a 400, and its flow keeps where the request line asked to go when that
/// line reads (`FrontEndReader.asked(salvaging:)`): a trial's 400 rows had no host.
@Suite("Refused proxy requests keep their destination")
struct RefusedProxyRequestTests {
    typealias Machine = ConnectionMachine

    static func refused(_ head: String) -> Machine {
        let settings = Machine.Settings(frontEnd: .explicitHTTP, policy: InterceptionPolicy(inspectionEnabled: true, caAvailable: true),
                                        handshakeTimeoutMillis: 10_000, connectTimeoutMillis: 5_000)
        var m = Machine(settings: settings, facts: FlowFacts(id: 7, startMicros: 1_000, client: Endpoint(address: "127.0.0.1", port: 50000)),
                        recall: { _, _ in nil })
        _ = m.handle(.start)
        let out = Array(head.utf8).withUnsafeBytes { m.handle(.clientBytes($0)) }
        #expect(out.contains { if case .sendClient(let bytes) = $0 { return bytes.starts(with: Array("HTTP/1.1 400 ".utf8)) } else { return false } }, "\(out)")
        #expect(m.facts.status == .failed)
        return m
    }

    @Test("absolute-form and CONNECT requests with a folded header: the 400's flow names the host and port")
    func named() {
        let plain = Self.refused("GET http://b.test:8080/x HTTP/1.1\r\nHost: b.test:8080\r\nX-A: 1\r\n folded\r\n\r\n")
        #expect(plain.facts.host == "b.test" && plain.facts.port == 8080 && plain.facts.hostOrigin == .connect)
        #expect(plain.facts.error?.hasPrefix("the client's proxy request was not understood: ") == true, "\(plain.facts.error ?? "")")
        let connect = Self.refused("CONNECT c.test:443 HTTP/1.1\r\nHost: c.test:443\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
        #expect(connect.facts.host == "c.test" && connect.facts.port == 443)
        // A CONNECT without a port, an origin-form target and a https:// one name nothing, as a readable head's would.
        #expect(Self.refused("CONNECT f.test HTTP/1.1\r\nX: 1\r\n folded\r\n\r\n").facts.host == nil)
        #expect(Self.refused("GET /x HTTP/1.1\r\nHost: d.test\r\nX: 1\r\n folded\r\n\r\n").facts.host == nil)
        #expect(Self.refused("GET https://e.test/ HTTP/1.1\r\nHost: e.test\r\nX: 1\r\n folded\r\n\r\n").facts.host == nil)
    }
}
