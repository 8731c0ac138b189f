import Foundation
import Testing
@testable import FlowStore
import FlowTerms
import Synchronization

/// Flows the shared writer gave up while its server was away (`StoreUnsent`): noted beside the
/// database, said at the next connection though they lie below the store's largest id, and
/// taken out once sent. Against a real PostgreSQL server stopped and started by the test.
@Suite(.serialized) struct SharedStoreGivenUpTests {
    @Test("runs of ids; added and removed as ranges, the file gone when empty")
    func file() {
        #expect(StoreUnsent.runs([7, 3, 4, 5, 9, 4, 0]) == [3 ... 5, 7 ... 7, 9 ... 9])
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        StoreUnsent.add([10, 11, 12, 20], folder: folder)
        StoreUnsent.add([13, 21, 30], folder: folder)
        #expect(StoreUnsent.ranges(folder: folder) == [10 ... 13, 20 ... 21, 30 ... 30])
        StoreUnsent.remove([11, 12, 20, 21, 99], folder: folder)
        #expect(StoreUnsent.ranges(folder: folder) == [10 ... 10, 13 ... 13, 30 ... 30])
        StoreUnsent.remove([10, 13, 30], folder: folder)
        #expect(!FileManager.default.fileExists(atPath: folder + "/" + StoreUnsent.fileName))
    }

    @Test("the server away and the writer's retry limit passed: the flows given up are noted, and said at the next connection though the store's largest id is past them (a trial's 616 were a silent hole)")
    func givenUpFlowsAreSaidAtTheNextConnection() throws {
        let server = try PostgresServer()
        defer { server.stop(); server.remove() }
        try server.start()
        let target = try SharedStoreTarget(try server.makeDatabase())
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let store = try FlowStore(path: folder + "/tunnelvision.sqlite3")
        defer { store.close() }
        let instance = InstanceIdentity(id: UUID().uuidString.lowercased(), machine: "m")
        // The instance's first connection (its `first_seen`: flows started before it are the
        // history from before the folder used the store, never said).
        let first = try FlowWriter(shared: target, instance: instance, localPath: store.path)
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        // Six closed flows in the local file; the first reaches the store.
        let flows = (1 ... 6).map { i -> FlowRecord in
            var f = sampleFlow(start: now + Int64(i) * 1_000)
            f.id = Int64(i)
            f.duration = 500
            return f
        }
        let local = try store.makeWriter()
        for f in flows { _ = local.enqueue(.closed(f)) }
        local.flush()
        local.close()
        #expect(first.enqueue(.closed(flows[0])))
        first.flush()
        first.close()
        // The server away: five more, two kept for retrying, three given up.
        server.stop()
        let second = try FlowWriter(shared: target, instance: instance, localPath: store.path, retryLimit: 2)
        for f in flows.dropFirst() { #expect(second.enqueue(.closed(f))) }
        for _ in 0..<200 where second.counters.flowsNotSaved < 3 { usleep(25_000) }
        #expect(second.counters.flowsNotSaved == 3)
        #expect(StoreUnsent.ranges(folder: folder) == [2 ... 4])
        // Back: the two kept are written (the store's largest id is 6 now).
        try server.start()
        for _ in 0..<400 where second.counters.unwrittenFlows > 0 || second.counters.failing { usleep(25_000) }
        second.close()
        // The next connection says the three below it.
        let said = Mutex<UnsentLocalFlows?>(nil)
        let floor = SharedIDFloor(unsent: { found in said.withLock { $0 = found } })
        let third = try FlowWriter(shared: target, instance: instance, localPath: store.path, idFloor: floor)
        third.flush()
        third.close()
        #expect(said.withLock { $0 } == UnsentLocalFlows(count: 3, firstStart: now + 2_000, lastStart: now + 4_000))
    }
}
