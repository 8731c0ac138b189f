
/// The names the flow writer knows `flow_names` holds, so it probes that table only for a name
/// (or a column of a name) it has not written before (migration 21 moved the work from a
/// per-row trigger, four probes a flow, into the writer). Pure: the writer asks, upserts what
/// it is told to, and says how the transaction ended.
///
/// What the cache says is true only while no other connection changed the file: retention
/// (`StorageManager`) deletes names whose flows are gone. So each batch starts with the file's
/// `PRAGMA data_version` (sqlite.org/pragma.html#pragma_data_version: it changes when another
/// connection commits); a different value empties the cache. Names learnt in a transaction join
/// the cache only when it commits. At `capacity` names it starts again empty (a bounded memory:
/// about 100 bytes a name).
struct FlowNameCache {
    /// Names kept at most.
    let capacity: Int
    /// Name → the `flow_names.columns` bits known to be set.
    private var known: [String: Int64] = [:]
    /// Names and bits upserted in the open transaction.
    private var pending: [String: Int64] = [:]
    /// The `data_version` the cache is true for.
    private var version: Int64?

    init(capacity: Int = 65_536) { self.capacity = max(capacity, 1) }

    /// How many names the cache holds.
    var count: Int { known.count }

    /// A transaction begins on a file whose `PRAGMA data_version` is `dataVersion`.
    mutating func begin(dataVersion: Int64) {
        pending.removeAll(keepingCapacity: true)
        if version != dataVersion {
            known.removeAll()
            version = dataVersion
        }
    }

    /// Whether `name` must be upserted into `flow_names` with `bit`; the answer is true once
    /// per name and bit until the cache forgets it.
    mutating func needs(_ name: String, bit: Int64) -> Bool {
        if let bits = known[name], bits & bit != 0 { return false }
        let before = pending[name] ?? 0
        if before & bit != 0 { return false }
        pending[name] = before | bit
        return true
    }

    /// The transaction committed: what it upserted is known now.
    mutating func committed() {
        if known.count + pending.count > capacity { known.removeAll() }
        for (name, bits) in pending { known[name, default: 0] |= bits }
        pending.removeAll(keepingCapacity: true)
    }

    /// The transaction rolled back: nothing it upserted is known.
    mutating func rolledBack() {
        pending.removeAll(keepingCapacity: true)
    }

    /// The texts a flow row holds in the four searched columns, each with its bit in
    /// `flow_names.columns` (`FlowTextSearch.columns`), as the row stores them: the host, the
    /// other names (`TextList`), the server's and the client's address; an absent or empty one
    /// is no name (the trigger's `WHERE new.x <> ''`).
    static func names(host: String?, otherHosts: String, serverAddress: String, clientAddress: String) -> [(name: String, bit: Int64)] {
        var names: [(String, Int64)] = []
        forEachName(host: host, otherHosts: otherHosts, serverAddress: serverAddress, clientAddress: clientAddress) {
            names.append(($0, $1))
        }
        return names
    }

    /// `names`, handed to `body` one by one in the same order, with no array: the writer's path,
    /// once per flow (building the array cost ~3 k instructions a flow, 4 % of the writer's,
    /// callgrind at 100,000 flows, i27-hist).
    /// - Throws: what `body` throws (the rest are not handed then).
    static func forEachName(host: String?, otherHosts: String, serverAddress: String, clientAddress: String,
                            _ body: (String, Int64) throws -> Void) rethrows {
        if let host, !host.isEmpty { try body(host, 1) }
        if !otherHosts.isEmpty { try body(otherHosts, 2) }
        if !serverAddress.isEmpty { try body(serverAddress, 4) }
        if !clientAddress.isEmpty { try body(clientAddress, 8) }
    }

    /// The upsert of one name and its bit (bound: name, bit): a new name is inserted (its
    /// trigrams follow, `flow_names_text_insert`), a known one gains the bit.
    static let upsertSQL = """
        INSERT INTO flow_names (name, columns) VALUES (?, ?)
            ON CONFLICT (name) DO UPDATE SET columns = columns | excluded.columns
            WHERE columns & excluded.columns = 0
        """
}
