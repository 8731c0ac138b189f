import FlowTerms
import Testing
@testable import FlowStore

/// Query strings are content: when content is deleted or expires, request rows lose their query,
/// in `exchanges` rows and in packed runs alike (a trial found them after `tv content delete`).
@Suite struct ExchangeQueryRemovalTests {
    private func exchange(flow: Int64, sequence: Int, path: String, at time: Int64, done: Bool) -> ExchangeRecord {
        var e = ExchangeRecord(flowID: flow, sequence: sequence, httpVersion: "HTTP/1.1", method: "GET", scheme: "https",
                               authority: "example.com", path: path, queryRemoved: false, requestTime: time)
        if done {
            e.status = 200
            e.responseTime = time + 10
            e.endTime = time + 20
            e.state = .complete
        }
        return e
    }

    @Test("every query goes, from rows and runs; paths without one and spared flows keep theirs; a second pass finds none")
    func removesFromRowsAndRuns() throws {
        try withStore { store, folder in
            let writer = try store.makeWriter()
            let a = writer.open(sampleFlow(start: 100)), b = writer.open(sampleFlow(start: 200))
            // An open exchange is written as a row; finished ones in one batch are packed in a run.
            writer.enqueue(.exchange(exchange(flow: a.id, sequence: 1, path: "/open?token=SECRET1", at: 1_000, done: false)))
            writer.flush()
            // Held until all are queued: a busy machine's writer thread took them one at a time.
            writer.pauseForTesting()
            for (n, path) in ["/r?apikey=SECRET2", "/plain", "/q?x=SECRET3&y=2"].enumerated() {
                writer.enqueue(.exchange(exchange(flow: a.id, sequence: n + 2, path: path, at: 2_000 + Int64(n), done: true)))
            }
            writer.enqueue(.exchange(exchange(flow: b.id, sequence: 1, path: "/kept?evidence=1", at: 3_000, done: true)))
            writer.resumeForTesting()
            writer.flush()
            writer.close()
            let database = try SQLiteDatabase(path: folder + "/tunnelvision.sqlite3")
            defer { database.close() }
            #expect(try database.scalar("SELECT count(*) FROM exchange_runs") != .integer(0))
            let removed = try database.transaction { try StoredExchanges.removeQueries(sparing: [b.id], database: database) }
            #expect(removed == 3)
            let rowsA = try store.exchanges(ofFlow: a.id).exchanges
            #expect(rowsA.map(\.path) == ["/open", "/r", "/plain", "/q"])
            #expect(rowsA.map(\.queryRemoved) == [true, true, false, true])
            #expect(try store.exchanges(ofFlow: b.id).exchanges.map(\.path) == ["/kept?evidence=1"])
            #expect(try database.transaction { try StoredExchanges.removeQueries(sparing: [b.id], database: database) } == 0)
        }
    }

    /// `tv content delete` in a live session: rows written already lose their query in the
    /// database; a request made before the delete whose row comes later (open then, or queued)
    /// is written without it too, one made after keeps it (a trial's row showed its query after
    /// the delete, beside content said deleted).
    @Test("after removeQueries(requestedBefore:), rows of earlier requests are written without their query, later ones with it")
    func rowsWrittenAfterALiveDelete() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            let a = writer.open(sampleFlow(start: 100))
            // Open at the delete (held by the writer), then finished after it.
            writer.enqueue(.exchange(exchange(flow: a.id, sequence: 1, path: "/slow?secret=OPEN", at: 1_000, done: false)))
            #expect(writer.removeQueries(requestedBefore: 5_000, waitingUntil: .distantFuture))
            writer.enqueue(.exchange(exchange(flow: a.id, sequence: 1, path: "/slow?secret=OPEN", at: 1_000, done: true)))
            writer.enqueue(.exchange(exchange(flow: a.id, sequence: 2, path: "/next?n=AFTER", at: 6_000, done: true)))
            writer.flush()
            writer.close()
            let rows = try store.exchanges(ofFlow: a.id).exchanges
            #expect(rows.map(\.path) == ["/slow", "/next?n=AFTER"] && rows.map(\.queryRemoved) == [true, false], "\(rows.map(\.path))")
        }
        var row = exchange(flow: 1, sequence: 1, path: "/a?b?c", at: 0, done: true)
        #expect(row.removeQuery() && row.path == "/a" && row.queryRemoved)
        #expect(!row.removeQuery() && row.path == "/a")
    }

    @Test("expiry: only requests before the cutoff, each stretch read once (the last cutoff is kept)")
    func expiry() throws {
        try withStore { store, folder in
            let writer = try store.makeWriter()
            let a = writer.open(sampleFlow(start: 100))
            writer.pauseForTesting()
            for (n, time) in [Int64(1_000), 5_000, 9_000].enumerated() {
                writer.enqueue(.exchange(exchange(flow: a.id, sequence: n + 1, path: "/p\(n)?k=v", at: time, done: true)))
            }
            writer.resumeForTesting()
            writer.flush()
            writer.close()
            let database = try SQLiteDatabase(path: folder + "/tunnelvision.sqlite3")
            defer { database.close() }
            #expect(try database.transaction { try StoredExchanges.removeExpiredQueries(before: 6_000, sparing: [], database: database) }
                == .init(removed: 2, reachedCutoff: true))
            #expect(try store.exchanges(ofFlow: a.id).exchanges.map(\.path) == ["/p0", "/p1", "/p2?k=v"])
            // The same cutoff again: nothing to read; a later one takes the rest.
            #expect(try database.transaction { try StoredExchanges.removeExpiredQueries(before: 6_000, sparing: [], database: database) }.removed == 0)
            #expect(try database.transaction { try StoredExchanges.removeExpiredQueries(before: 10_000, sparing: [], database: database) }.removed == 1)
            #expect(try store.exchanges(ofFlow: a.id).exchanges.map(\.queryRemoved) == [true, true, true])
        }
    }

    /// An audit trial: a session's request kept `?k=EVIDENCE-SECRET` while it was evidence, the
    /// expiry's sweep went past it, and after `tv audit delete` nothing went back for it.
    @Test("a deleted audit session's requests lose their queries at the next expiry sweep; the other session's stay spared")
    func deletedSessionIsRevisited() throws {
        try withStore { store, folder in
            _ = try store.audit.newProject(name: "p", note: "", now: 1)
            let session = try store.audit.start(project: "p", note: "", settings: "{}", now: 500)
            let writer = try store.makeWriter()
            let evidence = writer.open(sampleFlow(start: 1_000))
            writer.flush()
            _ = try store.audit.stop(now: 1_500)
            let kept = try store.audit.start(project: "p", note: "", settings: "{}", now: 1_600)
            let other = writer.open(sampleFlow(start: 2_000))
            writer.flush()
            _ = try store.audit.stop(now: 2_500)
            let plain = writer.open(sampleFlow(start: 3_000))
            writer.pauseForTesting()
            writer.enqueue(.exchange(exchange(flow: evidence.id, sequence: 1, path: "/api?k=EVIDENCE", at: 1_000, done: true)))
            writer.enqueue(.exchange(exchange(flow: other.id, sequence: 1, path: "/api?k=OTHER", at: 2_000, done: true)))
            writer.enqueue(.exchange(exchange(flow: plain.id, sequence: 1, path: "/api?k=PLAIN", at: 3_000, done: true)))
            writer.resumeForTesting()
            writer.flush()
            writer.close()
            let database = try SQLiteDatabase(path: folder + "/tunnelvision.sqlite3")
            defer { database.close() }
            let spared = try store.audit.evidence().flows
            #expect(spared == [evidence.id, other.id])
            #expect(try database.transaction { try StoredExchanges.removeExpiredQueries(before: 9_000, sparing: spared, database: database) }.removed == 1)
            #expect(try database.transaction { try StoredExchanges.removeExpiredQueries(before: 9_000, sparing: spared, database: database) }.removed == 0)

            #expect(try store.audit.delete(session: session.id).flowsReleased == 1)
            let now = try store.audit.evidence().flows
            #expect(try database.transaction { try StoredExchanges.removeExpiredQueries(before: 9_000, sparing: now, database: database) }
                == .init(removed: 1, reachedCutoff: true))
            #expect(try store.exchanges(ofFlow: evidence.id).exchanges.map(\.path) == ["/api"])
            #expect(try store.exchanges(ofFlow: other.id).exchanges.map(\.path) == ["/api?k=OTHER"])
            #expect(try store.exchanges(ofFlow: plain.id).exchanges.map(\.path) == ["/api"])
            _ = kept
        }
    }

    @Test("a budget takes the stretch a slice at a time, each ending past the run that filled it, until the cutoff")
    func slices() throws {
        try withStore { store, folder in
            let writer = try store.makeWriter()
            let a = writer.open(sampleFlow(start: 100))
            // Five batches of two finished exchanges: five runs, the latest requests at 1,001 … 1,401.
            for batch in 0..<5 {
                // One batch each, however busy the machine (a full run once found more runs).
                writer.pauseForTesting()
                for n in 0..<2 {
                    let time = 1_000 + Int64(batch * 100 + n)
                    writer.enqueue(.exchange(exchange(flow: a.id, sequence: batch * 2 + n + 1, path: "/b\(batch)n\(n)?k=v", at: time, done: true)))
                }
                writer.resumeForTesting()
                writer.flush()
            }
            writer.close()
            let database = try SQLiteDatabase(path: folder + "/tunnelvision.sqlite3")
            defer { database.close() }
            #expect(try database.scalar("SELECT count(*) FROM exchange_runs") == .integer(5))
            #expect(try StoredExchanges.sliceEnd(since: 0, cutoff: 10_000, exchanges: 3, database: database) == 1_102)
            #expect(try StoredExchanges.sliceEnd(since: 1_102, cutoff: 10_000, exchanges: 3, database: database) == 1_302)
            #expect(try StoredExchanges.sliceEnd(since: 1_302, cutoff: 10_000, exchanges: 3, database: database) == 10_000)
            #expect(try StoredExchanges.sliceEnd(since: 0, cutoff: 1_050, exchanges: 3, database: database) == 1_050)
            func slice() throws -> StoredExchanges.QueryRemoval {
                try database.transaction { try StoredExchanges.removeExpiredQueries(before: 10_000, sparing: [], database: database, budget: 3) }
            }
            #expect(try slice() == .init(removed: 4, reachedCutoff: false))
            #expect(try store.exchanges(ofFlow: a.id).exchanges.filter(\.queryRemoved).count == 4)
            #expect(try slice() == .init(removed: 4, reachedCutoff: false))
            #expect(try slice() == .init(removed: 2, reachedCutoff: true))
            #expect(try slice() == .init(removed: 0, reachedCutoff: true))
            #expect(try store.exchanges(ofFlow: a.id).exchanges.map(\.path)
                == (0..<5).flatMap { batch in (0..<2).map { "/b\(batch)n\($0)" } })
        }
    }
}
