import FlowTerms
import Recording
import Testing
@testable import HTTPReading

/// Which exchange row each exchange read from kept turns is (`ExchangeRowMatch`): a trial's
/// keep-alive connection after `tv content delete` paired its second request with the first's
/// row by position, and a pushed stream kept whole was never paired with its row.
@Suite struct ExchangeRowMatchTests {
    static let start: Int64 = 1_764_471_900_000_000

    /// A message of `line` starting in turn `turn`, `offset` µs into the flow.
    static func message(_ line: String, turn: Int, at offset: Int64) -> HTTPMessage {
        HTTPMessage(startLine: line, headers: [], body: HTTPBody(framing: "none"), turn: turn, offset: offset)
    }

    /// An HTTP/1.1 exchange row of flow 7 made `offset` µs into it.
    static func row(_ id: Int64, _ sequence: Int, _ method: String, _ path: String, at offset: Int64, stream: Int64? = nil,
                    queryRemoved: Bool = false) -> ExchangeRecord {
        var row = ExchangeRecord(flowID: 7, sequence: sequence, streamID: stream, httpVersion: stream == nil ? "HTTP/1.1" : "HTTP/2",
                                 method: method, path: path, queryRemoved: queryRemoved, requestTime: start + offset)
        row.id = id
        return row
    }

    @Test("after a deleted start the one kept request is the second row (made after its turn began), not the first by position")
    func keptRequestAfterADelete() {
        // Turn 3 (the second request) 4 s in; the first request, 1 ms in, went with turns 1–2.
        let kept = [HTTPExchange(request: Self.message("GET /headers?n=h1after HTTP/1.1", turn: 3, at: 4_000_000),
                                 response: Self.message("HTTP/1.1 200 OK", turn: 4, at: 4_001_000))]
        let rows = [Self.row(41, 1, "GET", "/headers", at: 1_000, queryRemoved: true),
                    Self.row(42, 2, "GET", "/headers?n=h1after", at: 4_000_020)]
        #expect(ExchangeRowMatch.pair(kept, rows: rows, flowStart: Self.start) == [1])
        #expect(ExchangeRowMatch.recorded(for: rows[1], in: kept, rows: rows, flowStart: Self.start) == kept[0])
        #expect(ExchangeRowMatch.recorded(for: rows[0], in: kept, rows: rows, flowStart: Self.start) == nil)
        // The rows in another order pair the same.
        #expect(ExchangeRowMatch.pair(kept, rows: rows.reversed(), flowStart: Self.start) == [0])
    }

    @Test("kept from the start: each request its row in order, pipelined ones in one turn too; a response kept without its request has none")
    func inOrderFromTheStart() {
        let kept = [HTTPExchange(request: Self.message("GET /a HTTP/1.1", turn: 1, at: 100),
                                 response: Self.message("HTTP/1.1 200 OK", turn: 2, at: 900)),
                    HTTPExchange(request: Self.message("POST /b?x=1 HTTP/1.1", turn: 1, at: 100),
                                 response: Self.message("HTTP/1.1 200 OK", turn: 2, at: 900)),
                    HTTPExchange(request: nil, response: Self.message("HTTP/1.1 200 OK", turn: 4, at: 3_000))]
        let rows = [Self.row(1, 1, "GET", "/a", at: 130), Self.row(2, 2, "POST", "/b", at: 135, queryRemoved: true),
                    Self.row(3, 3, "GET", "/c", at: 2_000)]
        #expect(ExchangeRowMatch.pair(kept, rows: rows, flowStart: Self.start) == [0, 1, nil])
    }

    @Test("a kept request takes no row of another method or path, nor one made before its turn began")
    func methodPathAndTime() {
        let kept = [HTTPExchange(request: Self.message("GET /b HTTP/1.1", turn: 5, at: 10_000),
                                 response: Self.message("HTTP/1.1 200 OK", turn: 6, at: 20_000))]
        // A row of /a after the turn began (not this request), then /b's.
        #expect(ExchangeRowMatch.pair(kept, rows: [Self.row(1, 1, "GET", "/a", at: 10_500), Self.row(2, 2, "GET", "/b", at: 10_600)],
                                      flowStart: Self.start) == [1])
        #expect(ExchangeRowMatch.pair(kept, rows: [Self.row(1, 1, "HEAD", "/b", at: 10_500)], flowStart: Self.start) == [nil])
        // As its turn began (the same clock read) or after, even after its answer's turn began
        // (read in the same wake-up: a re-check's local server); a µs before is another request.
        #expect(ExchangeRowMatch.pair(kept, rows: [Self.row(1, 1, "GET", "/b", at: 10_000)], flowStart: Self.start) == [0])
        #expect(ExchangeRowMatch.pair(kept, rows: [Self.row(1, 1, "GET", "/b", at: 20_215)], flowStart: Self.start) == [0])
        #expect(ExchangeRowMatch.pair(kept, rows: [Self.row(1, 1, "GET", "/b", at: 9_999)], flowStart: Self.start) == [nil])
        // Two rows of /b: the one made before the turn went with a deleted start; the next is it.
        #expect(ExchangeRowMatch.pair(kept, rows: [Self.row(1, 1, "GET", "/b", at: 2_000), Self.row(2, 2, "GET", "/b", at: 10_300)],
                                      flowStart: Self.start) == [1])
        // /b's row is missing: the next request's, of the same target, is not taken for it (that
        // request's later turn began after /b's row would have been made), and pairs itself.
        let two = kept + [HTTPExchange(request: Self.message("GET /b HTTP/1.1", turn: 7, at: 30_000))]
        #expect(ExchangeRowMatch.pair(two, rows: [Self.row(3, 3, "GET", "/b", at: 30_100)], flowStart: Self.start) == [nil, 0])
    }

    @Test("HTTP/2 by stream id: a pushed stream (even) is its row too; a pushed flag that disagrees with the id's parity is no one's")
    func http2Streams() {
        let kept = [HTTPExchange(streamID: 1, request: Self.message("GET /push HTTP/2", turn: 1, at: 0)),
                    HTTPExchange(streamID: 2, request: Self.message("GET /pushed.css HTTP/2", turn: 2, at: 500), pushed: true),
                    HTTPExchange(streamID: 3, request: nil, response: Self.message("HTTP/2 200", turn: 4, at: 900)),
                    HTTPExchange(streamID: 5, request: Self.message("GET /odd HTTP/2", turn: 3, at: 700), pushed: true)]
        let rows = [Self.row(44, 2, "GET", "/pushed.css", at: 500, stream: 2), Self.row(45, 1, "GET", "/push", at: 0, stream: 1),
                    Self.row(46, 3, "GET", "/three", at: 600, stream: 3), Self.row(47, 4, "GET", "/odd", at: 700, stream: 5)]
        #expect(ExchangeRowMatch.pair(kept, rows: rows, flowStart: Self.start) == [1, 0, 2, nil])
        #expect(ExchangeRowMatch.recorded(for: rows[0], in: kept, rows: rows, flowStart: Self.start)?.request?.startLine == "GET /pushed.css HTTP/2")
    }

    @Test("a request line's method and path as a row keeps it: absolute-form without scheme and authority, the query cut, CONNECT and * as they are")
    func requestTargets() {
        #expect(ExchangeRowMatch.requestTarget("GET http://a.test:8080/x/y?q=1 HTTP/1.1") == ("GET", "/x/y"))
        #expect(ExchangeRowMatch.requestTarget("GET http://a.test?q HTTP/1.1") == ("GET", "/"))
        #expect(ExchangeRowMatch.requestTarget("GET http://a.test HTTP/1.1") == ("GET", "/"))
        #expect(ExchangeRowMatch.requestTarget("GET /p#frag HTTP/1.1") == ("GET", "/p"))
        #expect(ExchangeRowMatch.requestTarget("CONNECT a.test:443 HTTP/1.1") == ("CONNECT", "a.test:443"))
        #expect(ExchangeRowMatch.requestTarget("OPTIONS * HTTP/1.1") == ("OPTIONS", "*"))
    }

    /// The HAR of a keep-alive connection whose first exchange went with `tv content delete`:
    /// one entry from kept content carrying the second request's row (its times), one from the
    /// first's row said as deleted (the trial's HAR wrote the second request twice, the first
    /// with the first request's duration).
    @Test("HAR after a deleted start: the kept request carries its own row, the first row is said as deleted, and no kept response is dropped for it")
    func harAfterADelete() throws {
        let turns = [DeletedStartTests.turn(3, up, at: 4_000_000, b("GET /headers?n=h1after HTTP/1.1\r\nHost: a.test\r\n\r\n")),
                     DeletedStartTests.turn(4, down, at: 4_001_000, b("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nafter"))]
        let c = try #require(conversation(turns))
        var first = Self.row(41, 1, "GET", "/headers", at: 1_000, queryRemoved: true)
        first.status = 200
        first.endTime = Self.start + 3_000
        first.state = .complete
        var second = Self.row(42, 2, "GET", "/headers?n=h1after", at: 4_000_020)
        second.status = 200
        second.responseTime = Self.start + 4_001_020
        second.endTime = Self.start + 4_001_520
        second.state = .complete
        var flow = HARFlow(id: 7, startTime: Self.start, scheme: "https", host: "a.test", serverAddress: "192.0.2.1", serverPort: 443, conversation: c)
        flow.deletedStart = c.deletedStart
        flow.pairRows([first, second])
        flow.addRowsLackingRequests([first, second])
        #expect(flow.exchangeRows.map { $0?.id } == [42] && flow.rows.map(\.id) == [41] && flow.conversation.exchanges.count == 1)
        #expect(flow.source(of: first) == .contentDeleted(DeletedStart(firstKeptTurn: 3, firstKeptOffset: 4_000_000)))
        let entry = HARRowEntry.entry(first, flow: flow)
        guard case let .object(fields) = entry, case let .string(comment)? = fields.first(where: { $0.0 == "comment" })?.1 else {
            Issue.record("no comment")
            return
        }
        #expect(comment == "from the exchange row: it was made before what is kept of its connection begins — the start of this connection's kept content was deleted (turns 1–2, by `tv content delete` while the connection was open, or as it expired) — so no headers, cookies or bodies; the query string was not kept, so the URL ends at the path")
        let text = HARExport.text([flow], creatorVersion: "0.1")
        #expect(text.contains("\"url\":\"https://a.test/headers\",") && text.contains("\"url\":\"https://a.test/headers?n=h1after\","), "\(text)")
        #expect(text.hasSuffix("\"comment\":\"2 entries from 1 flow; 1 from exchange rows alone (the start of their connection's kept content was deleted, and with it their own or what reading the rest needs: no headers or bodies)\"}}"), "\(text)")
    }
}
