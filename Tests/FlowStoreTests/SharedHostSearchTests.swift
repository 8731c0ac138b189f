import Foundation
import Testing
@testable import FlowStore
import FlowTerms

/// `--host` on the shared store through its names (`SharedHostSearch`, PostgreSQL migration 5):
/// the SQL it builds (exact text and bindings), and against a real server (`PostgresServer`)
/// that the names travel with the flows, a page is a merge of the names' index scans, and every
/// page and count is SQLite's for the same flows.
@Suite(.serialized) struct SharedHostSearchTests {
    typealias Fixture = SharedStoreContractTests.Fixture

    let names = FlowNameMatches(rows: [("a.example", 1), ("b.example", 1 | 4), ("10.0.0.1", 8)])

    @Test func pairsFollowTheColumnsOrderAndTheConditionListsEachColumnsNames() {
        #expect(SharedHostSearch.pairs(names).map { "\($0.column)=\($0.name)" }
                == ["host=a.example", "host=b.example", "server_address=b.example", "client_address=10.0.0.1"])
        let (condition, bindings) = SharedHostSearch.condition(names, text: "example")
        #expect(condition == "(host IN (?, ?) OR server_address IN (?) OR client_address IN (?))")
        #expect(bindings == [.text("a.example"), .text("b.example"), .text("b.example"), .text("10.0.0.1")])
        #expect(SharedHostSearch.condition(FlowNameMatches(rows: []), text: "x") == ("FALSE", []))
        #expect(SharedHostSearch.namesBindings("a_b%") == [.text("%a\\_b\\%%")])
    }

    @Test func pastTheListedNamesTheConditionIsTheSubstringOnTheFlows() {
        let many = FlowNameMatches(rows: (0...SharedHostSearch.listedLookups).map { ("h\($0).example", 1) })
        #expect(SharedHostSearch.condition(many, text: "example") == PostgresDialect.textCondition("example"))
    }

    /// One branch per (column, name), each excluding the earlier columns' names (a flow found
    /// twice comes once), with the filters, each cut at the page's rows; merged by start time.
    @Test func aMergedPageIsOneOrderedBranchPerNameExcludingEarlierColumns() {
        let (sql, bindings) = SharedHostSearch.mergedPageSQL(FlowNameMatches(rows: [("a", 1), ("b", 5)]),
                                                             filters: (["status = ?"], [.text("failed")]), rows: 51)
        let select = "SELECT \(PostgresDialect.selectList) FROM flows WHERE "
        let order = " ORDER BY start_time DESC, id DESC, instance_id DESC LIMIT ?"
        #expect(sql == "SELECT * FROM ("
                + "(" + select + "host IN (?) AND status = ?" + order + ") UNION ALL "
                + "(" + select + "host IN (?) AND status = ?" + order + ") UNION ALL "
                + "(" + select + "server_address IN (?) AND (host IN (?, ?)) IS NOT TRUE AND status = ?" + order + ")"
                + ") AS page" + order)
        #expect(bindings == [.text("a"), .text("failed"), .integer(51),
                             .text("b"), .text("failed"), .integer(51),
                             .text("b"), .text("a"), .text("b"), .text("failed"), .integer(51),
                             .integer(51)])
    }

    /// Flows with names in every column (some only in an address, some in two columns, ties in
    /// start time), written to SQLite and, mirrored, to the shared store: every `--host` page,
    /// with and without another filter, and every count are the same on both.
    @Test func everyHostPageAndCountIsSQLitesForTheSameFlows() throws {
        let local = try Fixture(.sqlite)
        let shared = try Fixture(.postgresql)
        var flows: [FlowRecord] = []
        for n in 0..<300 {
            var flow = sampleFlow(start: Int64(n / 3), host: n % 7 == 0 ? nil : "h\(n % 11).Example.com",
                                  server: "192.0.2.\(n % 13)", client: "10.0.\(n % 3).1",
                                  status: n % 5 == 0 ? .failed : .inspected)
            if n % 17 == 0 { flow.otherHosts = ["alias\(n % 4).example.net"] }
            if n % 19 == 0 { flow.host = "192.0.2.\(n % 13)" }
            flows.append(flow)
        }
        #expect(try local.writeFlows(flows).map(\.id) == Array(1...300))
        #expect(try shared.writeFlows(flows).map(\.id) == Array(1...300))
        let texts = ["example", "H3.EXAMPLE", "192.0.2.1", "10.0.1", "alias", "ias2.exa", "e", "x.", "nothing", "2.1"]
        for text in texts {
            for status in [nil, FlowStatus.failed] {
                // Each store pages with its own cursors.
                var localQuery = FlowQuery(host: text, status: status, limit: 9), sharedQuery = localQuery
                var pages = 0
                while true {
                    let a = try local.history.flows(localQuery), b = try shared.history.flows(sharedQuery)
                    #expect(a.flows.map(\.id) == b.flows.map(\.id), "--host \(text) --status \(String(describing: status)) page \(pages)")
                    #expect((a.nextCursor == nil) == (b.nextCursor == nil))
                    pages += 1
                    guard let next = b.nextCursor, let localNext = a.nextCursor, pages < 50 else { break }
                    (localQuery.after, sharedQuery.after) = (localNext, next)
                }
                #expect(try local.history.count(FlowQuery(host: text, status: status)) == shared.history.count(FlowQuery(host: text, status: status)))
            }
        }
        let holding = flows.filter { ($0.host ?? "").lowercased().contains("example") || $0.otherHosts.contains { $0.contains("example") } }
        #expect(try shared.history.count(FlowQuery(host: "example")) == holding.count)
    }

    /// The names travel with the flows (an update that learns a host adds it), and a page over a
    /// few names merges their index scans newest first, never a scan of every flow.
    @Test func aHostPageMergesTheNamesIndexScans() throws {
        let f = try Fixture(.postgresql)
        guard let history = f.history as? SharedFlowHistory else { Issue.record("not the shared store"); return }
        var flows: [FlowRecord] = []
        try f.write { writer in
            flows = (0..<40).map { writer.open(sampleFlow(start: Int64($0), host: $0 == 0 ? nil : "h\($0 % 4).example", server: "192.0.2.\($0 % 3)")) }
        }
        // Written after the first batch: the shared row is updated, not inserted.
        try f.write { writer in
            var later = flows[0]
            later.host = "late.example"
            writer.enqueue(.closed(later))
        }
        try history.connection.withLock { connection in
            let rows = try connection.query("SELECT name || ':' || column_bit FROM flow_names ORDER BY 1")
            let names = rows.compactMap { if case let .text(t) = $0.first ?? .null { return t } else { return nil } }
            #expect(names == ["127.0.0.1:8", "192.0.2.0:4", "192.0.2.1:4", "192.0.2.2:4",
                              "h0.example:1", "h1.example:1", "h2.example:1", "h3.example:1", "late.example:1"])
        }
        #expect(try history.flows(FlowQuery(host: "late")).flows.map(\.id) == [flows[0].id])
        try history.connection.withLock { try $0.execute("SET enable_seqscan = off") }
        let plan = try history.explain(FlowQuery(host: "example", limit: 5))
        #expect(plan.contains("Merge Append"), "\(plan)")
        #expect(plan.contains("using flows_by_host_time"), "\(plan)")
        #expect(!plan.contains("Seq Scan on flows"), "\(plan)")
        #expect(try history.flows(FlowQuery(host: "h1.exa", limit: 3)).flows.map(\.id) == [flows[37].id, flows[33].id, flows[29].id])
    }

    /// A page's statements are prepared at their second run on a connection, once: a page read
    /// once prepares nothing; the same page read seven times (past the five custom plans after
    /// which the server may keep a generic one) answers the same rows each time, from one
    /// statement; the next page and `--host`'s names and merged page are one statement each more.
    @Test func aPageIsPreparedOncePerConnectionAndAnswersTheSameEachTime() throws {
        let f = try Fixture(.postgresql)
        guard let history = f.history as? SharedFlowHistory else { Issue.record("not the shared store"); return }
        var flows: [FlowRecord] = []
        try f.write { writer in
            flows = (0..<20).map { writer.open(sampleFlow(start: Int64($0), host: "h\($0 % 2).example", server: "192.0.2.1")) }
        }
        func prepared() throws -> [String] {
            try history.connection.withLock { connection in
                try connection.query("SELECT name FROM pg_prepared_statements ORDER BY prepare_time, name")
                    .compactMap { if case let .text(t) = $0.first ?? .null { return t } else { return nil } }
            }
        }
        let newest = flows.reversed().map(\.id)
        #expect(try history.flows(FlowQuery(limit: 3)).flows.map(\.id) == Array(newest.prefix(3)))
        #expect(try prepared() == [])
        for _ in 0..<7 { #expect(try history.flows(FlowQuery(limit: 3)).flows.map(\.id) == Array(newest.prefix(3))) }
        #expect(try prepared() == ["tv_1"])
        let first = try history.flows(FlowQuery(limit: 3))
        for _ in 0..<7 {
            #expect(try history.flows(FlowQuery(limit: 3, after: first.nextCursor)).flows.map(\.id) == Array(newest[3..<6]))
        }
        #expect(try prepared() == ["tv_1", "tv_2"])
        for _ in 0..<7 {
            #expect(try history.flows(FlowQuery(host: "h1.exa", limit: 2)).flows.map(\.id) == [flows[19].id, flows[17].id])
        }
        #expect(try prepared() == ["tv_1", "tv_2", "tv_3", "tv_4"])
    }
}
