import Foundation
import Testing
@testable import FlowStore
import FlowTerms

/// New flows copied straight into the shared `flows` (`SharedNewFlows`,
/// `SharedStaging.copyNewFlowsSQL`), and the upsert when one has a row after all.
@Suite(.serialized) struct SharedNewFlowsTests {
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
