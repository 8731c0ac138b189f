/// The `flow_activity` rollup's change for one batch of the flow writer: each flow the batch
/// inserted counted in its minute and its hour (`bucket = start_time / (span × 1,000,000)`,
/// truncated as SQLite's integer division truncates), so the writer adds one upsert per touched
/// bucket per batch instead of the per-row trigger's two (migration 21). A row the writer
/// rewrote with its start in another minute moves, as `flow_activity_move` would move it (the
/// writer's connection runs no triggers: `FlowTriggerWork`). Pure.
struct FlowActivityTally: Equatable {
    /// The rollup's spans, in seconds (migration 15).
    static let spans: [Int64] = [60, 3_600]

    /// New flows per (span, bucket).
    private(set) var counts: [Bucket: Int64] = [:]
    /// Flows per (span, bucket) that moved out of it.
    private(set) var removals: [Bucket: Int64] = [:]

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

    /// Whether a row whose start time was `old` and is now `new` (µs since the epoch) changes
    /// minute: `flow_activity_move`'s `WHEN old.start_time / 60000000 IS NOT new.start_time / 60000000`.
    static func moves(from old: Int64, to new: Int64) -> Bool {
        old / 60_000_000 != new / 60_000_000
    }

    /// Counts a rewritten row whose start moved from `old` to `new` (µs since the epoch), as
    /// `flow_activity_move` does when `moves(from:to:)`: one flow out of the old minute and hour,
    /// one into the new ones (the hour's two cancel when it stays in its hour). Nothing otherwise.
    mutating func move(from old: Int64, to new: Int64) {
        guard FlowActivityTally.moves(from: old, to: new) else { return }
        for span in FlowActivityTally.spans {
            removals[Bucket(span: span, bucket: old / (span * 1_000_000)), default: 0] += 1
        }
        add(startTime: new)
    }

    /// The buckets to add to, in (span, bucket) order, with how many flows each gains.
    var rows: [(bucket: Bucket, flows: Int64)] {
        counts.keys.sorted().map { ($0, counts[$0]!) }
    }

    /// The buckets to take from (moved rows' old minutes and hours), in (span, bucket) order,
    /// with how many flows each loses. Applied before `rows` and with `removalSQL`, an UPDATE,
    /// as the trigger does: a bucket that is not there stays absent.
    var removalRows: [(bucket: Bucket, flows: Int64)] {
        removals.keys.sorted().map { ($0, removals[$0]!) }
    }

    var isEmpty: Bool { counts.isEmpty && removals.isEmpty }

    mutating func removeAll() {
        counts.removeAll(keepingCapacity: true)
        removals.removeAll(keepingCapacity: true)
    }

    /// The upsert of one bucket's gain (bound: span, bucket, flows).
    static let upsertSQL = """
        INSERT INTO flow_activity (span, bucket, flows) VALUES (?, ?, ?)
            ON CONFLICT (span, bucket) DO UPDATE SET flows = flows + excluded.flows
        """

    /// The loss of one bucket (bound: flows, span, bucket): `flow_activity_move`'s UPDATE.
    static let removalSQL = "UPDATE flow_activity SET flows = flows - ? WHERE span = ? AND bucket = ?"
}
