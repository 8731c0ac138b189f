/// The activity axis's reads (`tv activity`): flows started per interval, and where the kept
/// history begins. The counts come from the per-minute and per-hour rollup when the stretch is
/// whole minutes (`FlowActivityPlan`), else from the `flows_by_start_time` index.
extension FlowStore {
    /// The number of flows that started in each interval of `widthMicros` from `from` (inclusive)
    /// to `to` (exclusive): one aggregate query (`FlowActivityPlan`).
    /// - Returns: the counts by interval index (0 = the interval starting at `from`); intervals
    ///   with no flow are absent (the caller zero-fills).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func activity(from: Int64, to: Int64, widthMicros: Int64) throws -> [Int64: Int64] {
        precondition(widthMicros > 0, "an interval has a width")
        let plan = FlowActivityPlan.plan(from: from, to: to, widthMicros: widthMicros)
        return try connection.withDatabase { database in
            let statement = try database.prepare(plan.sql)
            try statement.bind(plan.bindings)
            var counts: [Int64: Int64] = [:]
            try statement.forEachRow { row in counts[row.int64(at: 0)] = row.int64(at: 1) }
            return counts
        }
    }

    /// How many flows are kept: the hourly rollup's sum (`FlowActivityPlan.totalSQL`), not a
    /// count of a million rows.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func flowCount() throws -> Int {
        try connection.withDatabase { database in
            if case let .integer(total) = try database.scalar(FlowActivityPlan.totalSQL, []) { return Int(total) }
            return 0
        }
    }

    /// The start time (µs) of the oldest and of the newest flow kept; nil when there is none.
    /// Two index lookups (min and max of an indexed column).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func startTimeBounds() throws -> (oldest: Int64, newest: Int64)? {
        try connection.withDatabase { database in
            guard case let .integer(oldest) = try database.scalar("SELECT min(start_time) FROM flows", []),
                  case let .integer(newest) = try database.scalar("SELECT max(start_time) FROM flows", []) else { return nil }
            return (oldest, newest)
        }
    }
}
