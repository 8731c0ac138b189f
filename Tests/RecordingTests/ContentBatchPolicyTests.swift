import FlowStore
import Testing
@testable import Recording
import FlowTerms

@Suite struct ContentBatchPolicyTests {
    let policy = ContentBatchPolicy(bytes: 100, chunks: 10, ends: 4, lingerMillis: 20)

    @Test func aChunkFitsWhileBothItsCountAndItsBytesDo() {
        #expect(policy.admitsChunk(count: 10, pendingBytes: 90, pendingChunks: 9))
        #expect(!policy.admitsChunk(count: 11, pendingBytes: 90, pendingChunks: 9))
        #expect(!policy.admitsChunk(count: 1, pendingBytes: 0, pendingChunks: 10))
        #expect(policy.admitsChunk(count: 0, pendingBytes: 100, pendingChunks: 0))
    }

    @Test func turnEndsHaveTheirOwnReserve() {
        #expect(policy.admitsEnd(pendingEnds: 3))
        #expect(!policy.admitsEnd(pendingEnds: 4))
    }

    @Test func theWriterStopsGatheringAtHalfOfAnyLimit() {
        #expect(!policy.writeNow(pendingBytes: 49, pendingChunks: 4, pendingEnds: 1))
        #expect(policy.writeNow(pendingBytes: 50, pendingChunks: 0, pendingEnds: 0))
        #expect(policy.writeNow(pendingBytes: 0, pendingChunks: 5, pendingEnds: 0))
        #expect(policy.writeNow(pendingBytes: 0, pendingChunks: 0, pendingEnds: 2))
    }

    @Test func limitsBelowOneCountAsOne() {
        let tiny = ContentBatchPolicy(bytes: 0, chunks: -3, ends: 0, lingerMillis: -5)
        #expect(tiny == ContentBatchPolicy(bytes: 1, chunks: 1, ends: 1, lingerMillis: 0))
        #expect(tiny.admitsChunk(count: 1, pendingBytes: 0, pendingChunks: 0))
        #expect(!tiny.admitsChunk(count: 2, pendingBytes: 0, pendingChunks: 0))
        #expect(tiny.writeNow(pendingBytes: 1, pendingChunks: 0, pendingEnds: 0))
        #expect(!tiny.writeNow(pendingBytes: 0, pendingChunks: 0, pendingEnds: 0))
    }
}

@Suite struct ContentBatchTests {
    let turn = Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: 3, seenBytes: 3)

    @Test func chunksAreCopiedBackToBackIntoOneBlock() {
        var batch = ContentBatch()
        [UInt8]([1, 2, 3]).withUnsafeBytes { batch.appendChunk(flow: 7, turn: turn, $0) }
        batch.events.append(.turnEnded(flow: 7, turn: turn))
        [UInt8]([4, 5]).withUnsafeBytes { batch.appendChunk(flow: 8, turn: turn, $0) }
        #expect(batch.events == [
            .chunk(flow: 7, turn: turn, block: 0, start: 0, count: 3),
            .turnEnded(flow: 7, turn: turn),
            .chunk(flow: 8, turn: turn, block: 0, start: 3, count: 2),
        ])
        #expect(batch.blocks.map(\.contents) == [[1, 2, 3, 4, 5]])
        #expect(batch.withBytes(block: 0, start: 3, count: 2) { Array($0) } == [4, 5])
    }

    /// A chunk that does not fit the block's room starts a new block (bigger than the standard
    /// size when the chunk is); clearing keeps the first block's storage only.
    @Test func aChunkThatDoesNotFitStartsANewBlock() {
        var batch = ContentBatch()
        [UInt8]([1, 2]).withUnsafeBytes { batch.appendChunk(flow: 1, turn: turn, $0) }
        let room = batch.blocks[0].capacity - 2
        #expect(room >= ContentBatch.blockBytes - 2)
        let tooBig = [UInt8](repeating: 9, count: room + 1)
        tooBig.withUnsafeBytes { batch.appendChunk(flow: 1, turn: turn, $0) }
        let huge = [UInt8](repeating: 8, count: 3 * ContentBatch.blockBytes)
        huge.withUnsafeBytes { batch.appendChunk(flow: 2, turn: turn, $0) }
        #expect(batch.events == [
            .chunk(flow: 1, turn: turn, block: 0, start: 0, count: 2),
            .chunk(flow: 1, turn: turn, block: 1, start: 0, count: room + 1),
            .chunk(flow: 2, turn: turn, block: 2, start: 0, count: 3 * ContentBatch.blockBytes),
        ])
        #expect(batch.blocks.map(\.count) == [2, room + 1, 3 * ContentBatch.blockBytes])
        batch.clear()
        #expect(batch.isEmpty)
        #expect(batch.blocks.map(\.count) == [0])
        #expect(batch.blocks[0].capacity == room + 2)
    }
}

@Suite struct TurnIndexInsertTests {
    @Test func oneStatementCarriesManyRows() {
        #expect(TurnIndex.insertSQL(rows: 2) == "INSERT OR REPLACE INTO content_turn_runs (flow_id, first_turn, segment, recorded_at, turn_count, kept_bytes, turns) VALUES (?,?,?,?,?,?,?),(?,?,?,?,?,?,?)")
        #expect(TurnIndex.rowsPerInsert == 64)
    }

    @Test func insertsCarryPowersOfTwoRows() {
        #expect([0, 1, 2, 3, 7, 8, 63, 64, 65, 1_000].map { TurnIndex.rowsInNextInsert(remaining: $0) }
                == [1, 1, 2, 2, 4, 8, 32, 64, 64, 64])
    }

    /// 130 runs (one turn each of 130 flows): two full statements of 64 and one of 2, every turn
    /// read back as written; then 130 turns of one flow in two segments: two runs, one statement.
    @Test func rowsBeyondOneStatementAreAllInsertedInOrder() throws {
        let home = TestHome()
        defer { home.clean() }
        let database = try SQLiteDatabase(path: home.databasePath)
        try FlowSchema.migrate(database)
        let turns = (1...130).map { n in
            IndexedTurn(flowID: 5, turn: Turn(number: n, direction: n % 2 == 0 ? .serverToClient : .clientToServer,
                                              startOffset: Int64(n * 10), keptBytes: n, seenBytes: n + 1,
                                              cutBy: n == 130 ? .flowBudget : nil, incomplete: n == 7),
                        segment: 1 + n / 100, segmentOffset: Int64(n * 1_000), recordedAt: testEpoch + Int64(n))
        }
        let flows = turns.map { IndexedTurn(flowID: 1_000 + Int64($0.turn.number), turn: $0.turn, segment: $0.segment,
                                            segmentOffset: $0.segmentOffset, recordedAt: $0.recordedAt) }
        var statements: [Int: SQLiteStatement] = [:]
        try database.transaction { try TurnIndex(database: database).insert(flows, statements: &statements) }
        #expect(statements.keys.sorted() == [2, 64])   // 130 = 64 + 64 + 2
        for flow in flows { #expect(try TurnIndex(database: database).turns(flow: flow.flowID).turns == [flow]) }
        // 130 turns of flow 5 written together, 1…99 into segment 1 and 100…130 into segment 2: two runs.
        statements = [:]
        let oneBatch = turns.map { IndexedTurn(flowID: 5, turn: $0.turn, segment: $0.segment, segmentOffset: $0.segmentOffset, recordedAt: testEpoch) }
        try database.transaction { try TurnIndex(database: database).insert(oneBatch, statements: &statements) }
        #expect(statements.keys.sorted() == [2])
        #expect(try TurnIndex(database: database).turns(flow: 5).turns == oneBatch)
        let totals = try TurnIndex(database: database).totals()
        #expect([totals.turns, totals.flows] == [260, 131])
        #expect(totals.keptBytes == 2 * Int64((1...130).reduce(0, +)))
        database.close()
    }
}
