import Foundation
import LocalCA
import Recording

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
    print(name.padding(toLength: 46, withPad: " ", startingAt: 0) + text)
}

let dir = NSTemporaryDirectory() + "tv-bench-\(getpid())"
defer { try? FileManager.default.removeItem(atPath: dir) }
let now = Int64(Date().timeIntervalSince1970)

print("tv micro-benchmarks (median of 5 rounds, per operation)")
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
    // turns (before the 1 MiB budget of a side is used up).
    let kept = measure(iterations: 2_000) { i in
        if i % 64 == 0 {
            flow?.finish()
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
    report("content record 16 KiB chunk, kept", kept)
    print("  producer \(String(format: "%.0f", 16_384 / kept * 1_000)) MB/s; writer \(String(format: "%.0f", Double(counters.bytesWritten) / seconds / 1e6)) MB/s to disk;"
          + " \(counters.chunksDropped) of \(counters.chunksQueued + counters.chunksDropped) chunks dropped (queue full: the producer outran the disk)")
    // Cut: the side is past its budget, only seen bytes are counted.
    let cutFlow = session.recorder(flow: nextFlow)!
    for _ in 0..<5 { cutFlow.record(.serverToClient, at: 0, chunk) }
    let cut = measure(iterations: 100_000) { i in cutFlow.record(.serverToClient, at: Int64(i), chunk) }
    report("content record 16 KiB chunk, side cut", cut)
    cutFlow.finish()
    session.writer.close()
}
