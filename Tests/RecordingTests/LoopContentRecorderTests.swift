import Foundation
import Testing
@testable import Recording
import FlowTerms

/// A loop thread's recorder (`LoopContentRecorder`, issue 21): no lock per chunk, one hand-over
/// to the writer's queue per loop turn, the bytes copied once (into the loop's block).
@Suite struct LoopContentRecorderTests {
    let up = Direction.clientToServer
    let down = Direction.serverToClient

    func session(_ home: TestHome, policy: ContentPolicy = ContentPolicy(keep: true),
                 configure: (inout ContentWriterConfiguration) -> Void = { _ in }) throws -> ContentRecorder {
        var configuration = home.configuration(expiry: policy.expiry)
        configure(&configuration)
        return ContentRecorder(writer: try ContentWriter(configuration, clock: ManualContentClock(start: testEpoch)), policy: policy)
    }

    func record(_ loop: any LoopChunkRecorder, _ flow: UInt64, _ chunk: Chunk) {
        chunk.bytes.withUnsafeBytes { loop.record(flow: flow, direction: chunk.direction, offsetMicros: chunk.offset, bytes: $0) }
    }

    /// Nothing reaches the queue before the loop's turn ends; then every chunk does, and the
    /// stored turns are those `TurnRecorder` makes of the chunks.
    @Test func chunksReachTheQueueWhenTheLoopTurnEnds() throws {
        let home = TestHome()
        defer { home.clean() }
        let session = try session(home)
        let loop = session.loopRecorder()
        #expect(loop is LoopContentRecorder)
        let chunks = [
            Chunk(up, at: 0, Array("GET / HTTP/1.1\r\n".utf8)), Chunk(up, at: 5, Array("\r\n".utf8)),
            Chunk(down, at: 900, Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)),
            Chunk(up, at: 2_000, [0x00, 0xff, 0x10]),
        ]
        for chunk in chunks { record(loop, 42, chunk) }
        #expect(session.activeFlows == 1)
        #expect(session.counters.chunksQueued == 0)
        loop.loopTurnEnded()
        #expect(session.counters.chunksQueued == 4)
        loop.flowEnded(flow: 42, cutOff: false)
        #expect(session.activeFlows == 0)
        loop.loopTurnEnded()
        session.writer.flush()
        #expect(session.counters.turnsWritten == 3)
        #expect(session.counters.bytesWritten == 48)
        session.writer.close()
        let store = try home.store()
        defer { store.close() }
        #expect(try store.recordedTurns(flow: 42) == TurnRecorder.turns(from: chunks))
    }

    /// The budget and the end of a flow that stopped recording, as through the shared map
    /// (`ContentRecorderFlowMapTests.aFlowKeepsItsRecorderUntilItEnds`), with turns spread over
    /// several loop turns and two flows interleaved in one.
    @Test func theSameTurnsAsTheSharedPath() throws {
        let home = TestHome()
        defer { home.clean() }
        let session = try session(home, policy: ContentPolicy(keep: true, flowBudget: 4))
        let loop = session.loopRecorder()
        record(loop, 7, Chunk(up, at: 0, bytes(6)))
        record(loop, 8, Chunk(down, at: 0, bytes(2, 0x62)))
        #expect(session.activeFlows == 2)
        loop.loopTurnEnded()
        record(loop, 7, Chunk(down, at: 1, bytes(5)))
        loop.loopTurnEnded()
        record(loop, 7, Chunk(up, at: 2, bytes(3)))
        #expect(session.activeFlows == 1, "both sides cut and no turn counting: flow 7 stopped itself")
        record(loop, 7, Chunk(down, at: 3, bytes(2)))
        loop.flowEnded(flow: 7, cutOff: false)
        loop.flowEnded(flow: 7, cutOff: false)  // a second end is harmless
        loop.flowEnded(flow: 8, cutOff: true)
        #expect(session.activeFlows == 0)
        loop.loopTurnEnded()
        session.writer.close()
        let store = try home.store()
        defer { store.close() }
        #expect(try store.turns(flow: 7).map(\.turn) == [
            Turn(number: 1, direction: up, startOffset: 0, keptBytes: 4, seenBytes: 6, cutBy: .flowBudget),
            Turn(number: 2, direction: down, startOffset: 1, keptBytes: 4, seenBytes: 5, cutBy: .flowBudget),
        ])
        #expect(try store.recordedTurns(flow: 8) == [
            RecordedTurn(turn: Turn(number: 1, direction: down, startOffset: 0, keptBytes: 2, seenBytes: 2), bytes: bytes(2, 0x62)),
        ])
    }

    /// Switched off, the loop's flows end their open turns (incomplete) at its next turn end and
    /// are not recorded again when content is switched back on; a new flow is.
    @Test func aSwitchOffReachesTheLoopsFlowsAtItsNextTurnEnd() throws {
        let home = TestHome()
        defer { home.clean() }
        let session = try session(home)
        let loop = session.loopRecorder()
        record(loop, 1, Chunk(up, at: 0, bytes(2)))
        loop.loopTurnEnded()
        try session.apply(ContentPolicy(keep: false))
        #expect(session.activeFlows == 1)
        loop.loopTurnEnded()
        #expect(session.activeFlows == 0)
        try session.apply(ContentPolicy(keep: true))
        record(loop, 1, Chunk(down, at: 1, bytes(4)))
        record(loop, 3, Chunk(down, at: 0, bytes(5)))
        loop.loopTurnEnded()
        #expect(session.activeFlows == 1)
        for flow: UInt64 in [1, 3] { loop.flowEnded(flow: flow, cutOff: false) }
        loop.loopTurnEnded()
        #expect(session.activeFlows == 0)
        session.writer.close()
        let store = try home.store()
        defer { store.close() }
        #expect(try store.turns(flow: 1).map(\.turn) == [
            Turn(number: 1, direction: up, startOffset: 0, keptBytes: 2, seenBytes: 2, incomplete: true),
        ])
        #expect(try store.turns(flow: 3).map(\.turn) == [
            Turn(number: 1, direction: down, startOffset: 0, keptBytes: 5, seenBytes: 5),
        ])
    }

    /// A full queue drops chunks of a gathered turn: counted, and the turn's kept figure leaves
    /// them out whether it ended in the same hand-over or later.
    @Test func aFullQueueDropsChunksAndTheTurnsFiguresLeaveThemOut() throws {
        let home = TestHome()
        defer { home.clean() }
        let session = try session(home) { $0.queueChunks = 2 }
        session.writer.pauseForTesting()
        let loop = session.loopRecorder()
        for i in 0..<3 { record(loop, 9, Chunk(down, at: Int64(i), bytes(10 + i))) }
        loop.loopTurnEnded()  // turn 1 open: its third chunk dropped
        record(loop, 9, Chunk(up, at: 5, bytes(1)))  // ends turn 1; the queue is still full
        record(loop, 10, Chunk(up, at: 0, bytes(3)))
        record(loop, 10, Chunk(down, at: 1, bytes(4)))  // turn 1 of flow 10 ends in this hand-over
        loop.loopTurnEnded()
        let counters = session.counters
        #expect(counters.chunksQueued == 2)
        #expect(counters.chunksDropped == 4)
        #expect(counters.bytesDropped == 12 + 1 + 3 + 4)
        session.writer.resumeForTesting()
        session.writer.flush()
        for flow: UInt64 in [9, 10] { loop.flowEnded(flow: flow, cutOff: false) }
        loop.loopTurnEnded()
        session.writer.close()
        let store = try home.store()
        defer { store.close() }
        #expect(try store.turns(flow: 9).map(\.turn) == [
            Turn(number: 1, direction: down, startOffset: 0, keptBytes: 21, seenBytes: 33, incomplete: true),
            Turn(number: 2, direction: up, startOffset: 5, keptBytes: 0, seenBytes: 1, incomplete: true),
        ])
        #expect(try store.turns(flow: 10).map(\.turn) == [
            Turn(number: 1, direction: up, startOffset: 0, keptBytes: 0, seenBytes: 3, incomplete: true),
            Turn(number: 2, direction: down, startOffset: 1, keptBytes: 0, seenBytes: 4, incomplete: true),
        ])
    }
}

/// The content queue's batch taking a loop's gathered turn (`PendingContent.add(.gathered)`).
@Suite struct PendingContentGatheredTests {
    let policy = ContentBatchPolicy(bytes: 100, chunks: 2, ends: 4, lingerMillis: 20)

    func turn(_ number: Int, kept: Int, incomplete: Bool = false) -> Turn {
        Turn(number: number, direction: .serverToClient, startOffset: 0, keptBytes: kept, seenBytes: kept, incomplete: incomplete)
    }

    /// The loop's blocks are referred to, not copied; a dropped chunk leaves its turn's later
    /// chunk events and its end; the drops of turns still open are answered.
    @Test func dropsLeaveTheTurnsFiguresAndOpenOnesAreAnswered() {
        let block = ContentBlock(capacity: 64, loopOwned: true)
        var gathered = ContentBatch()
        for (flow, kept, count) in [(Int64(1), 3, 3), (1, 5, 2), (2, 4, 4), (1, 7, 2)] {
            let start = [UInt8](repeating: UInt8(flow), count: count).withUnsafeBytes { block.append($0) }
            gathered.appendChunk(flow: flow, turn: turn(1, kept: kept), in: block, start: start, count: count)
        }
        gathered.events.append(.turnEnded(flow: 2, turn: turn(1, kept: 4)))
        #expect(gathered.blocks.count == 1)
        var pending = PendingContent(policy: policy)
        var counters = ContentCounters()
        [UInt8]([9]).withUnsafeBytes { _ = pending.add(.chunk(flow: 5, ended: nil, chunkOf: turn(1, kept: 1), kept: $0), refusing: false, counters: &counters) }
        let (added, answer) = pending.add(.gathered(gathered), refusing: false, counters: &counters)
        #expect(added == 2)
        #expect(pending.batch.events == [
            .chunk(flow: 5, turn: turn(1, kept: 1), block: 0, start: 0, count: 1),
            .chunk(flow: 1, turn: turn(1, kept: 3), block: 1, start: 0, count: 3),
            .turnEnded(flow: 2, turn: Turn(number: 1, direction: .serverToClient, startOffset: 0, keptBytes: 0, seenBytes: 4, incomplete: true)),
        ])
        #expect(pending.batch.blocks[1] === block)
        #expect(answer == ContentOfferAnswer(openTurnDrops: [TurnDrop(flow: 1, turn: 1, bytes: 4)]))
        #expect(counters.chunksQueued == 2 && counters.chunksDropped == 3 && counters.bytesDropped == 8)
        #expect(Array(pending.batch.bytes(block: 1, start: 0, count: 3)) == [1, 1, 1])
        pending.removeAll()
        #expect(pending.batch.blocks.map(\.loopOwned) == [false], "the loop's block is let go, the queue's own kept")
    }

}
