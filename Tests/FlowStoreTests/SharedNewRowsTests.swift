import Foundation
import Testing
@testable import FlowStore
import FlowTerms

/// New flows and request rows copied straight into the shared `flows` and `exchanges`
/// (`SharedNewRows`, `SharedStaging.copyNewFlowsSQL`, `copyNewExchangesSQL`), and the upsert
/// when one has a row after all.
@Suite(.serialized) struct SharedNewRowsTests {
    private func exchange(flow: Int64, _ sequence: Int, _ state: ExchangeState, path: String = "/") -> ExchangeRecord {
        ExchangeRecord(flowID: flow, sequence: sequence, httpVersion: "HTTP/1.1", method: "GET", path: path,
                       requestTime: 1_000 + Int64(sequence), state: state)
    }

    @Test("a flow written open has a row until its close is written; every other flow is new")
    func known() {
        var known = SharedNewFlows()
        var open = sampleFlow(start: 1)
        open.id = 7
        var closed = sampleFlow(start: 2)
        closed.id = 8
        closed.duration = 5
        #expect(known.isNew(7) && known.isNew(8))
        known.committed([open, closed])
        #expect(known.writtenOpen == [7])
        #expect(!known.isNew(7) && known.isNew(8))
        open.duration = 9
        known.committed([open])
        #expect(known.writtenOpen == [])
        #expect(known.isNew(7))
    }

    @Test("a request row written open exists until a state past open is written; every other row is new")
    func knownExchanges() {
        var known = SharedNewExchanges()
        #expect(known.isNew(SharedExchangeKey(flowID: 7, sequence: 1)))
        known.committed([exchange(flow: 7, 1, .open), exchange(flow: 7, 2, .complete), exchange(flow: 8, 1, .open)])
        #expect(known.writtenOpen == [SharedExchangeKey(flowID: 7, sequence: 1), SharedExchangeKey(flowID: 8, sequence: 1)])
        #expect(!known.isNew(SharedExchangeKey(flowID: 7, sequence: 1)) && known.isNew(SharedExchangeKey(flowID: 7, sequence: 2)))
        known.committed([exchange(flow: 7, 1, .incomplete), exchange(flow: 8, 1, .answered)])
        #expect(known.writtenOpen == [])
    }

    @Test("a request row written open by an earlier connection, ended through the next: taken for new, its COPY fails under the savepoint and the batch's rows are upserted (one row each, the ended state); without a conflict, new rows are copied straight in")
    func exchangeTakenForNewButWritten() throws {
        let w = try SharedStoreRowsTests.World()
        let first = try w.startShared()
        let live = try w.store.makeWriter(mirror: first)
        defer { live.close() }
        let flow = live.open(sampleFlow(start: 300))
        live.enqueue(.exchange(exchange(flow: flow.id, 1, .open, path: "/slow")))
        // A release writes the held open row (`OpenExchangeHold`).
        live.flush()
        first.flush()
        first.close()
        #expect(try w.psql("SELECT count(*), max(state) FROM exchanges WHERE flow_id = \(flow.id)") == "1|open")
        let second = try w.startShared()
        let next = try w.store.makeWriter(mirror: second)
        defer { next.close() }
        var done = exchange(flow: flow.id, 1, .complete, path: "/slow")
        done.status = 200
        next.enqueue(.exchange(done))
        next.enqueue(.exchange(exchange(flow: flow.id, 2, .complete, path: "/two?q=secret")))
        next.flush()
        second.flush()
        #expect(second.counters.failedWrites == 0)
        #expect(try w.psql("SELECT seq, state, status, path, query_removed FROM exchanges WHERE flow_id = \(flow.id) ORDER BY seq")
                == "1|complete|200|/slow|0\n2|complete||/two|1")
        // A later batch of new rows only: copied straight in, ids from the identity after the others'.
        next.enqueue(.exchange(exchange(flow: flow.id, 3, .complete)))
        next.flush()
        second.flush()
        #expect(try w.psql("SELECT count(*), count(DISTINCT id), max(seq) FROM exchanges WHERE flow_id = \(flow.id)") == "3|3|3")
        #expect(try w.psql("SELECT id > (SELECT max(id) FROM exchanges WHERE seq < 3) FROM exchanges WHERE seq = 3") == "t")
    }

    @Test("a flow written open by an earlier connection, closed through the next: taken for new, its COPY fails under the savepoint and it is upserted (one row, closed); the batch's new flow is copied beside it and its names are indexed")
    func takenForNewButWritten() throws {
        let w = try SharedStoreRowsTests.World()
        let first = try w.startShared()
        let live = try w.store.makeWriter(mirror: first)
        defer { live.close() }
        let held = live.open(sampleFlow(start: 300))
        live.flush()
        first.flush()
        first.close()
        #expect(try w.psql("SELECT count(*) FROM flows WHERE duration IS NULL") == "1")
        // A second connection of the same instance knows nothing of `held` (the first writer's
        // local writer is still alive, so it is not closed as left open).
        let second = try w.startShared()
        let next = try w.store.makeWriter(mirror: second)
        defer { next.close() }
        var closed = held
        closed.status = .inspected
        closed.duration = 40
        closed.bytesDown = 1_234
        let fresh = next.open(sampleFlow(start: 400, host: "new.example"))
        next.enqueue(.closed(closed))
        next.flush()
        second.flush()
        #expect(second.counters.failedWrites == 0)
        #expect(try w.psql("SELECT count(*), max(duration), max(bytes_down), max(status) FROM flows WHERE id = \(held.id)")
                == "1|40|1234|inspected")
        #expect(try w.psql("SELECT count(*) FROM flows WHERE id = \(fresh.id) AND duration IS NULL") == "1")
        #expect(try w.psql("SELECT count(*) FROM flow_names WHERE name = 'new.example' AND column_bit = 1") == "1")
    }
}
