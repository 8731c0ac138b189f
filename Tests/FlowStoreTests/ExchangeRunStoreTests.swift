import FlowTerms
import Testing
@testable import FlowStore

/// Migration 22's packed exchanges through the real writer and every read of this data folder.
@Suite struct ExchangeRunStoreTests {
    private func exchange(flow: Int64, sequence: Int, at time: Int64, state: ExchangeState = .complete) -> ExchangeRecord {
        ExchangeRecord(flowID: flow, sequence: sequence, httpVersion: "HTTP/1.1", method: "GET", scheme: "https",
                       authority: "example.com", path: "/item/\(sequence)", status: state == .open ? nil : 200,
                       requestTime: time, endTime: state == .open ? nil : time + 7, state: state)
    }

    private func count(_ store: FlowStore, _ sql: String) throws -> Int64 {
        try store.connection.withDatabase { database in
            guard case let .integer(n) = try database.scalar(sql) else { return -1 }
            return n
        }
    }

    /// Every exchange, page after page of `size`.
    private func allPages(_ store: FlowStore, size: Int, _ query: ExchangeQuery = ExchangeQuery()) throws -> [ExchangeRecord] {
        var query = query
        query.limit = size
        var all: [ExchangeRecord] = []
        while true {
            let page = try store.exchanges(query)
            #expect(page.damaged.isEmpty)
            all += page.exchanges
            guard let next = page.nextCursor else { return all }
            query.after = next
        }
    }

    @Test("finished exchanges go into runs, not rows, and read back by page, id and flow")
    func finishedArePacked() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            defer { writer.close() }
            let a = writer.open(sampleFlow(start: 100))
            let b = writer.open(sampleFlow(start: 200))
            var written: [ExchangeRecord] = []
            for sequence in 1...3 { written.append(exchange(flow: a.id, sequence: sequence, at: Int64(sequence) * 10)) }
            for sequence in 1...2 { written.append(exchange(flow: b.id, sequence: sequence, at: Int64(sequence) * 10 + 5)) }
            for exchange in written { writer.enqueue(.exchange(exchange)) }
            writer.flush()
            #expect(try count(store, "SELECT count(*) FROM exchanges") == 0)
            #expect(try count(store, "SELECT sum(exchange_count) FROM exchange_runs") == 5)
            let all = try allPages(store, size: 2)
            #expect(all.map(\.requestTime) == [30, 25, 20, 15, 10])
            #expect(Set(all.map(\.id)) == Set(1...5))
            for read in all {
                var expected = try #require(written.first { $0.flowID == read.flowID && $0.sequence == read.sequence })
                expected.id = read.id
                #expect(read == expected)
                #expect(try store.exchange(id: read.id) == read)
            }
            #expect(try store.exchange(id: 6) == nil)
            #expect(try store.exchanges(ofFlow: a.id).exchanges.map(\.path) == ["/item/1", "/item/2", "/item/3"])
            #expect(try store.exchanges(ExchangeQuery(flowID: b.id)).exchanges.map(\.sequence) == [2, 1])
            #expect(try store.exchanges(ExchangeQuery(from: 15, to: 25)).exchanges.map(\.requestTime) == [20, 15])
            #expect(try store.exchanges(matching: FlowQuery(), requestedSince: 15, limit: 2).map(\.requestTime) == [15, 20])
            let ids = all.map(\.id)
            #expect(Set(try store.exchanges(ids: [ids[4], ids[0], 99]).map(\.id)) == [ids[4], ids[0]])
        }
    }

    @Test("rows (open, ended after their open row) and runs page together, each exchange once, ids stable")
    func rowsAndRunsTogether() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            defer { writer.close() }
            let a = writer.open(sampleFlow(start: 100))
            for sequence in 1...4 { writer.enqueue(.exchange(exchange(flow: a.id, sequence: sequence, at: Int64(sequence) * 10, state: .open))) }
            writer.flush()
            let openIDs = try store.exchanges(ofFlow: a.id).exchanges.map(\.id)
            #expect(openIDs.count == 4)
            // Two of the four end; more start and end at once (packed), some at the same times.
            for sequence in [2, 4] { writer.enqueue(.exchange(exchange(flow: a.id, sequence: sequence, at: Int64(sequence) * 10))) }
            for sequence in 5...9 { writer.enqueue(.exchange(exchange(flow: a.id, sequence: sequence, at: Int64(sequence - 4) * 10))) }
            writer.flush()
            #expect(try count(store, "SELECT count(*) FROM exchanges") == 4)
            #expect(try count(store, "SELECT sum(exchange_count) FROM exchange_runs") == 5)
            let flow = try store.exchanges(ofFlow: a.id).exchanges
            #expect(flow.map(\.sequence) == Array(1...9))
            #expect(Array(flow.prefix(4).map(\.id)) == openIDs)
            #expect(flow.map(\.state) == [.open, .complete, .open, .complete] + Array(repeating: .complete, count: 5))
            #expect(Set(flow.map(\.id)).count == 9)
            for size in [1, 2, 3, 50] {
                let all = try allPages(store, size: size)
                let expected = flow.sorted { ($0.requestTime, $0.id) > ($1.requestTime, $1.id) }
                #expect(all == expected)
            }
        }
    }

    /// A trial's Server-Sent Events request (its row written open, then changed as it streamed
    /// and when it ended) was followed by a skipped id each time (33, 35): the upsert's conflict
    /// path moved AUTOINCREMENT's counter, and `tv request 34` said there was none.
    @Test("a row changed in place after it was written open uses up no id: the ids after it are dense")
    func changedOpenRowKeepsIDsDense() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            defer { writer.close() }
            let a = writer.open(sampleFlow(start: 100))
            writer.enqueue(.exchange(exchange(flow: a.id, sequence: 1, at: 10)))
            writer.flush()
            // The stream: written open, changed twice while open (each in its own batch), ended.
            var stream = exchange(flow: a.id, sequence: 2, at: 20, state: .open)
            writer.enqueue(.exchange(stream))
            writer.flush()
            for received in [Int64(100), 200] {
                stream.responseBodyBytes = received
                writer.enqueue(.exchange(stream))
                writer.flush()
            }
            stream.state = .complete
            stream.endTime = 90
            writer.enqueue(.exchange(stream))
            writer.flush()
            for sequence in 3...4 { writer.enqueue(.exchange(exchange(flow: a.id, sequence: sequence, at: Int64(sequence) * 10))) }
            writer.flush()
            let rows = try store.exchanges(ofFlow: a.id).exchanges
            #expect(rows.map(\.sequence) == [1, 2, 3, 4])
            #expect(rows.map(\.id) == [1, 2, 3, 4])
            #expect(rows[1].state == .complete && rows[1].responseBodyBytes == 200)
            #expect(try count(store, "SELECT seq FROM sqlite_sequence WHERE name = 'exchanges'") == 4)
            #expect(try store.highestExchangeID() == 4)
        }
    }

    @Test("a flow's first requests and its count (`tv flow`): open rows and two packed runs, read in request order as far as needed")
    func firstOfAFlow() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            defer { writer.close() }
            let a = writer.open(sampleFlow(start: 100))
            let b = writer.open(sampleFlow(start: 200))
            for sequence in 1...3 { writer.enqueue(.exchange(exchange(flow: a.id, sequence: sequence, at: Int64(sequence) * 10, state: .open))) }
            writer.enqueue(.exchange(exchange(flow: b.id, sequence: 1, at: 15)))
            writer.flush()
            // Two batches, each held until it is all queued (one run each however busy the machine).
            for batch in [4...60, 61...120] {
                writer.pauseForTesting()
                for sequence in batch { writer.enqueue(.exchange(exchange(flow: a.id, sequence: sequence, at: Int64(sequence) * 10))) }
                writer.resumeForTesting()
                writer.flush()
            }
            #expect(try count(store, "SELECT count(*) FROM exchange_runs WHERE flow_id = \(a.id)") == 2)
            let five = try store.exchanges(ofFlow: a.id, first: 5)
            #expect(five.exchanges.map(\.sequence) == [1, 2, 3, 4, 5])
            #expect(five.total == 120 && five.damaged.isEmpty)
            #expect(try store.exchanges(ofFlow: a.id, first: 70).exchanges.map(\.sequence) == Array(1...70))
            #expect(try store.exchanges(ofFlow: a.id, first: 500).exchanges.map(\.sequence) == Array(1...120))
            let none = try store.exchanges(ofFlow: a.id, first: 0)
            #expect(none.exchanges.isEmpty && none.total == 120)
            let other = try store.exchanges(ofFlow: b.id, first: 5)
            #expect(other.exchanges.map(\.sequence) == [1] && other.total == 1)
        }
    }

    @Test("a writer started later ends an exchange an earlier one left open in its row, not in a run")
    func laterWriterEndsTheOpenRow() throws {
        try withStore { store, _ in
            let first = try store.makeWriter()
            let flow = first.open(sampleFlow(start: 100))
            first.enqueue(.exchange(exchange(flow: flow.id, sequence: 1, at: 10, state: .open)))
            first.close()
            let id = try #require(try store.exchanges(ofFlow: flow.id).exchanges.first?.id)
            let second = try store.makeWriter()
            second.enqueue(.exchange(exchange(flow: flow.id, sequence: 1, at: 10)))
            second.close()
            let rows = try store.exchanges(ofFlow: flow.id).exchanges
            #expect(rows.map(\.id) == [id])
            #expect(rows.map(\.state) == [.complete])
            #expect(try count(store, "SELECT count(*) FROM exchange_runs") == 0)
        }
    }

    @Test("retention's delete removes a flow's rows and runs and counts both")
    func deleteCountsBoth() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            let a = writer.open(sampleFlow(start: 100))
            let b = writer.open(sampleFlow(start: 200))
            writer.enqueue(.exchange(exchange(flow: a.id, sequence: 1, at: 10, state: .open)))
            writer.flush()
            for sequence in 2...3 { writer.enqueue(.exchange(exchange(flow: a.id, sequence: sequence, at: 20))) }
            writer.enqueue(.exchange(exchange(flow: b.id, sequence: 1, at: 30)))
            writer.close()
            let deleted = try store.connection.withDatabase { database in
                try StoredExchanges.deleteRows(ofFlowsIn: "SELECT \(a.id)", database: database)
            }
            #expect(deleted == 3)
            #expect(try allPages(store, size: 10).map(\.flowID) == [b.id])
        }
    }

    @Test("a file from before migration 22 keeps its exchanges, read back identical; new ids go on above them")
    func migratesOldRows() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/tunnelvision.sqlite3"
        let runs = try #require(FlowSchema.migrations.firstIndex { $0.contains("CREATE TABLE exchange_runs") })
        let old = try SQLiteDatabase(path: path)
        try FlowSchema.migrate(old, migrations: Array(FlowSchema.migrations.prefix(runs)))
        try old.execute("""
            INSERT INTO exchanges (id, flow_id, seq, stream_id, http_version, method, scheme, authority, path, query_removed,
                status, reason, request_body_bytes, request_wire_bytes, response_body_bytes, response_wire_bytes, content_type,
                content_encoding, request_time, response_time, end_time, upgrade, connect, state)
            VALUES (7, 50, 1, 3, 'HTTP/2', 'POST', 'https', 'api.example', '/v1', 1, 201, NULL, 5, 5, 9, 12,
                    'application/json', 'gzip', 1000, 1100, 1200, 0, 0, 'complete'),
                   (9, 50, 2, NULL, 'HTTP/1.1', 'GET', NULL, NULL, '/', 0, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, 2000,
                    NULL, NULL, 0, 0, 'open')
            """)
        old.close()
        let store = try FlowStore(path: path)
        defer { store.close() }
        let expected = [
            ExchangeRecord(id: 7, flowID: 50, sequence: 1, streamID: 3, httpVersion: "HTTP/2", method: "POST", scheme: "https",
                           authority: "api.example", path: "/v1", queryRemoved: true, status: 201, requestBodyBytes: 5,
                           requestWireBytes: 5, responseBodyBytes: 9, responseWireBytes: 12, contentType: "application/json",
                           contentEncoding: "gzip", requestTime: 1000, responseTime: 1100, endTime: 1200, state: .complete),
            ExchangeRecord(id: 9, flowID: 50, sequence: 2, httpVersion: "HTTP/1.1", method: "GET", path: "/", requestTime: 2000),
        ]
        #expect(try store.exchanges(ofFlow: 50).exchanges == expected)
        #expect(try store.exchanges(ExchangeQuery()).exchanges == expected.reversed())
        let writer = try store.makeWriter()
        let flow = writer.open(sampleFlow(start: 100))
        writer.enqueue(.exchange(exchange(flow: flow.id, sequence: 1, at: 3000)))
        writer.enqueue(.exchange(exchange(flow: flow.id, sequence: 2, at: 3001, state: .open)))
        writer.close()
        #expect(try store.exchanges(ofFlow: flow.id).exchanges.map(\.id).sorted() == [10, 11])
    }
}
