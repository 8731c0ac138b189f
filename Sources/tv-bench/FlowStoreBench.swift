import FlowStore
import FlowTerms
import Foundation
import TVCore

/// Issue 19's benchmark of the history at scale: `tv-bench flows [--flows N] [--rounds N]
/// [--json] [--writer-capacity N] [--dir PATH]`.
///
/// It fills a scratch store with `SyntheticHistory` flows (with their programs and exchanges)
/// through the batched writer, as a session does, and reports the insert rate (goal: at least
/// 50,000 flows/s); then, for each filter of `tv flows` and `tv requests` and for `tv activity`'s
/// aggregate, the median time of the first page and of the next (keyset) page over several runs
/// (goal: each at most 5 ms), with the plan SQLite chose. Figures are wall-clock: run it on a
/// quiet machine (PERFORMANCE.md).
struct FlowStoreBench {
    /// One timed read.
    struct Row {
        var name: String
        var firstMillis: Double
        var nextMillis: Double?
        var rows: Int
        var plan: [String]
    }

    var flows = 1_000_000
    var rounds = 9
    var json = false
    var directory: String
    /// The writer's queue capacity, events (`--writer-capacity N`; the session's default otherwise).
    var writerCapacity = FlowWriter.defaultCapacity

    static let goalMillis = 5.0
    static let goalFlowsPerSecond = 50_000.0

    /// `flows`, `--flows N`, `--rounds N`, `--json`, `--dir PATH` (kept afterwards); the
    /// environment's TV_BENCH_FLOWS as the default of `--flows`.
    init(arguments: [String], environment: [String: String], scratch: String) throws {
        directory = scratch
        if let n = environment["TV_BENCH_FLOWS"].flatMap(Int.init) { flows = n }
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--flows": flows = try FlowStoreBench.positive(rest.popFirst(), argument)
            case "--rounds": rounds = try FlowStoreBench.positive(rest.popFirst(), argument)
            case "--json": json = true
            case "--writer-capacity": writerCapacity = try FlowStoreBench.positive(rest.popFirst(), argument)
            case "--dir":
                guard let path = rest.popFirst() else { throw BenchUsage("--dir takes a folder") }
                directory = path
            default: throw BenchUsage("tv-bench flows takes --flows N, --rounds N, --json, --writer-capacity N and --dir PATH, not '\(argument)'")
            }
        }
    }

    static func positive(_ text: String?, _ option: String) throws -> Int {
        guard let text, let n = Int(text), n > 0 else { throw BenchUsage("\(option) takes a positive whole number") }
        return n
    }

    /// Fills the store, times every read, prints the table (or JSON). Returns whether every goal was met.
    func run() throws -> Bool {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/tunnelvision.sqlite3"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let end = Int64(Date().timeIntervalSince1970) / 3_600 * 3_600 * 1_000_000
        var history = SyntheticHistory(flows: flows, end: end)
        let store = try FlowStore(path: path)
        defer { store.close() }
        let insert = try fill(store, &history)
        let reads = FlowStoreReads(store: store, path: path, history: history, rounds: rounds)
        let rows = try reads.all()
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0
        let met = insert.flowsPerSecond >= FlowStoreBench.goalFlowsPerSecond
            && rows.allSatisfy { $0.firstMillis <= FlowStoreBench.goalMillis && ($0.nextMillis ?? 0) <= FlowStoreBench.goalMillis }
        if json {
            print(FlowStoreBenchReport.json(flows: flows, insert: insert, rows: rows, fileBytes: fileBytes, met: met))
        } else {
            for line in FlowStoreBenchReport.table(flows: flows, insert: insert, rows: rows, fileBytes: fileBytes, rounds: rounds, met: met) {
                print(line)
            }
        }
        return met
    }

    /// What filling the store took.
    struct Insert {
        var seconds: Double
        var flowsPerSecond: Double
        var exchanges: Int
        var producerWaits: Int
        /// The process's CPU time (user and system, every thread: the producer building flows
        /// and the writer) per flow, µs: what a loaded machine's wall clock cannot show.
        var cpuMicrosPerFlow: Double
    }

    /// The process's CPU time so far (user and system), µs.
    static func cpuMicros() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let user = Double(usage.ru_utime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec)
        return user + Double(usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_stime.tv_usec)
    }

    /// Every flow through `FlowWriter` (the session's writer: bounded queue, one transaction per
    /// batch), each with its program event and its exchanges, as a session sends them.
    func fill(_ store: FlowStore, _ history: inout SyntheticHistory) throws -> Insert {
        let writer = try store.makeWriter(capacity: writerCapacity)
        var waits = 0
        var exchanges = 0
        func send(_ event: FlowEvent) {
            // A full queue: wait for the writer (live traffic is slower than this loop; nothing is dropped).
            while !writer.enqueue(event) {
                waits += 1
                writer.flush()
            }
        }
        let started = DispatchTime.now().uptimeNanoseconds
        let cpuStarted = FlowStoreBench.cpuMicros()
        for i in 0..<flows {
            let (flow, program, flowExchanges) = history.flow(i, id: writer.allocateID())
            send(.closed(flow))
            send(.program(flowID: flow.id, program))
            for exchange in flowExchanges { send(.exchange(exchange)) }
            exchanges += flowExchanges.count
        }
        writer.close()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return Insert(seconds: seconds, flowsPerSecond: Double(flows) / seconds, exchanges: exchanges, producerWaits: waits,
                      cpuMicrosPerFlow: (FlowStoreBench.cpuMicros() - cpuStarted) / Double(flows))
    }
}

/// A command-line mistake in `tv-bench flows`.
struct BenchUsage: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
