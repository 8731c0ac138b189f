import Testing
@testable import FlowStore
import FlowTerms

/// Every `tv flows` filter is an indexed query (issue 19): the `EXPLAIN QUERY PLAN` of each names
/// an index and never a scan of the whole `flows` table, and the trigram index answers
/// substrings exactly as the LIKE it replaces did.
@Suite struct FlowIndexPlanTests {
    func details(_ store: FlowStore, _ plan: FlowQueryPlan) throws -> [String] {
        try store.connection.withDatabase { database -> [String] in
            let statement = try database.prepare("EXPLAIN QUERY PLAN " + plan.sql)
            try statement.bind(plan.bindings)
            var details: [String] = []
            try statement.forEachRow { details.append($0.string(at: 3) ?? "") }
            return details
        }
    }

    @Test func everyFilterUsesAnIndexAndNeverScansTheTable() throws {
        try withStore { store, _ in
            let cursor = FlowCursor(startTime: 5, id: 5).string
            // Exact plans, page and count. Every page reads its index newest first and stops when
            // the page is full, with no sort (a host text's pages: `hostPagesReadNameIndexes…`).
            let cases: [(FlowQuery, page: [String], count: [String]?)] = [
                (FlowQuery(), ["SCAN flows USING INDEX flows_by_start_time"], nil),
                (FlowQuery(after: cursor), ["SEARCH flows USING INDEX flows_by_start_time (start_time<?)"], nil),
                (FlowQuery(status: .failed), ["SEARCH flows USING INDEX flows_by_status_time (status=?)"],
                 ["SEARCH flows USING COVERING INDEX flows_by_status_time (status=?)"]),
                (FlowQuery(status: .failed, after: cursor), ["SEARCH flows USING INDEX flows_by_status_time (status=? AND start_time<?)"], nil),
                (FlowQuery(program: "curl"), ["SEARCH flows USING INDEX flows_by_program_time (program_command=?)"],
                 ["SEARCH flows USING COVERING INDEX flows_by_program_time (program_command=?)"]),
                (FlowQuery(after: cursor, program: "curl"), ["SEARCH flows USING INDEX flows_by_program_time (program_command=? AND start_time<?)"], nil),
                (FlowQuery(since: 100), ["SEARCH flows USING INDEX flows_by_start_time (start_time>?)"],
                 ["SEARCH flows USING COVERING INDEX flows_by_start_time (start_time>?)"]),
                (FlowQuery(from: 100, to: 900), ["SEARCH flows USING INDEX flows_by_start_time (start_time>? AND start_time<?)"],
                 ["SEARCH flows USING COVERING INDEX flows_by_start_time (start_time>? AND start_time<?)"]),
                (FlowQuery(from: 100, to: 900, after: cursor), ["SEARCH flows USING INDEX flows_by_start_time (start_time>? AND start_time<?)"], nil),
                (FlowQuery(status: .failed, from: 100, to: 900), ["SEARCH flows USING INDEX flows_by_status_time (status=? AND start_time>? AND start_time<?)"], nil),
                (FlowQuery(since: 100, program: "curl"), ["SEARCH flows USING INDEX flows_by_program_time (program_command=? AND start_time>?)"], nil),
            ]
            for (query, page, count) in cases {
                let found = try details(store, try query.plan())
                #expect(found == page, "\(query)")
                if let count {
                    let counted = try details(store, query.countPlan())
                    #expect(counted == count, "count \(query)")
                }
            }
        }
    }

    @Test func hostPagesReadNameIndexesInAWindowOrWalkTheTimeIndex() throws {
        try withStore { store, _ in
            _ = try writeFlows([sampleFlow(start: 1_000, host: "api.example.com", server: "93.184.216.34")], to: store)
            let names = try store.names(holding: "example")
            #expect(names == FlowNameMatches(rows: [("api.example.com", 1)]))
            let cursor = FlowCursor(startTime: 5, id: 5).string
            func json(_ n: Int) -> [String] { ["LIST SUBQUERY \(n)", "SCAN json_each VIRTUAL TABLE INDEX 1:"] }
            func seek(_ index: String, _ column: String, _ time: String) -> [String] {
                ["SEARCH flows USING INDEX \(index) (\(column)=?\(time))"]
            }
            let window = " AND start_time>? AND start_time<?"
            // A window: each column's names seek that column's index on each of the window's days
            // (the day list and the name list: SQLite's multi-index OR), and only the window's
            // rows are sorted.
            let columns = [("flows_by_day_host", "host"), ("flows_by_day_other_hosts", "other_hosts"),
                           ("flows_by_day_server", "server_address"), ("flows_by_day_client", "client_address")]
            var windowPlan: [String] = ["MULTI-INDEX OR"]
            for (n, (index, column)) in columns.enumerated() {
                windowPlan += ["INDEX \(n + 1)"] + json(2 * n + 1) + json(2 * n + 2) + seek(index, "<expr>=? AND " + column, window)
            }
            windowPlan.append("USE TEMP B-TREE FOR ORDER BY")
            let lists: [String] = json(1) + json(2) + json(3) + json(4)
            #expect(try details(store, FlowQuery(host: "example").hostPlan(names: names, window: 0..<2_000, rows: 51)) == windowPlan)
            #expect(try details(store, FlowQuery(host: "example", after: cursor).hostPlan(names: names, window: 0..<2_000, rows: 51)) == windowPlan)
            // With --status or --program, still the names' seeks (the status index would read every
            // failed flow of a window grown to the whole history for a rare name).
            #expect(try details(store, FlowQuery(host: "example", status: .failed).hostPlan(names: names, window: 0..<2_000, rows: 51)) == windowPlan)
            #expect(try details(store, FlowQuery(host: "example", status: .failed, program: "curl").hostPlan(names: names, window: 0..<2_000, rows: 51))
                == windowPlan)
            // The walk: the time index newest first, no sort; with a status, that status's flows
            // newest first (the status index), no sort.
            #expect(try details(store, FlowQuery(host: "example").hostPlan(names: names, window: nil, rows: 51))
                == ["SCAN flows USING INDEX flows_by_start_time"] + lists)
            #expect(try details(store, FlowQuery(host: "example", after: cursor).hostPlan(names: names, window: nil, rows: 51))
                == ["SEARCH flows USING INDEX flows_by_start_time (start_time<?)"] + lists)
            #expect(try details(store, FlowQuery(host: "example", status: .inspected).hostPlan(names: names, window: nil, rows: 51))
                == ["SEARCH flows USING INDEX flows_by_status_time (status=?)"] + lists)
            #expect(try details(store, FlowQuery(host: "example", status: .inspected, after: cursor).hostPlan(names: names, window: nil, rows: 51))
                == ["SEARCH flows USING INDEX flows_by_status_time (status=? AND start_time<?)"] + lists)
            // --host --status's bounded walk: the status index alone (covering: no row read) for
            // the walk's ids, then those rows by id, the kept few sorted; where it stopped, the
            // same index alone.
            for query in [FlowQuery(host: "example", status: .inspected), FlowQuery(host: "example", status: .inspected, after: cursor),
                          FlowQuery(host: "example", status: .inspected, from: 100, to: 900)] {
                let walked = query.after == nil && query.from == nil ? "status=?" : query.after != nil ? "status=? AND start_time<?" : "status=? AND start_time>? AND start_time<?"
                #expect(try details(store, query.hostWalkPlan(names: names, walking: 1_024, rows: 51))
                    == ["SEARCH flows USING INTEGER PRIMARY KEY (rowid=?)", "LIST SUBQUERY 5", "SEARCH flows USING COVERING INDEX flows_by_status_time (\(walked))"]
                        + lists + ["USE TEMP B-TREE FOR ORDER BY"], "\(query)")
                #expect(try details(store, query.hostWalkEndPlan(walking: 1_024))
                    == ["SEARCH flows USING COVERING INDEX flows_by_status_time (\(walked))"], "\(query)")
            }
            // The names: the trigram index over names, then each name by its id.
            let namesPlan = ["SEARCH flow_names USING INTEGER PRIMARY KEY (rowid=?)", "LIST SUBQUERY 1", "SCAN flow_names_text VIRTUAL TABLE INDEX 0:M1"]
            #expect(try details(store, FlowQueryPlan(sql: FlowTextSearch.namesSQL("example"), bindings: [FlowTextSearch.match("example")], limit: 0))
                == namesPlan)
            // A walk over a text shorter than a trigram filters by LIKE, no name lists.
            let likeWalk = ["SCAN flows USING INDEX flows_by_start_time"]
            #expect(try details(store, FlowQuery(host: "ex").hostPlan(names: names, window: nil, rows: 51)) == likeWalk)
            #expect(try details(store, FlowQuery(host: "ex", status: .inspected).hostWalkPlan(names: names, walking: 1_024, rows: 51))
                == ["SEARCH flows USING INTEGER PRIMARY KEY (rowid=?)", "LIST SUBQUERY 1",
                    "SEARCH flows USING COVERING INDEX flows_by_status_time (status=?)", "USE TEMP B-TREE FOR ORDER BY"])
            // Shorter than a trigram: LIKE over the names (a few thousand rows), never over the flows.
            #expect(try details(store, FlowQueryPlan(sql: FlowTextSearch.namesSQL("ex"), bindings: [FlowTextSearch.match("ex")], limit: 0))
                == ["SCAN flow_names"])
            // A count: the days that have flows (the time index sought once a day), the names of
            // each column found afresh, each column's index by (day, name), no scan of flows.
            func days(_ n: Int) -> [String] {
                ["LIST SUBQUERY \(n + 2)", "CO-ROUTINE flow_days", "SETUP", "SEARCH flows USING COVERING INDEX flows_by_start_time",
                 "RECURSIVE STEP", "SCAN flow_days", "CORRELATED SCALAR SUBQUERY \(n)",
                 "SEARCH flows USING COVERING INDEX flows_by_start_time (start_time>?)", "SCAN flow_days"]
            }
            func lookup(_ n: Int) -> [String] {
                ["LIST SUBQUERY \(n + 1)", "SEARCH flow_names USING INTEGER PRIMARY KEY (rowid=?)", "LIST SUBQUERY \(n)",
                 "SCAN flow_names_text VIRTUAL TABLE INDEX 0:M1"]
            }
            var countPlan: [String] = ["MULTI-INDEX OR"]
            for (n, (index, column)) in columns.enumerated() {
                countPlan += ["INDEX \(n + 1)"] + days(6 * n + 2) + lookup(6 * n + 5) + seek(index, "<expr>=? AND " + column, "")
            }
            #expect(try details(store, FlowQuery(host: "example").countPlan()) == countPlan)
        }
    }

    @Test func theTrigramIndexFindsSubstringsAnyCaseAndFollowsUpdatesAndDeletes() throws {
        try withStore { store, _ in
            let written = try writeFlows([
                sampleFlow(start: 1_000, host: "api.Example.com", server: "93.184.216.34"),
                sampleFlow(start: 2_000, host: "cdn.other.net", server: "10.0.0.7", client: "192.168.1.20"),
                sampleFlow(start: 3_000, host: nil, server: "2001:db8::5"),
            ], to: store)
            func ids(_ text: String) throws -> [Int64] { try store.flows(FlowQuery(host: text)).flows.map(\.id) }
            #expect(try ids("example") == [written[0].id])
            #expect(try ids("EXAMPLE.C") == [written[0].id])
            #expect(try ids("184.216") == [written[0].id])
            #expect(try ids("168.1.2") == [written[1].id])
            #expect(try ids("db8::") == [written[2].id])
            #expect(try ids(".ne") == [written[1].id])
            #expect(try ids("et") == [written[1].id])
            #expect(try ids("nowhere") == [])
            #expect(try store.count(FlowQuery(host: "example")) == 1)
            // The writer upserts: a host learned later is found, the old one no longer.
            let writer = try store.makeWriter()
            var renamed = written[2]
            renamed.host = "late.example.org"
            writer.enqueue(.updated(renamed))
            writer.flush()
            writer.close()
            #expect(try ids("late.exa") == [written[2].id])
            #expect(try ids("db8::") == [written[2].id])
            try store.connection.withDatabase { try $0.execute("DELETE FROM flows WHERE id = \(written[0].id)") }
            #expect(try ids("example") == [written[2].id])
        }
    }
}
