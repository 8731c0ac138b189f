/// The `flow_activity` rollup's change for one batch of the flow writer: each flow the batch
/// inserted counted in its minute and its hour (`bucket = start_time / (span × 1,000,000)`,
/// truncated as SQLite's integer division truncates), so the writer adds one upsert per touched
/// bucket per batch instead of the per-row trigger's two (migration 21). Pure.
struct FlowActivityTally: Equatable {
    /// The rollup's spans, in seconds (migration 15).
    static let spans: [Int64] = [60, 3_600]

    /// New flows per (span, bucket).
    private(set) var counts: [Bucket: Int64] = [:]

    /// One row of `flow_activity`: a span (seconds) and a bucket of it.
    struct Bucket: Hashable, Comparable {
        var span: Int64
        var bucket: Int64
        static func < (a: Bucket, b: Bucket) -> Bool { (a.span, a.bucket) < (b.span, b.bucket) }
    }

    /// Counts one inserted flow that started at `startTime` (µs since the epoch).
    mutating func add(startTime: Int64) {
        for span in FlowActivityTally.spans {
            counts[Bucket(span: span, bucket: startTime / (span * 1_000_000)), default: 0] += 1
        }
    }

    /// The buckets to add to, in (span, bucket) order, with how many flows each gains.
    var rows: [(bucket: Bucket, flows: Int64)] {
        counts.keys.sorted().map { ($0, counts[$0]!) }
    }

    var isEmpty: Bool { counts.isEmpty }

    mutating func removeAll() { counts.removeAll(keepingCapacity: true) }

    /// The upsert of one bucket's gain (bound: span, bucket, flows).
    static let upsertSQL = """
        INSERT INTO flow_activity (span, bucket, flows) VALUES (?, ?, ?)
            ON CONFLICT (span, bucket) DO UPDATE SET flows = flows + excluded.flows
        """
}
