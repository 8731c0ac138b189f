import Foundation

/// A benchmark `tv-bench` runs by name (`flows`: `FlowStoreBench`, `shared`: `SharedStoreBench`):
/// the folder it writes in, and whether its goals were met.
protocol ScaleBench {
    /// Where its stores are: the scratch folder, or the `--dir PATH` given (kept afterwards).
    var directory: String { get }
    /// Runs it and prints its table; true when every goal is met.
    func run() throws -> Bool
}

extension FlowStoreBench: ScaleBench {}
extension SharedStoreBench: ScaleBench {}

/// Runs the benchmark `make` builds and exits: 0 when every goal is met, 1 when one is not, 2 on
/// a usage error (said on standard error). The scratch folder `scratch` is removed afterwards.
/// - Throws: what the benchmark throws other than `BenchUsage`.
func runScaleBench(scratch: String, _ make: () throws -> any ScaleBench) throws -> Never {
    do {
        let bench = try make()
        let met = try bench.run()
        if bench.directory == scratch { try? FileManager.default.removeItem(atPath: scratch) }
        exit(met ? 0 : 1)
    } catch let usage as BenchUsage {
        FileHandle.standardError.write(Data("tv-bench: \(usage.description)\n".utf8))
        exit(2)
    }
}
