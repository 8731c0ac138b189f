import FlowStore
import Synchronization
import FlowTerms
import Foundation
import TVCore

/// Issue 25's benchmark of the shared store: `tv-bench shared --store URL [--flows N]
/// [--rounds N] [--dir PATH] [--timeline-flows N]`, against a PostgreSQL server the caller runs
/// (a scratch database: every table of tv's shared schema is emptied first).
///
/// It sends the same `SyntheticHistory` events (each flow closed, its program, its request
/// rows) through writers, each a `FlowWriter` with its bounded queue and one transaction per
/// batch, as a session sends them: SQLite's (the baseline, this build's writer), one shared-store
/// instance sending by COPY (`SharedInsertion.copy`, what `tv run --store` does), one sending
/// multi-row INSERTs (`.rows`, for the comparison), and four instances writing at once by COPY
/// (N/4 flows each, one producer thread each; `--copy-only` leaves the multi-row INSERT one
/// out). Goal: each shared rate at least SQLite's. With
/// `--timeline-flows N`, four more COPY instances then fill the shared store up to N flows.
/// Then, over every shared flow, the median time of a timeline page (the newest 50, the next
/// keyset page) and of one instance's, one `--host`'s and one status's pages (goal: at most
/// 20 ms each), with the index PostgreSQL chose, and each first page in a new session (connect,
/// open, read: one `tv flows --store`). `--reads-only` reads what an earlier run left
/// (nothing emptied or written; missing migrations are applied first, as any tv that opens the
/// store applies them). Wall-clock: say how loaded the machine was.
struct SharedStoreBench {
    var url = ""
    var flows = 1_000_000
    var rounds = 9
    var directory: String
    /// Shared flows to read the timeline over (0: what the insert runs wrote).
    var timelineFlows = 0
    /// Only the reads, over what the database holds (`--reads-only`).
    var readsOnly = false
    /// Leaves out the multi-row INSERT instance (`--copy-only`): not a goal row, and at a
    /// million flows the longest (190-260 s of an 8-minute run).
    var copyOnly = false

    static let goalMillis = 20.0

    init(arguments: [String], scratch: String) throws {
        directory = scratch
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--store":
                guard let value = rest.popFirst() else { throw BenchUsage("--store takes a postgresql:// URL") }
                url = value
            case "--flows": flows = try FlowStoreBench.positive(rest.popFirst(), argument)
            case "--rounds": rounds = try FlowStoreBench.positive(rest.popFirst(), argument)
            case "--timeline-flows": timelineFlows = try FlowStoreBench.positive(rest.popFirst(), argument)
            case "--reads-only": readsOnly = true
            case "--copy-only": copyOnly = true
            case "--dir":
                guard let path = rest.popFirst() else { throw BenchUsage("--dir takes a folder") }
                directory = path
            default: throw BenchUsage("tv-bench shared takes --store URL, --flows N, --rounds N, --timeline-flows N, --reads-only, --copy-only and --dir PATH, not '\(argument)'")
            }
        }
        guard !url.isEmpty else { throw BenchUsage("tv-bench shared needs --store URL (a scratch database: it is emptied)") }
    }

    /// One writer's fill.
    struct Fill {
        var name: String
        var flows: Int
        var seconds: Double
        var flowsPerSecond: Double { Double(flows) / seconds }
        /// A shared writer's row measured against SQLite's (not the per-instance rows of a
        /// together run, nor the timeline's top-up).
        var comparable = false
        /// This process's CPU (every thread: producers and writers) and the server's
        /// (`ServerCPU`; nil without `TV_BENCH_SERVER_PID`, or for SQLite's row), µs per flow.
        var clientMicrosPerFlow: Double?
        var serverMicrosPerFlow: Double?
    }

    /// The server's CPU reader (`TV_BENCH_SERVER_PID`, set by `Scripts/bench-shared`).
    let server = ServerCPU.fromEnvironment()

    /// `body`'s fill with the CPU it took here and on the server (read after the writers'
    /// backends had 0.3 s to end and be reaped; that wait is outside the fill's time).
    func measured(shared: Bool = true, _ body: () throws -> Fill) rethrows -> Fill {
        let client = FlowStoreBench.cpuMicros()
        let before = shared ? server?.micros() : nil
        var fill = try body()
        fill.clientMicrosPerFlow = (FlowStoreBench.cpuMicros() - client) / Double(fill.flows)
        if let before {
            usleep(300_000)
            fill.serverMicrosPerFlow = server?.micros().map { ($0 - before) / Double(fill.flows) }
        }
        return fill
    }

    /// Runs everything and prints the table; true when every goal is met.
    func run() throws -> Bool {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/tunnelvision.sqlite3"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let target = try SharedStoreTarget(url)
        if readsOnly {
            let started = DispatchTime.now().uptimeNanoseconds
            let history = try SharedFlowHistory(target)
            let migrated = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            let total = try history.count(FlowQuery())
            history.close()
            print(String(format: "Shared store (PostgreSQL %@), reads only (opening it, migrations included: %.1f s)", target.server, migrated))
            return try printReads(try timeline(target), over: total)
        }
        let end = Int64(Date().timeIntervalSince1970) / 3_600 * 3_600 * 1_000_000
        let store = try FlowStore(path: path)
        defer { store.close() }
        try empty(target)

        let sqlite = try measured(shared: false) { try fill("SQLite writer (this data folder)", flows: flows, end: end) { try store.makeWriter() } }
        var fills = [sqlite]
        let insertions = [(SharedInsertion.copy, "COPY")] + (copyOnly ? [] : [(.rows, "multi-row INSERT")])
        for (insertion, words) in insertions {
            var one = try measured {
                try fill("shared store, 1 instance, \(words)", flows: flows, end: end) {
                    try FlowWriter(shared: target, instance: InstanceIdentity(id: "bench-single-\(words.prefix(4))", machine: "bench-single"),
                                   insertion: insertion)
                }
            }
            one.comparable = true
            fills.append(one)
        }
        var four: [Fill] = []
        let together = try measured {
            four = try fillTogether(target, instances: 4, flows: flows, prefix: "bench", end: end)
            return four[four.count - 1]
        }
        four[four.count - 1] = together
        fills += four
        // The shared flows written (SQLite's are not in the shared store).
        let written = (copyOnly ? 1 : 2) * flows + four.last!.flows
        if timelineFlows > written {
            var topUp = try fillTogether(target, instances: 4, flows: timelineFlows - written, prefix: "bench-fill", end: end)
            topUp = topUp.map { var f = $0; f.comparable = false; f.name = f.name.replacingOccurrences(of: "shared store", with: "timeline fill"); return f }
            fills += topUp
        }
        let total = max(written, timelineFlows)
        let reads = try timeline(target)

        print("Shared store (PostgreSQL \(target.server)) at \(FlowStoreBenchReport.grouped(flows)) flows per run, medians of \(rounds) reads; goals: shared insert ≥ SQLite's, each page ≤ \(Int(SharedStoreBench.goalMillis)) ms")
        for fill in fills {
            let under = fill.comparable && fill.flowsPerSecond < sqlite.flowsPerSecond
            print(fill.name.padding(toLength: 48, withPad: " ", startingAt: 0)
                  + String(format: "%@ flows/s (%.1f s)", FlowStoreBenchReport.grouped(Int(fill.flowsPerSecond)).leftPadded(9), fill.seconds)
                  + (under ? "  UNDER SQLITE" : "")
                  + (fill.clientMicrosPerFlow.map { String(format: "  tv CPU %.1f µs/flow", $0) } ?? "")
                  + (fill.serverMicrosPerFlow.map { String(format: ", server CPU %.1f µs/flow", $0) } ?? ""))
        }
        let readsMet = try printReads(reads, over: total)
        let met = fills.allSatisfy { !$0.comparable || $0.flowsPerSecond >= sqlite.flowsPerSecond } && readsMet
        print("")
        print(met ? "Every goal is met." : "Some goals are not met.")
        return met
    }

    /// Prints the reads' table; true when each page is within the goal (in a session held
    /// open; the new session's column is said beside it).
    func printReads(_ reads: [Row], over total: Int) throws -> Bool {
        print("")
        print("read (over \(FlowStoreBenchReport.grouped(total)) shared flows)".padding(toLength: 48, withPad: " ", startingAt: 0)
              + "  first page   next page  new session   rows  plan")
        for read in reads {
            let row = read.page
            let over = row.firstMillis > SharedStoreBench.goalMillis || (row.nextMillis ?? 0) > SharedStoreBench.goalMillis
            print(row.name.padding(toLength: 48, withPad: " ", startingAt: 0)
                  + "  " + FlowStoreBenchReport.millis(row.firstMillis).leftPadded(10)
                  + "  " + (row.nextMillis.map(FlowStoreBenchReport.millis) ?? "-").leftPadded(10)
                  + "  " + FlowStoreBenchReport.millis(read.newSessionMillis).leftPadded(11)
                  + "  " + String(row.rows).leftPadded(5) + "  " + row.plan.joined(separator: "; ") + (over ? "  OVER GOAL" : ""))
        }
        print("(first and next page: medians in one session held open; new session: connecting, opening and the first page, as one `tv flows --store`)")
        return reads.allSatisfy { $0.page.firstMillis <= SharedStoreBench.goalMillis && ($0.page.nextMillis ?? 0) <= SharedStoreBench.goalMillis }
    }

    /// Empties the shared tables (a scratch database).
    func empty(_ target: SharedStoreTarget) throws {
        let history = try SharedFlowHistory(target)
        history.close()
        try SharedStoreMaintenance.truncateAll(target)
    }

    /// `flows` synthetic flows through the writer `make` opens, timed until it has closed
    /// (everything committed).
    func fill(_ name: String, flows: Int, end: Int64, offset: Int = 0, of total: Int? = nil,
              _ make: () throws -> FlowWriter) throws -> Fill {
        var history = SyntheticHistory(flows: total ?? flows, end: end)
        let writer = try make()
        func send(_ event: FlowEvent) {
            while !writer.enqueue(event) { writer.flush() }
        }
        let started = DispatchTime.now().uptimeNanoseconds
        for i in offset..<(offset + flows) {
            let (flow, program, exchanges) = history.flow(i, id: writer.allocateID())
            send(.closed(flow))
            send(.program(flowID: flow.id, program))
            for exchange in exchanges { send(.exchange(exchange)) }
        }
        writer.close()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return Fill(name: name, flows: flows, seconds: seconds)
    }

    /// `instances` shared COPY writers at once (instances `prefix-1` …), each with its own
    /// producer thread and `flows / instances` flows; the last row is all of them together.
    func fillTogether(_ target: SharedStoreTarget, instances: Int, flows: Int, prefix: String, end: Int64) throws -> [Fill] {
        let each = flows / instances
        let results = ResultsBox(count: instances)
        let started = DispatchTime.now().uptimeNanoseconds
        // A thread each, all at once (`concurrentPerform` would run only as many as there are CPUs).
        let done = DispatchGroup()
        for n in 0..<instances {
            done.enter()
            Thread {
                results.set(n, Result {
                    try fill("shared store, instance \(n + 1) of \(instances) (each)", flows: each, end: end, offset: n * each, of: each * instances) {
                        try FlowWriter(shared: target, instance: InstanceIdentity(id: "\(prefix)-\(n + 1)", machine: "\(prefix)-\(n + 1)"))
                    }
                })
                done.leave()
            }.start()
        }
        done.wait()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        var out = try results.all().map { try $0.get() }
        out.append(Fill(name: "shared store, \(instances) instances together", flows: each * instances, seconds: seconds, comparable: true))
        return out
    }

    /// Timeline pages over everything written.
    func timeline(_ target: SharedStoreTarget) throws -> [Row] {
        try SharedStoreMaintenance.analyze(target)
        let all = try SharedFlowHistory(target)
        defer { all.close() }
        let one = try SharedFlowHistory(target, instance: "bench-2")
        defer { one.close() }
        let host = SyntheticHistory(flows: 1, end: 0).hosts[37].name
        return [
            try row("timeline, newest 50", all, FlowQuery(limit: 50), target),
            try row("timeline of one instance (--instance)", one, FlowQuery(limit: 50), target),
            try row("--host \(host.prefix(12))", all, FlowQuery(host: String(host.prefix(12)), limit: 50), target),
            try row("--status failed", all, FlowQuery(status: .failed, limit: 50), target),
        ]
    }

    /// A page of `query` and the page after it, timed (`BenchTiming.pages`, no warm-up), and
    /// the first page in a new session (`newSessionMillis`).
    func row(_ name: String, _ history: SharedFlowHistory, _ query: FlowQuery, _ target: SharedStoreTarget) throws -> Row {
        let timed = try BenchTiming.pages(rounds: rounds, warmUp: false, query, read: { try history.flows($0) }, cursor: \.nextCursor)
        let fresh = try BenchTiming.medianMillis(rounds: rounds, warmUp: false) {
            let opened = try SharedFlowHistory(target, instance: history.instance)
            defer { opened.close() }
            _ = try opened.flows(query)
        }
        return Row(page: FlowStoreBench.Row(name: name, firstMillis: timed.first, nextMillis: timed.next, rows: timed.page.flows.count,
                                            plan: try history.indexesChosen(query)),
                   newSessionMillis: fresh)
    }

    /// A page's timings.
    struct Row {
        /// In one session held open (the first page read once before timing, so the session's
        /// catalog caches are warm), as `tv web` or a session reading on reads.
        var page: FlowStoreBench.Row
        /// Connecting, opening the history (the schema check, `--instance`'s ids) and the first
        /// page, in a new session each time: what one `tv flows --store` pays after its start.
        var newSessionMillis: Double
    }
}

/// Results of concurrent fills, one slot each.
final class ResultsBox: Sendable {
    private let slots: Mutex<[Result<SharedStoreBench.Fill, Error>?]>
    init(count: Int) { slots = Mutex(Array(repeating: nil, count: count)) }
    func set(_ n: Int, _ result: Result<SharedStoreBench.Fill, Error>) { slots.withLock { $0[n] = result } }
    func all() -> [Result<SharedStoreBench.Fill, Error>] { slots.withLock { $0.compactMap { $0 } } }
}
