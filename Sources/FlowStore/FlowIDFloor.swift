/// Flow ids are handed out once per data folder, even after the flows holding the highest were
/// deleted (`tv storage delete-everything`, retention): an id in an export, an audit bundle or a
/// note keeps naming the flow it named, never a later one (a new-user trial found flow 31
/// deleted and the next session's first flow numbered 31 again). Before a pass deletes flows it
/// keeps the largest id there in the database's `settings` table (`rememberSQL`); a writer's
/// ids go on from the larger of that and the flows' own largest (`highestSQL`). SQL text only.
public enum FlowIDFloor {
    /// The `settings` key: the largest flow id ever written to this file, as deletions left it.
    public static let key = "flows.highestIDUsed"

    /// Keeps `max(id)` of `flows` under `key`, never lowering it; nothing when there is no flow.
    /// (SQLite's upsert after an `INSERT … SELECT` needs the SELECT's WHERE: sqlite.org/lang_upsert.html §2.2.)
    public static let rememberSQL = """
        INSERT INTO settings (key, value) SELECT '\(key)', (SELECT max(id) FROM flows) WHERE (SELECT max(id) FROM flows) IS NOT NULL
        ON CONFLICT(key) DO UPDATE SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))
        """

    /// The largest id ever used: the flows' own largest, or the kept one when higher (0: none).
    public static let highestSQL = """
        SELECT max(coalesce((SELECT max(id) FROM flows), 0), coalesce((SELECT CAST(value AS INTEGER) FROM settings WHERE key = '\(key)'), 0))
        """
}
