/// A host whose clients refused our leaf (certificate pinning): from then on its flows pass
/// through untouched ("Kept private").
public struct PinnedHost: Sendable, Equatable {
    /// The host name, lowercased, without a trailing dot.
    public var host: String
    /// When the first refusal was seen (µs since the epoch).
    public var firstSeen: Int64
    /// When the latest refusal was seen (µs since the epoch).
    public var lastSeen: Int64
    /// The latest refusal in words (e.g. the TLS alert the client sent).
    public var reason: String
    /// How many refusals were remembered.
    public var count: Int64

    /// A pinned host's memory; times in µs since the epoch.
    public init(host: String, firstSeen: Int64, lastSeen: Int64, reason: String, count: Int64) {
        self.host = host
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.reason = reason
        self.count = count
    }
}

/// The `pinned_hosts` table: the memory of hosts whose clients pin, kept across sessions.
/// Host names compare case-insensitively and without a trailing dot (`Example.COM.` is
/// `example.com`).
public struct PinnedHosts: Sendable {
    let connection: SharedConnection

    /// Records a refusal for `host` at `time` (µs): a new host starts with count 1; a known one
    /// gets count + 1, the latest reason, and `lastSeen` = the later of the two times.
    /// - Throws: `FlowStoreError` when the database cannot be written.
    public func remember(_ host: String, reason: String, at time: Int64) throws {
        try connection.withDatabase { database in
            let statement = try database.prepare("""
                INSERT INTO pinned_hosts (host, first_seen, last_seen, reason, count) VALUES (?, ?, ?, ?, 1)
                ON CONFLICT(host) DO UPDATE SET
                    first_seen = min(first_seen, excluded.first_seen),
                    last_seen = max(last_seen, excluded.last_seen),
                    reason = excluded.reason,
                    count = count + 1
                """)
            try statement.bind([.text(PinnedHosts.normalize(host)), .integer(time), .integer(time), .text(reason)])
            try statement.step()
        }
    }

    /// True when `host` is remembered as pinned.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func isPinned(_ host: String) throws -> Bool {
        try pinnedHost(host) != nil
    }

    /// The memory of `host`, or nil when it is not pinned.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func pinnedHost(_ host: String) throws -> PinnedHost? {
        try connection.withDatabase { database in
            let statement = try database.prepare(
                "SELECT host, first_seen, last_seen, reason, count FROM pinned_hosts WHERE host = ?")
            try statement.bind([.text(PinnedHosts.normalize(host))])
            guard try statement.step() else { return nil }
            return PinnedHosts.pinnedHost(from: statement)
        }
    }

    /// Every pinned host, most recently refused first (ties by host name).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func list() throws -> [PinnedHost] {
        try connection.withDatabase { database in
            let statement = try database.prepare(
                "SELECT host, first_seen, last_seen, reason, count FROM pinned_hosts ORDER BY last_seen DESC, host")
            var hosts: [PinnedHost] = []
            try statement.forEachRow { hosts.append(PinnedHosts.pinnedHost(from: $0)) }
            return hosts
        }
    }

    /// Forgets `host`, so the next connection tries inspection again.
    /// - Returns: true when it was pinned.
    /// - Throws: `FlowStoreError` when the database cannot be written.
    @discardableResult
    public func forget(_ host: String) throws -> Bool {
        try connection.withDatabase { database in
            let statement = try database.prepare("DELETE FROM pinned_hosts WHERE host = ?")
            try statement.bind([.text(PinnedHosts.normalize(host))])
            try statement.step()
            return database.changes > 0
        }
    }

    /// `Example.COM.` → `example.com`.
    public static func normalize(_ host: String) -> String {
        var name = host.lowercased()
        while name.hasSuffix(".") { name.removeLast() }
        return name
    }

    private static func pinnedHost(from row: SQLiteStatement) -> PinnedHost {
        PinnedHost(host: row.string(at: 0) ?? "", firstSeen: row.int64(at: 1), lastSeen: row.int64(at: 2),
                   reason: row.string(at: 3) ?? "", count: row.int64(at: 4))
    }
}
