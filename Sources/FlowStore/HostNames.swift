/// The `host_names` table: which names DNS answers gave for an address, so a flow with no SNI can
/// still be shown by name (`HostOrigin.dns`).
public struct HostNames: Sendable {
    let connection: SharedConnection

    /// Records that `name` resolved to `address` at `time` (µs), with the answer's TTL in seconds
    /// when known. Names are stored lowercased without a trailing dot; a known pair only moves
    /// its `last_seen` forward (and takes the newer TTL).
    /// - Throws: `FlowStoreError` when the database cannot be written.
    public func remember(name: String, address: String, at time: Int64, ttl: Int64? = nil) throws {
        try connection.withDatabase { database in
            let statement = try database.prepare("""
                INSERT INTO host_names (address, name, first_seen, last_seen, ttl) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(address, name) DO UPDATE SET
                    first_seen = min(first_seen, excluded.first_seen),
                    last_seen = max(last_seen, excluded.last_seen),
                    ttl = CASE WHEN excluded.last_seen >= last_seen THEN coalesce(excluded.ttl, ttl) ELSE ttl END
                """)
            try statement.bind([.text(address), .text(PinnedHosts.normalize(name)), .integer(time), .integer(time), .integerOrNull(ttl)])
            try statement.step()
        }
    }

    /// The TTL (seconds) of the last answer that gave `name` → `address`, nil when none is known.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func ttl(name: String, address: String) throws -> Int64? {
        try connection.withDatabase { database in
            let statement = try database.prepare("SELECT ttl FROM host_names WHERE address = ? AND name = ?")
            try statement.bind([.text(address), .text(PinnedHosts.normalize(name))])
            var ttl: Int64?
            try statement.forEachRow { ttl = $0.optionalInt64(at: 0) }
            return ttl
        }
    }

    /// The names seen for `address`, most recently seen first (ties by name).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func names(forAddress address: String) throws -> [String] {
        try connection.withDatabase { database in
            let statement = try database.prepare(
                "SELECT name FROM host_names WHERE address = ? ORDER BY last_seen DESC, name")
            try statement.bind([.text(address)])
            var names: [String] = []
            try statement.forEachRow { names.append($0.string(at: 0) ?? "") }
            return names
        }
    }
}
