import Testing
@testable import FlowStore

/// `tv activity`'s aggregate and `tv flows --follow`'s reads.
@Suite struct FlowActivityTests {
    static let s: Int64 = 1_000_000

    @Test("counts per interval from one aggregate: half-open bounds, sparse (no row for an empty interval)")
    func countsPerInterval() throws {
        try withStore { store, _ in
            let starts: [Int64] = [100, 100, 101, 103, 109, 110, 99].map { $0 * Self.s }
            _ = try writeFlows(starts.map { sampleFlow(start: $0) }, to: store)
            #expect(try store.activity(from: 100 * Self.s, to: 110 * Self.s, widthMicros: 2 * Self.s) == [0: 3, 1: 1, 4: 1])
            #expect(try store.activity(from: 100 * Self.s, to: 111 * Self.s, widthMicros: 5 * Self.s) == [0: 4, 1: 1, 2: 1])
            #expect(try store.activity(from: 200 * Self.s, to: 300 * Self.s, widthMicros: Self.s) == [:])
            let bounds = try #require(try store.startTimeBounds())
            #expect(bounds.oldest == 99 * Self.s && bounds.newest == 110 * Self.s)
        }
        try withStore { store, _ in
            let bounds = try store.startTimeBounds()
            #expect(bounds == nil)
        }
    }

    func explain(_ store: FlowStore, _ plan: FlowQueryPlan) throws -> [String] {
        try store.connection.withDatabase { database -> [String] in
            let statement = try database.prepare("EXPLAIN QUERY PLAN " + plan.sql)
            try statement.bind(plan.bindings)
            var details: [String] = []
            try statement.forEachRow { details.append($0.string(at: 3) ?? "") }
            return details
        }
    }

    @Test("the plan: whole hours read the hourly rollup, whole minutes the per-minute one, anything else the flows' time index")
    func plans() {
        let minute: Int64 = 60 * Self.s, hour = 60 * minute
        #expect(FlowActivityPlan.rollupSpan(from: 24 * hour, to: 48 * hour, widthMicros: 12 * hour) == 3_600)
        #expect(FlowActivityPlan.rollupSpan(from: 24 * hour, to: 25 * hour, widthMicros: minute) == 60)
        #expect(FlowActivityPlan.rollupSpan(from: 30 * minute, to: 90 * minute, widthMicros: hour) == 60)
        #expect(FlowActivityPlan.rollupSpan(from: 100 * Self.s, to: 110 * Self.s, widthMicros: 2 * Self.s) == nil)
        #expect(FlowActivityPlan.rollupSpan(from: 0, to: hour, widthMicros: 30 * Self.s) == nil)
        #expect(FlowActivityPlan.rollupSpan(from: -hour, to: hour, widthMicros: hour) == nil)
        #expect(FlowActivityPlan.plan(from: 2 * hour, to: 4 * hour, widthMicros: hour)
            == FlowQueryPlan(sql: FlowActivityPlan.rollupSQL,
                             bindings: [.integer(hour), .integer(2 * hour), .integer(hour), .integer(3_600), .integer(2), .integer(4)], limit: 0))
        #expect(FlowActivityPlan.plan(from: 2 * minute, to: 5 * minute, widthMicros: minute)
            == FlowQueryPlan(sql: FlowActivityPlan.rollupSQL,
                             bindings: [.integer(minute), .integer(2 * minute), .integer(minute), .integer(60), .integer(2), .integer(5)], limit: 0))
        #expect(FlowActivityPlan.plan(from: 5, to: 10, widthMicros: 1)
            == FlowQueryPlan(sql: FlowActivityPlan.flowsSQL, bindings: [.integer(5), .integer(1), .integer(5), .integer(10)], limit: 0))
    }

    @Test("SQLite's plans: a range of the rollup's primary key; otherwise a range of the covering time index; never a scan of flows")
    func exactPlans() throws {
        try withStore { store, _ in
            let hour: Int64 = 3_600 * Self.s
            let rollup = try explain(store, FlowActivityPlan.plan(from: 0, to: 10 * hour, widthMicros: hour))
            #expect(rollup == ["SEARCH flow_activity USING PRIMARY KEY (span=? AND bucket>? AND bucket<?)", "USE TEMP B-TREE FOR GROUP BY"])
            let flows = try explain(store, FlowActivityPlan.plan(from: 0, to: 10, widthMicros: 1))
            #expect(flows == ["SEARCH flows USING COVERING INDEX flows_by_start_time (start_time>? AND start_time<?)", "USE TEMP B-TREE FOR GROUP BY"])
        }
    }

    @Test("the rollup follows inserts, upserts, a moved start time and deletes (retention's), and agrees with counting the flows")
    func rollupAgreesWithTheFlows() throws {
        try withStore { store, _ in
            let minute: Int64 = 60 * Self.s, hour = 60 * minute
            let day = 24 * hour
            // Three flows in the first minute of hour 0 of day 1, one in minute 5, one in hour 3.
            let starts: [Int64] = [day, day + 10 * Self.s, day + 59 * Self.s, day + 5 * minute, day + 3 * hour + 1]
            let flows = try writeFlows(starts.map { sampleFlow(start: $0) }, to: store)
            func both(_ from: Int64, _ to: Int64, _ width: Int64) throws -> [Int64: Int64] {
                let rolled = try store.activity(from: from, to: to, widthMicros: width)
                // The same stretch counted from the flows (a width of one µs less is not a whole minute).
                var counted: [Int64: Int64] = [:]
                for (index, count) in try store.connection.withDatabase({ database -> [(Int64, Int64)] in
                    let statement = try database.prepare(FlowActivityPlan.flowsSQL)
                    try statement.bind([.integer(from), .integer(width), .integer(from), .integer(to)])
                    var rows: [(Int64, Int64)] = []
                    try statement.forEachRow { rows.append(($0.int64(at: 0), $0.int64(at: 1))) }
                    return rows
                }) { counted[index] = count }
                #expect(rolled == counted, "\(from)…\(to) by \(width)")
                return rolled
            }
            #expect(try both(day, day + 10 * minute, minute) == [0: 3, 5: 1])
            #expect(try both(day, day + 4 * hour, hour) == [0: 4, 3: 1])
            #expect(try both(0, 7 * day, day) == [1: 5])
            #expect(try store.flowCount() == 5)
            // An upsert of the same flow counts it once; a start time moved to another minute moves it.
            let writer = try store.makeWriter()
            var moved = flows[0]
            moved.startTime = day + 2 * minute
            writer.enqueue(.updated(flows[1]))
            writer.enqueue(.updated(moved))
            writer.flush()
            writer.close()
            #expect(try both(day, day + 10 * minute, minute) == [0: 2, 2: 1, 5: 1])
            #expect(try both(day, day + 4 * hour, hour) == [0: 4, 3: 1])
            // Deleted rows leave the counts; an emptied bucket is absent, as one never used.
            try store.connection.withDatabase { try $0.execute("DELETE FROM flows WHERE id IN (\(flows[3].id), \(flows[4].id))") }
            #expect(try both(day, day + 10 * minute, minute) == [0: 2, 2: 1])
            #expect(try both(day, day + 4 * hour, hour) == [0: 3])
            #expect(try store.flowCount() == 3)
        }
    }

    @Test("the migration fills the rollup from the flows already there")
    func migrationFillsTheRollup() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/t.sqlite3")
        defer { database.close() }
        let rollup = try #require(FlowSchema.migrations.firstIndex { $0.contains("CREATE TABLE flow_activity") })
        let before = Array(FlowSchema.migrations.prefix(rollup))
        try FlowSchema.migrate(database, migrations: before)
        let hour: Int64 = 3_600 * Self.s
        for (id, start) in [(1, hour), (2, hour + 1), (3, 3 * hour + 61 * Self.s)] {
            try database.execute("""
                INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                                   transport, host_origin, status) VALUES (\(id), \(start), \(start), '127.0.0.1', 1, '10.0.0.1', 443, 'tcp', 'none', 'encrypted')
                """)
        }
        try FlowSchema.migrate(database)
        var rows: [String] = []
        let statement = try database.prepare("SELECT span, bucket, flows FROM flow_activity ORDER BY span, bucket")
        try statement.forEachRow { rows.append("\($0.int64(at: 0)) \($0.int64(at: 1)) \($0.int64(at: 2))") }
        #expect(rows == ["60 60 2", "60 181 1", "3600 1 2", "3600 3 1"])
    }

    @Test("follow reads: started since a moment with the filters, oldest first; rows by id")
    func followReads() throws {
        try withStore { store, _ in
            let flows = try writeFlows([sampleFlow(start: 5 * Self.s, host: "a.test"), sampleFlow(start: 7 * Self.s, host: "b.test"),
                                        sampleFlow(start: 6 * Self.s, host: "a.test", status: .failed), sampleFlow(start: 2 * Self.s, host: "a.test")],
                                       to: store)
            #expect(try store.flows(matching: FlowQuery(), startedSince: 5 * Self.s, limit: 10).map(\.host) == ["a.test", "a.test", "b.test"])
            #expect(try store.flows(matching: FlowQuery(host: "a."), startedSince: 5 * Self.s, limit: 10).map(\.startTime) == [5 * Self.s, 6 * Self.s])
            #expect(try store.flows(matching: FlowQuery(status: .failed), startedSince: 0, limit: 10).map(\.id) == [flows[2].id])
            #expect(try store.flows(matching: FlowQuery(), startedSince: 0, limit: 2).count == 2)
            #expect(Set(try store.flows(ids: [flows[0].id, flows[3].id, 999]).map(\.id)) == [flows[0].id, flows[3].id])
        }
    }
}
