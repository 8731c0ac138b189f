@testable import Proxy
import Testing
import Wire
import FlowTerms

/// DNS over TCP through the relay, playbook style: a TUN connection to port 53 whose plain relay
/// is read as DNS (`RelayState.readDNS`). Its first question names the flow (a trial's `dig +tcp`
/// row read "no name was seen"), and the server's responses go to the driver, paired with their
/// query's question, before the burst reaches the program. Bytes: `dig +tcp tcp.test A` against
/// dnsmasq, captured with tcpdump (Scripts/fixtures/capture_dns_tcp.sh; WireTests'
/// `CapturedDNSOverTCP` holds the whole capture).
@Suite("ConnectionMachine: DNS over TCP in a plain relay to port 53")
struct DNSOverTCPRelayTests {
    typealias Machine = ConnectionMachine
    typealias T = ConnectionMachineTests

    /// dig's query: length 49, ID 0x1b33, tcp.test A IN, EDNS.
    static let query = hexBytes("00311b3301200001000000000001037463700474657374000001000100002904d000000000000c000a000816cb075489101d6e")
    /// dnsmasq's answer: tcp.test A 10.203.0.3.
    static let answer = hexBytes("00351b33858000010001000000010374637004746573740000010001c00c000100010000000000040acb000300002904d0000000000000")

    static func hexBytes(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            out.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    /// A TUN connection to `port` (the engine's destination: an address, and for port 53 the
    /// server the program asked), connected, the client's first bytes `first` read.
    static func relaying(port: UInt16 = 53, first: [UInt8] = query) -> Machine {
        let destination = OriginalDestination(host: "10.77.0.53", port: port, origin: .none, dnsServerAsked: port == 53 ? .tunnelAddress : nil)
        var m = T.machine(.fixed(destination, upstreamTLS: nil))
        let address = SocketAddress(numericHost: "10.77.0.53", port: port)!
        #expect(m.handle(.start).contains(.connect(address)))
        _ = m.handle(.connected(address))
        #expect(T.bytes(&m, first) == [.armTimer(millis: 0), .relay(.raw(plaintext: true, observeServerHello: false)), .updateFlow])
        return m
    }

    static func burst(_ m: inout Machine, _ bytes: [UInt8], _ direction: Direction) -> Machine.Command? {
        bytes.withUnsafeBytes { m.moved($0, direction, atMicros: 5_000) }
    }

    @Test("dig +tcp: the query names the flow (tcp.test, A, the server asked); the answer goes to the driver with its question")
    func digOverTCP() {
        var m = Self.relaying()
        #expect(m.facts.dnsServerAsked == .tunnelAddress && m.facts.dnsAskedAddress == "10.77.0.53")
        #expect(Self.burst(&m, Self.query, .clientToServer) == .updateFlow)
        #expect(m.facts.host == "tcp.test" && m.facts.hostOrigin == .dnsQuestion && m.facts.dnsQuestionType == 1)
        let asked = DNSQuestionEntry(name: "tcp.test", type: 1)
        #expect(Self.burst(&m, Array(Self.answer[..<30]), .serverToClient) == nil)
        #expect(Self.burst(&m, Array(Self.answer[30...]), .serverToClient)
                == .dnsAnswered([TCPDNSAnswer(message: Array(Self.answer[2...]), asked: asked)]))
        // A second query on the connection leaves the flow's name.
        var second = Self.query
        second[2] = 0x22
        #expect(Self.burst(&m, second, .clientToServer) == nil)
        #expect(m.facts.host == "tcp.test")
        #expect(m.handle(.relayEnded(.init(failure: nil, atMicros: 9_000))) == [.close(reset: false)])
        let counts = m.finishDNS()
        #expect(counts?.queries == 2 && counts?.responses == 1 && counts?.bytesNotRead == 0)
        #expect(m.finishDNS() == nil)
    }

    @Test("another port is not read as DNS, and port 53 that speaks something else names nothing")
    func notDNS() {
        var other = Self.relaying(port: 5353)
        #expect(Self.burst(&other, Self.query, .clientToServer) == nil)
        #expect(other.facts.host == nil && other.facts.dnsQuestionType == nil && other.finishDNS() == nil)
        let text = Array("HELLO there, this is no DNS at all\r\n".utf8)
        var m = Self.relaying(first: text)
        #expect(Self.burst(&m, text, .clientToServer) == nil)
        #expect(m.facts.host == nil && m.facts.hostOrigin == .none)
        // "HE" reads as an 18,501-byte length: the stream ends inside that "message", all unread.
        #expect(m.finishDNS()?.bytesNotRead == UInt64(text.count))
    }
}
