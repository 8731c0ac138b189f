/// The line `tv` says before it brings a large history up to this version's schema
/// (`FlowSchema.migrationNotice`): a migration can rebuild an index over every flow, seconds at a
/// million flows, and nothing else is said meanwhile.
public enum MigrationNotice {
    /// - Parameters:
    ///   - path: the database file.
    ///   - bytes: its size.
    ///   - from: the schema version it has; `to`: the one this tv writes.
    public static func sentence(path: String, bytes: Int64, from: Int, to: Int) -> String {
        "Updating the history in \(path) (\(Units.bytes(bytes))) from schema \(from) to \(to) for this version of tv, once; a large history takes a few seconds per million connections."
    }
}
