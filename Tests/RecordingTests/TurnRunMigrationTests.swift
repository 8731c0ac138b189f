import FlowStore
import FlowTerms
import Testing
@testable import Recording

/// FlowSchema's `content_turn_runs` migration on a store made by the schema before it: the
/// per-turn rows of `content_turns` become one run per flow, segment and write time, every value
/// carried over (a damaged one stays damaged), and the readers read the same turns.
@Suite struct TurnRunMigrationTests {
    /// The migrations before the one that packs the turns (found by what it makes, so that
    /// migrations added after it by other branches do not move it).
    static var before: [String] {
        let packing = FlowSchema.migrations.firstIndex { $0.contains("CREATE TABLE content_turn_runs") }!
        return Array(FlowSchema.migrations.prefix(packing))
    }

    static func words(_ value: SQLiteValue) -> String {
        switch value {
        case let .integer(n): return String(n)
        case let .text(t): return "'\(t)'"
        default: return "\(value)"
        }
    }

    static func totals(_ index: TurnIndex) throws -> [Int64] {
        let totals = try index.totals()
        return [Int64(totals.turns), Int64(totals.flows), totals.keptBytes]
    }

    @Test("per-turn rows become runs; turns, totals, segments and damage read as before")
    func convertsRows() throws {
        let home = TestHome()
        defer { home.clean() }
        let database = try SQLiteDatabase(path: home.databasePath)
        defer { database.close() }
        try FlowSchema.migrate(database, migrations: Self.before)
        let t = testEpoch
        // Flow 1: turns 1 and 2 written in one batch into segment 3, turn 3 later into segment 4.
        // Flow 2: one cut, incomplete turn. Flow 3: a row a hand edit damaged (kept_bytes -5).
        try database.execute("""
            INSERT INTO content_turns (flow_id, turn, direction, start_offset, kept_bytes, seen_bytes, truncated, cut_by,
                                       incomplete, segment, segment_offset, recorded_at) VALUES
                (1, 1, 'client_to_server', 0, 78, 78, 0, NULL, 0, 3, 0, \(t)),
                (1, 2, 'server_to_client', 1250, 1024, 1024, 0, NULL, 0, 3, 78, \(t)),
                (1, 3, 'client_to_server', 90000, 80, 80, 0, NULL, 0, 4, 0, \(t + 5_000_000)),
                (2, 1, 'server_to_client', 7, 65536, 90000, 1, 'flow_budget', 1, 3, 1102, \(t)),
                (3, 1, 'client_to_server', 0, -5, 10, 0, NULL, 0, 4, 80, \(t + 5_000_000));
            """)
        try FlowSchema.migrate(database)
        #expect(try database.userVersion() == FlowSchema.currentVersion)

        var runs: [String] = []
        try database.prepare("SELECT flow_id, first_turn, segment, recorded_at - \(t), turn_count, kept_bytes, turns FROM content_turn_runs ORDER BY flow_id, first_turn")
            .forEachRow { row in runs.append((0..<7).map { Self.words(row.value(at: Int32($0))) }.joined(separator: " ")) }
        #expect(runs == [
            "1 1 3 0 2 1102 '1,c,0,78,78,0,,0,0;2,s,1250,1024,1024,0,,0,78'",
            "1 3 4 5000000 1 80 '3,c,90000,80,80,0,,0,0'",
            "2 1 3 0 1 65536 '1,s,7,65536,90000,1,f,1,1102'",
            "3 1 4 5000000 1 -5 '1,c,0,-5,10,0,,0,80'",
        ])

        let index = TurnIndex(database: database)
        #expect(try index.turns(flow: 1).turns == [
            IndexedTurn(flowID: 1, turn: Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: 78, seenBytes: 78),
                        segment: 3, segmentOffset: 0, recordedAt: t),
            IndexedTurn(flowID: 1, turn: Turn(number: 2, direction: .serverToClient, startOffset: 1_250, keptBytes: 1_024, seenBytes: 1_024),
                        segment: 3, segmentOffset: 78, recordedAt: t),
            IndexedTurn(flowID: 1, turn: Turn(number: 3, direction: .clientToServer, startOffset: 90_000, keptBytes: 80, seenBytes: 80),
                        segment: 4, segmentOffset: 0, recordedAt: t + 5_000_000),
        ])
        #expect(try index.turns(flow: 2).turns == [
            IndexedTurn(flowID: 2, turn: Turn(number: 1, direction: .serverToClient, startOffset: 7, keptBytes: 65_536, seenBytes: 90_000,
                                              cutBy: .flowBudget, incomplete: true),
                        segment: 3, segmentOffset: 1_102, recordedAt: t),
        ])
        #expect(try index.turns(flow: 3).turns == [])
        #expect(try index.turns(flow: 3).damaged == [DamagedRow(row: "turn 1 of flow 3", column: "kept_bytes", value: .integer(-5))])
        // Totals count turns; the damaged run's sum (-5) is not counted.
        #expect(try Self.totals(index) == [5, 3, 78 + 1_024 + 80 + 65_536])
        #expect(try index.segmentRows(expiredBefore: t + 1).mapValues { [$0.rows, $0.expired] } == [3: [3, 3], 4: [2, 0]])
        #expect(try index.lowestSegment() == 3)
        #expect(try index.segmentFlows(of: [1, 2]) == [3: [1, 2], 4: [1]])
    }

    @Test("an empty turns index migrates to an empty one")
    func emptyIndex() throws {
        let home = TestHome()
        defer { home.clean() }
        let database = try SQLiteDatabase(path: home.databasePath)
        defer { database.close() }
        try FlowSchema.migrate(database, migrations: Self.before)
        try FlowSchema.migrate(database)
        #expect(try Self.totals(TurnIndex(database: database)) == [0, 0, 0])
        #expect(try TurnIndex(database: database).lowestSegment() == nil)
    }
}
