/// One program's share of the flows that started since a time (`tv top`'s by-program table).
public struct ProgramTotals: Sendable, Equatable {
    /// The command name (`curl`, `python3`); nil for flows whose program is not known or was
    /// not looked up (yet).
    public var command: String?
    public var flows: Int64
    /// Bytes from the servers (what the program received).
    public var bytesDown: Int64
    /// Bytes from the program.
    public var bytesUp: Int64

    public init(command: String?, flows: Int64, bytesDown: Int64, bytesUp: Int64) {
        self.command = command
        self.flows = flows
        self.bytesDown = bytesDown
        self.bytesUp = bytesUp
    }
}

extension FlowStore {
    /// The flows that started at or after `since` (µs since the epoch), summed by their
    /// program's command name, busiest (most bytes) first, at most `limit` rows. A range scan of
    /// `flows_by_start_time`, grouped: the cost grows with the session's flows, read once per
    /// `tv top` sample.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func programTotals(since: Int64, limit: Int) throws -> [ProgramTotals] {
        try connection.withDatabase { database in
            let statement = try database.prepare(FlowStore.programTotalsSQL)
            try statement.bind([.integer(since), .integer(Int64(limit))])
            var out: [ProgramTotals] = []
            try statement.forEachRow { row in
                out.append(ProgramTotals(command: row.string(at: 0), flows: row.int64(at: 1),
                                         bytesDown: row.int64(at: 2), bytesUp: row.int64(at: 3)))
            }
            return out
        }
    }

    /// The aggregate `programTotals` runs (exposed so a test can ask SQLite's plan for it).
    public static let programTotalsSQL = """
        SELECT program_command, count(*), total(bytes_down), total(bytes_up) FROM flows
        WHERE start_time >= ? GROUP BY program_command
        ORDER BY total(bytes_down) + total(bytes_up) DESC, program_command LIMIT ?
        """
}
