/// The `settings` table: the one durable record of `tv`'s settings, as text keys and values
/// (`inspect` = `on`, `content.expiry` = `1d`). Parsing and validating values is the caller's job.
///
/// Saved first, applied second: `set` returns only after the change is committed with
/// `synchronous=FULL`, so a setting that was reported saved survives a crash or power loss; when
/// it throws, the old value is still there.
public struct StoredSettings: Sendable {
    let connection: SharedConnection

    /// The value stored for `key`, or nil when it was never set.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func get(_ key: String) throws -> String? {
        try connection.withDatabase { database in
            let value = try database.scalar("SELECT value FROM settings WHERE key = ?", [.text(key)])
            if case let .text(text) = value { return text }
            return nil
        }
    }

    /// Stores `value` for `key`, replacing any old value; durable when it returns.
    /// - Throws: `FlowStoreError` (`.diskFull`, `.readOnly`, `.busy` …); the old value stays.
    public func set(_ key: String, _ value: String) throws {
        try connection.withDatabase { database in
            let statement = try database.prepare(
                "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
            try statement.bind([.text(key), .text(value)])
            try statement.step()
        }
    }

    /// Removes `key`. - Returns: true when it was set.
    /// - Throws: `FlowStoreError` when the database cannot be written.
    @discardableResult
    public func remove(_ key: String) throws -> Bool {
        try connection.withDatabase { database in
            let statement = try database.prepare("DELETE FROM settings WHERE key = ?")
            try statement.bind([.text(key)])
            try statement.step()
            return database.changes > 0
        }
    }

    /// Every stored setting, ordered by key.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func all() throws -> [(key: String, value: String)] {
        try connection.withDatabase { database in
            let statement = try database.prepare("SELECT key, value FROM settings ORDER BY key")
            var settings: [(key: String, value: String)] = []
            try statement.forEachRow { row in
                settings.append((key: row.string(at: 0) ?? "", value: row.string(at: 1) ?? ""))
            }
            return settings
        }
    }
}
