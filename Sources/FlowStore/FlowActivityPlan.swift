/// The SQL `tv activity`'s aggregate runs for one stretch: flows started per interval.
///
/// When the stretch's start, end and interval width are whole minutes (or whole hours), it sums
/// the per-minute (per-hour) counts of `flow_activity` (migration 12, kept by triggers on
/// `flows`): one row read per minute (hour) of the stretch, whatever the number of flows. Any
/// other stretch (intervals of seconds, which `ActivityAxis` uses only for stretches of at most
/// a few hours) counts the flows themselves over the `flows_by_start_time` index. Pure: values
/// in, SQL and bindings out.
public enum FlowActivityPlan {
    /// The spans of `flow_activity`, in seconds, coarsest first.
    public static let spans: [Int64] = [3_600, 60]

    /// The plan for intervals of `widthMicros` from `from` (inclusive) to `to` (exclusive), all
    /// in µs since the epoch. Its rows are (interval index from `from`, count), only for
    /// intervals with a flow.
    public static func plan(from: Int64, to: Int64, widthMicros: Int64) -> FlowQueryPlan {
        if let span = rollupSpan(from: from, to: to, widthMicros: widthMicros) {
            let micros = span * 1_000_000
            return FlowQueryPlan(sql: rollupSQL,
                                 bindings: [.integer(micros), .integer(from), .integer(widthMicros),
                                            .integer(span), .integer(from / micros), .integer(to / micros)],
                                 limit: 0)
        }
        return FlowQueryPlan(sql: flowsSQL,
                             bindings: [.integer(from), .integer(widthMicros), .integer(from), .integer(to)], limit: 0)
    }

    /// The coarsest span of `flow_activity` that `from`, `to` and `widthMicros` are all whole
    /// multiples of (`from` not negative), or nil when none is.
    public static func rollupSpan(from: Int64, to: Int64, widthMicros: Int64) -> Int64? {
        guard from >= 0, to > from, widthMicros > 0 else { return nil }
        return spans.first { span in
            let micros = span * 1_000_000
            return from % micros == 0 && to % micros == 0 && widthMicros % micros == 0
        }
    }

    /// Sums of the rollup's buckets: (bucket start − from) / width, over one span's range.
    public static let rollupSQL = """
        SELECT (bucket * ? - ?) / ?, sum(flows) FROM flow_activity
        WHERE span = ? AND bucket >= ? AND bucket < ? GROUP BY 1 HAVING sum(flows) > 0
        """

    /// Every flow kept, from the hourly rollup: one row per hour of history, not per flow, and
    /// exact (the triggers count every insert, delete and moved start time). `tv storage`'s count.
    public static let totalSQL = "SELECT coalesce(sum(flows), 0) FROM flow_activity WHERE span = 3600"

    /// Counts of the flows themselves, over the start-time index.
    public static let flowsSQL = """
        SELECT (start_time - ?) / ?, count(*) FROM flows
        WHERE start_time >= ? AND start_time < ? GROUP BY 1
        """
}
