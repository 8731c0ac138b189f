import Foundation
import LocalCA

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
