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
            let text = ["SEARCH flows USING INTEGER PRIMARY KEY (rowid=?)", "LIST SUBQUERY 1", "SCAN flows_text VIRTUAL TABLE INDEX 0:M4"]
            // Exact plans, page and count. A page of a text search sorts what the trigram index
            // matched (its rows come by id, not by time); every other page reads its index newest
            // first and stops when the page is full, with no sort.
            let cases: [(FlowQuery, page: [String], count: [String]?)] = [
                (FlowQuery(), ["SCAN flows USING INDEX flows_by_start_time"], nil),
                (FlowQuery(after: cursor), ["SEARCH flows USING INDEX flows_by_start_time (start_time<?)"], nil),
                (FlowQuery(host: "example"), text + ["USE TEMP B-TREE FOR ORDER BY"], text),
                (FlowQuery(host: "example", after: cursor), text + ["USE TEMP B-TREE FOR ORDER BY"], text),
                // Shorter than a trigram: the time index newest first until the page is full (FlowTextSearch).
                (FlowQuery(host: "ex"), ["SCAN flows USING INDEX flows_by_start_time"], nil),
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
                (FlowQuery(host: "example", status: .inspected, since: 100),
                 ["SEARCH flows USING INDEX flows_by_status_time (status=? AND start_time>?)", "LIST SUBQUERY 1", "SCAN flows_text VIRTUAL TABLE INDEX 0:M4"], nil),
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
