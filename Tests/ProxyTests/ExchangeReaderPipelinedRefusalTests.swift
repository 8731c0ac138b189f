@testable import Proxy
import FlowTerms
import Wire
import Testing

/// A refused request pipelined behind others on the relay (`ExchangeRefusal.awaitsResponses`):
/// what came before it goes on and is answered, then tv's answer; the rows say which requests
/// went on. The hostile-input trial's `GET /first` + `G\x01T /second` in one burst inside
/// inspected TLS reached nobody, the client got a bare close and `/first`'s row said incomplete.
@Suite("Exchange rows: a refused request pipelined behind others")
struct ExchangeReaderPipelinedRefusalTests {
    static let first = "GET /first HTTP/1.1\r\nHost: h\r\n\r\n"
    static let hidden = "GET /hidden?secret=1 HTTP/1.1\r\nHost: h\r\n\r\n"
    static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    /// A request whose target holds a NUL: refused, its line salvaged.
    static let nul = "GET /a\u{0}b HTTP/1.1\r\nHost: h\r\n\r\n"
    static let nulReason = "The request target contains byte 0x0, which is not visible ASCII (RFC 9112 §3.2)."

    static func rows(_ records: [ExchangeRecord]) -> [String] {
        records.map { "\($0.path) \($0.status.map(String.init) ?? "-") \($0.state.rawValue)" }
    }

    @Test("a good request then a bad one in one burst: the good one goes on (passing), its response too, then tv's 400; the bad one's row waits open and ends answered; the client's later bytes are not read")
    func goodThenBad() {
        let p = ExchangePlaybook(http1: true)
        #expect(Self.rows(p.client(Self.first + Self.nul + Self.hidden, at: 1)) == ["/first - open", "/a%00b - open"])
        #expect(p.reader.stop == nil && !p.reader.readsRequestHead)
        let held = ExchangeRefusal(failure: .requestUnreadable(Self.nulReason), answer: .status(400), passing: Self.first.utf8.count, awaitsResponses: true)
        #expect(p.reader.takeHold() == held)
        #expect(p.reader.takeHold() == nil, "told once")
        #expect(p.client(Self.hidden, at: 2).isEmpty)
        #expect(!p.reader.isBetweenExchanges)
        // The response in two bursts: the answer waits for its end, and comes right after it
        // (bytes nobody asked for after it do not go on).
        #expect(Self.rows(p.server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\no", at: 3)) == ["/first 200 open"])
        #expect(p.reader.stop == nil)
        let rows = p.server("kHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", at: 4)
        #expect(Self.rows(rows) == ["/first 200 complete", "/a%00b 400 answered"])
        #expect(rows.last?.endTime == 4 && rows.last?.reason == "Bad Request")
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .requestUnreadable(Self.nulReason), answer: .status(400), passing: 1)))
    }

    @Test("a bad request with no line to salvage behind two good ones: both go on and are answered, then tv's 400, with no row for it")
    func unsalvagedBehindTwo() {
        let p = ExchangePlaybook(http1: true)
        let two = Self.first + Self.first
        #expect(Self.rows(p.client(two + "G\u{1}T /second HTTP/1.1\r\nHost: h\r\n\r\n", at: 1)) == ["/first - open", "/first - open"])
        guard let held = p.reader.takeHold() else { Issue.record("no hold"); return }
        #expect(held.passing == two.utf8.count && held.answer == .status(400) && held.awaitsResponses)
        #expect(Self.rows(p.server(Self.ok, at: 2)) == ["/first 200 complete"])
        #expect(p.reader.stop == nil)
        #expect(Self.rows(p.server(Self.ok, at: 3)) == ["/first 200 complete"])
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: held.failure, answer: .status(400), passing: Self.ok.utf8.count)))
    }

    @Test("the bad request's head begun in an earlier burst: nothing of this burst goes on (passing 0); its row still waits for the answer")
    func headBegunEarlier() {
        let p = ExchangePlaybook()
        p.client(Self.first + "GET /a", at: 1)
        #expect(Self.rows(p.client("\u{0}b HTTP/1.1\r\nHost: h\r\n\r\n", at: 2)) == ["/a%00b - open"])
        #expect(p.reader.takeHold() == ExchangeRefusal(failure: .requestUnreadable(Self.nulReason), answer: .status(400), passing: 0, awaitsResponses: true))
    }

    @Test("the connection ends before the answer could come: the requests that went on end as ever, the refused one as refused by tv (never sent), not incomplete")
    func endsFirst() {
        let p = ExchangePlaybook(http1: true)
        p.client(Self.first + Self.nul, at: 1)
        _ = p.reader.takeHold()
        let ended = p.end(at: 5)
        #expect(Self.rows(ended) == ["/first - incomplete", "/a%00b - answered"])
        #expect(ended.last.map { [$0.endTime, $0.responseTime] } == [5, nil])
        // A response the server's bytes broke in the meantime: tv's 502 in its place, and the
        // refused request ends unanswered with the reading.
        let broken = ExchangePlaybook(http1: true)
        broken.client(Self.first + Self.nul, at: 1)
        let rows = broken.server("HTTP/1.1 200 OK\r\nX@Bad: 1\r\n\r\n", at: 2)
        #expect(Self.rows(rows) == ["/first 502 answered", "/a%00b - answered"])
        #expect(broken.reader.stop == .refused(ExchangeRefusal(
            failure: .responseUnreadable("A header name contains byte 0x40, which is not allowed in a token (RFC 9110 §5.1)."), answer: .status(502))))
    }

    @Test("the server silent until the idle timeout: tv's 504 answers the waiting request and the connection closes, so the held refusal's row ends refused, unanswered, first (not as a 400 tv never sent)")
    func abandoned() {
        let none = ExchangePlaybook(http1: true)
        none.client(Self.first + Self.nul, at: 1)
        var told: [ExchangeRecord] = []
        none.reader.abandonHold(at: 9) { told.append($0) }
        #expect(Self.rows(told) == ["/a%00b - answered"])
        #expect(Self.rows(none.server("HTTP/1.1 504 Gateway Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", at: 10)) == ["/first 504 complete"])
        #expect(none.reader.stop == nil)
        #expect(none.end(at: 11).isEmpty)
    }

    @Test("a lone bad request after its burst's earlier bytes (a body whose response came first): those go on, the 400 at once, as before")
    func loneAfterBytes() {
        let p = ExchangePlaybook()
        p.client("POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\n", at: 1)
        // The server answers before the body (RFC 9110 §10.1.1's early answer).
        #expect(Self.rows(p.server("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n", at: 2)).isEmpty)
        let rows = p.client("abcd" + Self.nul, at: 3)
        #expect(Self.rows(rows) == ["/up 413 complete", "/a%00b 400 answered"])
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .requestUnreadable(Self.nulReason), answer: .status(400), passing: 4)))
    }
}
