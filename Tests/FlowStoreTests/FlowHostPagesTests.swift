import Foundation
import Testing
@testable import FlowStore
import FlowTerms

/// `tv flows --host TEXT` pages (issue 19 at a million flows): the windows a page reads, and pages
/// equal to filtering every flow by the substring and sorting newest first, through windows and
/// through the walk, page after page.
@Suite struct FlowHostPagesTests {
    static let hour = FlowHostWindows.firstWidth

    @Test("windows: an hour, then each twice as wide, newest first, cut at the lower bound; none when empty")
    func windows() {
        var windows = FlowHostWindows(upper: 10 * Self.hour, lower: 0)
        var seen: [Range<Int64>] = []
        while let window = windows.next() { seen.append(window) }
        #expect(seen == [9 * Self.hour..<10 * Self.hour, 7 * Self.hour..<9 * Self.hour, 3 * Self.hour..<7 * Self.hour, 0..<3 * Self.hour])
        var empty = FlowHostWindows(upper: 5, lower: 5)
        #expect(empty.next() == nil)
        var huge = FlowHostWindows(upper: Int64.min + 10, lower: Int64.min, firstWidth: Int64.max)
        #expect(huge.next() == Int64.min..<Int64.min + 10)
        #expect(huge.next() == nil)
    }

    @Test("after a window that found rows, the next is as wide as the missing rows need at the density seen, times 1.5, within 2 and 64 times the last")
    func windowsGrowWithTheDensitySeen() {
        var windows = FlowHostWindows(upper: 100 * Self.hour, lower: 0)
        #expect(windows.next() == 99 * Self.hour..<100 * Self.hour)
        // 20 rows in the first hour, 32 missing: 1 h / 20 × 32 × 1.5 = 2.4 h (more than 2 h).
        windows.found(20, missing: 32)
        #expect(windows.width == 8_640_000_000)
        #expect(windows.next() == 99 * Self.hour - 8_640_000_000..<99 * Self.hour)
        // Nothing in those 2.4 h, still 32 missing: 3.4 h / 20 × 32 × 1.5 = 8.16 h (more than 4.8 h).
        windows.found(0, missing: 32)
        #expect(windows.width == 29_376_000_000)
        #expect(windows.widthRead == 12_240_000_000 && windows.rowsFound == 20)
        // Nothing found yet: twice the last, as without `found`; nothing missing: unchanged.
        var empty = FlowHostWindows(upper: 100 * Self.hour, lower: 0)
        _ = empty.next()
        empty.found(0, missing: 51)
        #expect(empty.width == 2 * Self.hour)
        empty.found(3, missing: 0)
        #expect(empty.width == 2 * Self.hour)
        // One row in an hour, 1,000 missing: 1,500 h wanted, 64 h at most.
        var sparse = FlowHostWindows(upper: 10_000 * Self.hour, lower: 0)
        _ = sparse.next()
        sparse.found(1, missing: 1_000)
        #expect(sparse.width == 64 * Self.hour)
        #expect(sparse.next() == 9_935 * Self.hour..<9_999 * Self.hour)
    }

    @Test("no window is wider than its (day, name) seeks allow: at most the width in whole days plus one day a lookup")
    func windowsStayWithinTheirSeeks() {
        let day = FlowDays.micros
        #expect(FlowHostWindows.mostSeeks == 2_048)
        #expect(FlowHostWindows.mostWidth(lookups: 1) == 2_047 * day)
        #expect(FlowHostWindows.mostWidth(lookups: 125) == 15 * day)
        #expect(FlowHostWindows.mostWidth(lookups: 512) == 3 * day)
        #expect(FlowHostWindows.mostWidth(lookups: 1_024) == day && FlowHostWindows.mostWidth(lookups: 5_000) == day)
        #expect(FlowHostWindows.mostWidth(lookups: 0) == 2_047 * day)
        #expect(FlowHostWindows.mostWidth(lookups: 3, seeks: 1) == day)
        // An hour, two, four … until the cap: then a day at a time.
        var windows = FlowHostWindows(upper: 3 * day, lower: 0, mostWidth: day)
        var seen: [Range<Int64>] = []
        while let window = windows.next() { seen.append(window) }
        let h = Self.hour
        #expect(seen == [3 * day - h..<3 * day, 3 * day - 3 * h..<3 * day - h, 3 * day - 7 * h..<3 * day - 3 * h,
                         3 * day - 15 * h..<3 * day - 7 * h, 2 * day - 7 * h..<3 * day - 15 * h, day - 7 * h..<2 * day - 7 * h,
                         0..<day - 7 * h])
        // Every window's days × lookups within the seeks: a window of width W touches ≤ W / day + 1 days.
        for window in seen { #expect(FlowDays.days(window)!.count <= 2) }
    }

    @Test("a flow's day: µs since the epoch over 86,400,000,000 as SQLite divides; a window's days, oldest first, as JSON")
    func days() {
        let day = FlowDays.micros
        #expect(day == 86_400_000_000)
        #expect(FlowDays.day(0) == 0 && FlowDays.day(day - 1) == 0 && FlowDays.day(day) == 1)
        // 2026-12-03T06:00:00Z = 1,796,277,600 s: day 20,790 since 1970-01-01.
        #expect(FlowDays.day(1_796_277_600_000_000) == 20_790)
        #expect(FlowDays.days(0..<1) == 0...0)
        #expect(FlowDays.days(day - 1..<day + 1) == 0...1)
        #expect(FlowDays.days(day..<3 * day) == 1...2)
        #expect(FlowDays.days(5..<5) == nil)
        #expect(FlowDays.json(1...3) == "[1,2,3]")
        #expect(FlowDays.json(nil) == "[]")
    }

    @Test("a history with a flow from a clock that said 1970: a count reads only the days that have flows, and finds them all")
    func countOverSparseDays() throws {
        try withStore { store, _ in
            let now: Int64 = 1_796_277_600_000_000
            let written = try writeFlows([sampleFlow(start: 5, host: "early.example.com"), sampleFlow(start: now, host: "late.example.com"),
                                          sampleFlow(start: now + FlowDays.micros, host: "other.test", server: "192.0.2.9")], to: store)
            #expect(try store.count(FlowQuery(host: "example")) == 2)
            #expect(try store.count(FlowQuery(host: "192.0.2")) == 1)
            #expect(try store.count(FlowQuery(host: "nowhere")) == 0)
            #expect(try store.flows(FlowQuery(host: "example")).flows.map(\.id) == [written[1].id, written[0].id])
            let days = try store.connection.withDatabase { database -> [Int64] in
                var days: [Int64] = []
                try database.prepare(FlowDays.daysWithFlowsSQL).forEachRow { days.append($0.int64(at: 0)) }
                return days
            }
            #expect(days == [0, 20_790, 20_791])
            // From a moment on (--since, --follow): the days from the first flow at or after it.
            #expect(try store.count(FlowQuery(host: "example", since: now)) == 1)
            #expect(try store.count(FlowQuery(host: "example", since: now + 1)) == 0)
            #expect(try store.flows(matching: FlowQuery(host: "example"), startedSince: 6, limit: 10).map(\.id) == [written[1].id])
            #expect(try store.flows(matching: FlowQuery(host: "example"), startedSince: 0, limit: 10).map(\.id) == [written[0].id, written[1].id])
            #expect(try store.flows(matching: FlowQuery(host: "test", since: now + 5), startedSince: 0, limit: 10).map(\.id) == [written[2].id])
        }
    }

    @Test("a query's windows: from the newest flow, the --to bound or the cursor's flow, back to the oldest, --from or --since")
    func bounds() throws {
        let all = try FlowHostWindows(query: FlowQuery(host: "abc"), oldest: 100, newest: 900)
        #expect(all == FlowHostWindows(upper: 901, lower: 100))
        let cut = try FlowHostWindows(query: FlowQuery(host: "abc", since: 300, from: 200, to: 800), oldest: 100, newest: 900)
        #expect(cut == FlowHostWindows(upper: 800, lower: 300))
        let after = try FlowHostWindows(query: FlowQuery(host: "abc", to: 800, after: FlowCursor(startTime: 500, id: 7).string), oldest: 100, newest: 900)
        #expect(after == FlowHostWindows(upper: 501, lower: 100))
        #expect(throws: FlowStoreError.self) { try FlowHostWindows(query: FlowQuery(host: "abc", after: "nonsense"), oldest: 1, newest: 2) }
    }

    @Test("names sort by their columns' bits; the walk takes over above 512 lookups")
    func nameMatches() {
        let names = FlowNameMatches(rows: [("a.example", 1), ("1.2.3.4", 5), ("x.example,y.example", 2), ("10.0.0.7", 8)])
        #expect(names.hosts == ["a.example", "1.2.3.4"])
        #expect(names.otherHosts == ["x.example,y.example"])
        #expect(names.serverAddresses == ["1.2.3.4"])
        #expect(names.clientAddresses == ["10.0.0.7"])
        #expect(names.lookups == 5)
        #expect(FlowHostWindows.readsWindows(names))
        #expect(FlowNameMatches.json(["a\"b", "c/d"]) == #"["a\"b","c/d"]"#)
        let many = FlowNameMatches(rows: (0..<513).map { ("h\($0)", 1) })
        #expect(!FlowHostWindows.readsWindows(many))
        #expect(FlowHostWindows.readsWindows(FlowNameMatches(rows: (0..<512).map { ("h\($0)", 1) })))
    }

    /// Every page of `query`, following cursors; a `--host --status` page's walk `walking`
    /// entries long when given.
    func allPages(_ store: FlowStore, _ query: FlowQuery, walking: Int? = nil, seeks: Int? = nil) throws -> [[Int64]] {
        var pages: [[Int64]] = []
        var query = query
        while true {
            let page = try seeks.map { try store.hostPage(query, text: query.host ?? "", seeks: $0) }
                ?? walking.map { try store.hostPage(query, text: query.host ?? "", walking: $0) } ?? store.flows(query)
            pages.append(page.flows.map(\.id))
            guard let next = page.nextCursor else { return pages }
            query.after = next
        }
    }

    /// The ids `text` matches among `flows` (case-insensitive substring of the four columns),
    /// newest first, cut into pages of `limit`.
    func expectedPages(_ flows: [FlowRecord], _ text: String, limit: Int, status: FlowStatus? = nil,
                       from: Int64? = nil, to: Int64? = nil) -> [[Int64]] {
        let needle = text.lowercased()
        let ids = flows.filter { flow in
            let texts = [flow.host ?? "", TextList.encode(flow.otherHosts), flow.serverAddress, flow.clientAddress]
            return texts.contains { $0.lowercased().contains(needle) }
                && (status == nil || flow.status == status) && (from.map { flow.startTime >= $0 } ?? true)
                && (to.map { flow.startTime < $0 } ?? true)
        }
        .sorted { ($0.startTime, $0.id) > ($1.startTime, $1.id) }.map(\.id)
        if ids.isEmpty { return [[]] }
        return stride(from: 0, to: ids.count, by: limit).map { Array(ids[$0..<min($0 + limit, ids.count)]) }
    }

    @Test("pages through windows and through the walk equal filtering every flow, page after page, with filters and ties")
    func pagesEqualAFilteredSort() throws {
        try withStore { store, _ in
            var flows: [FlowRecord] = []
            let day = 24 * Self.hour
            // 700 flows over 60 days: a popular name, rare ones (one a week), 600 names of one
            // domain (more than the windows' lookups: the walk), addresses, other names, ties.
            for i in 0..<700 {
                let start = Int64(i) * (60 * day / 700) + (i % 10 == 3 ? 0 : Int64(i % 7) * 1_000)
                let host: String? = i % 5 == 0 ? "Popular.Example.com" : i % 97 == 0 ? "rare.example.org"
                    : i % 11 == 0 ? nil : "n\(i).walk.test"
                var flow = sampleFlow(start: start, host: host, server: i % 8 == 0 ? "2001:db8::\(i % 13)" : "93.184.216.\(i % 40)",
                                      client: "10.0.0.\(i % 9)", status: i % 3 == 0 ? .failed : .encrypted)
                if i % 17 == 0 { flow.otherHosts = ["alias\(i).other.net", "rare.example.org"] }
                flows.append(flow)
            }
            // Two flows in the same µs (the cursor's tie on id).
            flows.append(sampleFlow(start: 30 * day, host: "tie.example.com"))
            flows.append(sampleFlow(start: 30 * day, host: "tie.example.com"))
            let written = try writeFlows(flows, to: store)
            // Shorter than a trigram too: names by LIKE, then windows (`n1`: ~110 names) or, for a
            // text that many names hold (`n`, `t`), the walk filtered by LIKE; `qz` holds none.
            for text in ["popular.example", "rare.example.org", "walk.test", "example", "2001:db8::", "216.3", "10.0.0.4", "other.net", "tie.ex", "nowhere",
                         "n1", "n", "t", "ex", "qz"] {
                for limit in [7, 50] {
                    #expect(try allPages(store, FlowQuery(host: text, limit: limit)) == expectedPages(written, text, limit: limit), "\(text) \(limit)")
                }
            }
            // Windows of a day at most (a seek budget of 1): the same pages.
            for text in ["popular.example", "rare.example.org", "example", "10.0.0.4", "tie.ex"] {
                #expect(try allPages(store, FlowQuery(host: text, limit: 50), seeks: 1) == expectedPages(written, text, limit: 50), "\(text) seeks 1")
            }
            let from = 10 * day, to = 40 * day
            #expect(try allPages(store, FlowQuery(host: "example", status: .failed, from: from, to: to, limit: 5))
                == expectedPages(written, "example", limit: 5, status: .failed, from: from, to: to))
            #expect(try allPages(store, FlowQuery(host: "walk.test", status: .failed, since: from, limit: 9))
                == expectedPages(written, "walk.test", limit: 9, status: .failed, from: from))
            #expect(try store.count(FlowQuery(host: "example")) == expectedPages(written, "example", limit: 10_000)[0].count)
            // --host --status: the bounded walk of the status index, then windows from where it
            // stopped (a walk of 1 entry, of a few, of more than the status has: windows only, a
            // walk that fills some pages, the walk alone).
            for walking in [1, 13, 40, 1_024] {
                for (text, limit) in [("example", 5), ("rare.example.org", 3), ("popular.example", 50), ("10.0.0.4", 7), ("nowhere", 5)] {
                    #expect(try allPages(store, FlowQuery(host: text, status: .failed, limit: limit), walking: walking)
                        == expectedPages(written, text, limit: limit, status: .failed), "\(text) \(limit) walking \(walking)")
                }
                #expect(try allPages(store, FlowQuery(host: "example", status: .failed, from: from, to: to, limit: 4), walking: walking)
                    == expectedPages(written, "example", limit: 4, status: .failed, from: from, to: to), "from/to walking \(walking)")
            }
        }
    }

    @Test("a store made before the status joined the name indexes: migrated, each name index is (day, name, time, status) and --host --status pages are right")
    func migrationPutsTheStatusInTheNameIndexes() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/tunnelvision.sqlite3"
        let mine = try #require(FlowSchema.migrations.firstIndex { $0.contains("flows_by_host_time_status") })
        do {
            let database = try SQLiteDatabase(path: path)
            try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(mine)))
            for id in 1...6 {
                try database.execute("""
                    INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                                       transport, host, other_hosts, host_origin, status)
                    VALUES (\(id), \(id * 10), \(id * 10), '127.0.0.1', 1, '10.0.0.\(id % 2)', 443, 'tcp', 'api.example.com',
                            '\(id == 3 ? "b.example.com" : "")', 'sni', '\(id % 3 == 0 ? "failed" : "encrypted")')
                    """)
            }
            #expect(try FlowSchema.migrate(database) == mine)
            // The day leads (migration 24): an expression, which pragma_index_info names NULL (cid -2).
            for (index, column) in [("flows_by_day_host", "host"), ("flows_by_day_other_hosts", "other_hosts"),
                                    ("flows_by_day_server", "server_address"), ("flows_by_day_client", "client_address")] {
                var columns: [String] = []
                try database.prepare("SELECT cid, name FROM pragma_index_info('\(index)') ORDER BY seqno").forEachRow {
                    columns.append($0.string(at: 1) ?? "cid \($0.int64(at: 0))")
                }
                #expect(columns == ["cid -2", column, "start_time", "status"], "\(index)")
            }
            var old = 0
            try database.prepare("SELECT count(*) FROM sqlite_schema WHERE name IN ('flows_by_host_time', 'flows_by_other_hosts_time', "
                                 + "'flows_by_server_time', 'flows_by_client_time', 'flows_by_host_time_status', 'flows_by_other_hosts_time_status', "
                                 + "'flows_by_server_time_status', 'flows_by_client_time_status')").forEachRow { old = Int($0.int64(at: 0)) }
            #expect(old == 0)
            database.close()
        }
        let store = try FlowStore(path: path)
        defer { store.close() }
        #expect(try store.flows(FlowQuery(host: "example", status: .failed)).flows.map(\.id) == [6, 3])
        #expect(try store.flows(FlowQuery(host: "b.example", status: .failed)).flows.map(\.id) == [3])
        #expect(try store.flows(FlowQuery(host: "10.0.0.1", status: .encrypted)).flows.map(\.id) == [5, 1])
    }

    @Test("a store made by the previous schema: the migration lists its names and --host finds its flows")
    func migrationListsExistingNames() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/tunnelvision.sqlite3"
        let mine = try #require(FlowSchema.migrations.firstIndex { $0.contains("CREATE TABLE flow_names") })
        do {
            let database = try SQLiteDatabase(path: path)
            try FlowSchema.migrate(database, migrations: Array(FlowSchema.migrations.prefix(mine)))
            for (id, host, others, server) in [(1, "'api.example.com'", "''", "10.0.0.1"), (2, "NULL", "'a.test,b.test'", "10.0.0.1"),
                                               (3, "'10.0.0.1'", "''", "2001:db8::1")] {
                try database.execute("""
                    INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                                       transport, host, other_hosts, host_origin, status)
                    VALUES (\(id), \(id * 10), \(id * 10), '127.0.0.1', 1, '\(server)', 443, 'tcp', \(host), \(others), 'sni', 'encrypted')
                    """)
            }
            try FlowSchema.migrate(database)
            database.close()
        }
        let store = try FlowStore(path: path)
        defer { store.close() }
        let names = try store.connection.withDatabase { database -> [String] in
            let statement = try database.prepare("SELECT name || ' ' || columns FROM flow_names ORDER BY name")
            var rows: [String] = []
            try statement.forEachRow { rows.append($0.string(at: 0) ?? "") }
            return rows
        }
        #expect(names == ["10.0.0.1 5", "127.0.0.1 8", "2001:db8::1 4", "a.test,b.test 2", "api.example.com 1"])
        func ids(_ text: String) throws -> [Int64] { try store.flows(FlowQuery(host: text)).flows.map(\.id) }
        #expect(try ids("example") == [1])
        #expect(try ids("b.tes") == [2])
        #expect(try ids("10.0.0.1") == [3, 2, 1])
        #expect(try ids("db8") == [3])
        #expect(try ids("127.0") == [3, 2, 1])
    }
}
