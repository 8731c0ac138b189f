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
            let cases: [(FlowQuery, String)] = [
                (FlowQuery(host: "example"), "VIRTUAL TABLE INDEX"),
                (FlowQuery(host: "example", after: cursor), "VIRTUAL TABLE INDEX"),
                (FlowQuery(host: "ex"), "flows_by_start_time"),
                (FlowQuery(status: .failed), "flows_by_status_time"),
                (FlowQuery(status: .failed, after: cursor), "flows_by_status_time"),
                (FlowQuery(since: 100), "flows_by_start_time"),
                (FlowQuery(from: 100, to: 900), "flows_by_start_time"),
                (FlowQuery(from: 100, to: 900, after: cursor), "flows_by_start_time"),
                (FlowQuery(host: "example", status: .inspected, since: 100), "VIRTUAL TABLE INDEX"),
            ]
            for (query, index) in cases {
                // A count of a substring shorter than a trigram has no index to read (FlowTextSearch):
                // only its page is bounded, walking the time index until the page is full.
                let shortHost = (query.host?.count ?? 3) < 3
                for plan in shortHost ? [try query.plan()] : [try query.plan(), query.countPlan()] {
                    let found = try details(store, plan)
                    #expect(found.contains { $0.contains(index) }, "\(query): \(found)")
                    #expect(!found.contains { $0 == "SCAN flows" }, "\(query): \(found)")
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
