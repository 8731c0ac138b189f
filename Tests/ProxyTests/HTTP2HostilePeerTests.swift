@testable import Proxy
import FlowTerms
import Wire
import Testing

/// A hostile HTTP/2 peer through `ExchangeReader` (RFC 9113 §5.4.1): what tv cannot read is
/// refused from the frame (or header block) where it begins, as the side that sent it
/// (`HTTP2ConnectionError`), and floods past `HTTP2FloodPolicy`'s limits likewise; the machine
/// answers with a GOAWAY to each side. Frames as RFC 9113 §4.1 lays them out.
@Suite("HTTP/2 from a hostile peer: refused, named, answered with GOAWAY")
struct HTTP2HostilePeerTests {
    typealias T = ExchangeReaderHTTP2Tests
    static let ping = T.frame(0x6, 0, 0, [UInt8](repeating: 0, count: 8))

    /// A connection with stream 1 open (the client's preface, SETTINGS, a GET; the server's SETTINGS).
    static func opened(clientSettings: [UInt8] = []) -> ExchangePlaybook {
        let p = ExchangePlaybook(http2: true)
        p.feed(T.preface + T.frame(0x4, 0, 0, clientSettings) + T.frame(0x1, T.endHeaders | T.endStream, 1, T.c31), .clientToServer, at: 1)
        p.feed(T.frame(0x4, 0, 0, []), .serverToClient, at: 2)
        return p
    }

    static func error(_ side: ConnectionFailure.Side, _ reason: String, code: UInt32, last: UInt32 = 1, framed: Bool = true) -> HTTP2ConnectionError {
        HTTP2ConnectionError(sentBy: side, kind: .malformed(reason), errorCode: code, lastClientStream: last, lastServerStream: 0, otherSideFramed: framed)
    }

    static func refused(_ error: HTTP2ConnectionError, passing: Int) -> ExchangeReader.Stop {
        .refused(ExchangeRefusal(failure: .http2ConnectionError(error), answer: .goaway(error), passing: passing))
    }

    @Test("a server's DATA frame longer than the client's SETTINGS_MAX_FRAME_SIZE (16,384 by default): FRAME_SIZE_ERROR, refused from its header on")
    func frameTooLong() {
        let p = Self.opened()
        let head = T.frame(0x1, T.endHeaders, 1, T.ok200TextPlain)
        let ended = p.feed(head + T.frame(0x0, T.endStream, 1, [UInt8](repeating: 0x61, count: 16_385)), .serverToClient, at: 3)
        #expect(ended.map(\.state) == [.incomplete])
        let error = Self.error(.server, "A frame of 16385 bytes, longer than the receiver's SETTINGS_MAX_FRAME_SIZE of 16384 (RFC 9113 §4.2).", code: 0x6)
        #expect(p.reader.stop == Self.refused(error, passing: head.count))
        #expect(ConnectionFailure.http2ConnectionError(error).sentence
            == "the server sent HTTP/2 tv cannot read: a frame of 16385 bytes, longer than the receiver's SETTINGS_MAX_FRAME_SIZE of 16384 (RFC 9113 §4.2); tv forwarded none of it and ended the connection with GOAWAY FRAME_SIZE_ERROR to the server and GOAWAY INTERNAL_ERROR to the client (RFC 9113 §5.4.1)")
    }

    @Test("the client's SETTINGS_MAX_FRAME_SIZE of 32,768 lets the server's 20,000-byte DATA through")
    func largerFramesOnceSaid() {
        let p = Self.opened(clientSettings: [0x00, 0x05, 0x00, 0x00, 0x80, 0x00])
        let rows = p.feed(T.frame(0x1, T.endHeaders, 1, T.ok200TextPlain) + T.frame(0x0, T.endStream, 1, [UInt8](repeating: 0x61, count: 20_000)),
                          .serverToClient, at: 3)
        #expect(rows.map(\.state) == [.complete])
        #expect(rows.map(\.responseBodyBytes) == [20_000])
        #expect(p.reader.stop == nil)
    }

    @Test("a server's HEADERS on stream 0: PROTOCOL_ERROR, the server named")
    func headersOnStreamZero() {
        let p = Self.opened()
        p.feed(Self.ping + T.frame(0x1, T.endHeaders, 0, T.ok200TextPlain), .serverToClient, at: 3)
        #expect(p.reader.stop == Self.refused(Self.error(.server, "A header block on stream 0 (RFC 9113 §6.2).", code: 0x1), passing: 17))
    }

    @Test("a server's header block HPACK cannot decode: COMPRESSION_ERROR, the server named")
    func serverBlockUndecodable() {
        let p = Self.opened()
        p.feed(T.frame(0x1, T.endHeaders, 1, [0x80]), .serverToClient, at: 3)
        guard case let .refused(refusal) = p.reader.stop, case let .http2ConnectionError(error) = refusal.failure else {
            Issue.record("\(String(describing: p.reader.stop))")
            return
        }
        #expect(error.sentBy == .server)
        #expect(error.errorCode == 0x9)
        #expect(refusal.passing == 0)
        #expect(ConnectionFailure.http2ConnectionError(error).sentence.hasPrefix("the server sent HTTP/2 tv cannot read: a header block HPACK cannot decode (RFC 7541: "))
    }

    @Test("a server's header block that never ends (CVE-2024-27316): the 9th CONTINUATION is ENHANCE_YOUR_CALM, the server named, the block held back from its HEADERS")
    func endlessContinuation() {
        let p = Self.opened()
        let before = T.frame(0x0, 0, 1, [])
        var bytes = before + T.frame(0x1, 0, 1, Array(T.ok200TextPlain.prefix(1)))
        for _ in 0 ..< 9 { bytes += T.frame(0x9, 0, 1, []) }
        p.feed(bytes, .serverToClient, at: 3)
        let error = Self.error(.server, "A header block in more than 8 CONTINUATION frames, more than tv reads (RFC 9113 §6.10, §10.5).", code: 0xb)
        #expect(p.reader.stop == Self.refused(error, passing: before.count))
        #expect(ConnectionFailure.http2ConnectionError(error).sentence
            == "the server sent HTTP/2 tv cannot read: a header block in more than 8 CONTINUATION frames, more than tv reads (RFC 9113 §6.10, §10.5); tv forwarded none of it and ended the connection with GOAWAY ENHANCE_YOUR_CALM to the server and GOAWAY INTERNAL_ERROR to the client (RFC 9113 §5.4.1)")
    }

    @Test("8 CONTINUATIONs are read; a block begun in an earlier burst and failed in this one: the whole burst refused, the client's connection closed (part of the block reached it)")
    func blockBegunEarlier() {
        let p = Self.opened()
        var first = T.frame(0x1, 0, 1, Array(T.ok200TextPlain.prefix(1)))
        for _ in 0 ..< 8 { first += T.frame(0x9, 0, 1, []) }
        p.feed(first, .serverToClient, at: 3)
        #expect(p.reader.stop == nil)
        p.feed(T.frame(0x9, 0, 1, []), .serverToClient, at: 4)
        let error = Self.error(.server, "A header block in more than 8 CONTINUATION frames, more than tv reads (RFC 9113 §6.10, §10.5).", code: 0xb,
                               framed: false)
        #expect(p.reader.stop == Self.refused(error, passing: 0))
        #expect(error.phrase.hasSuffix("ended the connection with GOAWAY ENHANCE_YOUR_CALM to the server and closed the client's connection (RFC 9113 §5.4.1)"))
    }

    @Test("a Chromium-like opening passes untouched: SETTINGS with a reserved (GREASE) id, a connection WINDOW_UPDATE, a GREASE frame of a reserved type, PRIORITY_UPDATE (0x10), HEADERS with priority, a PING")
    func chromiumLikeOpening() {
        let p = ExchangePlaybook(http2: true)
        let settings: [UInt8] = [0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x04, 0x00, 0x60, 0x00, 0x00, 0x0a, 0x0a, 0x3b, 0x9a, 0xca, 0x00]
        let opening = T.preface + T.frame(0x4, 0, 0, settings) + T.frame(0x8, 0, 0, [0x00, 0xef, 0x00, 0x01])
            + T.frame(0xb + 0x1f * 2, 0, 0, [1, 2, 3]) + T.frame(0x10, 0, 0, [0, 0, 0, 1] + Array("u=0, i".utf8))
            + T.frame(0x1, T.endHeaders | T.endStream | 0x20, 1, [0x80, 0, 0, 0, 0xff] + T.c31) + Self.ping
        let rows = p.feed(opening, .clientToServer, at: 1)
        #expect(rows.map(\.path) == ["/"])
        p.feed(T.frame(0x4, 0, 0, []) + T.frame(0x4, 0x1, 0, []) + T.frame(0x6, 0x1, 0, [UInt8](repeating: 0, count: 8))
               + T.frame(0x1, T.endHeaders | T.endStream, 1, T.ok200TextPlain), .serverToClient, at: 2)
        #expect(p.reader.stop == nil)
    }

    @Test("the machine's answer: GOAWAY with the error's code to its sender, INTERNAL_ERROR to the other side after what went on, delivered, then the close; the flow says why")
    func machineAnswer() {
        var m = ConnectionMachineTests.relaying()
        let error = Self.error(.server, "A header block on stream 0 (RFC 9113 §6.2).", code: 0x1, last: 5)
        let commands = m.handle(.exchangeRefused(ExchangeRefusal(failure: .http2ConnectionError(error), answer: .goaway(error), passing: 17)))
        let toServer: [UInt8] = [0, 0, 47, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1] + Array("tv: the server's HTTP/2 broke the rules".utf8)
        let toClient: [UInt8] = [0, 0, 52, 7, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 2] + Array("tv: the server's HTTP/2 could not be relayed".utf8)
        #expect(commands == [.sendServer(toServer), .sendClient(toClient), .deliverThenClose(to: .client, reset: false)])
        #expect(m.facts.error == error.phrase)
        // The client's flood, the server's side unframed: the client's GOAWAY, the close.
        var flood = ConnectionMachineTests.relaying()
        let calm = HTTP2ConnectionError(sentBy: .client, kind: .flood(.init(kind: .ping, count: 10_001)), errorCode: 0xb, lastClientStream: 3,
                                        lastServerStream: 0, otherSideFramed: false)
        let toFlooder: [UInt8] = [0, 0, 53, 7, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0xb] + Array("tv: the client's HTTP/2 went past tv's limits".utf8)
        #expect(flood.handle(.exchangeRefused(ExchangeRefusal(failure: .http2ConnectionError(calm), answer: .goaway(calm)))) == [.sendClient(toFlooder), .close(reset: false)])
        #expect(flood.facts.error == "the client sent 10,001 PING frames without a request, response or DATA between them: tv forwarded the first 10,000 and ended the connection with GOAWAY ENHANCE_YOUR_CALM to the client and closed the server's connection (RFC 9113 §10.5)")
    }
}

/// Floods through the reader (`HTTP2FloodPolicy` counted from the frames).
@Suite("HTTP/2 floods: counted per side, refused past the limit")
struct HTTP2FloodReadingTests {
    typealias T = ExchangeReaderHTTP2Tests

    @Test("10,000 PINGs from the client pass; the 10,001st is refused from its frame; a request between them starts the count again")
    func pingFlood() {
        let p = HTTP2HostilePeerTests.opened()
        // The opening request was progress: 10,000 PINGs now, in one burst.
        p.feed(Array([[UInt8]](repeating: HTTP2HostilePeerTests.ping, count: 10_000).joined()), .clientToServer, at: 3)
        #expect(p.reader.stop == nil)
        p.feed(T.frame(0x1, T.endHeaders | T.endStream, 3, T.c32) + HTTP2HostilePeerTests.ping, .clientToServer, at: 4)
        #expect(p.reader.stop == nil)
        p.feed(Array([[UInt8]](repeating: HTTP2HostilePeerTests.ping, count: 9_999).joined()) + T.frame(0x0, 0, 3, []), .clientToServer, at: 5)
        // 10,000 PINGs since the request, and an empty DATA (inert, counted apart); one more PING is too many.
        #expect(p.reader.stop == nil)
        let more = T.frame(0x8, 0, 0, [0, 0, 0, 1]) + HTTP2HostilePeerTests.ping
        p.feed(more, .clientToServer, at: 6)
        let error = HTTP2ConnectionError(sentBy: .client, kind: .flood(.init(kind: .ping, count: 10_001)), errorCode: 0xb, lastClientStream: 3,
                                         lastServerStream: 0, otherSideFramed: true)
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .http2ConnectionError(error), answer: .goaway(error), passing: 13)))
    }

    @Test("a rapid reset: 1,000 streams opened and reset pass; the 1,001st reset is refused; a completed exchange starts the count again")
    func rapidReset() {
        let p = HTTP2HostilePeerTests.opened()
        // Stream 1 completes (the count starts at 0).
        p.feed(T.frame(0x1, T.endHeaders | T.endStream, 1, T.ok200TextPlain), .serverToClient, at: 2)
        var bytes: [UInt8] = []
        var id: UInt32 = 3
        for _ in 0 ..< 1_000 {
            bytes += T.frame(0x1, T.endHeaders | T.endStream, id, T.c32) + T.frame(0x3, 0, id, [0, 0, 0, 8])
            id += 2
        }
        p.feed(bytes, .clientToServer, at: 3)
        #expect(p.reader.stop == nil)
        let last = T.frame(0x1, T.endHeaders | T.endStream, id, T.c32)
        p.feed(last + T.frame(0x3, 0, id, [0, 0, 0, 8]), .clientToServer, at: 4)
        guard case let .refused(refusal) = p.reader.stop, case let .http2ConnectionError(error) = refusal.failure else {
            Issue.record("\(String(describing: p.reader.stop))")
            return
        }
        #expect(error.kind == .flood(.init(kind: .reset, count: 1_001)))
        #expect(error.lastClientStream == id)
        #expect(refusal.passing == last.count)
    }

    @Test("a server's empty DATA frames: 10,000 pass, the 10,001st is refused as the server's")
    func emptyDataFlood() {
        let p = HTTP2HostilePeerTests.opened()
        let head = T.frame(0x1, T.endHeaders, 1, T.ok200TextPlain)
        p.feed(head + Array([[UInt8]](repeating: T.frame(0x0, 0, 1, []), count: 10_001).joined()), .serverToClient, at: 3)
        let error = HTTP2ConnectionError(sentBy: .server, kind: .flood(.init(kind: .inert, count: 10_001)), errorCode: 0xb, lastClientStream: 1,
                                         lastServerStream: 0, otherSideFramed: true)
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .http2ConnectionError(error), answer: .goaway(error), passing: head.count + 10_000 * 9)))
    }
}

@Suite("HTTP/2 flood policy: exact counts")
struct HTTP2FloodPolicyTests {
    @Test("each kind's limit, per side; the first past it is the flood, with its count")
    func limits() {
        for kind in HTTP2FloodPolicy.Kind.allCases {
            var policy = HTTP2FloodPolicy()
            for _ in 0 ..< kind.limit { #expect(policy.note(kind, from: .client) == nil) }
            #expect(policy.note(kind, from: .server) == nil, "the server's count is its own")
            #expect(policy.note(kind, from: .client) == .init(kind: kind, count: kind.limit + 1))
            #expect(policy.count(kind, from: .client) == kind.limit + 1)
            #expect(policy.count(kind, from: .server) == 1)
        }
        #expect(HTTP2FloodPolicy.Kind.allCases.map(\.limit) == [10_000, 10_000, 10_000, 1_000])
    }

    @Test("progress starts the PING, SETTINGS and inert counts again, both sides; a completed exchange the resets'")
    func progress() {
        var policy = HTTP2FloodPolicy()
        for kind in HTTP2FloodPolicy.Kind.allCases {
            _ = policy.note(kind, from: .client)
            _ = policy.note(kind, from: .server)
        }
        policy.progressed()
        #expect(HTTP2FloodPolicy.Kind.allCases.map { policy.count($0, from: .client) } == [0, 0, 0, 1])
        #expect(HTTP2FloodPolicy.Kind.allCases.map { policy.count($0, from: .server) } == [0, 0, 0, 1])
        policy.exchangeCompleted()
        #expect(policy.count(.reset, from: .client) == 0)
    }

    @Test("the flood's words")
    func phrases() {
        #expect(HTTP2FloodPolicy.Flood(kind: .settings, count: 10_001).phrase == "10,001 SETTINGS frames without a request, response or DATA between them")
        #expect(HTTP2FloodPolicy.Flood(kind: .reset, count: 1_001).phrase
            == "1,001 RST_STREAM frames cancelling its own streams with no exchange completing between them (a rapid reset, CVE-2023-44487)")
        #expect(HTTP2FloodPolicy.Flood.grouped(1_234_567) == "1,234,567")
        #expect(HTTP2FloodPolicy.Flood.grouped(999) == "999")
    }
}
