/// The flow writer's connection runs **no triggers** (`SQLiteDatabase.triggersEnabled` off after
/// its migrations and registration): with any trigger on `flows`, SQLite keeps a statement
/// journal for every upsert (each page the statement changes copied first, ~9 pages a flow, in
/// case a trigger body aborts halfway; a replay of 20,000 rows: 350,618 journal page writes with
/// the triggers, 0 without; i25-hist). So the writer does, for its own rows and in the same
/// transaction, exactly what the triggers below would have done; every other connection
/// (`tv exec` beside a session, imports, retention, the sqlite3 shell) keeps them.
///
/// | trigger (migration) | fires for the writer's statements | the writer instead |
/// |---|---|---|
/// | `flows_insert_unwritten` (21) | never (`WHEN new.writer IS NULL`; the writer stamps `writer`) | — (its own tally and names, migration 21) |
/// | `flow_activity_move` (15) | the upsert's update path, the start time in another minute | `FlowActivityTally.move`, the old start read first (`mayExist`) |
/// | `flow_names_update` (20) | the upsert's update path, a name changed | `FlowNameCache`: every written row's names are upserted unless known |
/// | `flow_activity_delete` (15) | never (the writer deletes no flow) | — |
/// | `flow_names_text_insert` (20) | a name new to `flow_names` | its trigram row, when the name upsert inserted |
/// | `flow_names_text_delete` (20) | never (the writer deletes no name) | — |
///
/// `FlowWriterTriggerTests` pins this list against the schema: a migration adding a trigger
/// fails it until the writer does that trigger's work too.
///
/// What is pure here: which of the writer's rows may already exist, so that only those pay a
/// read of their old start time (`SELECT start_time … WHERE id = ?`). A row can exist only if
/// this process's writer wrote its id before (ids are handed out by the session's counter, from
/// the writer's own range: `FlowIDRanges`): at most the file's largest id when the connection
/// opened (an earlier connection of this process), or an id this connection has written since.
/// A new flow's id is above both, so the usual insert reads nothing.
struct FlowTriggerWork: Equatable {
    /// The largest id that may have a row: max(id) at open, then the largest this connection wrote.
    private(set) var highestWritten: Int64

    /// - Parameter maxIDAtOpen: the file's max(id) when the writer's connection opened (0: none).
    init(maxIDAtOpen: Int64) { highestWritten = max(maxIDAtOpen, 0) }

    /// Whether a row with `id` may already be in the file, so its old start time must be read
    /// before the upsert overwrites it.
    func mayExist(_ id: Int64) -> Bool { id <= highestWritten }

    /// The writer is writing `id` (counted before the transaction commits: a rollback leaves
    /// the bound higher than needed, which only costs a read).
    mutating func writing(_ id: Int64) {
        if id > highestWritten { highestWritten = id }
    }

    /// The triggers on `flows` and `flow_names` this type stands in for, by name (the table above).
    static let triggersDoneByTheWriter: [String] = [
        "flow_activity_delete", "flow_activity_move", "flow_names_text_delete", "flow_names_text_insert",
        "flow_names_update", "flows_insert_unwritten",
    ]

    /// The read of a row's start time before the writer rewrites it (bound: id).
    static let oldStartSQL = "SELECT start_time FROM flows WHERE id = ?"

    /// `flow_names_text_insert`'s body for a name the writer inserted (bound: the name's id, the name).
    static let nameTextInsertSQL = "INSERT INTO flow_names_text (rowid, name) VALUES (?, ?)"
}
