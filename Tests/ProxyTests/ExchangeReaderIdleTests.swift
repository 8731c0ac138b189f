@testable import Proxy
import FlowTerms
import Testing

/// `ExchangeReader.releaseIdle`: an idle keep-alive connection holds no HTTP/1 reader, and what
/// is read after the quiet is exactly what one reader would have read (issue 21, memory per idle
/// connection).
@Suite("Exchange reader released while the connection is idle")
struct ExchangeReaderIdleTests {
    static let request = "GET /a HTTP/1.1\r\nHost: example.com\r\n\r\n"
    static let response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    /// Two keep-alive exchanges, with `quiet` called between every pair of bursts.
    func twoExchanges(quiet: (ExchangePlaybook) -> Void) -> (rows: [ExchangeRecord], stop: ExchangeReader.Stop?) {
        let p = ExchangePlaybook()
        p.client(Self.request, at: 100)
        quiet(p)
        p.server(Self.response, at: 200)
        quiet(p)
        p.client("POST /b HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\n\r\nx", at: 300)
        quiet(p)
        p.client("yz", at: 310)
        quiet(p)
        p.server("HTTP/1.1 204 No Content\r\n\r\n", at: 400)
        quiet(p)
        p.end(at: 500)
        return (p.emitted, p.reader.stop)
    }

    @Test("released between exchanges only; the rows and their numbering are those of one reader")
    func sameRowsAcrossReleases() {
        var released: [Bool] = []
        let withQuiet = twoExchanges { released.append($0.reader.releaseIdle()) }
        let without = twoExchanges { _ in }
        // After the first request (response awaited): kept. After its response: released. After
        // the POST's head (body awaited): kept. After the body (response awaited): kept. After
        // the 204: released.
        #expect(released == [false, true, false, false, true])
        #expect(withQuiet.rows == without.rows)
        #expect(withQuiet.rows.map(\.sequence) == [1, 1, 2, 2])
        #expect(withQuiet.rows.map(\.state) == [.open, .complete, .open, .complete])
        #expect(withQuiet.stop == .ended)
    }

    @Test("between exchanges (tv may stop with FINs) exactly when nothing is part way; never once reading stopped")
    func betweenExchanges() {
        var between: [Bool] = []
        _ = twoExchanges { between.append($0.reader.isBetweenExchanges) }
        #expect(between == [false, true, false, false, true])
        let fresh = ExchangePlaybook()
        #expect(fresh.reader.isBetweenExchanges)
        fresh.client("GET /a HT", at: 100)
        #expect(!fresh.reader.isBetweenExchanges)
        let ended = ExchangePlaybook()
        ended.client(Self.request, at: 100)
        ended.server(Self.response, at: 200)
        ended.end(at: 300)
        #expect(!ended.reader.isBetweenExchanges)
        // HTTP/2: no stream open. Stream 1 opened (request ended), then answered with END_STREAM.
        let h2 = ExchangePlaybook(http2: true)
        #expect(h2.reader.isBetweenExchanges)
        h2.feed(ExchangeReaderHTTP2Tests.preface + ExchangeReaderHTTP2Tests.frame(0x1, 0x5, 1, ExchangeReaderHTTP2Tests.c31), .clientToServer, at: 1)
        #expect(!h2.reader.isBetweenExchanges)
        h2.feed(ExchangeReaderHTTP2Tests.frame(0x1, 0x5, 1, ExchangeReaderHTTP2Tests.ok200TextPlain), .serverToClient, at: 2)
        #expect(h2.emitted.map(\.state) == [.open, .complete])
        #expect(h2.reader.isBetweenExchanges)
    }

    @Test("awaits a response exactly when a request is whole and no byte of a response came (a 504 would be read as its answer); never over HTTP/2 or once reading stopped")
    func awaitsResponse() {
        var awaiting: [Bool] = []
        _ = twoExchanges { awaiting.append($0.reader.awaitsResponse) }
        // After the GET: awaited. After its response: no. After the POST's head (body to
        // come): no (the client's side is not done). After the body: awaited. After the 204: no.
        #expect(awaiting == [true, false, false, true, false])
        let partial = ExchangePlaybook()
        partial.client(Self.request, at: 100)
        partial.server("HTTP/1.1 20", at: 200)
        #expect(!partial.reader.awaitsResponse, "a response head under way: bytes already went to the client")
        // An interim 100 Continue passed on: the final response is still awaited.
        let interim = ExchangePlaybook()
        interim.client("POST /c HTTP/1.1\r\nHost: example.com\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n", at: 100)
        interim.server("HTTP/1.1 100 Continue\r\n\r\n", at: 150)
        interim.client("x", at: 160)
        #expect(interim.reader.awaitsResponse)
        let ended = ExchangePlaybook()
        ended.client(Self.request, at: 100)
        ended.end(at: 300)
        #expect(!ended.reader.awaitsResponse)
        let h2 = ExchangePlaybook(http2: true)
        h2.feed(ExchangeReaderHTTP2Tests.preface + ExchangeReaderHTTP2Tests.frame(0x1, 0x5, 1, ExchangeReaderHTTP2Tests.c31), .clientToServer, at: 1)
        #expect(!h2.reader.awaitsResponse)
    }

    @Test("a head half read is kept: nothing is released before its end")
    func halfHeadKept() {
        let p = ExchangePlaybook()
        p.client("GET /a HT", at: 100)
        #expect(!p.reader.releaseIdle())
        let rows = p.client("TP/1.1\r\nHost: example.com\r\n\r\n", at: 110)
        #expect(rows.map(\.path) == ["/a"])
        #expect(rows.map(\.requestTime) == [100])
    }

    @Test("after a release, server bytes that answer no request are refused, as before it (the reader made again knows it is not the connection's first)")
    func unansweredBytesAfterRelease() {
        let p = ExchangePlaybook()
        p.client(Self.request, at: 100)
        p.server(Self.response, at: 200)
        #expect(p.reader.releaseIdle())
        #expect(p.server("HTTP/1.1 204 No Content\r\n\r\n", at: 300) == [])
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .responseUnasked(bytes: 27), answer: .close)))
    }

    @Test("nothing to release before the first byte, after the end, or for HTTP/2")
    func notReleased() {
        let fresh = ExchangePlaybook()
        #expect(!fresh.reader.releaseIdle())
        let ended = ExchangePlaybook()
        ended.client(Self.request, at: 100)
        ended.server(Self.response, at: 200)
        ended.end(at: 300)
        #expect(!ended.reader.releaseIdle())
        let h2 = ExchangePlaybook(http2: true)
        #expect(!h2.reader.releaseIdle())
    }
}
