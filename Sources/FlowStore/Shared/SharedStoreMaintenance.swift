/// What the shared-store benchmark (`tv-bench shared`) asks of a scratch database beyond the
/// reads: emptying tv's tables and refreshing the planner's statistics. Not for a store in use.
public enum SharedStoreMaintenance {
    /// The tables of the shared schema holding rows (`PostgresSchema`).
    static let tables = ["flows", "exchanges", "host_names", "pinned_hosts", "client_pins", "audit_projects", "audit_sessions", "audit_markers", "instances"]

    /// Empties every table of tv's shared schema (migrating an empty database first).
    /// - Throws: `FlowStoreError`.
    public static func truncateAll(_ target: SharedStoreTarget) throws {
        let connection = try PGConnection(target)
        defer { connection.close() }
        try PostgresSchema.migrate(connection)
        try connection.execute("TRUNCATE " + tables.joined(separator: ", "))
    }

    /// `ANALYZE` of tv's tables, as autovacuum does after a bulk load.
    /// - Throws: `FlowStoreError`.
    public static func analyze(_ target: SharedStoreTarget) throws {
        let connection = try PGConnection(target)
        defer { connection.close() }
        try connection.execute("ANALYZE " + tables.joined(separator: ", "))
    }
}
