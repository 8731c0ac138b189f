import FlowStore
import FlowTerms
import Testing
@testable import Recording

/// The turns index's one secondary index, (segment, recorded_at, turn_count): what SQLite's query planner
/// says it does with the sweep's statements (`EXPLAIN QUERY PLAN`, sqlite.org/eqp.html), so that
/// a sweep never looks each row up in the table again.
@Suite("TurnIndex: the sweep's statements read the (segment, recorded_at, turn_count) index")
struct TurnIndexPlanTests {
    static func plan(_ database: SQLiteDatabase, _ sql: String) throws -> [String] {
        var details: [String] = []
        try database.prepare("EXPLAIN QUERY PLAN " + sql).forEachRow { details.append($0.string(at: 3) ?? "") }
        return details
    }

    @Test func segmentCountsAndExpiryUseTheIndex() throws {
        let home = TestHome()
        defer { home.clean() }
        let database = try SQLiteDatabase(path: home.databasePath)
        defer { database.close() }
        _ = try FlowSchema.migrate(database)
        #expect(try Self.plan(database, "SELECT segment, total(turn_count), total(CASE WHEN recorded_at < 5 THEN turn_count ELSE 0 END) FROM content_turn_runs GROUP BY segment")
                == ["SCAN content_turn_runs USING COVERING INDEX content_turn_runs_by_segment_time"])
        #expect(try Self.plan(database, "DELETE FROM content_turn_runs WHERE segment = 3 AND recorded_at < 5 RETURNING turn_count")
                == ["SEARCH content_turn_runs USING COVERING INDEX content_turn_runs_by_segment_time (segment=? AND recorded_at<?)"])
        #expect(try Self.plan(database, "SELECT min(segment) FROM content_turn_runs")
                == ["SEARCH content_turn_runs USING COVERING INDEX content_turn_runs_by_segment_time"])
    }

    /// Rows of two segments, some expired: the segment-wise delete takes exactly those.
    @Test func expiryDeletesOnlyOlderRowsOfTheNamedSegments() throws {
        let home = TestHome()
        defer { home.clean() }
        let database = try SQLiteDatabase(path: home.databasePath)
        defer { database.close() }
        _ = try FlowSchema.migrate(database)
        let index = TurnIndex(database: database)
        let turn = Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: 1, seenBytes: 1)
        var rows: [IndexedTurn] = []
        for (flow, segment, at) in [(1, 1, 10), (2, 1, 20), (3, 2, 10), (4, 2, 30)] as [(Int64, Int, Int64)] {
            rows.append(IndexedTurn(flowID: flow, turn: turn, segment: segment, segmentOffset: 0, recordedAt: at))
        }
        try index.insert(rows)
        #expect(try index.segmentRows(expiredBefore: 25).mapValues { [$0.rows, $0.expired] } == [1: [2, 2], 2: [2, 1]])
        #expect(try index.deleteRecorded(before: 25, inSegments: [2]) == 1)
        #expect(try index.segmentRows(expiredBefore: 25).mapValues { [$0.rows, $0.expired] } == [1: [2, 2], 2: [1, 0]])
        #expect(try index.deleteRecorded(before: 25, inSegments: []) == 0)
    }
}
