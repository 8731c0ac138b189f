@testable import Proxy
import FlowTerms
import Testing

/// HTTP/2 streams the client resets (RST_STREAM, RFC 9113 §6.4) through `ExchangeReader`: they
/// end `cancelled`, with the server's status when its head came before the reset or in flight
/// after it (a rapid reset's rows read "incomplete: its end was never read" while kept content
/// showed nginx's 200: a hostile-input trial). Header blocks from RFC 7541 C.3 and the static
/// table; frames as RFC 9113 §4.1 lays them out (`ExchangeReaderHTTP2Tests`' helpers).
@Suite("Exchange rows read from HTTP/2: streams the client resets")
struct ExchangeReaderHTTP2CancelTests {
    typealias H = ExchangeReaderHTTP2Tests
    static let endStream = H.endStream, endHeaders = H.endHeaders
    static let cancel = [UInt8]([0, 0, 0, 8])

    func row(_ sequence: Int, stream: Int64, at time: Int64, _ state: ExchangeState = .open, ended: Int64? = nil) -> ExchangeRecord {
        ExchangeRecord(flowID: 7, sequence: sequence, streamID: stream, httpVersion: "HTTP/2", method: "GET", scheme: "http",
                       authority: "www.example.com", path: "/", requestTime: time, endTime: ended, state: state, requestEndTime: time)
    }

    /// Streams 1 and 3 (C.3.1, C.3.2), each ended and reset (CANCEL) at once, at 10.
    static var rapidReset: [UInt8] {
        H.preface + H.frame(0x4, 0, 0, []) + H.frame(0x1, endHeaders | endStream, 1, H.c31) + H.frame(0x3, 0, 1, cancel)
            + H.frame(0x1, endHeaders | endStream, 3, H.c32) + H.frame(0x3, 0, 3, cancel)
    }

    @Test("a rapid reset answered all the same (nginx's 200s): each row is cancelled with the server's status, ended at its head")
    func headsAfterTheReset() {
        let p = ExchangePlaybook(http2: true)
        #expect(p.feed(Self.rapidReset, .clientToServer, at: 10) == [row(1, stream: 1, at: 10), row(2, stream: 3, at: 10)])
        #expect(p.reader.awaitsCancelledResponses)
        // :status 200 and 2 bytes on stream 1; :status 200 with content-type text/plain, ended, on 3.
        let answers = H.frame(0x1, Self.endHeaders, 1, [0x88]) + H.frame(0x0, Self.endStream, 1, Array("ok".utf8))
            + H.frame(0x1, Self.endHeaders | Self.endStream, 3, H.ok200TextPlain)
        var first = row(1, stream: 1, at: 10, .cancelled, ended: 20)
        first.status = 200
        first.responseTime = 20
        first.responseBodyBytes = 0
        first.responseWireBytes = 0
        var second = row(2, stream: 3, at: 10, .cancelled, ended: 20)
        second.status = 200
        second.contentType = "text/plain"
        second.responseTime = 20
        second.responseBodyBytes = 0
        second.responseWireBytes = 0
        #expect(p.feed(answers, .serverToClient, at: 20) == [first, second])
        #expect(!p.reader.awaitsCancelledResponses)
        #expect(p.end(at: 30) == [])
    }

    @Test("a reset after the response head: cancelled at once with its status (it read incomplete)")
    func resetAfterTheHead() {
        let p = ExchangePlaybook(http2: true)
        p.feed(H.preface + H.frame(0x4, 0, 0, []) + H.frame(0x1, Self.endHeaders | Self.endStream, 1, H.c31), .clientToServer, at: 10)
        p.feed(H.frame(0x1, Self.endHeaders, 1, [0x88]) + H.frame(0x0, 0, 1, Array("abc".utf8)), .serverToClient, at: 20)
        var cancelled = row(1, stream: 1, at: 10, .cancelled, ended: 30)
        cancelled.status = 200
        cancelled.responseTime = 20
        cancelled.responseBodyBytes = 3
        cancelled.responseWireBytes = 3
        #expect(p.feed(H.frame(0x3, 0, 1, Self.cancel), .clientToServer, at: 30) == [cancelled])
        #expect(!p.reader.awaitsCancelledResponses)
    }

    @Test("no head comes: cancelled without a status when its second is over (settle), when the server resets it, or when the connection ends; each ended at the client's reset")
    func noHead() {
        let waited = ExchangePlaybook(http2: true)
        waited.feed(Self.rapidReset, .clientToServer, at: 10)
        var settled: [ExchangeRecord] = []
        waited.reader.settle(at: 1_000_009) { settled.append($0) }
        #expect(settled == [])
        waited.reader.settle(at: 1_000_010) { settled.append($0) }
        #expect(settled == [row(1, stream: 1, at: 10, .cancelled, ended: 10), row(2, stream: 3, at: 10, .cancelled, ended: 10)])
        #expect(!waited.reader.awaitsCancelledResponses)

        let reset = ExchangePlaybook(http2: true)
        reset.feed(Self.rapidReset, .clientToServer, at: 10)
        #expect(reset.feed(H.frame(0x3, 0, 3, Self.cancel), .serverToClient, at: 20) == [row(2, stream: 3, at: 10, .cancelled, ended: 10)])
        #expect(reset.end(at: 30) == [row(1, stream: 1, at: 10, .cancelled, ended: 10)])
    }

    @Test("at the open-stream bound a stream the client reset is let go first (cancelled), before an answered one, and nothing is counted")
    func letGoFirst() {
        let p = ExchangePlaybook(.init(flowID: 7, scheme: "https", keepsQuery: false, http2: true, maxOpen: 2))
        // Stream 1 answered whole (its request goes on); stream 3 reset by the client.
        p.feed(H.preface + H.frame(0x4, 0, 0, []) + H.frame(0x1, Self.endHeaders, 1, H.c31), .clientToServer, at: 10)
        p.feed(H.frame(0x1, Self.endHeaders | Self.endStream, 1, [0x88]), .serverToClient, at: 11)
        p.feed(H.frame(0x1, Self.endHeaders | Self.endStream, 3, H.c32) + H.frame(0x3, 0, 3, Self.cancel), .clientToServer, at: 12)
        let next = p.feed(H.frame(0x1, Self.endHeaders | Self.endStream, 5, H.c33), .clientToServer, at: 13)
        #expect(next.map(\.streamID) == [3, 5])
        #expect(next.map(\.state) == [.cancelled, .open])
        #expect(next.first?.endTime == 12)
        #expect(p.reader.requestsLeftOut == 0)
    }
}
