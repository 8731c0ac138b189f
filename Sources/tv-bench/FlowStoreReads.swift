import FlowStore
import FlowTerms
import Foundation
import TVCore

/// The reads `FlowStoreBench` times: each `tv flows` filter (first page, then the keyset page
/// after it), `tv requests`' pages, and `tv activity`'s aggregate as the command plans it, each
/// the median of `rounds` runs after one warm-up, with SQLite's query plan.
struct FlowStoreReads {
    let store: FlowStore
    let path: String
    let history: SyntheticHistory
    let rounds: Int

    /// Every read, in the table's order.
    func all() throws -> [FlowStoreBench.Row] {
        let hour: Int64 = 3_600_000_000
        let day = 24 * hour
        let end = history.end
        let middle = history.start + (end - history.start) / 2
        // The most popular name, one from the middle of the ranks (about 1 flow in 10,000), a
        // domain shared by many names, an address prefix, and two characters (no trigram).
        let popular = history.hosts[0].name
        let rare = history.hosts[1_500].name
        let filters: [(String, FlowQuery)] = [
            ("tv flows", FlowQuery()),
            ("--host (most popular name)", FlowQuery(host: popular)),
            ("--host (rare name)", FlowQuery(host: rare)),
            ("--host github (a domain)", FlowQuery(host: "github")),
            ("--host 2001:db8: (IPv6 servers)", FlowQuery(host: "2001:db8:")),
            ("--host 10.0.0.7 (a client)", FlowQuery(host: "10.0.0.7")),
            ("--host ap (2 characters)", FlowQuery(host: "ap")),
            ("--status failed", FlowQuery(status: .failed)),
            ("--status kept_private", FlowQuery(status: .keptPrivate)),
            ("--program curl", FlowQuery(program: "curl")),
            ("--program ssh", FlowQuery(program: "ssh")),
            ("--since 1h", FlowQuery(since: end - hour)),
            ("--from/--to one day in the middle", FlowQuery(from: middle, to: middle + day)),
            ("--host github --status inspected", FlowQuery(host: "github", status: .inspected)),
            ("--program curl --since 1d", FlowQuery(since: end - day, program: "curl")),
            ("--status failed --from/--to one day", FlowQuery(status: .failed, from: middle, to: middle + day)),
        ]
        var rows: [FlowStoreBench.Row] = []
        for (name, query) in filters { rows.append(try flowPages(name, query)) }
        rows.append(try requestPages("tv requests", ExchangeQuery()))
        rows.append(try requestPages("tv requests --from/--to one day", ExchangeQuery(from: middle, to: middle + day)))
        rows.append(try requestPages("tv flow ID's requests", ExchangeQuery(flowID: try someInspectedFlow())))
        // tv activity as the command plans it: 60 bars over everything, over the last day, the last hour.
        let bounds = try store.startTimeBounds()!
        for (name, from, to) in [("tv activity (whole history)", bounds.oldest, bounds.newest + 1),
                                 ("tv activity --since 1d", end - day, end),
                                 ("tv activity --since 1h", end - hour, end)] {
            let axis = ActivityAxis(from: from, to: to, maxBars: 60)
            let plan = FlowActivityPlan.plan(from: axis.start, to: axis.end, widthMicros: axis.widthMicros)
            var buckets = 0
            let millis = try median { buckets = try store.activity(from: axis.start, to: axis.end, widthMicros: axis.widthMicros).count }
            rows.append(FlowStoreBench.Row(name: "\(name), \(axis.bars) bars of \(axis.widthWords)", firstMillis: millis,
                                           nextMillis: nil, rows: buckets, plan: try explain(plan)))
        }
        return rows
    }

    func flowPages(_ name: String, _ query: FlowQuery) throws -> FlowStoreBench.Row {
        let timed = try BenchTiming.pages(rounds: rounds, warmUp: true, query, read: { try store.flows($0) }, cursor: \.nextCursor)
        return FlowStoreBench.Row(name: name, firstMillis: timed.first, nextMillis: timed.next, rows: timed.page.flows.count,
                                  plan: try explain(try plan(query)))
    }

    /// The plan a page of `query` runs: for a host text the trigram index answers, the first
    /// window's (the last hour's), the walk's, or with a status the bounded walk's (`FlowHostWindows`).
    func plan(_ query: FlowQuery) throws -> FlowQueryPlan {
        guard let host = query.host, FlowTextSearch.readsNames(host) else { return try query.plan() }
        let names = try store.names(holding: host)
        if FlowHostWindows.readsWindows(names), FlowHostWindows.walksFirst(query) {
            return try query.hostWalkPlan(names: names, walking: FlowHostWindows.walkedEntries, rows: query.effectiveLimit + 1)
        }
        let window = FlowHostWindows.readsWindows(names) ? history.end - FlowHostWindows.firstWidth..<history.end : nil
        return try query.hostPlan(names: names, window: window, rows: query.effectiveLimit + 1)
    }

    func requestPages(_ name: String, _ query: ExchangeQuery) throws -> FlowStoreBench.Row {
        let timed = try BenchTiming.pages(rounds: rounds, warmUp: true, query, read: { try store.exchanges($0) }, cursor: \.nextCursor)
        return FlowStoreBench.Row(name: name, firstMillis: timed.first, nextMillis: timed.next, rows: timed.page.exchanges.count,
                                  plan: try explain(try query.plan()))
    }

    func someInspectedFlow() throws -> Int64 {
        try store.flows(FlowQuery(status: .inspected, limit: 1)).flows.first?.id ?? 1
    }

    /// The median wall-clock time of `rounds` runs of `body` after one warm-up, in ms.
    func median(_ body: () throws -> Void) throws -> Double {
        try BenchTiming.medianMillis(rounds: rounds, warmUp: true, body)
    }

    /// SQLite's plan for `plan`, one line per step.
    func explain(_ plan: FlowQueryPlan) throws -> [String] {
        let database = try SQLiteDatabase(readingAt: path)
        defer { database.close() }
        let statement = try database.prepare("EXPLAIN QUERY PLAN " + plan.sql)
        try statement.bind(plan.bindings)
        var lines: [String] = []
        try statement.forEachRow { lines.append($0.string(at: 3) ?? "") }
        return lines
    }
}
