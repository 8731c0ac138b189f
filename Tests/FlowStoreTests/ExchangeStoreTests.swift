import FlowTerms
import Testing
@testable import FlowStore

/// The `exchanges` table through the real writer and the read API (issue 16).
@Suite struct ExchangeStoreTests {
    private func started(flow: Int64, sequence: Int, at time: Int64) -> ExchangeRecord {
        ExchangeRecord(flowID: flow, sequence: sequence, httpVersion: "HTTP/1.1", method: "GET", scheme: "https",
                       authority: "example.com", path: "/item/\(sequence)", queryRemoved: sequence == 2, requestTime: time)
    }

    @Test func startedThenFinishedIsOneRowWithAStableID() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            defer { writer.close() }
            let flow = writer.open(sampleFlow(start: 100))
            writer.enqueue(.exchange(started(flow: flow.id, sequence: 1, at: 1_000)))
            writer.flush()
            let first = try store.exchanges(ExchangeQuery()).exchanges
            #expect(first.count == 1)
            #expect(first[0].state == .open)
            var done = started(flow: flow.id, sequence: 1, at: 1_000)
            done.status = 404
            done.reason = "Not Found"
            done.responseBodyBytes = 153
            done.responseWireBytes = 160
            done.contentType = "text/html"
            done.responseTime = 1_200
            done.endTime = 1_500
            done.state = .complete
            writer.enqueue(.exchange(done))
            writer.flush()
            done.id = first[0].id
            #expect(try store.exchange(id: first[0].id) == done)
            #expect(try store.exchanges(ExchangeQuery()).exchanges == [done])
            #expect(done.duration == 500)
        }
    }

    @Test func theSchemaAcceptsEveryState() throws {
        try withStore { store, _ in
            // A connection that checks (the writer's does not): the CHECK lists every state.
            try store.connection.withDatabase { database in
                for (index, state) in ExchangeState.allCases.enumerated() {
                    try database.execute("INSERT INTO exchanges (flow_id, seq, http_version, method, path, request_time, state) "
                        + "VALUES (1, \(index + 1), 'HTTP/1.1', 'GET', '/', 1, '\(state.rawValue)')")
                }
                #expect(throws: FlowStoreError.self) {
                    try database.execute("INSERT INTO exchanges (flow_id, seq, http_version, method, path, request_time, state) "
                        + "VALUES (1, 99, 'HTTP/1.1', 'GET', '/', 1, 'cut')")
                }
            }
        }
    }

    @Test func everyColumnRoundTrips() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            defer { writer.close() }
            let flow = writer.open(sampleFlow(start: 100))
            var exchange = ExchangeRecord(
                flowID: flow.id, sequence: 3, streamID: 5, httpVersion: "HTTP/2", method: "CONNECT", scheme: "https",
                authority: "ws.example:443", path: "/chat", queryRemoved: true, status: 200, reason: nil,
                requestBodyBytes: 7, requestWireBytes: 7, responseBodyBytes: 11, responseWireBytes: 11,
                contentType: "application/json", contentEncoding: "br", requestTime: 10, responseTime: 20, endTime: 30,
                upgrade: true, connect: true, state: .incomplete)
            writer.enqueue(.exchange(exchange))
            writer.flush()
            let rows = try store.exchanges(ofFlow: flow.id)
            #expect(rows.damaged.isEmpty)
            exchange.id = rows.exchanges.first?.id ?? 0
            #expect(exchange.id > 0)
            #expect(rows.exchanges == [exchange])
        }
    }

    @Test func pagesNewestFirstWithAKeysetCursor() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            defer { writer.close() }
            let a = writer.open(sampleFlow(start: 100))
            let b = writer.open(sampleFlow(start: 200))
            for sequence in 1...3 { writer.enqueue(.exchange(started(flow: a.id, sequence: sequence, at: Int64(sequence) * 10))) }
            for sequence in 1...2 { writer.enqueue(.exchange(started(flow: b.id, sequence: sequence, at: Int64(sequence) * 10 + 5))) }
            writer.flush()
            let page1 = try store.exchanges(ExchangeQuery(limit: 3))
            #expect(page1.exchanges.map(\.requestTime) == [30, 25, 20])
            let cursor = try #require(page1.nextCursor)
            let page2 = try store.exchanges(ExchangeQuery(limit: 3, after: cursor))
            #expect(page2.exchanges.map(\.requestTime) == [15, 10])
            #expect(page2.nextCursor == nil)
            #expect(try store.exchanges(ExchangeQuery(flowID: b.id)).exchanges.map(\.sequence) == [2, 1])
            #expect(try store.exchanges(ExchangeQuery(from: 15, to: 25)).exchanges.map(\.requestTime) == [20, 15])
            #expect(try store.exchanges(ofFlow: a.id).exchanges.map(\.path) == ["/item/1", "/item/2", "/item/3"])
            #expect(try store.exchanges(ofFlow: a.id).exchanges.map(\.queryRemoved) == [false, true, false])
        }
    }

    @Test func aDamagedRowIsLeftOutAndNamed() throws {
        try withStore { store, path in
            let writer = try store.makeWriter()
            let flow = writer.open(sampleFlow(start: 100))
            writer.enqueue(.exchange(started(flow: flow.id, sequence: 1, at: 10)))
            writer.enqueue(.exchange(started(flow: flow.id, sequence: 2, at: 20)))
            writer.close()
            let raw = try SQLiteDatabase(path: path + "/tunnelvision.sqlite3")
            try raw.execute("PRAGMA ignore_check_constraints=ON; UPDATE exchanges SET state = 'maybe' WHERE seq = 2")
            raw.close()
            let page = try store.exchanges(ExchangeQuery())
            #expect(page.exchanges.map(\.sequence) == [1])
            #expect(page.damaged.map(\.summary) == ["exchange 2: state is 'maybe'"])
        }
    }

    @Test func anExchangeStillOpenWhenItsFlowIsInterruptedEndsIncomplete() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            var flow = sampleFlow(start: 100)
            flow.lastActivityTime = 900
            flow = writer.open(flow)
            writer.enqueue(.exchange(started(flow: flow.id, sequence: 1, at: 500)))
            var done = started(flow: flow.id, sequence: 2, at: 600)
            done.state = .complete
            done.endTime = 700
            writer.enqueue(.exchange(done))
            writer.close(interruptingOpenFlows: true)
            let rows = try store.exchanges(ofFlow: flow.id).exchanges
            #expect(rows.map(\.state) == [.incomplete, .complete])
            #expect(rows.map(\.endTime) == [900, 700])
            #expect(try store.flow(id: flow.id)?.status == .interrupted)
        }
    }
}
