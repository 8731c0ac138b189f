import Foundation
import FlowTerms
import Testing
@testable import FlowStore

/// The flow writer writes an exchange once, at its end, unless it stays open a second or a
/// reading command flushes (issue 16's cost); and each index of `exchanges` serves a query.
@Suite struct OpenExchangeHoldTests {
    private func exchange(flow: Int64 = 1, _ sequence: Int, at time: Int64, _ state: ExchangeState = .open) -> ExchangeRecord {
        var record = ExchangeRecord(flowID: flow, sequence: sequence, httpVersion: "HTTP/1.1", method: "GET", path: "/\(sequence)",
                                    requestTime: time, state: state)
        if state != .open { record.endTime = time + 10 }
        return record
    }

    @Test("open exchanges are held; an end replaces its open state; due ones follow the batch, oldest first")
    func sift() {
        var hold = OpenExchangeHold(delayMicros: 1_000, limit: 3)
        let flow = sampleFlow(start: 5).with(id: 1)
        // Open 1 and 2, 1 ends in the same batch: only its end (and the flow) is written.
        #expect(hold.sift([.opened(flow), .exchange(exchange(1, at: 100)), .exchange(exchange(2, at: 200)),
                           .exchange(exchange(1, at: 100, .complete))], now: 300)
            == [.opened(flow), .exchange(exchange(1, at: 100, .complete))])
        #expect(hold.count == 1)
        #expect(hold.nextDue == 1_200)
        // Nothing due yet at 1,199; at 1,200 exchange 2's open row is written, then its end later.
        #expect(hold.sift([.exchange(exchange(3, at: 1_150))], now: 1_199) == [])
        #expect(hold.sift([], now: 1_200) == [.exchange(exchange(2, at: 200))])
        #expect(hold.nextDue == 2_150)
        #expect(hold.sift([.exchange(exchange(2, at: 200, .incomplete))], now: 1_300) == [.exchange(exchange(2, at: 200, .incomplete))])
        // A release (a flush) writes every one held, oldest request first.
        #expect(hold.sift([.exchange(exchange(4, at: 1_100))], now: 1_301, releasingAll: true)
            == [.exchange(exchange(4, at: 1_100)), .exchange(exchange(3, at: 1_150))])
        #expect(hold.count == 0)
        #expect(hold.nextDue == nil)
        // Past the limit an open exchange is written at once.
        #expect(hold.sift((5...8).map { .exchange(exchange($0, at: 2_000)) }, now: 2_000) == [.exchange(exchange(8, at: 2_000))])
    }

    @Test("the next due time follows the earliest request held as exchanges end, in any order")
    func nextDueFollowsTheEarliest() {
        var hold = OpenExchangeHold(delayMicros: 1_000, limit: 8)
        #expect(hold.sift([.exchange(exchange(1, at: 300)), .exchange(exchange(2, at: 100)), .exchange(exchange(3, at: 200))],
                          now: 400) == [])
        #expect(hold.nextDue == 1_100)
        // Its open state sent again (a flush released nothing): still due at the same time.
        #expect(hold.sift([.exchange(exchange(2, at: 100))], now: 450) == [])
        #expect(hold.nextDue == 1_100)
        #expect(hold.sift([.exchange(exchange(2, at: 100, .complete))], now: 500) == [.exchange(exchange(2, at: 100, .complete))])
        #expect(hold.nextDue == 1_200)
        // Not the earliest: the due time stays.
        #expect(hold.sift([.exchange(exchange(1, at: 300, .complete))], now: 600) == [.exchange(exchange(1, at: 300, .complete))])
        #expect(hold.nextDue == 1_200)
        #expect(hold.sift([], now: 1_200) == [.exchange(exchange(3, at: 200))])
        #expect(hold.nextDue == nil)
        #expect(hold.count == 0)
    }

    /// Counts the updates of `exchanges` rows (an upsert that finds its row updates it).
    private func countingUpdates(_ store: FlowStore) throws {
        try store.connection.withDatabase { database in
            try database.execute("""
                CREATE TABLE exchange_updates (n INTEGER);
                INSERT INTO exchange_updates VALUES (0);
                CREATE TRIGGER count_exchange_updates AFTER UPDATE ON exchanges BEGIN UPDATE exchange_updates SET n = n + 1; END;
                """)
        }
    }

    private func updates(_ store: FlowStore) throws -> Int64 {
        try store.connection.withDatabase { database in
            guard case let .integer(n) = try database.scalar("SELECT n FROM exchange_updates") else { return -1 }
            return n
        }
    }

    @Test("through the writer: an exchange that ends within the second is inserted once, never updated")
    func oneWritePerExchange() throws {
        try withStore { store, _ in
            try countingUpdates(store)
            let writer = try store.makeWriterKeepingTriggersForTesting()
            defer { writer.close() }
            let flow = writer.open(sampleFlow(start: 100))
            let now = EngineClock.wallMicros()
            writer.enqueue(.exchange(exchange(flow: flow.id, 1, at: now)))
            // The open state's batch is written (the writer lingers 100 ms) before the end comes.
            Thread.sleep(forTimeInterval: 0.3)
            #expect(try store.exchanges(ofFlow: flow.id).exchanges.isEmpty)
            writer.enqueue(.exchange(exchange(flow: flow.id, 1, at: now, .complete)))
            writer.flush()
            #expect(try store.exchanges(ofFlow: flow.id).exchanges.map(\.state) == [.complete])
            #expect(try updates(store) == 0)
        }
    }

    @Test("through the writer: a flush writes the exchanges in flight, whose ends then update them")
    func flushWritesOpenExchanges() throws {
        try withStore { store, _ in
            try countingUpdates(store)
            let writer = try store.makeWriterKeepingTriggersForTesting()
            defer { writer.close() }
            let flow = writer.open(sampleFlow(start: 100))
            let now = EngineClock.wallMicros()
            writer.enqueue(.exchange(exchange(flow: flow.id, 1, at: now)))
            writer.flush()
            let open = try store.exchanges(ofFlow: flow.id).exchanges
            #expect(open.map(\.state) == [.open])
            writer.enqueue(.exchange(exchange(flow: flow.id, 1, at: now, .complete)))
            writer.flush()
            let done = try store.exchanges(ofFlow: flow.id).exchanges
            #expect(done.map(\.state) == [.complete])
            #expect(done.map(\.id) == open.map(\.id))
            #expect(try updates(store) == 1)
        }
    }

    @Test("each index of exchanges serves a query: (flow_id, seq) a flow's list, request_time the pages")
    func indexesServeQueries() throws {
        try withStore { store, _ in
            func plan(_ sql: String) throws -> [String] {
                try store.connection.withDatabase { database -> [String] in
                    let statement = try database.prepare("EXPLAIN QUERY PLAN " + sql)
                    var details: [String] = []
                    try statement.forEachRow { details.append($0.string(at: 3) ?? "") }
                    return details
                }
            }
            let ofFlow = try plan("SELECT \(ExchangeColumns.selectList) FROM exchanges WHERE flow_id = 1 ORDER BY seq")
            #expect(ofFlow.contains { $0.contains("sqlite_autoindex_exchanges_1") }, "\(ofFlow)")
            let page = try ExchangeQuery(limit: 10).plan()
            let newest = try plan(page.sql.replacingOccurrences(of: "LIMIT ?", with: "LIMIT 11"))
            #expect(newest.contains { $0.contains("exchanges_by_request_time") }, "\(newest)")
            let follow = try plan("SELECT id FROM exchanges WHERE request_time >= 5 ORDER BY request_time, id LIMIT 10")
            #expect(follow.contains { $0.contains("exchanges_by_request_time") }, "\(follow)")
            #expect(!(ofFlow + newest + follow).contains { $0 == "SCAN exchanges" })
        }
    }
}
