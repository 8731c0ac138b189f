import FlowStore
import Foundation
import Recording
import Testing
import FlowTerms

/// `--filter` on `tv flows` and `tv export har`, and the HAR export's selection (ranges,
/// `--all`, `--since`, `--from/--to`) through the real binary, over a data folder written by
/// the real writers: exact ids and entries selected, and each error's sentence.
@Suite("CLI: filters and the HAR selection", .serialized, .timeLimit(.minutes(5)))
struct FilterCLITests {
    /// Microseconds since the epoch when the flows were seeded.
    static let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
    static let hour: Int64 = 3_600_000_000

    /// Six flows: 1 a.test (3 days ago; GET /one → 200), 2 api.test (2 days ago; POST /items →
    /// 404 JSON, then GET /items/2 → 200), 3 api.test (2 h ago; DELETE /items/3 → 500), all three
    /// inspected with content kept; 4 b.test encrypted (30 min ago); 5 UDP to [2001:db8::1]:443
    /// without a name (10 min ago); 6 api.test failed, from 10.0.0.7 (5 min ago).
    func seed(_ s: Sandbox) throws {
        try FileManager.default.createDirectory(atPath: s.dataDir, withIntermediateDirectories: true)
        let store = try FlowStore(path: s.dataDir + "/tunnelvision.sqlite3")
        let writer = try store.makeWriter()
        let now = Self.now, hour = Self.hour
        let flows: [FlowRecord] = [
            FlowRecord(startTime: now - 72 * hour, clientAddress: "127.0.0.1", clientPort: 50_001, serverAddress: "192.0.2.1",
                       serverPort: 443, host: "a.test", hostOrigin: .sni, status: .inspected),
            FlowRecord(startTime: now - 48 * hour, clientAddress: "127.0.0.1", clientPort: 50_002, serverAddress: "192.0.2.2",
                       serverPort: 443, host: "api.test", hostOrigin: .sni, status: .inspected),
            FlowRecord(startTime: now - 2 * hour, clientAddress: "127.0.0.1", clientPort: 50_003, serverAddress: "192.0.2.2",
                       serverPort: 443, host: "api.test", hostOrigin: .sni, status: .inspected),
            FlowRecord(startTime: now - hour / 2, clientAddress: "127.0.0.1", clientPort: 50_004, serverAddress: "192.0.2.3",
                       serverPort: 443, host: "b.test", hostOrigin: .sni, status: .encrypted),
            FlowRecord(startTime: now - hour / 6, clientAddress: "::1", clientPort: 50_005, serverAddress: "2001:db8::1",
                       serverPort: 443, transport: .udp, status: .encrypted),
            FlowRecord(startTime: now - hour / 12, clientAddress: "10.0.0.7", clientPort: 50_006, serverAddress: "192.0.2.2",
                       serverPort: 443, host: "api.test", hostOrigin: .sni, status: .failed, failureReason: "connection refused"),
        ]
        for flow in flows { writer.open(flow) }
        writer.close()
        store.close()

        var configuration = ContentWriterConfiguration(databasePath: s.dataDir + "/tunnelvision.sqlite3", directory: s.dataDir + "/content")
        configuration.sweepInterval = 3_600
        let session = ContentRecorder(writer: try ContentWriter(configuration), policy: ContentPolicy(keep: true))
        let turns: [Int64: [(Direction, String)]] = [
            1: [(.clientToServer, "GET /one HTTP/1.1\r\nHost: a.test\r\n\r\n"),
                (.serverToClient, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello")],
            2: [(.clientToServer, "POST /items HTTP/1.1\r\nHost: api.test\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"x\":1}"),
                (.serverToClient, "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 19\r\n\r\n{\"error\":\"missing\"}"),
                (.clientToServer, "GET /items/2 HTTP/1.1\r\nHost: api.test\r\n\r\n"),
                (.serverToClient, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")],
            3: [(.clientToServer, "DELETE /items/3 HTTP/1.1\r\nHost: api.test\r\n\r\n"),
                (.serverToClient, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n")],
        ]
        for (id, list) in turns.sorted(by: { $0.key < $1.key }) {
            let recorder = try #require(session.recorder(flow: id))
            for (i, (direction, text)) in list.enumerated() { recorder.record(direction, at: Int64(i) * 1_000, Array(text.utf8)) }
            recorder.finish()
        }
        session.writer.close()
    }

    /// `seed`, then flow 7 (plain HTTP to plain.test, 1 min ago, nothing kept) and the exchange
    /// rows of flows 1, 2, 3 and 7: 1 GET a.test/one 200 text/html; 2 POST api.test/items 404
    /// application/json; 3 GET api.test/items/2 200; 4 DELETE api.test/items/3 500; 5 GET
    /// plain.test/nokeep with no response (incomplete), its query not kept.
    func seedRequests(_ s: Sandbox) throws {
        try seed(s)
        let store = try FlowStore(path: s.dataDir + "/tunnelvision.sqlite3")
        let writer = try store.makeWriter()
        let plain = writer.open(FlowRecord(startTime: Self.now - Self.hour / 60, clientAddress: "127.0.0.1", clientPort: 50_007,
                                           serverAddress: "192.0.2.4", serverPort: 80, host: "plain.test", hostOrigin: .connect,
                                           status: .notEncrypted))
        #expect(plain.id == 7)
        let starts = try [1, 2, 3].map { try #require(try store.flow(id: $0)).startTime }
        let rows: [ExchangeRecord] = [
            ExchangeRecord(flowID: 1, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "https", authority: "a.test", path: "/one",
                           status: 200, contentType: "text/html", requestTime: starts[0], endTime: starts[0] + 1_000, state: .complete),
            ExchangeRecord(flowID: 2, sequence: 1, httpVersion: "HTTP/1.1", method: "POST", scheme: "https", authority: "api.test", path: "/items",
                           status: 404, contentType: "application/json", requestTime: starts[1], endTime: starts[1] + 1_000, state: .complete),
            ExchangeRecord(flowID: 2, sequence: 2, httpVersion: "HTTP/1.1", method: "GET", scheme: "https", authority: "api.test", path: "/items/2",
                           status: 200, requestTime: starts[1] + 2_000, endTime: starts[1] + 3_000, state: .complete),
            ExchangeRecord(flowID: 3, sequence: 1, httpVersion: "HTTP/1.1", method: "DELETE", scheme: "https", authority: "api.test", path: "/items/3",
                           status: 500, requestTime: starts[2], endTime: starts[2] + 1_000, state: .complete),
            ExchangeRecord(flowID: 7, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "http", authority: "plain.test", path: "/nokeep",
                           queryRemoved: true, requestTime: plain.startTime, endTime: plain.startTime + 1_000, state: .incomplete),
        ]
        for row in rows { writer.enqueue(.exchange(row)) }
        writer.close()
        store.close()
    }

    /// The ids `tv requests --json ARGS` lists, in order.
    func requestIDs(_ s: Sandbox, _ arguments: [String], err: String = "") throws -> [Int64] {
        let result = try s.tvArgs(["requests", "--json"] + arguments)
        #expect(result.status == 0, "\(result)")
        #expect(result.err == err, "\(arguments)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        return try #require(json["requests"] as? [[String: Any]]).compactMap { ($0["id"] as? NSNumber)?.int64Value }
    }

    @Test("tv requests --filter: method, URL, status, type, no response, addresses; ~h and ~b from kept content, said once where none was kept")
    func requestsFilter() throws {
        try withSandbox { s in
            try seedRequests(s)
            #expect(try requestIDs(s, []) == [5, 4, 3, 2, 1])
            #expect(try requestIDs(s, ["--filter", "~d api"]) == [4, 3, 2])
            #expect(try requestIDs(s, ["--filter", "~c 404"]) == [2])
            #expect(try requestIDs(s, ["--filter", "~m get"]) == [5, 3, 1])
            #expect(try requestIDs(s, ["--filter", "~q"]) == [5])
            #expect(try requestIDs(s, ["--filter", "~s & !~c 200"]) == [4, 2])
            #expect(try requestIDs(s, ["--filter", "~e"]) == [5])
            #expect(try requestIDs(s, ["--filter", "~u '^https://api\\.test/items/\\d'"]) == [4, 3])
            #expect(try requestIDs(s, ["--filter", "nokeep"]) == [5])
            #expect(try requestIDs(s, ["--filter", "~t html"]) == [1])
            #expect(try requestIDs(s, ["--filter", "~dst :80$"]) == [5])
            #expect(try requestIDs(s, ["--filter", "~d plain | ~c 500", "--since", "1d"]) == [5, 4])
            let noHeaders = "tv: ~h looks in kept headers and bodies, which 1 of the 5 requests checked do not have (no content was kept for them: content.keep was off, their flow's recording budget had run out, tv answered them itself, or what was kept expired or was deleted), so it matched none of those.\n"
            #expect(try requestIDs(s, ["--filter", "~h 'content-type: application/json'"], err: noHeaders) == [2])
            let noBodies = "tv: ~b looks in kept headers and bodies, which 1 of the 5 requests checked do not have (no content was kept for them: content.keep was off, their flow's recording budget had run out, tv answered them itself, or what was kept expired or was deleted), so it matched none of those.\n"
            #expect(try requestIDs(s, ["--filter", "~b missing"], err: noBodies) == [2])
            #expect(try requestIDs(s, ["--filter", "~tq json"], err: "tv: ~tq looks in kept headers and bodies, which 1 of the 5 requests checked do not have (no content was kept for them: content.keep was off, their flow's recording budget had run out, tv answered them itself, or what was kept expired or was deleted), so it matched none of those.\n") == [2])
            // ~m decides first for the rows that are not POSTs, so ~b is asked only of request 2.
            #expect(try requestIDs(s, ["--filter", "~m post & ~bq x"]) == [2])
        }
    }

    @Test("tv requests --filter: keyset pages, the hint repeats the filter; nothing matching says so; a mistake names its column")
    func requestsFilterPagesAndMistakes() throws {
        try withSandbox { s in
            try seedRequests(s)
            let first = try s.tv("requests", "--filter", "~d api", "--limit", "2")
            #expect(first.status == 0, "\(first)")
            let more = try #require(first.out.split(separator: "\n").last.map(String.init))
            #expect(more.hasPrefix("More: tv requests --data-dir \(s.dataDir) --filter '~d api' --limit 2 --after "), "\(more)")
            let cursor = String(try #require(more.split(separator: " ").last))
            #expect(try requestIDs(s, ["--filter", "~d api", "--limit", "2"]) == [4, 3])
            #expect(try requestIDs(s, ["--filter", "~d api", "--limit", "2", "--after", cursor]) == [2])
            let none = try s.tv("requests", "--filter", "~c 302")
            #expect(none.status == 0)
            #expect(none.out == "No requests match --filter '~c 302'.\n")
            let mistake = try s.tv("requests", "--filter", "~c x")
            #expect(mistake.status == 2)
            #expect(mistake.err == "tv: 'x' at column 4 is not a status code; '~c' takes a number such as 404.\n")
        }
    }

    /// 40 `a`s and a `b`: `(a+)+$` tries 2^40 ways to split the run before failing at the `b`.
    static let backtracking = String(repeating: "a", count: 40) + "b"

    /// `seedRequests`, then flow 8 (1 s ago, plain HTTP to `Self.backtracking`.test) whose one
    /// request (id 6) got a response body of `Self.backtracking`, kept.
    func seedBacktracking(_ s: Sandbox) throws {
        try seedRequests(s)
        let store = try FlowStore(path: s.dataDir + "/tunnelvision.sqlite3")
        let writer = try store.makeWriter()
        let flow = writer.open(FlowRecord(startTime: Self.now - 1_000_000, clientAddress: "127.0.0.1", clientPort: 50_008,
                                          serverAddress: "192.0.2.5", serverPort: 80, host: Self.backtracking + ".test", hostOrigin: .connect,
                                          status: .notEncrypted))
        #expect(flow.id == 8)
        writer.enqueue(.exchange(ExchangeRecord(flowID: 8, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "http",
                                                authority: Self.backtracking + ".test", path: "/", status: 200, requestTime: flow.startTime,
                                                endTime: flow.startTime + 1_000, state: .complete)))
        writer.close()
        store.close()
        var configuration = ContentWriterConfiguration(databasePath: s.dataDir + "/tunnelvision.sqlite3", directory: s.dataDir + "/content")
        configuration.sweepInterval = 3_600
        let session = ContentRecorder(writer: try ContentWriter(configuration), policy: ContentPolicy(keep: true))
        let recorder = try #require(session.recorder(flow: 8))
        recorder.record(.clientToServer, at: 0, Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        recorder.record(.serverToClient, at: 1_000, Array("HTTP/1.1 200 OK\r\nContent-Length: 41\r\n\r\n\(Self.backtracking)".utf8))
        recorder.finish()
        session.writer.close()
    }

    @Test("--time-limit: a regex that backtracks is cut; the page says how far it looked, and the next page goes on after the cut row")
    func timeLimitCutsABacktrackingSearch() throws {
        try withSandbox { s in
            try seedBacktracking(s)
            func page(_ command: String, _ arguments: [String]) throws -> [String: Any] {
                let result = try s.tvArgs([command, "--json"] + arguments)
                #expect(result.status == 0, "\(result)")
                return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
            }
            // Requests: request 6's body is cut; nothing else was looked at.
            let first = try page("requests", ["--filter", "~bs '(a+)+$'", "--time-limit", "1s"])
            #expect((first["requests"] as? [Any])?.isEmpty == true)
            let stopped = try #require(first["stopped"] as? [String: Any])
            #expect(stopped["cut"] as? Int == 6)
            #expect(stopped["looked"] as? Int == 1)
            #expect(stopped["matched"] as? Int == 0)
            #expect(stopped["limitSeconds"] as? Double == 1)
            #expect(stopped["sentence"] as? String == "The filter stopped looking after 1 s (its time limit): 1 request looked at, 0 matched; the next page goes on from there. The search in request 6 ran out of time, so it is not shown: its regex backtracks or its texts are long; `tv request 6` shows it.")
            let cursor = try #require(first["nextCursor"] as? String)
            // The next page goes on after request 6, to the end: no stop, no cursor.
            let next = try page("requests", ["--filter", "~bs '(a+)+$'", "--time-limit", "1s", "--after", cursor])
            #expect((next["requests"] as? [Any])?.isEmpty == true)
            #expect(next["stopped"] is NSNull)
            #expect(next["nextCursor"] is NSNull)
            #expect((next["notice"] as? String)?.hasPrefix("~bs looks in kept headers and bodies, which 1 of the 5 requests checked") == true, "\(next)")
            // A filter answered in time: no stop, the same rows as without a limit.
            #expect(try requestIDs(s, ["--filter", "~d api", "--time-limit", "1s"]) == [4, 3, 2])
            // In the terminal: the sentence on stderr, and the More line carries the limit.
            let text = try s.tv("requests", "--filter", "~bs '(a+)+$'", "--time-limit", "1s")
            #expect(text.status == 0, "\(text)")
            #expect(text.err.contains("tv: The filter stopped looking after 1 s (its time limit): 1 request looked at"), "\(text.err)")
            #expect(text.out.contains("--time-limit 1s --after "), "\(text.out)")

            // Flows: flow 8's host is cut the same way; the next page holds the rest.
            let flows = try page("flows", ["--filter", "~d '(a+)+$'", "--time-limit", "1s"])
            #expect((flows["flows"] as? [Any])?.isEmpty == true)
            #expect((flows["stopped"] as? [String: Any])?["cut"] as? Int == 8)
            let flowCursor = try #require(flows["nextCursor"] as? String)
            #expect(try flowIDs(s, ["--filter", "~d '(a+)+$' | ~d api", "--time-limit", "5s", "--after", flowCursor]) == [6, 3, 2])
            // A span that is not one is refused.
            let bad = try s.tv("flows", "--filter", "~d api", "--time-limit", "soon")
            #expect(bad.status == 2, "\(bad)")
        }
    }

    /// The ids `tv flows --json ARGS` lists, in order.
    func flowIDs(_ s: Sandbox, _ arguments: [String]) throws -> [Int64] {
        let result = try s.tvArgs(["flows", "--json"] + arguments)
        #expect(result.status == 0, "\(result)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        return try #require(json["flows"] as? [[String: Any]]).compactMap { ($0["id"] as? NSNumber)?.int64Value }
    }

    /// `(method, url, status)` of each entry of the HAR file at `path`.
    func entries(_ s: Sandbox, _ path: String) throws -> [String] {
        let json = try #require(try JSONSerialization.jsonObject(with: s.read(path)) as? [String: Any])
        let entries = try #require((json["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        return entries.map { entry in
            let request = entry["request"] as? [String: Any] ?? [:]
            let response = entry["response"] as? [String: Any] ?? [:]
            return "\(request["method"] as? String ?? "?") \(request["url"] as? String ?? "?") \((response["status"] as? NSNumber)?.intValue ?? -1)"
        }
    }

    @Test("tv flows --filter: domains, addresses, transport, failure, negation; exact ids")
    func flowsFilter() throws {
        try withSandbox { s in
            try seed(s)
            #expect(try flowIDs(s, ["--filter", "~d api"]) == [6, 3, 2])
            #expect(try flowIDs(s, ["--filter", "~d API\\.TEST$"]) == [6, 3, 2])
            #expect(try flowIDs(s, ["--filter", "~udp"]) == [5])
            #expect(try flowIDs(s, ["--filter", "~d 2001:db8"]) == [5])          // no name: the server's address
            #expect(try flowIDs(s, ["--filter", "~dst '\\[2001:db8::1\\]:443'"]) == [5])
            #expect(try flowIDs(s, ["--filter", "~src ^10\\."]) == [6])
            #expect(try flowIDs(s, ["--filter", "~e"]) == [6])
            #expect(try flowIDs(s, ["--filter", "!~d api & ~tcp"]) == [4, 1])
            #expect(try flowIDs(s, ["--filter", "~d a\\.test | ~d b\\.test"]) == [4, 1])
            #expect(try flowIDs(s, ["--filter", "~all", "--since", "1h"]) == [6, 5, 4])
            #expect(try flowIDs(s, ["--filter", "~d api", "--status", "inspected"]) == [3, 2])
        }
    }

    @Test("tv flows --filter pages by keyset: the hint repeats the filter and the next page goes on")
    func flowsFilterPages() throws {
        try withSandbox { s in
            try seed(s)
            let first = try s.tv("flows", "--filter", "~d api", "--limit", "2")
            #expect(first.status == 0, "\(first)")
            let lines = first.out.split(separator: "\n").map(String.init)
            #expect(lines.dropFirst().dropLast().map { $0.split(separator: " ").first.map(String.init) } == ["6", "3"])
            let more = try #require(lines.last)
            #expect(more.hasPrefix("More: tv flows --data-dir \(s.dataDir) --filter '~d api' --limit 2 --after "), "\(more)")
            let cursor = String(try #require(more.split(separator: " ").last))
            #expect(try flowIDs(s, ["--filter", "~d api", "--limit", "2", "--after", cursor]) == [2])
        }
    }

    @Test("tv flows --filter with request operators: no flow matches, and stderr says why once")
    func flowsFilterRequestOperators() throws {
        try withSandbox { s in
            try seed(s)
            let result = try s.tv("flows", "--filter", "~m POST | ~c 404")
            #expect(result.status == 0, "\(result)")
            #expect(result.out == "No flows match --filter '~m POST | ~c 404'; 6 flows are recorded in all.\n")
            #expect(result.err == "tv: ~c and ~m look at requests, which flow rows do not hold, so they matched no flow; `tv requests --filter` filters requests.\n")
        }
    }

    @Test("tv flows --filter: a mistake is one sentence with its column, exit 2")
    func flowsFilterMistake() throws {
        try withSandbox { s in
            try seed(s)
            let trailing = try s.tv("flows", "--filter", "~d a &")
            #expect(trailing.status == 2)
            #expect(trailing.err == "tv: Expected an expression after '&' at column 7.\n")
            #expect(trailing.out.isEmpty)
            let paren = try s.tv("flows", "--filter", "(~d a | ~e")
            #expect(paren.err == "tv: The '(' at column 1 is not closed; add a ')'.\n")
        }
    }

    @Test("tv export har selects by ranges, --all, --since and --from/--to: exact entries")
    func harSelection() throws {
        try withSandbox { s in
            try seed(s)
            let range = try s.tv("export", "har", "1-3", "-o", "range.har")
            #expect(range.status == 0, "\(range)")
            #expect(range.out == "Wrote 4 HAR entries from 3 flows to range.har; it holds the kept bodies, so share it with care.\n")
            #expect(range.err.isEmpty)
            #expect(try entries(s, s.work + "/range.har") == ["GET https://a.test/one 200", "POST https://api.test/items 404",
                                                              "GET https://api.test/items/2 200", "DELETE https://api.test/items/3 500"])

            let all = try s.tv("export", "har", "--all", "-o", "all.har")
            #expect(all.status == 0, "\(all)")
            #expect(all.out == "Wrote 4 HAR entries from 3 flows to all.har; it holds the kept bodies, so share it with care.\n")
            #expect(all.err == "tv: left out 3 flows with no kept HTTP and no exchange rows (`tv export har ID` names why for one).\n")

            let since = try s.tv("export", "har", "--since", "1d", "-o", "since.har")
            #expect(since.status == 0, "\(since)")
            #expect(try entries(s, s.work + "/since.har") == ["DELETE https://api.test/items/3 500"])
            #expect(since.err == "tv: left out 3 flows with no kept HTTP and no exchange rows (`tv export har ID` names why for one).\n")

            let from = String((Self.now - 73 * Self.hour) / 1_000_000), to = String((Self.now - 24 * Self.hour) / 1_000_000)
            let window = try s.tv("export", "har", "--from", from, "--to", to, "-o", "window.har")
            #expect(window.status == 0, "\(window)")
            #expect(try entries(s, s.work + "/window.har") == ["GET https://a.test/one 200", "POST https://api.test/items 404",
                                                               "GET https://api.test/items/2 200"])

            // Ids and a window narrow each other: flow 1 started before the last day.
            let both = try s.tv("export", "har", "1", "3", "--since", "1d", "-o", "both.har")
            #expect(both.status == 0, "\(both)")
            #expect(try entries(s, s.work + "/both.har") == ["DELETE https://api.test/items/3 500"])
        }
    }

    @Test("tv export har --filter keeps the matching requests: status, method, body, header, negation")
    func harFilter() throws {
        try withSandbox { s in
            try seed(s)
            let cases: [([String], [String])] = [
                (["--filter", "~c 404"], ["POST https://api.test/items 404"]),
                (["2", "--filter", "~m GET"], ["GET https://api.test/items/2 200"]),
                (["--filter", "~b missing"], ["POST https://api.test/items 404"]),
                (["--filter", "~bq '\"x\":1'"], ["POST https://api.test/items 404"]),
                (["--filter", "~h 'content-type: application/json' & ~m post"], ["POST https://api.test/items 404"]),
                (["--filter", "~d api & !~c 404"], ["GET https://api.test/items/2 200", "DELETE https://api.test/items/3 500"]),
                (["--filter", "~u /items/\\d"], ["GET https://api.test/items/2 200", "DELETE https://api.test/items/3 500"]),
                (["--filter", "~t html | ~c 500"], ["GET https://a.test/one 200", "DELETE https://api.test/items/3 500"]),
            ]
            for (i, (arguments, expected)) in cases.enumerated() {
                let result = try s.tvArgs(["export", "har"] + arguments + ["-o", "f\(i).har"])
                #expect(result.status == 0, "\(arguments): \(result)")
                #expect(try entries(s, s.work + "/f\(i).har") == expected, "\(arguments)")
            }
            let none = try s.tv("export", "har", "--filter", "~c 302", "-o", "none.har")
            #expect(none.status == 1)
            #expect(none.err == "tv: left out 3 flows with no kept HTTP and no exchange rows (`tv export har ID` names why for one).\ntv: No request of these flows (kept content or exchange rows) matches the filter, so nothing was written.\n")
            #expect(!FileManager.default.fileExists(atPath: s.work + "/none.har"))
        }
    }

    @Test("tv export har: each selection mistake is one sentence, and no file is written")
    func harSelectionMistakes() throws {
        try withSandbox { s in
            try seed(s)
            let cases: [([String], Int32, String)] = [
                (["48-40"], 2, "'48-40' is not a range of flow ids; write the lower id first, as in 40-48."),
                (["4x"], 2, "'4x' is not a flow id or a range of them; write ids as `tv flows` prints them (40) or a range as 40-48."),
                (["40-"], 2, "'40-' is not a flow id or a range of them; write ids as `tv flows` prints them (40) or a range as 40-48."),
                (["0"], 2, "'0' is not a flow id or a range of them; write ids as `tv flows` prints them (40) or a range as 40-48."),
                ([], 2, "Name the flows to export: ids (40 41), a range (40-48), --all, --since 1h, --from/--to, or --filter EXPR."),
                (["--all", "1"], 2, "--all takes every flow, so give either flow ids or --all, not both."),
                (["--since", "1y"], 2, "'1y' is not a time span; write a number and a unit, such as 90s, 15m, 1h, 2d or 1w."),
                (["--from", "2026-12-02", "--to", "2026-12-01"], 2, "--from must be before --to; nothing starts in that window."),
                (["--from", "2026-13-01"], 2, "'2026-13-01' is not a moment; write UTC as 2026-11-30T14:05:00Z (a fraction and an offset such as .713+01:00 may follow the seconds), 2026-11-30 14:05, 2026-11-30, or seconds since 1970."),
                (["--filter", "~c"], 2, "Expected a status code (a number such as 404) after '~c' at column 3."),
                (["40-48"], 1, "No flow is in this selection, so nothing was written; `tv flows` lists the ones there are."),
                (["9"], 1, "There is no flow 9 in this data folder; `tv flows` lists the ones there are."),
            ]
            for (arguments, status, sentence) in cases {
                let result = try s.tvArgs(["export", "har"] + arguments + ["-o", "x.har"])
                #expect(result.status == status, "\(arguments): \(result)")
                #expect(result.err == "tv: " + sentence + "\n", "\(arguments)")
                #expect(!FileManager.default.fileExists(atPath: s.work + "/x.har"), "\(arguments)")
            }
        }
    }

    @Test("tv flows and tv activity check a window alike: reversed, --since with --from, a zero stretch, a start still to come, a huge span")
    func windowsCheckedAlike() throws {
        try withSandbox { s in
            for command in ["flows", "activity"] {
                let reversed = try s.tvArgs([command, "--from", "2026-12-02", "--to", "2026-12-01"])
                #expect(reversed.status == 2 && reversed.err == "tv: --from must be before --to; nothing starts in that window.\n", "\(command): \(reversed)")
                let both = try s.tvArgs([command, "--since", "5s", "--from", "2026-12-01"])
                #expect(both.status == 2, "\(command): \(both)")
                let huge = try s.tvArgs([command, "--since", "99999999999d"])
                #expect(huge.status == 2 && huge.err.hasPrefix("tv: '99999999999d' is not a time span"), "\(command): \(huge)")
            }
            for command in ["flows", "requests"] {
                let over = try s.tvArgs([command, "--limit", "10001"])
                #expect(over.status == 2 && over.err.hasPrefix("tv: --limit takes a whole number from 1 to 10000"), "\(command): \(over)")
            }
            // Every command that takes --since refuses a span of nothing alike.
            for command in ["activity", "flows", "requests"] {
                let zero = try s.tvArgs([command, "--since", "0s"])
                #expect(zero.status == 2 && zero.err == "tv: '0s' is no time at all; write a stretch longer than zero, such as 90s, 15m, 1h, 2d or 1w.\n", "\(command): \(zero)")
            }
            let future = try s.tvArgs(["activity", "--from", "2099-01-01"])
            #expect(future.status == 2 && future.err.contains("--from is still to come"), "\(future)")
        }
    }
}
