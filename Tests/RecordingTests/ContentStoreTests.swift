import Foundation
import Testing
import TVHome
import FlowStore
@testable import Recording
import FlowTerms

@Suite struct ContentStoreTests {
    let up = Direction.clientToServer
    let down = Direction.serverToClient

    /// A session: writer + recorder, keep on, with a manual clock.
    func session(_ home: TestHome, clock: ManualContentClock, configure: (inout ContentWriterConfiguration) -> Void = { _ in },
                 policy: ContentPolicy = ContentPolicy(keep: true)) throws -> ContentRecorder {
        var configuration = home.configuration(expiry: policy.expiry)
        configure(&configuration)
        return ContentRecorder(writer: try ContentWriter(configuration, clock: clock), policy: policy)
    }

    @Test func roundTripThroughTheWriterAndTheIndex() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        let session = try session(home, clock: clock)
        let chunks = [
            Chunk(up, at: 0, Array("GET / HTTP/1.1\r\n".utf8)), Chunk(up, at: 5, Array("\r\n".utf8)),
            Chunk(down, at: 900, Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)),
            Chunk(up, at: 2_000, [0x00, 0xff, 0x10]),
        ]
        let flow = try #require(session.recorder(flow: 42))
        #expect(flow.isRecording)
        for chunk in chunks { flow.record(chunk.direction, at: chunk.offset, chunk.bytes) }
        flow.finish()
        #expect(!flow.isRecording)
        #expect(session.activeFlows == 0)
        session.writer.flush()
        #expect(session.counters.turnsWritten == 3)
        #expect(session.counters.bytesWritten == 48)
        session.writer.close()

        let store = try home.store()
        defer { store.close() }
        let read = try store.recordedTurns(flow: 42)
        #expect(read == TurnRecorder.turns(from: chunks))
        let indexed = try store.turns(flow: 42)
        #expect(indexed.map(\.segment) == [1, 1, 1])
        #expect(indexed.map(\.segmentOffset) == [0, 18, 45])
        #expect(indexed.allSatisfy { $0.recordedAt == testEpoch })
        #expect(try store.summary(flow: 42) == ContentSummary(turns: 3, keptBytes: 48, seenBytes: 48))
        #expect(home.files() == ["content-00000001.seg"])
        #expect(FileModes.permissions(of: home.contentPath + "/content-00000001.seg") == 0o600)
        #expect(FileModes.permissions(of: home.contentPath) == 0o700)
    }

    /// Audit evidence keeps its segment, and its own turns in it; the other flows' turns sharing
    /// the file still expire, and their bytes are cleared (an audit trial read other traffic's
    /// cookies two days past content.expiry, and the sweep said nothing was deleted).
    @Test func otherFlowsTurnsInAnEvidenceSegmentStillExpire() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        let session = try session(home, clock: clock, policy: ContentPolicy(keep: true, expiry: .oneHour))
        for (flow, byte) in [(Int64(1), UInt8(0x45)), (Int64(2), UInt8(0x4F))] {
            let recorder = try #require(session.recorder(flow: flow))
            recorder.record(up, at: 0, bytes(100, byte))
            recorder.finish()
        }
        session.writer.flush()
        session.writer.close()
        clock.advance(by: 2 * 3_600_000_000)
        let store = try home.store()
        defer { store.close() }
        let report = try store.sweep(now: clock.now(), expiry: .oneHour, evidence: .known(captures: [], flows: [1]))
        #expect(report.rowsDeleted == 1 && report.filesDeleted == 0, "\(report)")
        #expect(try store.recordedTurns(flow: 1).map(\.bytes) == [bytes(100, 0x45)])
        #expect(try store.recordedTurns(flow: 2).isEmpty)
        // Flow 2's bytes are gone from the file too.
        let file = try #require(FileManager.default.contents(atPath: home.contentPath + "/content-00000001.seg"))
        #expect(!file.contains(0x4F), "\(file.count)")
        #expect(file.filter { $0 == 0x45 }.count == 100)
    }

    /// A flow carried into an audit session (opened before it) is evidence its bundle holds: the
    /// writer's sweeps spare its content once the retention pass has published it
    /// (`CarriedEvidence`; a trial's carried connection lost its content to a minute sweep).
    @Test func theSweepSparesCarriedFlowsThePassPublished() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        let carried = CarriedEvidence()
        let session = try session(home, clock: clock, configure: { $0.carried = carried }, policy: ContentPolicy(keep: true, expiry: .oneHour))
        for flow in [Int64(1), 2, 3] {
            let recorder = try #require(session.recorder(flow: flow))
            recorder.record(up, at: 0, bytes(100, UInt8(0x40 + flow)))
            recorder.finish()
        }
        session.writer.flush()
        clock.advance(by: 2 * 3_600_000_000)
        carried.update(.known(captures: [], flows: [1, 3]))
        carried.update(.unknown)  // a pass that could not read the history changes nothing
        let report = try session.writer.sweep()
        #expect(report.rowsDeleted == 1, "\(report)")
        session.writer.close()
        let store = try home.store()
        defer { store.close() }
        #expect(try store.recordedTurns(flow: 1).map(\.bytes) == [bytes(100, 0x41)])
        #expect(try store.recordedTurns(flow: 2).isEmpty)
        #expect(try store.recordedTurns(flow: 3).map(\.bytes) == [bytes(100, 0x43)])
    }

    @Test("evidence with flows added: none becomes known, known grows, unknown stays")
    func evidenceAdding() {
        #expect(AuditEvidence.none.adding(flows: [1]) == .known(captures: [], flows: [1]))
        #expect(AuditEvidence.none.adding(flows: []) == AuditEvidence.none)
        #expect(AuditEvidence.known(captures: [4], flows: [2]).adding(flows: [1]) == .known(captures: [4], flows: [1, 2]))
        #expect(AuditEvidence.unknown.adding(flows: [1]) == .unknown)
    }

    @Test func expiryRemovesRowsAndBytesOnceNothingReferencesThem() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        let session = try session(home, clock: clock, policy: ContentPolicy(keep: true, expiry: .oneHour))
        let old = try #require(session.recorder(flow: 1))
        old.record(up, at: 0, bytes(100))
        old.finish()
        session.writer.flush()
        // 50 minutes later a new segment starts (age limit 5 min) for flow 2.
        clock.advance(by: 3_000_000_000)
        let recent = try #require(session.recorder(flow: 2))
        recent.record(up, at: 0, bytes(30))
        recent.finish()
        session.writer.flush()
        #expect(home.files() == ["content-00000001.seg", "content-00000002.seg"])

        // 61 minutes after the first write: flow 1 has expired, flow 2 has not.
        clock.advance(by: 660_000_000)
        let report = try session.writer.sweep()
        #expect(report.rowsDeleted == 1)
        #expect(report.filesDeleted == 1)
        #expect(report.bytesFreed == 100)
        #expect(home.files() == ["content-00000002.seg"])
        let store = try home.store()
        defer { store.close() }
        #expect(try store.turns(flow: 1) == [])
        #expect(try store.recordedTurns(flow: 2).map(\.bytes) == [bytes(30)])

        // A day later everything has expired; the old current segment is closed and goes too.
        clock.advance(by: 86_400_000_000)
        let later = try session.writer.sweep()
        #expect(later.rowsDeleted == 1 && later.filesDeleted == 1 && later.bytesFreed == 30)
        #expect(home.files() == [])
        session.writer.close()
    }

    @Test func aShorterExpiryAppliesAtOnce() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        let session = try session(home, clock: clock, policy: ContentPolicy(keep: true, expiry: .oneWeek))
        let flow = try #require(session.recorder(flow: 3))
        flow.record(down, at: 0, bytes(10))
        flow.finish()
        session.writer.flush()
        clock.advance(by: 2 * 86_400_000_000)
        #expect(try session.writer.sweep().rowsDeleted == 0)
        let report = try session.apply(ContentPolicy(keep: true, expiry: .oneDay))
        #expect(report?.rowsDeleted == 1)
        #expect(report?.filesDeleted == 1)
        session.writer.close()
    }

    @Test func theCeilingDropsTheOldestSegmentsAndSparesTheOneBeingWritten() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        let session = try session(home, clock: clock) {
            $0.segmentBytes = 40
            $0.ceiling = 100
        }
        // Each flow's request row, made as its content is recorded, with a query (content too).
        let rows = try SQLiteDatabase(path: home.databasePath)
        for id in Int64(1)...5 {
            try rows.execute("""
                INSERT INTO exchanges (flow_id, seq, http_version, method, path, request_time, state)
                VALUES (\(id), 1, 'HTTP/1.1', 'GET', '/f?key=SECRET\(id)', \(testEpoch + (id - 1) * 1_000), 'complete')
                """)
        }
        for id in Int64(1)...5 {
            let flow = try #require(session.recorder(flow: id))
            flow.record(up, at: 0, bytes(40, UInt8(0x30 + id)))
            flow.finish()
            session.writer.flush()
            clock.advance(by: 1_000)
            // Past the ceiling, a sweep runs between batches (`passingTheCeilingSweepsBetweenBatches`).
            _ = try session.writer.writingSegment()
        }
        #expect(try session.writer.writingSegment() == 5)
        let report = try session.writer.sweep()
        #expect(report.filesDeleted == 0 && report.spared?.sequence == 5)
        // 200 bytes in five 40-byte segments; the oldest three went, 80 bytes are left.
        #expect(home.files() == ["content-00000004.seg", "content-00000005.seg"])
        // The queries of the requests whose content went over the ceiling go with it (a trial's
        // api_key stayed in `tv request` after the ceiling took its content); the rest stay.
        let paths = try rows.prepare("SELECT path, query_removed FROM exchanges ORDER BY flow_id")
        var seen: [String] = []
        while try paths.step() { seen.append((paths.string(at: 0) ?? "") + " " + String(paths.int64(at: 1))) }
        #expect(seen == ["/f 1", "/f 1", "/f 1", "/f?key=SECRET4 0", "/f?key=SECRET5 0"])
        rows.close()
        let store = try home.store()
        defer { store.close() }
        #expect(try store.usage().turns == 2)
        #expect(try store.recordedTurns(flow: 4).map(\.bytes) == [bytes(40, 0x34)])
        session.writer.close()
    }

    /// A sweep that passes the ceiling removes the dropped content's queries a slice at a time:
    /// its own slice, then one whenever the writer's queue is empty, until all are gone (a
    /// trial's first sweep past the ceiling rewrote 30,000 requests in one go while the queue
    /// dropped 4,864 chunks).
    @Test func theCeilingsQueryRemovalGoesOnASliceAtATime() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        // Each flow's request rows: three finished exchanges with queries, each packed in a run
        // of its own (a batch each), made before the flow's content.
        let flows = try FlowStore(path: home.databasePath)
        let rows = try flows.makeWriter()
        var ids: [Int64] = []
        for index in Int64(0)..<5 {
            let flow = rows.open(FlowRecord(startTime: testEpoch + index * 1_000, clientAddress: "127.0.0.1", clientPort: 50_000,
                                            serverAddress: "127.0.0.1", serverPort: 443, host: "example.com", hostOrigin: .sni,
                                            status: .inspected))
            ids.append(flow.id)
            for n in 0..<3 {
                var exchange = ExchangeRecord(flowID: flow.id, sequence: n + 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "https",
                                              authority: "example.com", path: "/f\(index)?key=SECRET\(n)", queryRemoved: false,
                                              requestTime: testEpoch + index * 1_000 - 10 + Int64(n))
                exchange.status = 200
                exchange.responseTime = exchange.requestTime + 1
                exchange.endTime = exchange.requestTime + 2
                exchange.state = .complete
                rows.enqueue(.exchange(exchange))
                rows.flush()
            }
        }
        rows.close()
        let session = try session(home, clock: clock) {
            $0.segmentBytes = 40
            $0.ceiling = 100
            $0.querySlice = 1
        }
        for id in ids {
            let flow = try #require(session.recorder(flow: id))
            flow.record(up, at: 0, bytes(40, UInt8(0x30 + id)))
            flow.finish()
            session.writer.flush()
            clock.advance(by: 1_000)
            _ = try session.writer.writingSegment()
        }
        #expect(home.files() == ["content-00000004.seg", "content-00000005.seg"])
        // Each of the (three) sweeps took one slice (one run); the writer goes on by itself.
        func stripped() throws -> [String] {
            try ids.flatMap { try flows.exchanges(ofFlow: $0).exchanges.filter(\.queryRemoved).map(\.path) }
        }
        for _ in 0..<500 where try stripped().count < 9 { usleep(10_000) }
        #expect(try stripped() == ["/f0", "/f0", "/f0", "/f1", "/f1", "/f1", "/f2", "/f2", "/f2"])
        #expect(try ids.flatMap { try flows.exchanges(ofFlow: $0).exchanges.map(\.path) }.suffix(6)
            == ["/f3?key=SECRET0", "/f3?key=SECRET1", "/f3?key=SECRET2", "/f4?key=SECRET0", "/f4?key=SECRET1", "/f4?key=SECRET2"])
        #expect(session.writer.counters.lastSweep?.queriesLeftBefore == nil)
        session.writer.close()
        flows.close()
    }

    /// A busy session does not wait out the minute between sweeps once its files pass the
    /// ceiling by a sixteenth of it: a sweep runs between batches (a trial's folder grew to 6.5
    /// times the ceiling between two sweeps).
    @Test func passingTheCeilingSweepsBetweenBatches() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        let session = try session(home, clock: clock) {
            $0.segmentBytes = 40
            $0.ceiling = 100
            $0.sweepInterval = 3_600
        }
        var counts: [Int] = []
        for id in Int64(1)...8 {
            let flow = try #require(session.recorder(flow: id))
            flow.record(up, at: 0, bytes(40, UInt8(0x30 + id)))
            flow.finish()
            session.writer.flush()
            // A job runs after the loop's tick: the early sweep, when due, has run by then.
            _ = try session.writer.writingSegment()
            counts.append(home.files().count)
        }
        // Never more than the two whole segments the ceiling holds (80 of 100 bytes; the newest
        // is the one being written); without the early sweep: 1, 2, … 8.
        #expect(counts == [1, 2, 2, 2, 2, 2, 2, 2], "\(counts)")
        session.writer.close()
    }

    @Test func deleteAllRemovesRowsAndBytesAndSparesTheSegmentBeingWritten() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        let session = try session(home, clock: clock) { $0.segmentBytes = 10 }
        for id in Int64(1)...3 {
            let flow = try #require(session.recorder(flow: id))
            flow.record(up, at: 0, bytes(12))
            flow.finish()
        }
        session.writer.flush()
        #expect(home.files() == ["content-00000001.seg", "content-00000002.seg", "content-00000003.seg"])

        // Another process (a `tv content delete`) works through its own store: the live writer's
        // lock is what spares segment 3.
        let store = try home.store()
        defer { store.close() }
        let before = try store.usage()
        #expect(before.turns == 3 && before.flows == 3 && before.keptBytes == 36 && before.fileBytes == 36)
        #expect(before.beingWritten?.sequence == 3)
        let report = try store.deleteAll()
        #expect(report == ContentSweepReport(rowsDeleted: 3, filesDeleted: 2, bytesFreed: 24,
                                             spared: SegmentFile(sequence: 3, bytes: 12, isBeingWritten: true)))
        #expect(try store.usage().turns == 0)
        #expect(home.files() == ["content-00000003.seg"])

        // Once the session has closed the segment, the next sweep removes its unreferenced bytes.
        session.writer.close()
        #expect(try store.sweep(now: clock.now(), expiry: .oneDay).filesDeleted == 1)
        #expect(home.files() == [])
    }

    @Test func aFullQueueDropsChunksCountsThemAndMarksTheTurnIncomplete() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        let session = try session(home, clock: clock) { $0.queueChunks = 2 }
        session.writer.pauseForTesting()
        let flow = try #require(session.recorder(flow: 9))
        for i in 0..<5 { flow.record(down, at: Int64(i), bytes(10 + i)) }
        flow.finish()
        let counters = session.counters
        #expect(counters.chunksQueued == 2)
        #expect(counters.chunksDropped == 3)
        #expect(counters.bytesDropped == 12 + 13 + 14)
        session.writer.resumeForTesting()
        session.writer.flush()
        session.writer.close()
        let store = try home.store()
        defer { store.close() }
        let turns = try store.turns(flow: 9)
        #expect(turns.map(\.turn) == [Turn(number: 1, direction: down, startOffset: 0, keptBytes: 21, seenBytes: 60, incomplete: true)])
    }

    @Test func switchingOffStopsEveryFlowAtOnce() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        let session = try session(home, clock: clock)
        let flow = try #require(session.recorder(flow: 5))
        flow.record(up, at: 0, bytes(4))
        flow.record(down, at: 1, bytes(6))
        try session.apply(ContentPolicy(keep: false))
        #expect(!flow.isRecording)
        #expect(session.recorder(flow: 6) == nil)
        flow.record(down, at: 2, bytes(6))   // a caller that did not check isRecording: ignored
        flow.finish()
        session.writer.flush()
        session.writer.close()
        let store = try home.store()
        defer { store.close() }
        #expect(try store.turns(flow: 5).map(\.turn) == [
            Turn(number: 1, direction: up, startOffset: 0, keptBytes: 4, seenBytes: 4),
            Turn(number: 2, direction: down, startOffset: 1, keptBytes: 6, seenBytes: 6, incomplete: true),
        ])
    }

    @Test func nothingIsRecordedWithTheSwitchOff() throws {
        let home = TestHome()
        defer { home.clean() }
        let session = try session(home, clock: ManualContentClock(start: testEpoch), policy: ContentPolicy(keep: false))
        #expect(session.recorder(flow: 1) == nil)
        session.writer.close()
        #expect(home.files() == [])
    }

    @Test func aPeriodicSweepRunsWhileIdle() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        let session = try session(home, clock: clock) { $0.sweepInterval = 0.05 }
        let flow = try #require(session.recorder(flow: 1))
        flow.record(up, at: 0, bytes(3))
        flow.finish()
        session.writer.flush()
        clock.advance(by: 2 * 86_400_000_000)
        let deadline = Date().addingTimeInterval(5)
        // The sweep deletes the file, then counts itself: both are waited for (the count read
        // between the two was 1 in a loaded run).
        while (home.files() != [] || session.counters.sweeps < 2) && Date() < deadline { usleep(10_000) }
        #expect(home.files() == [])
        #expect(session.counters.sweeps >= 2)   // the one at start, and at least one periodic
        session.writer.close()
    }

    @Test func bytesOfADeletedSegmentAreSaidToBeGone() throws {
        let home = TestHome()
        defer { home.clean() }
        let session = try session(home, clock: ManualContentClock(start: testEpoch))
        let flow = try #require(session.recorder(flow: 8))
        flow.record(up, at: 0, bytes(3))
        flow.finish()
        session.writer.close()
        unlink(home.contentPath + "/content-00000001.seg")
        let store = try home.store()
        defer { store.close() }
        let turn = try #require(try store.turns(flow: 8).first)
        #expect(throws: ContentError.bytesGone(flow: 8, turn: 1)) { try store.bytes(of: turn) }
        // The summaries say so until then (they counted the turn as kept and readable: a trial).
        let summary = try store.summary(flow: 8)
        #expect(summary.keptBytes == 3 && summary.goneBytes == 3)
        let usage = try store.usage()
        #expect(usage.turns == 1 && usage.goneTurns == 1 && usage.segments.isEmpty)
        // The sweep drops rows that point at a missing file.
        #expect(try store.sweep(now: testEpoch, expiry: .oneDay).rowsDeleted == 1)
    }
}

@Suite struct OpenTurnsTests {
    /// Copies `bytes` into `batch` as the loop does, and hands the chunk to `open` as the writer does.
    static func append(_ open: inout OpenTurns, _ batch: inout ContentBatch, flow: Int64, turn: Turn, _ bytes: [UInt8])
        -> (discarded: Int, orphan: OpenTurns.Finished?) {
        bytes.withUnsafeBytes { batch.appendChunk(flow: flow, turn: turn, $0) }
        guard case let .chunk(_, _, block, start, count) = batch.events.last! else { fatalError("a chunk was appended") }
        return open.append(flow: flow, turn: turn, block: block, start: start, count: count)
    }

    @Test func aLostTurnEndIsWrittenIncompleteWhenTheNextTurnArrives() {
        var open = OpenTurns(limit: 100)
        var batch = ContentBatch()
        let first = Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: 3, seenBytes: 3)
        _ = Self.append(&open, &batch, flow: 1, turn: first, [1, 2, 3])
        let second = Turn(number: 2, direction: .serverToClient, startOffset: 5, keptBytes: 2, seenBytes: 2)
        let (discarded, orphan) = Self.append(&open, &batch, flow: 1, turn: second, [4, 5])
        #expect(discarded == 0)
        #expect(orphan?.turn == Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: 3, seenBytes: 3, incomplete: true))
        #expect(orphan.map { open.bytes(of: $0, in: batch) } == [1, 2, 3])
        let (earlier, ended) = open.end(flow: 1, turn: Turn(number: 2, direction: .serverToClient, startOffset: 5, keptBytes: 2, seenBytes: 9))
        #expect(earlier == nil)
        #expect(ended.turn == Turn(number: 2, direction: .serverToClient, startOffset: 5, keptBytes: 2, seenBytes: 9))
        #expect(open.bytes(of: ended, in: batch) == [4, 5])
        #expect(open.isEmpty && open.buffered == 0)
    }

    /// `tv content delete` between batches: open turns forget what they hold; one that gets more
    /// is written with only that, marked `startDeleted` (not `incomplete`: the recording lost
    /// nothing, and a trial's turn blamed the recording queue), one that gets nothing has no row.
    @Test func forgottenOpenTurnsKeepOnlyWhatComesAfter() {
        var open = OpenTurns(limit: 100)
        var first = ContentBatch()
        let response = Turn(number: 2, direction: .serverToClient, startOffset: 0, keptBytes: 5, seenBytes: 5)
        let quiet = Turn(number: 1, direction: .serverToClient, startOffset: 0, keptBytes: 2, seenBytes: 2)
        _ = Self.append(&open, &first, flow: 1, turn: response, [1, 2, 3])
        _ = Self.append(&open, &first, flow: 2, turn: quiet, [7, 8])
        open.endBatch(first)
        #expect(open.buffered == 5)
        open.forgetHeld()
        #expect(open.buffered == 0)
        var second = ContentBatch()
        _ = Self.append(&open, &second, flow: 1, turn: response, [4, 5])
        let ended = open.end(flow: 1, turn: response).ended
        #expect(!ended.deleted && ended.turn == Turn(number: 2, direction: .serverToClient, startOffset: 0, keptBytes: 2, seenBytes: 5, startDeleted: true))
        #expect(open.bytes(of: ended, in: second) == [4, 5])
        let gone = open.end(flow: 2, turn: quiet).ended
        #expect(gone.deleted)
    }

    @Test func theBufferLimitDiscardsAndMarks() {
        var open = OpenTurns(limit: 4)
        var batch = ContentBatch()
        let turn = Turn(number: 1, direction: .serverToClient, startOffset: 0, keptBytes: 6, seenBytes: 6)
        #expect(Self.append(&open, &batch, flow: 2, turn: turn, [1, 2, 3]).discarded == 0)
        #expect(Self.append(&open, &batch, flow: 2, turn: turn, [4, 5, 6]).discarded == 3)
        let done = open.end(flow: 2, turn: turn)
        #expect(done.earlier == nil)
        #expect(done.ended.turn == Turn(number: 1, direction: .serverToClient, startOffset: 0, keptBytes: 3, seenBytes: 6, incomplete: true))
        #expect(open.bytes(of: done.ended, in: batch) == [1, 2, 3])
    }

    /// A turn in one batch is read from the batch's blocks; a turn still open when its batch ends
    /// carries a copy of its bytes into the next, where its later pieces follow them.
    @Test func aTurnOpenAcrossBatchesCarriesItsBytes() {
        var open = OpenTurns(limit: 100)
        var first = ContentBatch()
        let turn = Turn(number: 1, direction: .serverToClient, startOffset: 0, keptBytes: 5, seenBytes: 5)
        let other = Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: 1, seenBytes: 1)
        _ = Self.append(&open, &first, flow: 3, turn: turn, [1, 2])
        _ = Self.append(&open, &first, flow: 4, turn: other, [9])
        _ = Self.append(&open, &first, flow: 3, turn: turn, [3])
        #expect(open.pieces.map(\.next) == [2, -1, -1])
        let short = open.end(flow: 4, turn: other).ended
        #expect(open.bytes(of: short, in: first) == [9] && short.carried.isEmpty)
        open.endBatch(first)
        #expect(open.pieces.isEmpty && open.buffered == 3)
        first.clear()
        var second = ContentBatch()
        _ = Self.append(&open, &second, flow: 3, turn: turn, [4, 5])
        let long = open.end(flow: 3, turn: turn).ended
        #expect(long.carried == [1, 2, 3])
        #expect(open.bytes(of: long, in: second) == [1, 2, 3, 4, 5])
        #expect(long.turn == turn && open.buffered == 0)
    }

    /// A flow's turns one after another in one batch (request, response, request) reuse its
    /// entry: it stays, idle, after each end, and the batch's end removes it; a turn open at the
    /// batch's end keeps its entry.
    @Test func consecutiveTurnsOfAFlowReuseItsEntryUntilTheBatchEnds() {
        var open = OpenTurns(limit: 100)
        var batch = ContentBatch()
        let request = Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: 2, seenBytes: 2)
        let response = Turn(number: 2, direction: .serverToClient, startOffset: 4, keptBytes: 3, seenBytes: 3)
        let next = Turn(number: 3, direction: .clientToServer, startOffset: 9, keptBytes: 1, seenBytes: 1)
        _ = Self.append(&open, &batch, flow: 7, turn: request, [1, 2])
        let first = open.end(flow: 7, turn: request)
        #expect(open.isEmpty && open.entries == 1 && open.buffered == 0)
        #expect(first.earlier == nil && first.ended.turn == request && open.bytes(of: first.ended, in: batch) == [1, 2])
        _ = Self.append(&open, &batch, flow: 7, turn: response, [3, 4])
        _ = Self.append(&open, &batch, flow: 7, turn: response, [5])
        #expect(!open.isEmpty && open.entries == 1 && open.buffered == 3)
        let second = open.end(flow: 7, turn: response)
        #expect(second.earlier == nil && second.ended.turn == response)
        #expect(open.bytes(of: second.ended, in: batch) == [3, 4, 5] && second.ended.carried.isEmpty)
        // An end for a turn the flow never opened: the earlier turn is not touched again.
        let stray = open.end(flow: 7, turn: Turn(number: 2, direction: .serverToClient, startOffset: 4, keptBytes: 0, seenBytes: 3))
        #expect(stray.earlier == nil && stray.ended.firstPiece == -1 && open.buffered == 0)
        _ = Self.append(&open, &batch, flow: 7, turn: next, [6])
        _ = Self.append(&open, &batch, flow: 8, turn: request, [9, 9])
        _ = open.end(flow: 8, turn: request)
        #expect(open.entries == 2 && open.buffered == 1)
        open.endBatch(batch)
        // Flow 8's idle entry is gone; flow 7's open turn carried its byte.
        #expect(open.entries == 1 && open.buffered == 1 && open.pieces.isEmpty)
        batch.clear()
        let last = open.end(flow: 7, turn: next)
        #expect(last.ended.turn == next && last.ended.carried == [6] && open.isEmpty)
    }
}

@Suite struct ContentWriterBatchingTests {
    let up = Direction.clientToServer
    let down = Direction.serverToClient

    /// The writer gathers for its linger (a minute here), but a flow that ends has its turns
    /// written at once: no flush, no waiting out the linger.
    @Test func aFinishedFlowIsWrittenWithoutWaitingOutTheLinger() throws {
        let home = TestHome()
        defer { home.clean() }
        var configuration = home.configuration()
        configuration.lingerMillis = 60_000
        let session = ContentRecorder(writer: try ContentWriter(configuration, clock: ManualContentClock(start: testEpoch)),
                                      policy: ContentPolicy(keep: true))
        let flow = try #require(session.recorder(flow: 4))
        flow.record(up, at: 0, bytes(5))
        flow.record(down, at: 1, bytes(7))
        flow.finish()
        let deadline = Date().addingTimeInterval(20)
        while session.counters.turnsWritten < 2 && Date() < deadline { usleep(10_000) }
        #expect(session.counters.turnsWritten == 2)
        #expect(session.counters.bytesWritten == 12)
        session.writer.close()
    }

    /// Many turns written in one batch land back to back in one segment, each row at its offset,
    /// with the exact figures; a batch crossing the segment size starts a new segment between
    /// turns (rows of the closed one committed first).
    @Test func aBatchOfTurnsIsStagedIntoOneWriteAndSplitAtTheSegmentSize() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        var configuration = home.configuration()
        configuration.segmentBytes = 25
        configuration.lingerMillis = 60_000   // only the flush below ends the gathering
        let session = ContentRecorder(writer: try ContentWriter(configuration, clock: clock), policy: ContentPolicy(keep: true))
        let flow = try #require(session.recorder(flow: 3))
        for i in 0..<4 {
            flow.record(up, at: Int64(10 * i), bytes(4, UInt8(i)))
            flow.record(down, at: Int64(10 * i + 5), bytes(6, UInt8(100 + i)))
        }
        flow.finish()
        session.writer.flush()
        #expect(session.counters.turnsWritten == 8)
        #expect(session.counters.bytesWritten == 40)
        session.writer.close()
        let store = try home.store()
        defer { store.close() }
        let rows = try store.turns(flow: 3)
        #expect(rows.map(\.turn.number) == Array(1...8))
        #expect(rows.map(\.segment) == [1, 1, 1, 1, 1, 1, 2, 2])
        #expect(rows.map(\.segmentOffset) == [0, 4, 10, 14, 20, 24, 0, 4])
        let read = try store.recordedTurns(flow: 3)
        var expected: [[UInt8]] = []
        for i in 0..<4 {
            expected.append(bytes(4, UInt8(i)))
            expected.append(bytes(6, UInt8(100 + i)))
        }
        #expect(read.map(\.bytes) == expected)
        #expect(home.files() == ["content-00000001.seg", "content-00000002.seg"])
    }
}
