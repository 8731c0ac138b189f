/// The UTC day a flow started on: what the four name indexes lead with (migration 24:
/// `flows_by_day_host`, `flows_by_day_other_hosts`, `flows_by_day_server`, `flows_by_day_client`,
/// each on (day, name, start_time, status)), so a batch's entries land together in the current
/// day's part of each index. A name's flows are then found by one seek per (day, name): a
/// condition gives the days it reads as a list (`IN`), never a range, which would stop the seek
/// at the day.
public enum FlowDays {
    /// One day, µs.
    public static let micros: Int64 = 86_400_000_000

    /// A flow's day in SQL, written exactly as the indexes have it: SQLite uses an index on an
    /// expression only for the same expression (sqlite.org/expridx.html).
    static let expression = "start_time / 86400000000"

    /// The day of `time` (µs since the epoch), as SQLite's integer division gives it.
    public static func day(_ time: Int64) -> Int64 { time / micros }

    /// The days a window of start times (`lower..<upper`, µs) touches, oldest first; nil for an
    /// empty window.
    public static func days(_ window: Range<Int64>) -> ClosedRange<Int64>? {
        window.isEmpty ? nil : day(window.lowerBound)...day(window.upperBound - 1)
    }

    /// `days` as a JSON array of integers (RFC 8259), for `json_each`.
    static func json(_ days: ClosedRange<Int64>?) -> String {
        guard let days else { return "[]" }
        return "[" + days.map(String.init).joined(separator: ",") + "]"
    }

    /// The days that have flows, oldest first, as a subquery: a recursive CTE that seeks
    /// `flows_by_start_time` once a day for the next flow's, so empty days cost nothing (a clock
    /// that once said 1970 adds one day, not twenty thousand). For the conditions that have no
    /// window (a count, the export, `--follow`). An empty table gives no day.
    static let daysWithFlowsSQL = "WITH RECURSIVE flow_days(d) AS (SELECT min(start_time) / 86400000000 FROM flows "
        + "UNION ALL SELECT (SELECT min(start_time) FROM flows WHERE start_time >= (d + 1) * 86400000000) / 86400000000 "
        + "FROM flow_days WHERE d IS NOT NULL) SELECT d FROM flow_days WHERE d IS NOT NULL"

    /// `daysWithFlowsSQL` from the day of the first flow at or after a bound (one binding, µs).
    static let daysWithFlowsFromSQL = "WITH RECURSIVE flow_days(d) AS (SELECT min(start_time) / 86400000000 FROM flows WHERE start_time >= ? "
        + "UNION ALL SELECT (SELECT min(start_time) FROM flows WHERE start_time >= (d + 1) * 86400000000) / 86400000000 "
        + "FROM flow_days WHERE d IS NOT NULL) SELECT d FROM flow_days WHERE d IS NOT NULL"
}
