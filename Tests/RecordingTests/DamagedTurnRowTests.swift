import Foundation
import FlowStore
import Testing
@testable import Recording

/// Issue 12 §9: a turns-index row holding a value no writer writes ("-5 of 64 bytes kept", an
/// unknown direction read as client to server) is named as damaged and left out; the other turns
/// of the flow read as usual.
@Suite struct DamagedTurnRowTests {
    /// A well-formed row, in `TurnIndex.names` order: turn 3 of flow 7, 64 of 100 bytes kept.
    private func good() -> [SQLiteValue] {
        [.integer(7), .integer(3), .text("server_to_client"), .integer(1_500), .integer(64), .integer(100),
         .integer(1), .text("turn_limit"), .integer(0), .integer(2), .integer(4_096), .integer(testEpoch)]
    }

    private func with(_ column: String, _ value: SQLiteValue) -> [SQLiteValue] {
        var values = good()
        values[TurnIndex.names.firstIndex(of: column)!] = value
        return values
    }

    @Test("a well-formed row reads with every figure")
    func goodRow() throws {
        #expect(try TurnIndex.row(good()) == IndexedTurn(
            flowID: 7, turn: Turn(number: 3, direction: .serverToClient, startOffset: 1_500, keptBytes: 64, seenBytes: 100, cutBy: .turnLimit),
            segment: 2, segmentOffset: 4_096, recordedAt: testEpoch))
        #expect(try TurnIndex.row(with("truncated", .integer(0))).turn.cutBy == nil)
    }

    @Test("each value no writer writes names the turn, the flow and the column", arguments: [
        ("kept_bytes", SQLiteValue.integer(-5)),
        ("kept_bytes", .integer(67_108_865)),  // past the most a turn keeps (64 MiB, an HTTP/2 turn)
        ("seen_bytes", .integer(63)),
        ("direction", .text("sideways")),
        ("direction", .null),
        ("start_offset", .integer(-1)),
        ("truncated", .integer(2)),
        ("cut_by", .text("bogus")),
        ("incomplete", .text("yes")),
        ("segment", .integer(-3)),
        ("segment_offset", .integer(-9)),
    ])
    func damaged(column: String, value: SQLiteValue) {
        #expect(throws: DamagedRow(row: "turn 3 of flow 7", column: column, value: value)) { try TurnIndex.row(with(column, value)) }
    }

    @Test("a turn number below 1 is damaged too, and the row is named by what it holds")
    func turnZero() {
        #expect(throws: DamagedRow(row: "turn 0 of flow 7", column: "turn", value: .integer(0))) { try TurnIndex.row(with("turn", .integer(0))) }
    }

    @Test("the store leaves the damaged row out, names it, and sums only what is sound")
    func storeLeavesItOut() throws {
        let home = TestHome()
        defer { home.clean() }
        let recorder = ContentRecorder(writer: try ContentWriter(home.configuration(), clock: ManualContentClock(start: testEpoch)),
                                       policy: ContentPolicy(keep: true))
        let flow = try #require(recorder.recorder(flow: 9))
        flow.record(.clientToServer, at: 0, bytes(10))
        flow.record(.serverToClient, at: 5, bytes(20))
        flow.record(.clientToServer, at: 9, bytes(30))
        flow.finish()
        recorder.writer.close()
        let database = try SQLiteDatabase(path: home.databasePath)
        try TurnRunDamage.set("kept_bytes", to: "-5", flow: 9, turn: 2, in: database)
        // The run's own sum (what the whole-index total reads) said as no writer would.
        try database.execute("UPDATE content_turn_runs SET kept_bytes = 5000000000 WHERE flow_id = 9")
        database.close()

        let store = try home.store()
        defer { store.close() }
        #expect(try store.turns(flow: 9).map(\.turn.number) == [1, 3])
        #expect(try store.damagedTurns(flow: 9) == [DamagedRow(row: "turn 2 of flow 9", column: "kept_bytes", value: .integer(-5))])
        #expect(try store.recordedTurns(flow: 9).map(\.bytes) == [bytes(10), bytes(30)])
        #expect(try store.summary(flow: 9) == ContentSummary(turns: 2, keptBytes: 40, seenBytes: 40))
        // The whole-index total (tv content status) counts the turns, but not a damaged sum.
        #expect(try store.usage().keptBytes == 0)
        #expect(try store.usage().turns == 3)
    }
}
