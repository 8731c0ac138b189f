import Foundation
import Testing
@testable import FlowStore
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// Issue 12 §7: flows a killed session left open are closed at the next start, as interrupted at
/// their last activity; a live writer's flows are never touched.
@Suite struct FlowWriterRegistryTests {
    /// A migrated database in a new folder.
    private func database(_ folder: String) throws -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: folder + "/tunnelvision.sqlite3")
        try FlowSchema.migrate(database)
        return database
    }

    /// Writes a flow row as `writer` wrote it: open (duration NULL) unless `duration` is given.
    private func insertFlow(_ database: SQLiteDatabase, id: Int64, writer: Int64, start: Int64, last: Int64,
                            status: FlowStatus = .notEncrypted, duration: Int64? = nil) throws {
        var flow = sampleFlow(start: start, status: status)
        flow.id = id
        flow.lastActivityTime = last
        flow.duration = duration
        let statement = try database.prepare(FlowRecordColumns.upsertSQL)
        try statement.bind(FlowRecordColumns.bindings(flow, writer: writer))
        try statement.step()
    }

    private func row(_ database: SQLiteDatabase, _ id: Int64) throws -> (status: String, duration: Int64?) {
        let statement = try database.prepare("SELECT status, duration FROM flows WHERE id = ?")
        try statement.bind([.integer(id)])
        _ = try statement.step()
        return (statement.string(at: 0) ?? "", statement.optionalInt64(at: 1))
    }

    @Test("a writer whose lock is free is dead: its open flows become interrupted at their last activity, its closed ones stay")
    func deadWritersFlowsAreInterrupted() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try database(folder)
        let registry = FlowWriterRegistry(database: database)
        let (dead, none) = try registry.register(pid: 4_242, now: 1_000)
        #expect(none == FlowWriterRegistry.Recovery())
        #expect(FileManager.default.fileExists(atPath: dead.lockPath))
        try insertFlow(database, id: 1, writer: dead.id, start: 5_000, last: 7_500)
        try insertFlow(database, id: 2, writer: dead.id, start: 6_000, last: 6_000, status: .inspected)
        try insertFlow(database, id: 3, writer: dead.id, start: 6_000, last: 9_000, status: .encrypted, duration: 3_000)
        try insertFlow(database, id: 4, writer: dead.id, start: 6_000, last: 6_000)
        // Flow 4's packets went on after its row's last activity (no progress report yet); flow
        // 1's last packet is before its row's, which stands.
        try database.execute("""
            INSERT INTO packets (flow_id, n, capture_seq, file_offset, time_us, direction, orig_len, incl_len, tcp_flags, meaning) VALUES
            (4, 1, 1, 60, 6000, 'client_to_server', 60, 60, 2, 'opened'), (4, 2, 1, 120, 7600, 'server_to_client', 1500, 1500, 16, 'data'),
            (1, 1, 1, 180, 7000, 'client_to_server', 60, 60, 2, 'opened')
            """)
        // kill -9: the kernel drops the lock; nothing else happens.
        close(dead.lockDescriptor)

        let (next, recovery) = try registry.register(pid: 4_243, now: 20_000)
        #expect(recovery == FlowWriterRegistry.Recovery(deadWriters: 1, interruptedFlows: 3))
        #expect(try row(database, 1) == ("interrupted", 2_500))
        #expect(try row(database, 2) == ("interrupted", 0))
        #expect(try row(database, 3) == ("encrypted", 3_000))
        #expect(try row(database, 4) == ("interrupted", 1_600))
        #expect(try database.scalar("SELECT ended FROM flow_writers WHERE id = ?", [.integer(dead.id)]) == .integer(20_000))
        #expect(!FileManager.default.fileExists(atPath: dead.lockPath))
        // Read back through the store: the record says interrupted.
        let store = try FlowStore(path: database.path)
        defer { store.close() }
        #expect(try store.flow(id: 1)?.status == .interrupted)
        #expect(try store.count(FlowQuery(status: .interrupted)) == 3)
        try registry.unregister(next, interruptingOpenFlows: false, now: 30_000)
    }

    /// Trial 43: a clean `tv stop` on a full disk could not end its writer nor close its open
    /// flows, and the next start called them left by a session "killed or crashed".
    @Test("a writer that stops unable to write its end leaves its stopped mark (its lock file renamed): its open flows read as left by a session that stopped unable to save, the next start closes them so and counts them apart, and removes the mark; a killed writer's read as killed")
    func stoppedUnableToSave() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try database(folder)
        let registry = FlowWriterRegistry(database: database)
        let (stopping, _) = try registry.register(pid: 4_242, now: 1_000)
        let (killed, _) = try registry.register(pid: 4_243, now: 1_000)
        try insertFlow(database, id: 1, writer: stopping.id, start: 5_000, last: 7_500, status: .encrypted)
        try insertFlow(database, id: 2, writer: stopping.id, start: 6_000, last: 6_500)
        try insertFlow(database, id: 3, writer: killed.id, start: 6_000, last: 6_000)
        // The disk full at the stop: no row can be written.
        try database.execute("CREATE TRIGGER no_room BEFORE UPDATE ON flow_writers BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
        #expect(throws: FlowStoreError.self) { try registry.unregister(stopping, interruptingOpenFlows: true, now: 9_000) }
        try database.execute("DROP TRIGGER no_room")
        let mark = FlowWriterRegistry.stoppedMarkPath(database: database.path, writer: stopping.id)
        #expect(mark == folder + "/tunnelvision.sqlite3-writer-\(stopping.id).stopped")
        #expect(FileManager.default.fileExists(atPath: mark) && !FileManager.default.fileExists(atPath: stopping.lockPath))
        #expect(try row(database, 1) == ("encrypted", nil))
        close(killed.lockDescriptor)

        let store = try FlowStore(path: database.path)
        #expect(try store.leftOpen(flowID: 1) == .stoppedUnsaved)
        #expect(try store.leftOpen(flowID: 3) == .killed)
        store.close()

        let (next, recovery) = try registry.register(pid: 4_244, now: 20_000)
        #expect(recovery == FlowWriterRecovery(deadWriters: 1, interruptedFlows: 1, stoppedWriters: 1, stoppedFlows: 2))
        #expect(try row(database, 1) == ("interrupted", 2_500))
        #expect(try row(database, 2) == ("interrupted", 500))
        #expect(try row(database, 3) == ("interrupted", 0))
        #expect(!FileManager.default.fileExists(atPath: mark))
        try registry.unregister(next, interruptingOpenFlows: false, now: 30_000)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".lock") || $0.hasSuffix(".stopped") } == [])
    }

    @Test("a live writer's open flows are left alone, even by a writer in the same process")
    func liveWritersFlowsStayOpen() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try database(folder)
        let registry = FlowWriterRegistry(database: database)
        let (live, _) = try registry.register(pid: getpid(), now: 1_000)
        try insertFlow(database, id: 1, writer: live.id, start: 5_000, last: 7_500)
        let (second, recovery) = try registry.register(pid: getpid(), now: 2_000)
        #expect(recovery == FlowWriterRegistry.Recovery())
        #expect(try row(database, 1) == ("not_encrypted", nil))
        #expect(try database.scalar("SELECT ended FROM flow_writers WHERE id = ?", [.integer(live.id)]) == .null)
        try registry.unregister(second, interruptingOpenFlows: false, now: 3_000)
        try registry.unregister(live, interruptingOpenFlows: false, now: 3_000)
    }

    @Test("each writer takes a range of flow ids: alone, from the largest id used; beside live writers, past their ranges; a dead writer's range is free again")
    func flowIDRanges() throws {
        #expect(FlowIDRanges.first(highestUsed: 0, liveEnds: []) == 1)
        #expect(FlowIDRanges.first(highestUsed: 41, liveEnds: []) == 42)
        #expect(FlowIDRanges.first(highestUsed: 41, liveEnds: [1 + (1 << 32)]) == 1 + (1 << 32))
        #expect(FlowIDRanges.first(highestUsed: 41, liveEnds: [1 + (1 << 32), 1 + (2 << 32)]) == 1 + (2 << 32))
        // Ids used past a live range (a writer that outran it) still count.
        #expect(FlowIDRanges.first(highestUsed: 9 << 32, liveEnds: [1 + (1 << 32)]) == (9 << 32) + 1)
        // A live writer an older tv registered (no range): a whole range above the largest id.
        #expect(FlowIDRanges.first(highestUsed: 41, liveEnds: [nil]) == 42 + (1 << 32))

        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try database(folder)
        let registry = FlowWriterRegistry(database: database)
        try insertFlow(database, id: 40, writer: 0, start: 1, last: 2, duration: 1)
        let (run, _) = try registry.register(pid: getpid(), now: 1_000)
        let (exec, _) = try registry.register(pid: getpid(), now: 2_000)
        let (another, _) = try registry.register(pid: getpid(), now: 3_000)
        #expect(run.firstFlowID == 41 && exec.firstFlowID == 41 + (1 << 32) && another.firstFlowID == 41 + (2 << 32))
        #expect(try database.scalar("SELECT flow_id_end FROM flow_writers WHERE id = ?", [.integer(exec.id)]) == .integer(41 + (2 << 32)))
        try registry.unregister(exec, interruptingOpenFlows: false, now: 4_000)
        try registry.unregister(another, interruptingOpenFlows: false, now: 4_000)
        // With the others ended, the next writer goes past the live one only.
        let (next, _) = try registry.register(pid: getpid(), now: 5_000)
        #expect(next.firstFlowID == 41 + (1 << 32))
        try registry.unregister(next, interruptingOpenFlows: false, now: 6_000)
        try registry.unregister(run, interruptingOpenFlows: false, now: 6_000)
        // Alone again: from the largest id used.
        let (alone, _) = try registry.register(pid: getpid(), now: 7_000)
        #expect(alone.firstFlowID == 41)
        try registry.unregister(alone, interruptingOpenFlows: false, now: 8_000)
    }

    @Test("two FlowWriters open on one file at once hand out ids that never meet")
    func twoWritersAtOnce() throws {
        try withStore { store, _ in
            let first = try store.makeWriter()
            let second = try store.makeWriter()
            let a = first.open(sampleFlow(start: 100)), b = second.open(sampleFlow(start: 200))
            let a2 = first.open(sampleFlow(start: 300))
            #expect(a.id == 1 && a2.id == 2 && b.id == 1 + (1 << 32))
            first.enqueue(.closed(a)); first.enqueue(.closed(a2)); second.enqueue(.closed(b))
            first.close()
            second.close()
            #expect(try store.flow(id: a.id)?.startTime == 100 && store.flow(id: b.id)?.startTime == 200 && store.flow(id: a2.id)?.startTime == 300)
        }
    }

    @Test("a registered writer whose lock file is missing counts as gone; another user's unreadable file counts as alive")
    func lockFileEvidence() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/w.lock"
        #expect(FlowWriterRegistry.isGone(lockPath: path))
        let fd = open(path, O_RDWR | O_CREAT, 0o600)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)
        #expect(!FlowWriterRegistry.isGone(lockPath: path))
        flock(fd, LOCK_UN)
        #expect(FlowWriterRegistry.isGone(lockPath: path))
        // A symbolic link is not followed (O_NOFOLLOW): not evidence of anything, so alive.
        let link = folder + "/link.lock"
        #expect(symlink(path, link) == 0)
        #expect(!FlowWriterRegistry.isGone(lockPath: link))
    }

    @Test("FlowWriter: a clean close leaves open rows as written unless the caller says every flow was closed")
    func cleanClose() throws {
        try withStore { store, folder in
            let keeping = try store.makeWriter()
            let kept = keeping.open(sampleFlow(start: 100))
            keeping.close()
            #expect(try store.flow(id: kept.id)?.status == .encrypted)
            #expect(try store.flow(id: kept.id)?.duration == nil)

            let session = try store.makeWriter()
            #expect(session.interruptedAtStart == FlowWriterRecovery())
            var lost = session.open(sampleFlow(start: 200))
            lost.lastActivityTime = 950
            session.enqueue(.updated(lost))
            var done = session.open(sampleFlow(start: 300))
            done.duration = 40
            session.enqueue(.closed(done))
            session.close(interruptingOpenFlows: true)
            #expect(try store.flow(id: lost.id)?.status == .interrupted)
            #expect(try store.flow(id: lost.id)?.duration == 750)
            #expect(try store.flow(id: done.id)?.status == .encrypted)
            #expect(try store.flow(id: done.id)?.duration == 40)
            // The first writer ended cleanly: a later one does not touch its open row.
            let later = try store.makeWriter()
            #expect(later.interruptedAtStart == FlowWriterRecovery())
            later.close()
            #expect(try store.flow(id: kept.id)?.duration == nil)
            // No lock file is left behind by clean closes.
            let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".lock") }
            #expect(left == [])
        }
    }

    @Test("migration 4 closes flows left open before writers were recorded and keeps every other row and id")
    func migrationFourClosesLegacyOpenFlows() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        #expect(try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(3))) == 0)
        try database.execute("""
            INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                               transport, host, host_origin, status, bytes_up, duration, cert_sans, packets_up)
            VALUES (40, 1000, 4000, '127.0.0.1', 1, '127.0.0.1', 443, 'tcp', 'a.test', 'sni', 'not_encrypted', 9, NULL, 'DNS:a.test', NULL),
                   (41, 2000, 2500, '127.0.0.1', 2, '127.0.0.1', 443, 'tcp', 'b.test', 'sni', 'inspected', 7, 500, '', NULL),
                   (90, 3000, 2000, '10.0.0.1', 3, '10.0.0.2', 53, 'udp', NULL, 'none', 'encrypted', 0, NULL, '', 4);
            """)
        #expect(try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(4))) == 3)
        // The rebuilt table got its two indexes back (later migrations add others, and drop flows_by_host).
        #expect(try database.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'flows' AND name IN ('flows_by_start_time', 'flows_by_host')") == .integer(2))
        #expect(try FlowSchema.migrate(database) == 4)
        let store = try FlowStore(path: database.path)
        defer { store.close() }
        let open = try #require(try store.flow(id: 40))
        #expect(open.status == .interrupted && open.duration == 3_000 && open.bytesUp == 9 && open.certificateSANs == ["DNS:a.test"])
        #expect(try store.flow(id: 41)?.status == .inspected && store.flow(id: 41)?.duration == 500)
        // A last activity before the start (clock stepped back) ends at the start, never before.
        #expect(try store.flow(id: 90)?.status == .interrupted && store.flow(id: 90)?.duration == 0 && store.flow(id: 90)?.packetsUp == 4)
        // Ids go on after the highest.
        let writer = try store.makeWriter()
        defer { writer.close() }
        #expect(writer.allocateID() == 91)
    }
}

@Suite struct InterruptedStatusTests {
    @Test("interrupted is a status the CHECK accepts and the query filters on")
    func checkAndFilter() throws {
        try withStore { store, _ in
            let written = try writeFlows([sampleFlow(start: 1, status: .interrupted), sampleFlow(start: 2)], to: store)
            #expect(try store.flows(FlowQuery(status: .interrupted)).flows.map(\.id) == [written[0].id])
        }
    }
}
