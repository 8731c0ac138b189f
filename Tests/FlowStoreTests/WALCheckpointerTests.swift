import Foundation
import Testing
@testable import FlowStore
import FlowTerms

/// The flow writer's WAL checkpoints off its thread (`WALCheckpointSchedule`, `WALCheckpointer`):
/// the schedule's decisions, and a writer whose WAL is checkpointed and bounded while it writes,
/// with and without a reader holding an old snapshot.
@Suite struct WALCheckpointerTests {
    @Test("the schedule: a request every askEvery frames, a wait past restartAt, counted again after the WAL starts over")
    func schedule() {
        var schedule = WALCheckpointSchedule(askEvery: 100, restartAt: 400)
        var decisions: [WALCheckpointSchedule.Decision] = []
        for frames in [40, 99, 100, 150, 199, 230, 330, 399, 430, 460, 530, 20, 119, 120, 700] {
            decisions.append(schedule.committed(frames: frames))
        }
        #expect(decisions == [.nothing, .nothing, .ask, .nothing, .nothing, .ask, .ask, .nothing, .waitForAll, .nothing,
                              .waitForAll, .nothing, .ask, .nothing, .waitForAll])
        #expect(schedule.askedAt == 700)
        // Nonsense limits are raised to something that works.
        let odd = WALCheckpointSchedule(askEvery: 0, restartAt: -5)
        #expect(odd.askEvery == 1 && odd.restartAt == 1)
        #expect(WALCheckpointSchedule.flowWriter == WALCheckpointSchedule(askEvery: 4_096, restartAt: 16_384))
    }

    /// `count` new flows from `first` on, each with hosts and addresses of its own, so each adds
    /// entries to every index.
    static func batch(from first: Int64, count: Int) -> [FlowEvent] {
        (first..<first + Int64(count)).map { i in
            var flow = sampleFlow(start: 1_700_000_000_000_000 + i * 1_000_000, host: "host-\(i).example.test",
                                  server: "10.\(i % 200).\(i / 200 % 200).\(i % 7)", client: "192.168.\(i % 250).\(i % 13)")
            flow.id = i
            flow.duration = 5
            return .closed(flow)
        }
    }

    static func walFrames(_ path: String) -> Int {
        var st = stat()
        guard stat(path + "-wal", &st) == 0, st.st_size > 32 else { return 0 }
        return (Int(st.st_size) - 32) / (4_096 + 24)
    }

    @Test("while the writer writes, the checkpointer copies the WAL and the WAL starts over: its file stays within restartAt and a batch")
    func boundedWhileWriting() throws {
        try withStore { store, folder in
            let path = folder + "/tunnelvision.sqlite3"
            let writer = try FlowBatchWriter(path: path, walSchedule: WALCheckpointSchedule(askEvery: 64, restartAt: 256))
            var largestBatch = 0, startedOver = 0, previous = 0, written = 0
            for round in 0..<40 {
                try writer.write(Self.batch(from: Int64(round * 400 + 1), count: 400))
                let frames = writer.walFramesAfterLastCommit
                if frames < previous { startedOver += 1 }
                let added = frames < previous ? frames : frames - previous
                largestBatch = max(largestBatch, added)
                written += added
                previous = frames
            }
            let runs = writer.checkpointer?.runs ?? 0
            // Without checkpoints the WAL would hold every batch's frames: 40 batches.
            #expect(largestBatch > 0)
            #expect(written > 3 * (256 + 2 * largestBatch))
            #expect(Self.walFrames(path) <= 256 + 2 * largestBatch)
            #expect(startedOver >= 3)
            #expect(runs >= startedOver)
            writer.close()
            let (count, check) = try store.connection.withDatabase { database in
                (try database.scalar("SELECT count(*) FROM flows"), try database.scalar("PRAGMA integrity_check"))
            }
            #expect(count == .integer(16_000))
            #expect(check == .text("ok"))
        }
    }

    @Test("a reader holding an old snapshot: the writer is not stopped, the WAL grows while it reads and starts over after")
    func readerHoldingASnapshot() throws {
        try withStore { store, folder in
            let path = folder + "/tunnelvision.sqlite3"
            let writer = try FlowBatchWriter(path: path, walSchedule: WALCheckpointSchedule(askEvery: 64, restartAt: 256))
            try writer.write(Self.batch(from: 1, count: 400))
            let reader = try SQLiteDatabase(path: path)
            try reader.execute("BEGIN")
            #expect(try reader.scalar("SELECT count(*) FROM flows") == .integer(400))
            for round in 1..<15 { try writer.write(Self.batch(from: Int64(round * 400 + 1), count: 400)) }
            let held = writer.walFramesAfterLastCommit
            // Nothing after the reader's snapshot could be copied, so nothing started over.
            #expect(held > 256 * 2)
            #expect(try reader.scalar("SELECT count(*) FROM flows") == .integer(400))
            try reader.execute("COMMIT")
            reader.close()
            var after = held
            for round in 15..<25 {
                try writer.write(Self.batch(from: Int64(round * 400 + 1), count: 400))
                after = min(after, writer.walFramesAfterLastCommit)
            }
            #expect(after < held)
            writer.close()
            let count = try store.connection.withDatabase { try $0.scalar("SELECT count(*) FROM flows") }
            #expect(count == .integer(10_000))
        }
    }
}
