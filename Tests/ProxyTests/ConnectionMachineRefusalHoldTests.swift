@testable import Proxy
import FlowTerms
import Wire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The machine's side of a refusal whose answer waits for earlier responses
/// (`ExchangeRefusal.awaitsResponses`) and of a relay not read as HTTP (`NotHTTPStart`).
@Suite("Connection machine: a held refusal, and a relay not read as HTTP")
struct ConnectionMachineRefusalHoldTests {
    typealias Machine = ConnectionMachine
    static let failure = ConnectionFailure.requestUnreadable("The stream starts with byte 0x1, which cannot begin an HTTP method (RFC 9112 §3).")

    @Test("held: the client is held and the flow says why at once, the relay goes on; the answer once the reader says so, then the close; the error line once")
    func heldThenAnswered() {
        var m = ConnectionMachineTests.relaying()
        let held = ExchangeRefusal(failure: Self.failure, answer: .status(400), passing: 31, awaitsResponses: true)
        #expect(m.handle(.exchangeRefused(held)) == [.holdClient, .updateFlow])
        #expect(m.phase == .relaying && m.facts.error == Self.failure.sentence)
        #expect(m.handle(.exchangeRefused(held)) == [], "held once")
        let due = ExchangeRefusal(failure: Self.failure, answer: .status(400), passing: 40)
        #expect(m.handle(.exchangeRefused(due)) == [.sendClient(Machine.errorResponse(400, Self.failure)), .deliverThenClose(to: .client, reset: false)])
        #expect(m.phase == .closed && m.facts.error == Self.failure.sentence)
        // Past the limit: the close once the responses went on.
        var limit = ConnectionMachineTests.relaying()
        _ = limit.handle(.exchangeRefused(ExchangeRefusal(failure: .pipelinedPastLimit(256), answer: .close, passing: 9, awaitsResponses: true)))
        #expect(limit.handle(.exchangeRefused(ExchangeRefusal(failure: .pipelinedPastLimit(256), answer: .close, passing: 3))) == [.deliverThenClose(to: .client, reset: false)])
        #expect(limit.facts.error == "more than 256 requests waited for their responses on this connection, more than tv follows at once: tv passed on the first 256 and their responses, then closed the connection (a client sends the rest again on a new one)")
    }

    @Test("held, then the server's response refused meanwhile: tv's 502, and the flow says both, in order; held, then the connection ends: both too")
    func heldThenOther() {
        var m = ConnectionMachineTests.relaying()
        _ = m.handle(.exchangeRefused(ExchangeRefusal(failure: Self.failure, answer: .status(400), awaitsResponses: true)))
        let broken = ConnectionFailure.responseUnreadable("A header name contains byte 0x40, which is not allowed in a token (RFC 9110 §5.1).")
        #expect(m.handle(.exchangeRefused(ExchangeRefusal(failure: broken, answer: .status(502))))
                == [.sendClient(Machine.errorResponse(502, broken)), .deliverThenClose(to: .client, reset: false)])
        #expect(m.facts.error == Self.failure.sentence + "; then " + broken.sentence)
        var reset = ConnectionMachineTests.relaying()
        _ = reset.handle(.exchangeRefused(ExchangeRefusal(failure: Self.failure, answer: .status(400), awaitsResponses: true)))
        let lost = ConnectionFailure.read(from: .server, reset: true, .system(Errno(ECONNRESET)))
        _ = reset.handle(.relayEnded(.init(failure: lost, reset: true, atMicros: 9_000_000)))
        #expect(reset.facts.error == Self.failure.sentence + "; then " + lost.sentence)
    }

    @Test("not read as HTTP: an inspected flow says so with its first bytes, once, and keeps an earlier note; a plain relay (another protocol tv only relays) says nothing")
    func notHTTP() {
        var m = ConnectionMachineTests.relaying()
        let start = NotHTTPStart(.client, first: [0x00, 0x47, 0x45, 0x54])
        #expect(m.handle(.exchangeNotHTTP(start)) == [.updateFlow])
        #expect(m.facts.error == "tv did not read this connection as HTTP, its bytes going on as they came: the client's first bytes, the bytes 00 47 45 54, begin neither an HTTP/1 request line nor HTTP/2's preface")
        #expect(m.handle(.exchangeNotHTTP(start)) == [])
        var plain = ConnectionMachineTests.machine()
        ConnectionMachineTests.connected(&plain)
        _ = ConnectionMachineTests.text(&plain, "SSH-2.0-OpenSSH_9.2\r\n")
        #expect(plain.facts.status == .notEncrypted)
        #expect(plain.handle(.exchangeNotHTTP(NotHTTPStart(.client, first: Array("SSH-2.0-OpenSSH_".utf8), more: true))) == [])
        #expect(plain.facts.error == nil)
    }
}
