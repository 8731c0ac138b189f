import Testing
@testable import FlowStore

@Suite struct FlowQueryTests {
    private let select = "SELECT " + FlowRecordColumns.selectList + " FROM flows"

    @Test func plansTheNewestPageWithoutFilters() throws {
        let plan = try FlowQuery().plan()
        #expect(plan.sql == select + " ORDER BY start_time DESC, id DESC LIMIT ?")
        #expect(plan.bindings == [.integer(51)])
        #expect(plan.limit == 50)
    }

    @Test func plansEveryFilterAndTheCursor() throws {
        let cursor = FlowCursor(startTime: 7_000, id: 42).string
        let query = FlowQuery(host: "a_b%", status: .keptPrivate, since: 100, from: 200, to: 9_000,
                              limit: 10, after: cursor)
        let plan = try query.plan()
        func names(_ bit: Int) -> String {
            "SELECT name FROM flow_names WHERE columns & \(bit) AND id IN (SELECT rowid FROM flow_names_text WHERE flow_names_text MATCH ?)"
        }
        // The days from the later of --since and --from on (the first flow's at or after it).
        let days = "start_time / 86400000000 IN (WITH RECURSIVE flow_days(d) AS (SELECT min(start_time) / 86400000000 FROM flows WHERE start_time >= ?"
            + " UNION ALL SELECT (SELECT min(start_time) FROM flows WHERE start_time >= (d + 1) * 86400000000) / 86400000000"
            + " FROM flow_days WHERE d IS NOT NULL) SELECT d FROM flow_days WHERE d IS NOT NULL)"
        let text = "((\(days) AND host IN (\(names(1)))) OR (\(days) AND other_hosts <> '' AND other_hosts IN (\(names(2))))"
            + " OR (\(days) AND server_address IN (\(names(4)))) OR (\(days) AND client_address IN (\(names(8)))))"
        #expect(plan.sql == select + " WHERE " + text
            + " AND status = ? AND start_time >= ? AND start_time >= ?"
            + " AND start_time < ? AND (start_time, id) < (?, ?) ORDER BY start_time DESC, id DESC LIMIT ?")
        let phrase = SQLiteValue.text("\"a_b%\"")
        let lower = SQLiteValue.integer(200)
        #expect(plan.bindings == [lower, phrase, lower, phrase, lower, phrase, lower, phrase, .text("kept_private"), .integer(100), .integer(200),
                                  .integer(9_000), .integer(7_000), .integer(42), .integer(11)])
        let count = query.countPlan()
        #expect(count.sql == "SELECT count(*) FROM flows WHERE " + text
            + " AND status = ? AND start_time >= ? AND start_time >= ? AND start_time < ?")
        #expect(count.bindings == Array(plan.bindings.prefix(12)))
        // Without a lower bound, every day that has flows.
        let (unbounded, unboundedBindings) = FlowTextSearch.condition("a_b%")
        #expect(!unbounded.contains("WHERE start_time >= ? UNION") && unboundedBindings == [phrase, phrase, phrase, phrase])
    }

    @Test func aHostShorterThanATrigramIsALikeOverTheNames() throws {
        let (condition, bindings) = FlowTextSearch.condition("a_")
        #expect(condition.contains("host IN (SELECT name FROM flow_names WHERE columns & 1 AND name LIKE ? ESCAPE '\\')"), "\(condition)")
        #expect(!condition.contains("MATCH"))
        #expect(bindings == Array(repeating: .text("%a\\_%"), count: 4))
        #expect(FlowTextSearch.namesSQL("a_") == "SELECT name, columns FROM flow_names WHERE name LIKE ? ESCAPE '\\'")
        #expect(FlowTextSearch.readsNames("a") && FlowTextSearch.readsNames("a_") && !FlowTextSearch.readsNames(""))
        #expect(FlowTextSearch.condition("say \"hi\"").1 == Array(repeating: .text("\"say \"\"hi\"\"\""), count: 4))
    }

    @Test func clampsTheLimit() {
        #expect(FlowQuery(limit: 0).effectiveLimit == 1)
        #expect(FlowQuery(limit: -5).effectiveLimit == 1)
        #expect(FlowQuery(limit: 10_000).effectiveLimit == 10_000)
        #expect(FlowQuery(limit: 20_000).effectiveLimit == 10_000)
        #expect(FlowQuery().effectiveLimit == 50)
    }

    @Test func escapesLikeWildcards() {
        #expect(FlowQuery.escapeLike("a_b%c\\d") == "a\\_b\\%c\\\\d")
        #expect(FlowQuery.escapeLike("example.com") == "example.com")
    }

    @Test func cursorRoundTripsAndRefusesForgeries() throws {
        let cursor = FlowCursor(startTime: 1_712_000_000_123_456, id: 987_654)
        #expect(try FlowCursor(cursor.string) == cursor)
        #expect(!cursor.string.contains("="))
        #expect(try FlowCursor(FlowCursor(startTime: -1, id: 0).string) == FlowCursor(startTime: -1, id: 0))
        for forged in ["", "abc", "1.2", "MTIz", "MS4yLjM", "eC55"] {
            #expect(throws: FlowStoreError.badCursor(forged)) { try FlowCursor(forged) }
        }
        #expect(throws: FlowStoreError.badCursor("nope")) { try FlowQuery(after: "nope").plan() }
        #expect(FlowStoreError.badCursor("nope").message
            == "The cursor 'nope' is not one tv gave out; run the query again without --after.")
    }

    @Test func pagesUseTheStartTimeIndexWithoutASort() throws {
        try withStore { store, _ in
            let cursor = FlowCursor(startTime: 5, id: 5).string
            for query in [FlowQuery(), FlowQuery(after: cursor), FlowQuery(status: .failed, from: 1, to: 9, after: cursor)] {
                let plan = try query.plan()
                let details = try store.connection.withDatabase { database -> [String] in
                    let statement = try database.prepare("EXPLAIN QUERY PLAN " + plan.sql)
                    try statement.bind(plan.bindings)
                    var details: [String] = []
                    try statement.forEachRow { details.append($0.string(at: 3) ?? "") }
                    return details
                }
                #expect(details.contains { $0.contains("flows_by_start_time") || $0.contains("flows_by_status_time") }, "\(details)")
                #expect(!details.contains { $0.contains("TEMP B-TREE") }, "\(details)")
            }
        }
    }
}
