/// Flow ids are handed out once per data folder, even after the flows holding the highest were
/// deleted (`tv storage delete-everything`, retention): an id in an export, an audit bundle or a
/// note keeps naming the flow it named, never a later one (a new-user trial found flow 31
/// deleted and the next session's first flow numbered 31 again). An id that has packet rows
/// counts as used even without a flow row (a session killed before it wrote the flow): a later
/// flow given that id would list those packets as its own (another trial). Before a pass deletes
/// flows it keeps the largest id there in the database's `settings` table (`rememberSQL`); a
/// writer's ids go on from the largest of that, the flows' own and the packets' (`highestSQL`).
/// SQL text only.
public enum FlowIDFloor {
    /// The `settings` key: the largest flow id ever written to this file, as deletions left it.
    public static let key = "flows.highestIDUsed"

    /// Keeps the largest id of `flows` and `packet_counts` under `key`, never lowering it; nothing
    /// when there is neither.
    /// (SQLite's upsert after an `INSERT … SELECT` needs the SELECT's WHERE: sqlite.org/lang_upsert.html §2.2.)
    public static let rememberSQL = """
        INSERT INTO settings (key, value) SELECT '\(key)', \(usedSQL) WHERE \(usedSQL) > 0
        ON CONFLICT(key) DO UPDATE SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))
        """

    /// The largest id ever used: the rows' own largest (`usedSQL`), or the kept one when higher (0: none).
    public static let highestSQL = """
        SELECT max(\(usedSQL), coalesce((SELECT CAST(value AS INTEGER) FROM settings WHERE key = '\(key)'), 0))
        """

    /// The largest id the rows name now: flows' and packets' (each the last key of its primary
    /// key's b-tree, no scan); 0 for none.
    static let usedSQL = "max(coalesce((SELECT max(id) FROM flows), 0), coalesce((SELECT max(flow_id) FROM packet_counts), 0))"
}
