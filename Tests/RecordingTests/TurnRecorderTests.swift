import Testing
@testable import Recording
import FlowTerms

@Suite struct TurnRecorderTests {
    let up = Direction.clientToServer
    let down = Direction.serverToClient

    @Test func turnsAreMaximalRunsOfOneSide() {
        let chunks = [
            Chunk(up, at: 0, Array("GET / HTTP/1.1\r\n".utf8)),
            Chunk(up, at: 120, Array("Host: a.test\r\n\r\n".utf8)),
            Chunk(down, at: 4_500, Array("HTTP/1.1 200 OK\r\n".utf8)),
            Chunk(down, at: 9_000_000, Array("Content-Length: 0\r\n\r\n".utf8)),  // a long gap is no boundary
            Chunk(up, at: 9_100_000, Array("x".utf8)),
        ]
        let turns = TurnRecorder.turns(from: chunks)
        #expect(turns.map(\.turn) == [
            Turn(number: 1, direction: up, startOffset: 0, keptBytes: 32, seenBytes: 32),
            Turn(number: 2, direction: down, startOffset: 4_500, keptBytes: 38, seenBytes: 38),
            Turn(number: 3, direction: up, startOffset: 9_100_000, keptBytes: 1, seenBytes: 1),
        ])
        #expect(turns[0].bytes == Array("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8))
    }

    @Test func theTurnLimitCutsTheCrossingChunkAndOnlyItsTurn() {
        var recorder = TurnRecorder(budget: RecordingBudget(turnLimit: 10, flowBudget: 100))
        #expect(recorder.take(up, at: 0, count: 3) == ChunkVerdict(turn: 1, keep: 3))
        let first = Turn(number: 1, direction: up, startOffset: 0, keptBytes: 3, seenBytes: 3)
        #expect(recorder.take(down, at: 10, count: 4) == ChunkVerdict(turn: 2, keep: 4, ended: first))
        #expect(recorder.take(down, at: 11, count: 4) == ChunkVerdict(turn: 2, keep: 4))
        #expect(recorder.take(down, at: 12, count: 4) == ChunkVerdict(turn: 2, keep: 2, cut: true))
        // After the cut the turn still counts what it sees, and keeps nothing.
        #expect(recorder.take(down, at: 13, count: 4) == ChunkVerdict(turn: 2, keep: 0))
        // The turn limit stops its turn, not its side (a keep-alive connection's later
        // responses were all lost after one past 64 KiB: trial 42).
        #expect(recorder.stopped(down) == nil)
        let cut = Turn(number: 2, direction: down, startOffset: 10, keptBytes: 10, seenBytes: 16, cutBy: .turnLimit)
        #expect(!cut.stopsSide)
        #expect(recorder.take(up, at: 20, count: 5) == ChunkVerdict(turn: 3, keep: 5, ended: cut))
        // The side's next run is a turn of its own, kept under a fresh turn limit.
        let third = Turn(number: 3, direction: up, startOffset: 20, keptBytes: 5, seenBytes: 5)
        #expect(recorder.take(down, at: 30, count: 7) == ChunkVerdict(turn: 4, keep: 7, ended: third))
        let fourth = Turn(number: 4, direction: down, startOffset: 30, keptBytes: 7, seenBytes: 7)
        #expect(recorder.take(up, at: 40, count: 2) == ChunkVerdict(turn: 5, keep: 2, ended: fourth))
        #expect(recorder.finish() == Turn(number: 5, direction: up, startOffset: 40, keptBytes: 2, seenBytes: 2))
        #expect(recorder.finish() == nil)
    }

    @Test func theFlowBudgetCutsAtTheExactByteAndTheCutChunkIsLast() {
        let budget = RecordingBudget(turnLimit: 64, flowBudget: 10)
        let turns = TurnRecorder.turns(from: [
            Chunk(up, at: 0, bytes(6, 0x31)),
            Chunk(down, at: 1, bytes(3, 0x41)),
            Chunk(up, at: 2, bytes(6, 0x32)),   // 6 + 6 > 10: cut to 4, the side stops
            Chunk(up, at: 3, bytes(9, 0x33)),   // same turn: seen, not kept
            Chunk(down, at: 4, bytes(2, 0x42)),
            Chunk(up, at: 5, bytes(5, 0x34)),   // not recorded
            Chunk(down, at: 6, bytes(1, 0x43)),
        ], budget: budget)
        #expect(turns.map(\.turn) == [
            Turn(number: 1, direction: up, startOffset: 0, keptBytes: 6, seenBytes: 6),
            Turn(number: 2, direction: down, startOffset: 1, keptBytes: 3, seenBytes: 3),
            Turn(number: 3, direction: up, startOffset: 2, keptBytes: 4, seenBytes: 15, cutBy: .flowBudget),
            Turn(number: 4, direction: down, startOffset: 4, keptBytes: 2, seenBytes: 2),
            Turn(number: 5, direction: down, startOffset: 6, keptBytes: 1, seenBytes: 1),
        ])
        #expect(turns[2].bytes == bytes(4, 0x32))
        #expect(turns.filter { $0.turn.direction == up }.last?.turn.truncated == true)
    }

    @Test func aTurnThatEndsExactlyAtTheLimitIsNotCut() {
        var recorder = TurnRecorder(budget: RecordingBudget(turnLimit: 8, flowBudget: 100))
        #expect(recorder.take(down, at: 0, count: 8) == ChunkVerdict(turn: 1, keep: 8))
        #expect(recorder.stopped(down) == nil)
        _ = recorder.take(up, at: 1, count: 1)
        #expect(recorder.take(down, at: 2, count: 8) == ChunkVerdict(turn: 3, keep: 8, ended: Turn(
            number: 2, direction: up, startOffset: 1, keptBytes: 1, seenBytes: 1)))
        // One more byte in the same turn crosses: cut to 0, marked, side stopped.
        #expect(recorder.take(down, at: 3, count: 1) == ChunkVerdict(turn: 3, keep: 0, cut: true))
        #expect(recorder.finish()?.cutBy == .turnLimit)
    }

    @Test func aOneMebibyteResponseKeeps64KiBOfEverythingSeen() {
        // 200 header bytes then 1,048,576 body bytes, read 16 KiB at a time.
        var chunks = [Chunk(up, at: 0, bytes(78))]
        var body = bytes(200 + 1_048_576)
        var offset: Int64 = 1_000
        while !body.isEmpty {
            let n = min(16_384, body.count)
            chunks.append(Chunk(down, at: offset, Array(body.prefix(n))))
            body.removeFirst(n)
            offset += 50
        }
        let turns = TurnRecorder.turns(from: chunks)
        #expect(turns.count == 2)
        #expect(turns[1].turn == Turn(number: 2, direction: down, startOffset: 1_000, keptBytes: 65_536,
                                      seenBytes: 1_048_776, cutBy: .turnLimit))
        #expect(turns[1].bytes.count == 65_536)
    }

    @Test func theDefaultFlowBudgetIsOneMebibytePerDirection() {
        var chunks: [Chunk] = []
        for i in 0..<20 {
            chunks.append(Chunk(up, at: Int64(i * 10), bytes(10)))
            chunks.append(Chunk(down, at: Int64(i * 10 + 5), bytes(61_440)))  // 60 KiB turns
        }
        let down = TurnRecorder.turns(from: chunks).filter { $0.turn.direction == .serverToClient }
        #expect(down.count == 18)
        #expect(down[16].turn.keptBytes == 61_440 && !down[16].turn.truncated)
        // 17 × 61,440 = 1,044,480 kept; 4,096 bytes of room are left for the 18th turn.
        #expect(down[17].turn == Turn(number: 36, direction: .serverToClient, startOffset: 175, keptBytes: 4_096,
                                      seenBytes: 61_440, cutBy: .flowBudget))
        #expect(down.reduce(0) { $0 + $1.turn.keptBytes } == RecordingBudget.defaultFlowBudget)
    }

    @Test func emptyChunksAreIgnoredAndIncompleteIsMarked() {
        var recorder = TurnRecorder()
        #expect(recorder.take(up, at: 0, count: 0) == ChunkVerdict(turn: nil, keep: 0))
        #expect(recorder.openTurn == nil)
        _ = recorder.take(up, at: 1, count: 5)
        recorder.markIncomplete()
        #expect(recorder.finish() == Turn(number: 1, direction: up, startOffset: 1, keptBytes: 5, seenBytes: 5, incomplete: true))
    }

    /// Bytes the queue dropped leave the turn's kept figure (it is what the store holds) and mark
    /// it incomplete; the budget still counts them, so what is kept later does not change.
    @Test func droppedBytesLeaveTheKeptFigureButNotTheBudget() {
        var recorder = TurnRecorder(budget: RecordingBudget(turnLimit: 10, flowBudget: 100))
        #expect(recorder.take(up, at: 0, count: 4) == ChunkVerdict(turn: 1, keep: 4))
        #expect(recorder.take(up, at: 1, count: 3) == ChunkVerdict(turn: 1, keep: 3))
        recorder.dropped(3)
        #expect(recorder.openTurn == Turn(number: 1, direction: up, startOffset: 0, keptBytes: 4, seenBytes: 7, incomplete: true))
        #expect(recorder.take(up, at: 2, count: 5) == ChunkVerdict(turn: 1, keep: 3, cut: true))
        #expect(recorder.kept(up) == 10)
        #expect(recorder.finish() == Turn(number: 1, direction: up, startOffset: 0, keptBytes: 7, seenBytes: 12,
                                          cutBy: .turnLimit, incomplete: true))
        recorder.dropped(2)  // no open turn: nothing to change
        #expect(recorder.openTurn == nil)
    }

    @Test func doneWhenBothSidesAreCutAndNothingCounts() {
        var recorder = TurnRecorder(budget: RecordingBudget(turnLimit: 2, flowBudget: 2))
        _ = recorder.take(up, at: 0, count: 3)
        #expect(!recorder.isDone)
        _ = recorder.take(down, at: 1, count: 3)
        #expect(!recorder.isDone)   // turn 2 is still counting what it sees
        let verdict = recorder.take(up, at: 2, count: 1)
        #expect(verdict.turn == nil && verdict.ended?.seenBytes == 3)
        #expect(recorder.isDone)
    }
}
