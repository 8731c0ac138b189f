@testable import Proxy
import FlowTerms
import Testing

/// Open exchanges told again while their bytes move (`ExchangeReader`'s progress): at most every
/// `FlowProgressReport.intervalMicros` (2 s), only in a burst that told no row itself.
@Suite("Exchange rows told while their bodies stream")
struct ExchangeReaderProgressTests {
    static let second: Int64 = 1_000_000

    @Test("HTTP/1: an upload and then its download are told with their sizes so far at most every 2 s; a burst that tells a row itself (the response head) tells no other")
    func http1() {
        let s = Self.second
        let p = ExchangePlaybook()
        let head = p.client("POST /up HTTP/1.1\r\nHost: example.com\r\nContent-Length: 30\r\n\r\n", at: 0)
        #expect(head.map(\.state) == [.open] && head.map(\.requestBodyBytes) == [0])
        #expect(p.client("0123456789", at: 1 * s).isEmpty)
        // 2.5 s after the first burst: due; the upload's 20 bytes so far.
        let upload = p.client("0123456789", at: 5 * s / 2)
        #expect(upload.map(\.state) == [.open] && upload.map(\.requestBodyBytes) == [20] && upload.map(\.requestEndTime) == [nil])
        #expect(p.client("0123456789", at: 3 * s).isEmpty)
        // Due again at 5 s, but this burst tells the response head itself: once.
        let answered = p.server("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789", at: 5 * s)
        #expect(answered.map(\.status) == [200] && answered.map(\.responseBodyBytes) == [10] && answered.map(\.requestBodyBytes) == [30])
        #expect(p.server(String(repeating: "x", count: 40), at: 6 * s).isEmpty)
        let download = p.server(String(repeating: "x", count: 40), at: 15 * s / 2)
        #expect(download.map(\.state) == [.open] && download.map(\.responseBodyBytes) == [90])
        // The end is told as before, once.
        let end = p.server(String(repeating: "x", count: 10), at: 8 * s)
        #expect(end.map(\.state) == [.complete] && end.map(\.responseBodyBytes) == [100] && end.map(\.endTime) == [8 * s])
        // Bytes of nothing open: nothing to tell.
        #expect(p.client("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", at: 20 * s).map(\.path) == ["/"])
        #expect(p.server("HTTP/1.1 204 No Content\r\n\r\n", at: 30 * s).map(\.state) == [.complete])
    }

    @Test("HTTP/2: every open stream is told, by stream id, while DATA moves; a stream's end is told alone in its burst")
    func http2() {
        typealias H = ExchangeReaderHTTP2Tests
        let s = Self.second
        let p = ExchangePlaybook(http2: true)
        // Streams 1 and 3 (RFC 7541 C.3.1, C.3.2), both requests whole.
        let opened = p.feed(H.preface + H.frame(0x4, 0, 0, []) + H.frame(0x1, H.endHeaders | H.endStream, 1, H.c31)
                            + H.frame(0x1, H.endHeaders | H.endStream, 3, H.c32), .clientToServer, at: 0)
        #expect(opened.map(\.streamID) == [1, 3])
        let heads = p.feed(H.frame(0x4, 0, 0, []) + H.frame(0x1, H.endHeaders, 1, H.ok200TextPlain) + H.frame(0x1, H.endHeaders, 3, H.ok200TextPlain)
                           + H.frame(0x0, 0, 1, Array("ab".utf8)), .serverToClient, at: 1 * s)
        #expect(heads.map(\.streamID) == [1, 3] && heads.map(\.status) == [200, 200])
        let moving = p.feed(H.frame(0x0, 0, 3, Array("abc".utf8)) + H.frame(0x0, 0, 1, Array("c".utf8)), .serverToClient, at: 3 * s)
        #expect(moving.map(\.streamID) == [1, 3] && moving.map(\.responseBodyBytes) == [3, 3] && moving.map(\.state) == [.open, .open])
        #expect(p.feed(H.frame(0x0, 0, 3, Array("d".utf8)), .serverToClient, at: 4 * s).isEmpty)
        // Due at 5 s, but stream 1 ends in this burst: its end alone.
        let ended = p.feed(H.frame(0x0, H.endStream, 1, []), .serverToClient, at: 5 * s)
        #expect(ended.map(\.streamID) == [1] && ended.map(\.state) == [.complete])
        #expect(p.feed(H.frame(0x0, 0, 3, Array("e".utf8)), .serverToClient, at: 6 * s).isEmpty)
        let rest = p.feed(H.frame(0x0, 0, 3, Array("f".utf8)), .serverToClient, at: 7 * s)
        #expect(rest.map(\.streamID) == [3] && rest.map(\.responseBodyBytes) == [6])
    }
}
