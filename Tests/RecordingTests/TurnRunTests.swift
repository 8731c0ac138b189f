import FlowStore
import FlowTerms
import Testing
@testable import Recording

/// Issue 21 (recording small requests): the turns index holds one row per flow per batch, its
/// turns packed as text (`TurnRun`, `TurnRunText`, FlowSchema's `content_turn_runs`).
@Suite struct TurnRunTests {
    static let request = Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: 78, seenBytes: 78)
    static let response = Turn(number: 2, direction: .serverToClient, startOffset: 1_250, keptBytes: 1_024, seenBytes: 4_096,
                               cutBy: .turnLimit, incomplete: true)

    @Test("a batch's turns become one run per flow, in the order flows first appear, packed field by field")
    func runsOfABatch() {
        let rows = [
            IndexedTurn(flowID: 7, turn: Self.request, segment: 3, segmentOffset: 0, recordedAt: testEpoch),
            IndexedTurn(flowID: 9, turn: Self.request, segment: 3, segmentOffset: 78, recordedAt: testEpoch),
            IndexedTurn(flowID: 7, turn: Self.response, segment: 3, segmentOffset: 156, recordedAt: testEpoch),
            IndexedTurn(flowID: 9, turn: Turn(number: 2, direction: .serverToClient, startOffset: -1, keptBytes: 0, seenBytes: 10,
                                              cutBy: .flowBudget), segment: 3, segmentOffset: 1_180, recordedAt: testEpoch),
        ]
        #expect(TurnRun.runs(rows) == [
            TurnRun(flowID: 7, firstTurn: 1, segment: 3, recordedAt: testEpoch, turnCount: 2, keptBytes: 1_102,
                    turns: Array("1,c,0,78,78,0,,0,0;2,s,1250,1024,4096,1,t,1,156".utf8)),
            TurnRun(flowID: 9, firstTurn: 1, segment: 3, recordedAt: testEpoch, turnCount: 2, keptBytes: 78,
                    turns: Array("1,c,0,78,78,0,,0,78;2,s,-1,0,10,1,f,0,1180".utf8)),
        ])
    }

    @Test("a flow's turns in two segments (the segment rolled over mid-batch) are two runs")
    func runsSplitAtASegment() {
        let rows = [
            IndexedTurn(flowID: 7, turn: Self.request, segment: 3, segmentOffset: 900, recordedAt: testEpoch),
            IndexedTurn(flowID: 7, turn: Self.response, segment: 4, segmentOffset: 0, recordedAt: testEpoch),
        ]
        #expect(TurnRun.runs(rows).map { [$0.firstTurn, $0.segment, $0.turnCount] } == [[1, 3, 1], [2, 4, 1]])
    }

    @Test("decimal text of every Int64, as SQLite writes integers")
    func decimals() {
        let boundaries: [Int64] = (1...18).flatMap { power -> [Int64] in
            var ten: Int64 = 1
            for _ in 0..<power { ten *= 10 }
            return [ten - 1, ten, ten + 1, -ten, -(ten - 1)]
        }
        for value: Int64 in [0, 7, 10, 99, 100, 1_250, -1, -10, 1_000_000_000_000_000_000, Int64.max, Int64.min, Int64.min + 1]
            + boundaries {
            var text: [UInt8] = []
            TurnRunText.decimal(value, to: &text)
            #expect(String(decoding: text, as: UTF8.self) == String(value))
        }
    }

    @Test("flow keys hash with one multiply; consecutive ids take distinct buckets and are all found")
    func flowKeys() {
        #expect(FlowKey(1)._rawHashValue(seed: 0) == Int(bitPattern: 0x9E37_79B9_7F4A_7C15))
        #expect(FlowKey(2)._rawHashValue(seed: 5) == Int(truncatingIfNeeded: UInt64(0x9E37_79B9_7F4A_7C15) &* 2) ^ 5)
        // Low 10 bits (a 1,024-bucket table's) of 1,024 consecutive ids: all distinct.
        #expect(Set((0..<1_024).map { FlowKey(Int64(5_000 + $0))._rawHashValue(seed: 0) & 1_023 }).count == 1_024)
        var table: [FlowKey: Int64] = [:]
        for id in Int64(-500)..<100_000 { table[FlowKey(id)] = id &* 3 }
        #expect(table.count == 100_500)
        #expect((Int64(-500)..<100_000).allSatisfy { table[FlowKey($0)] == $0 &* 3 })
        #expect(table[FlowKey(100_000)] == nil)
    }

    @Test("the widest turn (every number at its extreme) is packed whole, within `longestTurn`, after text already there")
    func widestTurn() {
        let turn = Turn(number: Int.min, direction: .serverToClient, startOffset: Int64.min, keptBytes: Int.min,
                        seenBytes: Int.max, cutBy: .flowBudget, incomplete: true)
        var text = Array("x;".utf8)
        TurnRunText.append(IndexedTurn(flowID: 1, turn: turn, segment: 1, segmentOffset: Int64.min, recordedAt: testEpoch), to: &text)
        let expected = "x;-9223372036854775808,s,-9223372036854775808,-9223372036854775808,9223372036854775807,1,f,1,-9223372036854775808"
        #expect(String(decoding: text, as: UTF8.self) == expected)
        #expect(text.count - 2 == 111)
        #expect(TurnRunText.longestTurn == 112)
    }

    @Test("packed turns read back as written")
    func roundTrip() throws {
        let rows = [
            IndexedTurn(flowID: 7, turn: Self.request, segment: 3, segmentOffset: 0, recordedAt: testEpoch),
            IndexedTurn(flowID: 7, turn: Self.response, segment: 3, segmentOffset: 156, recordedAt: testEpoch),
        ]
        let run = try #require(TurnRun.runs(rows).first)
        let read = TurnRunText.turns(flow: 7, segment: .integer(3), recordedAt: .integer(testEpoch),
                                     text: String(decoding: run.turns, as: UTF8.self))
        #expect(try read.map { try $0.get() } == rows)
    }

    /// A turn going on at `tv content delete` keeps what came after, marked `startDeleted`:
    /// packed as incomplete 2 (3 with a loss of the recording's too), and read back as such.
    @Test("a turn whose start was deleted packs as incomplete 2 (3 with bytes lost too) and reads back as written")
    func startDeletedRoundTrip() throws {
        let cut = Turn(number: 4, direction: .clientToServer, startOffset: 9_000, keptBytes: 40, seenBytes: 90, startDeleted: true)
        let both = Turn(number: 5, direction: .serverToClient, startOffset: 9_500, keptBytes: 10, seenBytes: 30, incomplete: true, startDeleted: true)
        let rows = [IndexedTurn(flowID: 7, turn: cut, segment: 3, segmentOffset: 0, recordedAt: testEpoch),
                    IndexedTurn(flowID: 7, turn: both, segment: 3, segmentOffset: 40, recordedAt: testEpoch)]
        let run = try #require(TurnRun.runs(rows).first)
        #expect(String(decoding: run.turns, as: UTF8.self) == "4,c,9000,40,90,0,,2,0;5,s,9500,10,30,0,,3,40")
        let read = TurnRunText.turns(flow: 7, segment: .integer(3), recordedAt: .integer(testEpoch),
                                     text: String(decoding: run.turns, as: UTF8.self))
        #expect(try read.map { try $0.get() } == rows)
    }

    @Test("a packed value no writer writes is the damaged column of that turn; text that is not nine fields is damaged `turns`",
          arguments: [
              ("1,c,0,-5,78,0,,0,0", DamagedRow(row: "turn 1 of flow 7", column: "kept_bytes", value: .integer(-5))),
              ("1,x,0,78,78,0,,0,0", DamagedRow(row: "turn 1 of flow 7", column: "direction", value: .text("x"))),
              ("1,c,0,78,78,1,q,0,0", DamagedRow(row: "turn 1 of flow 7", column: "cut_by", value: .text("q"))),
              ("1,c,0,78,78,0,,4,0", DamagedRow(row: "turn 1 of flow 7", column: "incomplete", value: .integer(4))),
              ("1,c,0,78,78,0,,0,+5", DamagedRow(row: "turn 1 of flow 7", column: "segment_offset", value: .text("+5"))),
              ("1,c,0,78,78,0,,0,99999999999999999999", DamagedRow(row: "turn 1 of flow 7", column: "segment_offset", value: .text("99999999999999999999"))),
              ("0,c,0,78,78,0,,0,0", DamagedRow(row: "turn 0 of flow 7", column: "turn", value: .integer(0))),
              ("1,c,0,78,78,0,,0", DamagedRow(row: "a turn of flow 7", column: "turns", value: .text("1,c,0,78,78,0,,0"))),
          ])
    func damaged(text: String, damage: DamagedRow) {
        let read = TurnRunText.turns(flow: 7, segment: .integer(3), recordedAt: .integer(testEpoch), text: "2,s,5,1,1,0,,0,9;" + text)
        #expect(read.count == 2)
        #expect((try? read[0].get())?.turn.number == 2)
        #expect(throws: damage) { try read[1].get() }
    }

    @Test("a damaged segment or time column damages every turn of its row")
    func damagedRunColumns() {
        let read = TurnRunText.turns(flow: 7, segment: .integer(-3), recordedAt: .integer(testEpoch), text: "1,c,0,1,1,0,,0,0;2,s,5,1,1,0,,0,1")
        #expect(read.map { r -> String? in if case let .failure(d) = r { d.column } else { nil } } == ["segment", "segment"])
    }
}
