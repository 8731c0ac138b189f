/// The activity axis's reads (`tv activity`): flows started per interval, and where the kept
/// history begins. Both run over the `flows_by_start_time` index only.
extension FlowStore {
    /// The number of flows that started in each interval of `widthMicros` from `from` (inclusive)
    /// to `to` (exclusive): one aggregate query, a range scan of the start-time index.
    /// - Returns: the counts by interval index (0 = the interval starting at `from`); intervals
    ///   with no flow are absent (the caller zero-fills).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func activity(from: Int64, to: Int64, widthMicros: Int64) throws -> [Int64: Int64] {
        precondition(widthMicros > 0, "an interval has a width")
        return try connection.withDatabase { database in
            let statement = try database.prepare(FlowStore.activitySQL)
            try statement.bind([.integer(from), .integer(widthMicros), .integer(from), .integer(to)])
            var counts: [Int64: Int64] = [:]
            try statement.forEachRow { row in counts[row.int64(at: 0)] = row.int64(at: 1) }
            return counts
        }
    }

    /// The aggregate `activity` runs (exposed so a test can ask SQLite's plan for it).
    public static let activitySQL = """
        SELECT (start_time - ?) / ?, count(*) FROM flows
        WHERE start_time >= ? AND start_time < ? GROUP BY 1
        """

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
