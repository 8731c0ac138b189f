import FlowStore
import FlowTerms
import HTTPReading
import Recording
import Testing
@testable import TVCore

/// `tv requests`, `tv request ID`, `--curl` and `--log requests` lines, with exact values (issue 16).
@Suite struct RequestPresentationTests {
    /// 2025-12-01 20:13:20 UTC.
    static let start: Int64 = 1_764_620_000_000_000

    static let finished = ExchangeRecord(
        id: 42, flowID: 7, sequence: 3, httpVersion: "HTTP/1.1", method: "GET", scheme: "https", authority: "example.com",
        path: "/a", queryRemoved: true, status: 200, reason: "OK", responseBodyBytes: 1_234, responseWireBytes: 1_245,
        contentType: "text/html", requestTime: start, responseTime: start + 12_000, endTime: start + 35_000, state: .complete)

    /// A trial read request ids 33 and 35 and `tv request 34` said "There is no request 34": a gap
    /// below the largest id is said to be no lost request; past it, as before.
    @Test func noSuchRequestBelowTheLargestIDIsNoLoss() {
        #expect(ContentRefusal.noRequest(34, highest: 57).message
                == "There is no request 34 in this data folder, and that is no sign of a lost one: not every id up to the largest (57) names a request (tv before this version skipped one after each request whose row changed as it streamed, and old requests go with their flows); `tv requests` lists the ones there are.")
        for (id, highest) in [(Int64(58), Int64?(57)), (57, 57), (3, nil), (1, 0)] {
            #expect(ContentRefusal.noRequest(id, highest: highest).message
                    == "There is no request \(id) in this data folder; `tv requests` lists the ones there are.")
        }
    }

    @Test func urlStatusAndLogLine() {
        let e = Self.finished
        #expect(RequestListPresentation.url(e) == "https://example.com/a?…")
        #expect(RequestListPresentation.logLine(e) == "20:13:20.035 GET https://example.com/a?… 200 1.2 KiB 35 ms")
        var open = e
        open.status = nil
        open.endTime = nil
        open.state = .open
        #expect(RequestListPresentation.status(open) == "—")
        #expect(RequestListPresentation.duration(open) == "open")
        var cut = open
        cut.state = .incomplete
        #expect(RequestListPresentation.status(cut) == "incomplete")
        // A response whose end never came (an aborted download) is not a plain 200 (a trial).
        var aborted = e
        aborted.state = .incomplete
        #expect(RequestListPresentation.status(aborted) == "200 incomplete")
        #expect(RequestListPresentation.status(e) == "200")
        // tv refused it and never sent it, and the connection ended before its answer (it said
        // "incomplete", as of requests that went on: the hostile-input trial).
        var refused = open
        refused.state = .answered
        #expect(RequestListPresentation.status(refused) == "refused by tv")
        refused.status = 400
        #expect(RequestListPresentation.status(refused) == "400 by tv")
        let connect = ExchangeRecord(flowID: 1, sequence: 1, httpVersion: "HTTP/1.1", method: "CONNECT", scheme: "https",
                                     authority: "example.com:443", path: "example.com:443", requestTime: 0, connect: true)
        #expect(RequestListPresentation.url(connect) == "example.com:443")
    }

    @Test func listLinesAndEscapes() {
        var hostile = Self.finished
        hostile.id = 43
        hostile.path = "/x\u{1b}[2J"
        hostile.queryRemoved = false
        let lines = RequestListPresentation(page: ExchangePage(exchanges: [Self.finished], nextCursor: "abc")).lines()
        #expect(lines.count == 3)
        #expect(lines[0] == "ID  TIME (UTC)      METHOD  HOST         PATH  STATUS  SIZES (REQ → RESP)  DURATION  TYPE")
        #expect(lines[1] == "42  12-01 20:13:20  GET     example.com  /a?…  200          0 B → 1.2 KiB     35 ms  text/html")
        #expect(lines[2] == "More: tv requests --after abc")
        // The shared store's rows say their instance (MACHINE/PREFIX when a name is shared).
        var other = Self.finished
        other.id = 44
        var third = Self.finished
        third.id = 45
        var shared = ExchangePage(exchanges: [Self.finished, other, third], nextCursor: nil)
        shared.instances = [42: InstanceIdentity(id: "24c26974-ee29", machine: "vm"), 44: InstanceIdentity(id: "489d3e49-aa", machine: "vm"),
                            45: InstanceIdentity(id: "0badcafe-11", machine: "lab")]
        #expect(RequestListPresentation(page: shared).lines() == [
            "ID  INSTANCE     TIME (UTC)      METHOD  HOST         PATH  STATUS  SIZES (REQ → RESP)  DURATION  TYPE",
            "42  vm/24c26974  12-01 20:13:20  GET     example.com  /a?…  200          0 B → 1.2 KiB     35 ms  text/html",
            "44  vm/489d3e49  12-01 20:13:20  GET     example.com  /a?…  200          0 B → 1.2 KiB     35 ms  text/html",
            "45  lab          12-01 20:13:20  GET     example.com  /a?…  200          0 B → 1.2 KiB     35 ms  text/html",
        ])
        #expect(!RequestListPresentation(page: ExchangePage(exchanges: [hostile], nextCursor: nil)).lines().joined().contains("\u{1b}"))
        #expect(RequestListPresentation(page: ExchangePage(exchanges: [], nextCursor: nil)).lines()
                == ["No HTTP requests are recorded yet. They are read from inspected connections (`tv inspect on`) and plain HTTP through the proxy while `tv run` runs."])
        // Narrowed, an empty list does not say that nothing is recorded.
        let empty = ExchangePage(exchanges: [], nextCursor: nil)
        #expect(RequestListPresentation(page: empty, flow: 7).lines()
                == ["Flow 7 has no HTTP requests recorded; they are read from inspected connections (`tv inspect on`) and plain HTTP through the proxy."])
        #expect(RequestListPresentation(page: empty, flow: 7, windowed: true).lines() == ["Flow 7 has no HTTP requests recorded in this stretch of time."])
        #expect(RequestListPresentation(page: empty, windowed: true).lines()
                == ["No HTTP requests are recorded in this stretch of time; `tv requests` without --since, --from and --to lists every one kept."])
    }

    @Test func detailFacts() {
        #expect(RequestDetailPresentation(exchange: Self.finished, recorded: nil).factLines() == [
            "Request 42 — GET https://example.com/a?…",
            "  flow 7, exchange 3 of it, HTTP/1.1",
            "  status 200 OK — complete",
            "  request body 0 B",
            "  response body 1.2 KiB (1,234 B; 1,245 B as sent), text/html",
            "  started 2025-12-01 20:13:20.000 UTC; first response byte after 12 ms; ended after 35 ms",
            "  the query string was not kept (content keeping was off, or the content has expired or was deleted)",
        ])
        // An upload that took 8 ms to send: said (HAR's send too).
        var uploaded = Self.finished
        uploaded.requestEndTime = uploaded.requestTime + 8_000
        #expect(RequestDetailPresentation(exchange: uploaded, recorded: nil).factLines()[5]
                == "  started 2025-12-01 20:13:20.000 UTC; request sent in 8 ms; first response byte after 12 ms; ended after 35 ms")
        #expect(RequestListPresentation.json(uploaded).serialized().contains(#""requestEndTime":1764620000008000"#))
        var lines: [String] = []
        RequestDetailPresentation(exchange: Self.finished, recorded: nil).write(reader: BoundedBodyReader()) { lines.append($0) }
        #expect(lines.last == RequestDetailPresentation.noneKept + " " + RequestDetailPresentation.keptWithoutContent)
        // Content was kept for the flow, this request is not in it: said so, not "without
        // content keeping" (a trial's content.keep was on all along).
        var kept = RequestDetailPresentation(exchange: Self.finished, recorded: nil)
        kept.flowContentKept = true
        var budget: [String] = []
        kept.write(reader: BoundedBodyReader()) { budget.append($0) }
        #expect(budget.last == "This request is not in the content kept of its connection (the facts above are its row's): it came after what is kept: the flow's recording budget ran out before it, or content keeping was switched off. `tv turns 7` shows every byte that was kept.")
        // The server's side stopped earlier (turn 2), but a request missing is the client's side's.
        kept.stoppedReading = [HTTPConversation.ReadingProblem(direction: .serverToClient, turn: 2, reason: "The recording budget stopped this side in turn 2; nothing after it was recorded."),
                               HTTPConversation.ReadingProblem(direction: .clientToServer, turn: 3, reason: "The recording budget stopped this side in turn 3; nothing after it was recorded.")]
        var stopped: [String] = []
        kept.write(reader: BoundedBodyReader()) { stopped.append($0) }
        #expect(stopped.last == "This request is not in the content kept of its connection (the facts above are its row's): reading the connection's kept turns as HTTP stopped before it, at turn 3 from the client: The recording budget stopped this side in turn 3; nothing after it was recorded. `tv turns 7` shows every byte that was kept.")
    }

    @Test func curlWithoutAndWithContent() {
        let bare = CurlCommand(Self.finished, request: nil)
        #expect(bare.command == "curl --http1.1 https://example.com/a")
        // A row without an authority (a request tv refused before its Host) goes where its
        // connection went (it read https://localhost/…: a re-check).
        var refused = Self.finished
        refused.authority = nil
        #expect(CurlCommand(refused, request: nil, fallbackAuthority: "localhost:21501").command == "curl --http1.1 https://localhost:21501/a")
        #expect(CurlCommand(refused, request: nil).command == "curl --http1.1 https://localhost/a")
        refused.state = .answered
        #expect(CurlCommand(refused, request: nil, flowContentKept: true).note
                == "tv answered this request itself (`tv request 42` says why) and did not read it out of kept turns (`tv turns 7` shows its bytes), so this command sends the method and URL only.")
        // With no turn of its flow kept, not blamed on content keeping (a trial's 502 was).
        #expect(CurlCommand(refused, request: nil).note
                == "tv answered this request itself (`tv request 42` says why) and did not read it out of kept turns, so this command sends the method and URL only.")
        #expect(bare.note == "Its headers, query string and body were not kept (content keeping was off, or the content has expired or was deleted), so this command sends the method and URL only.")
        #expect(CurlCommand(Self.finished, request: nil, flowContentKept: true).note
                == "Its headers, query string and body were not kept: this request is not in the content kept of its connection (its recording budget ran out first, or content keeping was switched off); so this command sends the method and URL only.")
        // Made before the deleted start of what is kept: said as deleted (a trial's said the budget).
        let deleted = RequestContentAbsence.madeBeforeDeletedStart(DeletedStart(firstKeptTurn: 3, firstKeptOffset: 4_000_000))
        #expect(CurlCommand(Self.finished, request: nil, absence: deleted).note
                == "Its headers, query string and body were not kept: this request is not in the content kept of its connection (it was made before what is kept begins: that part was deleted); so this command sends the method and URL only.")
        #expect(CurlCommand(Self.finished, request: nil, absence: .noneKept).note == bare.note)
        // Kept but not readable (HTTP/2 after a deleted start): not "were not kept".
        #expect(CurlCommand(Self.finished, request: nil, absence: .startDeleted(DeletedStart(firstKeptTurn: 3, firstKeptOffset: 0), http2: true)).note
                == "Its headers and body are kept but cannot be read: the start of what was kept was deleted, so its HTTP/2 cannot be read from the middle; so this command sends the method and URL only.")
        var post = Self.finished
        post.method = "POST"
        let request = HTTPMessage(
            startLine: "POST /p?q=1 HTTP/1.1",
            headers: [HTTPHeader("Host", "example.com"), HTTPHeader("Content-Type", "application/x-www-form-urlencoded"),
                      HTTPHeader("Content-Length", "3"), HTTPHeader("X-A", "it's")],
            body: HTTPBody(framing: "content-length", transferred: Array("a=1".utf8)), turn: 1, offset: 0)
        let curl = CurlCommand(post, request: request)
        #expect(curl.command == "curl --http1.1 'https://example.com/p?q=1' -H 'Content-Type: application/x-www-form-urlencoded' -H 'X-A: it'\\''s' -H User-Agent: -H Accept: --data-raw a=1")
        #expect(curl.note == nil)
        #expect(CurlCommand.methodWords("HEAD", withBody: false) == ["-I"])
        #expect(CurlCommand.methodWords("PUT", withBody: true) == ["-X", "PUT"])
        #expect(CurlCommand.methodWords("POST", withBody: true) == [])
        #expect(CurlCommand.methodWords("GET", withBody: false) == [])
        #expect(CurlCommand.methodWords("DELETE", withBody: false) == ["-X", "DELETE"])
        // A body left out (binary, or cut) still says the method: curl would send a GET.
        let binary = HTTPMessage(
            startLine: "POST /echo HTTP/1.1",
            headers: [HTTPHeader("Host", "example.com"), HTTPHeader("Content-Type", "application/octet-stream")],
            body: HTTPBody(framing: "content-length", transferred: [0x00, 0xFF, 0x10]), turn: 1, offset: 0)
        let left = CurlCommand(post, request: binary)
        #expect(left.command == "curl --http1.1 -X POST https://example.com/echo -H 'Content-Type: application/octet-stream' -H User-Agent: -H Accept:")
        #expect(left.note == "The request body (3 bytes) is binary, so it is left out.")
        // A body the budget cut is said with its size as sent (the row's), not what was kept.
        var big = post
        big.requestBodyBytes = 1_048_576
        let cut = HTTPMessage(startLine: "POST /up HTTP/1.1", headers: [HTTPHeader("Host", "example.com")],
                              body: HTTPBody(framing: "content-length", transferred: Array(repeating: 0x61, count: 65_536),
                                             completeness: .cutByBudget(kept: 65_536, expected: 1_048_576)), turn: 1, offset: 0)
        #expect(CurlCommand(big, request: cut).note == "The request body (1,048,576 bytes, 65,536 of them kept) was not kept whole, so it is left out.")
        // HTTP/2 in clear is prior knowledge; over TLS, --http2.
        var h2c = Self.finished
        h2c.httpVersion = "HTTP/2"
        h2c.scheme = "http"
        #expect(CurlCommand(h2c, request: nil).command.hasPrefix("curl --http2-prior-knowledge http://"))
        h2c.scheme = "https"
        #expect(CurlCommand(h2c, request: nil).command.hasPrefix("curl --http2 https://"))
        // HTTP/1.1 in clear is curl's own default; a WebSocket handshake keeps Upgrade and
        // Connection (left out, the replay was a plain GET over h2: a trial).
        var plain = Self.finished
        plain.scheme = "http"
        #expect(CurlCommand(plain, request: nil).command == "curl http://example.com/a")
        let ws = HTTPMessage(startLine: "GET /ws HTTP/1.1",
                             headers: [HTTPHeader("Host", "example.com"), HTTPHeader("Upgrade", "websocket"), HTTPHeader("Connection", "Upgrade"),
                                       HTTPHeader("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), HTTPHeader("Sec-WebSocket-Version", "13")],
                             body: HTTPBody(framing: "none"), turn: 1, offset: 0)
        #expect(CurlCommand(Self.finished, request: ws).command
                == "curl --http1.1 https://example.com/ws -H 'Upgrade: websocket' -H 'Connection: Upgrade' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' -H 'Sec-WebSocket-Version: 13' -H User-Agent: -H Accept:")
    }

    /// A body holding a C1 control in valid UTF-8 is text for `tv request` and for its `--json`
    /// (which tv web draws) alike, the control escaped: a JSON body holding U+0080 was text on the
    /// terminal and a hex dump on the web (a trial). One rule decides both: `PrintableText`.
    @Test func aC1ControlInABodyIsTextInTheTerminalAndInJSON() {
        func exchange(_ type: String, _ body: String) -> HTTPExchange {
            HTTPExchange(request: HTTPMessage(startLine: "GET /a HTTP/1.1", headers: [HTTPHeader("Host", "example.com")], body: HTTPBody(framing: "none"),
                                              turn: 1, offset: 0),
                         response: HTTPMessage(startLine: "HTTP/1.1 200 OK", headers: [HTTPHeader("Content-Type", type), HTTPHeader("Content-Length", "\(body.utf8.count)")],
                                               body: HTTPBody(framing: "content-length", transferred: Array(body.utf8)), turn: 2, offset: 100))
        }
        func shown(_ recorded: HTTPExchange) -> (lines: [String], json: String) {
            var lines: [String] = []
            RequestDetailPresentation(exchange: Self.finished, recorded: recorded).write(reader: BoundedBodyReader()) { lines.append($0) }
            var json = ""
            RequestDetailPresentation(exchange: Self.finished, recorded: recorded).writeJSON(reader: BoundedBodyReader()) { json += $0 }
            return (lines, json)
        }
        let json = shown(exchange("application/json", "{\"name\":\"a\u{80}b\"}"))
        // The JSON view writes it as JSON's escape of the same character (JSONIndentation).
        #expect(Array(json.lines.suffix(4)) == ["    body: 15 bytes of JSON", "      {", #"        "name": "a\u0080b""#, "      }"], "\(json.lines)")
        #expect(json.json.contains(#""text": "{\"name\":\"a\u0080b\"}""#) && !json.json.contains("base64"), "\(json.json)")
        let plain = shown(exchange("text/plain", "next\u{85}line\n"))
        #expect(plain.lines.last == #"      next\u{85}line"#, "\(plain.lines)")
        #expect(plain.json.contains(#""text": "next\u0085line\n""#) && !plain.json.contains("base64"), "\(plain.json)")
        // A C0 control other than tab, CR and LF is still binary: hex in both.
        let binary = shown(exchange("application/json", "{\"name\":\"a\u{1}b\"}"))
        #expect(binary.lines.contains { $0.hasPrefix("      00000000  7b 22 6e 61 6d 65 22 3a") } && binary.json.contains(#""base64": "#), "\(binary.lines)")
    }

    @Test func jsonIndentation() {
        #expect(JSONIndentation.lines(Array(#"{"a":[1,{"b":"x,y:\"z\""}],"c":{}}"#.utf8)) == [
            "{", "  \"a\": [", "    1,", "    {", "      \"b\": \"x,y:\\\"z\\\"\"", "    }", "  ],", "  \"c\": {}", "}",
        ])
        #expect(JSONIndentation.lines(Array("not json".utf8)) == nil)
        #expect(JSONIndentation.lines(Array("{\"a\":".utf8)) == nil)
    }

    /// The pairing itself is `ExchangeRowMatch`'s (HTTPReadingTests); here the command's use of
    /// it: a pushed stream is its row's (it was skipped, and `tv request` said the pushed
    /// response was not kept: a trial).
    @Test("tv request's kept exchange: HTTP/1 by its request's time and target, HTTP/2 by stream, pushed streams too")
    func matchingTheRecordedExchange() {
        let message = { (line: String, offset: Int64) in HTTPMessage(startLine: line, headers: [], body: HTTPBody(framing: "none"), turn: 1, offset: offset) }
        let h1 = [HTTPExchange(request: nil, response: message("HTTP/1.1 400 Bad", 0)),
                  HTTPExchange(request: message("GET /a HTTP/1.1", 0)), HTTPExchange(request: message("GET /a HTTP/1.1", 20_000))]
        var first = Self.finished, second = Self.finished
        first.sequence = 1
        first.id = 1
        second.sequence = 2
        second.requestTime = Self.start + 20_000
        #expect(ExchangeRowMatch.recorded(for: second, in: h1, rows: [first, second], flowStart: Self.start)?.request?.offset == 20_000)
        #expect(ExchangeRowMatch.recorded(for: first, in: h1, rows: [first, second], flowStart: Self.start)?.request?.offset == 0)
        let h2 = [HTTPExchange(streamID: 2, request: message("GET /pushed HTTP/2", 0), pushed: true),
                  HTTPExchange(streamID: 3, request: message("GET /three HTTP/2", 0))]
        var pushed = Self.finished
        pushed.streamID = 2
        #expect(ExchangeRowMatch.recorded(for: pushed, in: h2, rows: [pushed], flowStart: Self.start)?.request?.startLine == "GET /pushed HTTP/2")
        pushed.streamID = 5
        #expect(ExchangeRowMatch.recorded(for: pushed, in: h2, rows: [pushed], flowStart: Self.start) == nil)
    }

    @Test("a response missing because reading stopped says why, not that none was recorded (a trial's whole 200 read as none)")
    func missingResponseSaysWhyReadingStopped() throws {
        func turn(_ n: Int, _ direction: Direction, _ text: String) -> RecordedTurn {
            RecordedTurn(turn: Turn(number: n, direction: direction, startOffset: Int64(n) * 1_000, keptBytes: text.utf8.count, seenBytes: text.utf8.count),
                         bytes: Array(text.utf8))
        }
        let turns = [turn(1, .clientToServer, "GET /dupcl HTTP/1.1\r\nHost: a.test\r\n\r\n"),
                     turn(2, .serverToClient, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nhello")]
        guard case let .conversation(conversation) = HTTPReader.read(turns) else { Issue.record("not read as HTTP"); return }
        let problem = try #require(conversation.problems.first)
        var exchange = Self.finished
        exchange.status = nil
        exchange.sequence = 1
        exchange.path = "/dupcl"
        let recorded = ExchangeRowMatch.recorded(for: exchange, in: conversation.exchanges, rows: [exchange], flowStart: exchange.requestTime - 1_000)
        #expect(recorded?.request != nil && recorded?.response == nil)
        var lines: [String] = []
        // The client's side stopped first (turn 1), but a response missing is the server's side's.
        let clientStop = HTTPConversation.ReadingProblem(direction: .clientToServer, turn: 1, reason: "The recording budget stopped this side in turn 1.")
        RequestDetailPresentation(exchange: exchange, recorded: recorded, stoppedReading: [clientStop, problem]).write(reader: BoundedBodyReader()) { lines.append($0) }
        #expect(lines.last == "  (no response was read: reading this connection as HTTP stopped at turn 2 from the server: \(problem.reason) `tv turns 7` shows every byte that was kept.)", "\(lines)")
        var without: [String] = []
        RequestDetailPresentation(exchange: exchange, recorded: recorded).write(reader: BoundedBodyReader()) { without.append($0) }
        #expect(without.last == "  (no response was recorded)")
        // The row read a response (status 200) the kept turns lack.
        exchange.status = 200
        var past: [String] = []
        RequestDetailPresentation(exchange: exchange, recorded: recorded).write(reader: BoundedBodyReader()) { past.append($0) }
        #expect(past.last == "  (the response, status 200, was not kept: its direction's recording budget ran out before it, or what was kept of it expired or was deleted; the status and sizes above are its row's)")
        // tv's own answer is never in the kept turns (a re-check read the budget blamed for it).
        exchange.status = 400
        exchange.state = .answered
        var own: [String] = []
        RequestDetailPresentation(exchange: exchange, recorded: recorded, stoppedReading: [problem]).write(reader: BoundedBodyReader()) { own.append($0) }
        #expect(own.last == "  (the response, status 400, was tv's own answer, which is not kept with what the client and server said; the flow's error says why tv answered)")
        // The same as one sentence in `--json` (`responseAbsence`), which the web view draws.
        #expect(RequestDetailPresentation(exchange: exchange, recorded: recorded).responseAbsence
                == "The response, status 400, was tv's own answer, which is not kept with what the client and server said; the flow's error says why tv answered.")
        // A response still coming: said so, not blamed on a budget (a trial's streaming one).
        exchange.state = .open
        exchange.status = 200
        #expect(RequestDetailPresentation(exchange: exchange, recorded: recorded).responseAbsence
                == "The response has not ended yet; what is kept of it is shown once it has.")
        #expect(RequestDetailPresentation(exchange: exchange, recorded: nil).responseAbsence == nil)
    }
}
