import Foundation
import LocalCA
import Recording
import Wire
import FlowStore
import FlowTerms

// Micro-benchmarks of tv's own hot paths, run by Scripts/bench (release build). Figures are
// wall-clock medians of several rounds on this machine; compare them as ratios within one run.

/// Median of `rounds` timings of `body`, in nanoseconds per iteration.
func measure(rounds: Int = 5, iterations: Int, _ body: (Int) throws -> Void) rethrows -> Double {
    var samples: [Double] = []
    for round in 0..<rounds {
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<iterations { try body(round * iterations + i) }
        let end = DispatchTime.now().uptimeNanoseconds
        samples.append(Double(end - start) / Double(iterations))
    }
    return samples.sorted()[samples.count / 2]
}

func report(_ name: String, _ nanoseconds: Double) {
    let text: String
    if nanoseconds >= 1_000_000 { text = String(format: "%.2f ms", nanoseconds / 1_000_000) }
    else if nanoseconds >= 1_000 { text = String(format: "%.2f µs", nanoseconds / 1_000) }
    else { text = String(format: "%.0f ns", nanoseconds) }
    print(name.padding(toLength: 56, withPad: " ", startingAt: 0) + text)
}

/// CPU time of the whole process (every thread), ns.
func processCPUNanoseconds(_ clock: clockid_t = CLOCK_PROCESS_CPUTIME_ID) -> UInt64 {
    var spec = timespec()
    clock_gettime(clock, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

let dir = NSTemporaryDirectory() + "tv-bench-\(getpid())"
defer { try? FileManager.default.removeItem(atPath: dir) }
let now = Int64(Date().timeIntervalSince1970)

// `tv-bench flows …` (or TV_BENCH_ONLY=flows): the FlowStore at scale alone (issue 19;
// FlowStoreBench). Exit status 0 when every goal is met, 1 when one is not, 2 on a usage error.
if CommandLine.arguments.dropFirst().first == "flows" || ProcessInfo.processInfo.environment["TV_BENCH_ONLY"] == "flows" {
    let arguments = CommandLine.arguments.dropFirst().first == "flows" ? Array(CommandLine.arguments.dropFirst(2)) : []
    try runScaleBench(scratch: dir) { try FlowStoreBench(arguments: arguments, environment: ProcessInfo.processInfo.environment, scratch: dir) }
}
// `tv-bench shared --store URL …`: the shared store on PostgreSQL against the SQLite writer
// (issue 25; SharedStoreBench). Exit status as `flows`.
if CommandLine.arguments.dropFirst().first == "shared" {
    try runScaleBench(scratch: dir) { try SharedStoreBench(arguments: Array(CommandLine.arguments.dropFirst(2)), scratch: dir) }
}
print("tv micro-benchmarks (median of 5 rounds, per operation)")
// Decrypted-content recording, the h1 keep-alive pattern: per exchange a 1 KiB request and a
// 1 KiB response (two chunks, two turns, two index rows), a new flow every 500 exchanges. The
// producer's figure is what the event loop pays; the second includes the writer thread's work
// (segment writes, the index rows) until everything is flushed: the CPU recording adds per
// request, once both share one CPU. A flush every 2,000 exchanges keeps the producer from
// outrunning the writer (live traffic is far slower than this loop).
do {
    var configuration = ContentWriterConfiguration(databasePath: dir + "/exchange.sqlite3", directory: dir + "/exchange")
    configuration.sweepInterval = 3_600
    let session = ContentRecorder(writer: try ContentWriter(configuration), policy: ContentPolicy(keep: true))
    let request = [UInt8](repeating: 0x71, count: 1_024)
    let response = [UInt8](repeating: 0x72, count: 1_024)
    let exchanges = Int(ProcessInfo.processInfo.environment["TV_BENCH_EXCHANGES"] ?? "") ?? 20_000
    var flow: FlowContentRecorder? = nil
    let cpuStart = processCPUNanoseconds()
    let started = DispatchTime.now().uptimeNanoseconds
    for i in 0..<exchanges {
        if i % 500 == 0 {
            flow?.finish()
            // Throttled as live traffic is: the queue never fills, nothing is dropped.
            if i % 2_000 == 0 { session.writer.flush() }
            flow = session.recorder(flow: 1_000_000 + Int64(i))
        }
        flow!.record(.clientToServer, at: Int64(2 * i), request)
        flow!.record(.serverToClient, at: Int64(2 * i + 1), response)
    }
    flow?.finish()
        session.writer.flush()
    let cpu = processCPUNanoseconds() - cpuStart
    let counters = session.counters
    let elapsed = DispatchTime.now().uptimeNanoseconds - started
    report("content record h1 exchange (2 × 1 KiB), wall clock", Double(elapsed) / Double(exchanges))
    report("content record h1 exchange, producer + writer CPU", Double(cpu) / Double(exchanges))
    print("  \(counters.turnsWritten) turns written, \(counters.chunksDropped) chunks and \(counters.turnEndsDropped) turn ends dropped")
    session.writer.close()
}
// TV_BENCH_ONLY=content-exchange: this one alone (to run it under callgrind).
if ProcessInfo.processInfo.environment["TV_BENCH_ONLY"] == "content-exchange" { exit(0) }

for rootType in [KeyType.ecdsaP256, .rsa2048] {
    let folder = CAFolder(directory: dir + "/ca-\(rootType.name)")
    let ca = try folder.create(rootKeyType: rootType, leafKeyType: rootType, now: now)
    let mint = try measure(iterations: rootType == .rsa2048 ? 200 : 1000) { i in
        _ = try ca.mintLeaf(for: LeafIdentity(names: ["host\(i).bench.test"]), now: now)
    }
    report("leaf mint, new identity (\(rootType.displayName))", mint)
    let cache = LeafCache(authority: ca)
    let identity = try LeafIdentity(names: ["cached.bench.test"])
    _ = try cache.leaf(for: identity, now: now)
    let hit = try measure(iterations: 100_000) { _ in _ = try cache.leaf(for: identity, now: now) }
    report("leaf cache hit (\(rootType.displayName))", hit)
}
// OpenSSL's own heap for an idle spliced connection (two legs, buffers released): the floor
// under the harness's "memory per idle connection" row. Bytes, not time.
do {
    let ca = try CAFolder(directory: dir + "/ca-floor").create(rootKeyType: .ecdsaP256, leafKeyType: .ecdsaP256, now: now)
    let leaf = try ca.mintLeaf(for: LeafIdentity(names: ["floor.bench.test"]), now: now)
    let bytes = try openSSLIdleFloor(leaf: leaf, connections: 200)
    print("OpenSSL heap, idle connection (2 legs, buffers freed)".padding(toLength: 56, withPad: " ", startingAt: 0)
          + String(format: "%.1f KiB", bytes / 1024))
}
let names = (0..<1000).map { "Sub\($0).Example.COM." }
let normalise = try measure(iterations: 1000) { i in _ = try LeafIdentity(names: [names[i % 1000]]) }
report("LeafIdentity normalise one name", normalise)

// Decrypted-content recording: what the proxy pays per plaintext chunk (16 KiB reads).
do {
    var configuration = ContentWriterConfiguration(databasePath: dir + "/content.sqlite3", directory: dir + "/content")
    configuration.sweepInterval = 3_600
    let session = ContentRecorder(writer: try ContentWriter(configuration), policy: ContentPolicy(keep: true))
    let chunk = [UInt8](repeating: 0x61, count: 16_384)
    var flow: FlowContentRecorder? = nil
    var nextFlow: Int64 = 1
    let started = DispatchTime.now().uptimeNanoseconds
    // Kept: 4 chunks per turn (64 KiB, the turn limit), alternating sides, a new flow every 16
    // turns (before the 1 MiB budget of a side is used up). Each flow's 1 MiB is flushed before
    // the next one starts, so the queue never fills and nothing is dropped: the figure is what
    // keeping a chunk costs end to end (the producer's copy and the writer's segment write and
    // index row), as live traffic slower than the disk pays it.
    let kept = measure(iterations: 2_000) { i in
        if i % 64 == 0 {
            flow?.finish()
            session.writer.flush()
            flow = session.recorder(flow: nextFlow)
            nextFlow += 1
        }
        let direction: Direction = (i / 4) % 2 == 0 ? .serverToClient : .clientToServer
        if flow!.isRecording { flow!.record(direction, at: Int64(i), chunk) }
    }
    flow?.finish()
    session.writer.flush()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    let counters = session.counters
    report("content record 16 KiB chunk, kept (end to end)", kept)
    print("  \(String(format: "%.0f", 16_384 / kept * 1_000)) MB/s kept; writer \(String(format: "%.0f", Double(counters.bytesWritten) / seconds / 1e6)) MB/s to disk overall;"
          + " \(counters.chunksDropped) of \(counters.chunksQueued + counters.chunksDropped) chunks dropped")
    // Cut: the side is past its budget, only seen bytes are counted.
    let cutFlow = session.recorder(flow: nextFlow)!
    for _ in 0..<5 { cutFlow.record(.serverToClient, at: 0, chunk) }
    let cut = measure(iterations: 100_000) { i in cutFlow.record(.serverToClient, at: Int64(i), chunk) }
    report("content record 16 KiB chunk, side cut", cut)
    cutFlow.finish()
    session.writer.close()
}

// ClientHello parsing (Wire): curl --http2's 517-byte ClientHello (one record), whole and split
// in two reads as the proxy may see it.
do {
    let hex = "1603010200010001fc0303c2a2865ffb21c3c2921e72efdfe59de7b4c66cc9bcc739ffac2ab926728a9f9820f94cf3da6dbb0c42ea119b82da94f2622c5ac152ef84163eeb96e2edcae0f30d003e130213031301c02cc030009fcca9cca8ccaac02bc02f009ec024c028006bc023c0270067c00ac0140039c009c0130033009d009c003d003c0035002f00ff010001750000000b0009000006612e74657374000b000403000102000a00160014001d0017001e00190018010001010102010301040010000e000c02683208687474702f312e31001600000017000000310000000d002a0028040305030603080708080809080a080b080408050806040105010601030303010302040205020602002b0009080304030303020301002d00020101003300260024001d0020777a75691c4a2c622a48737b64e353588ee63598646258d10f5e541467d15246001500b7000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        bytes.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    guard case .clientHello = ClientHelloParser.parse(bytes) else { fatalError("the bench ClientHello does not parse") }
    let whole = measure(iterations: 100_000) { _ in
        if case .clientHello(let hello) = ClientHelloParser.parse(bytes) { precondition(hello.serverName != nil) }
    }
    report("ClientHello parse, 517 B, one read", whole)
    let split = measure(iterations: 100_000) { _ in
        var parser = ClientHelloParser()
        _ = parser.feed(bytes[0..<200])
        if case .clientHello(let hello) = parser.feed(bytes[200...]) { precondition(hello.serverName != nil) }
    }
    report("ClientHello parse, 517 B, two reads", split)
}

// Turn assembly (Recording.TurnRecorder): the pure chunk → turn decision per chunk, for an h1
// exchange pattern (1 request chunk, 4 response chunks) and a bulk one-direction stream.
do {
    var sink = 0
    let exchange = measure(iterations: 200_000) { i in
        var recorder = TurnRecorder(budget: RecordingBudget(flowBudget: Int.max / 4))
        for j in 0..<10 {
            let direction: Direction = j % 5 == 0 ? .clientToServer : .serverToClient
            sink &+= recorder.take(direction, at: Int64(j), count: 1_024).keep
        }
        if let turn = recorder.finish() { sink &+= turn.keptBytes }
    }
    report("turn assembly, 10 chunks (2 exchanges)", exchange)
    var recorder = TurnRecorder()
    let bulk = measure(iterations: 1_000_000) { i in sink &+= recorder.take(.serverToClient, at: Int64(i), count: 16_384).keep }
    report("turn assembly, 1 chunk past the budget", bulk)
    if sink == 42 { print("") }
}

// The FlowStore at scale (issue 19), with its default size unless TV_BENCH_FLOWS says otherwise.
do {
    let bench = try FlowStoreBench(arguments: [], environment: ProcessInfo.processInfo.environment, scratch: dir + "/flows")
    _ = try bench.run()
}
