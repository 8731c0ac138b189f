import FlowStore
import Foundation

/// Wall-clock timing for the store benchmarks (`FlowStoreReads`, `SharedStoreBench`): medians of
/// several runs in milliseconds, and a keyset-paged read timed page by page.
enum BenchTiming {
    /// The median of `rounds` timed runs of `body`, in ms; after one untimed run first when `warmUp`.
    static func medianMillis(rounds: Int, warmUp: Bool, _ body: () throws -> Void) rethrows -> Double {
        if warmUp { try body() }
        var samples: [Double] = []
        for _ in 0..<rounds {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        return samples.sorted()[samples.count / 2]
    }

    /// A keyset-paged read timed: the first page of `query` (read once before timing), then,
    /// when it names a next page, that page (`query` with `after` set), each `medianMillis`.
    /// Returns the first page as read, its median and the next page's (nil when there is none).
    static func pages<Query: KeysetPaged, Page>(rounds: Int, warmUp: Bool, _ query: Query, read: (Query) throws -> Page,
                                                cursor: (Page) -> String?) throws -> (page: Page, first: Double, next: Double?) {
        var page = try read(query)
        let first = try medianMillis(rounds: rounds, warmUp: warmUp) { page = try read(query) }
        var next: Double?
        if let after = cursor(page) {
            var following = query
            following.after = after
            next = try medianMillis(rounds: rounds, warmUp: warmUp) { _ = try read(following) }
        }
        return (page, first, next)
    }
}

/// A query read in keyset pages: `after` is the previous page's cursor.
protocol KeysetPaged {
    var after: String? { get set }
}

extension FlowQuery: KeysetPaged {}
extension ExchangeQuery: KeysetPaged {}
