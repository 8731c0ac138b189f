import FlowTerms

/// The shared store's `flow_names` kept by its writers (PostgreSQL migration 6): each batch
/// inserts the names of its flows' four searched columns that this writer has not written
/// before (`FlowNameCache`, the SQLite writer's cache, one entry per name and column bit), in
/// the batch's transaction. Migration 5's statement triggers did the same for every batch over
/// its transition tables; measured on the 10 M-flow store (i25-pg, `EXPLAIN ANALYZE` of 20,000
/// flows' `INSERT … SELECT`, warm): 64 µs a flow with them, 56 without, while a batch's names
/// are nearly all known after its first batches (2,000 hosts, their addresses).
///
/// The names go in byte order (name, then bit), `ON CONFLICT DO NOTHING`: two instances adding
/// the same new names wait for one another in the same order, never in a cycle (the trigger's
/// `ORDER BY 1, 2` did that in the database's collation; every writer now sorts the same way).
/// Nothing deletes from the shared `flow_names` but `SharedStoreMaintenance.truncateAll` (tests
/// and the benchmark, between writers), so a writer's cache stays true for its connection.
enum SharedFlowNames {
    /// Rows per INSERT (2 parameters a row).
    static let rowsPerInsert = 1_000

    /// The (name, bit) pairs of `flows` that `cache` says are new (`FlowNameCache.needs`; nil:
    /// every pair), each once, sorted by the name's UTF-8 bytes, then the bit. Pure.
    /// Hosts `b` and `a`, server `192.0.2.1`, client `10.0.0.1` →
    /// `[("10.0.0.1", 8), ("192.0.2.1", 4), ("a", 1), ("b", 1)]`.
    static func newNames(of flows: [FlowRecord], cache: inout FlowNameCache?) -> [(name: String, bit: Int64)] {
        var seen: Set<NameBit> = []
        for flow in flows {
            let otherHosts = flow.otherHosts.isEmpty ? "" : TextList.encode(flow.otherHosts)
            for (name, bit) in FlowNameCache.names(host: flow.host, otherHosts: otherHosts, serverAddress: flow.serverAddress,
                                                    clientAddress: flow.clientAddress) where cache?.needs(name, bit: bit) ?? true {
                seen.insert(NameBit(name: name, bit: bit))
            }
        }
        return seen.sorted().map { ($0.name, $0.bit) }
    }

    /// `INSERT INTO flow_names (name, column_bit) VALUES (?, ?), … ON CONFLICT DO NOTHING` for
    /// `rows` rows.
    static func insertSQL(rows: Int) -> String {
        "INSERT INTO flow_names (name, column_bit) VALUES " + Array(repeating: "(?, ?)", count: rows).joined(separator: ", ")
            + " ON CONFLICT DO NOTHING"
    }

    /// Inserts `names` (in their order) inside the caller's transaction.
    /// - Throws: `FlowStoreError` from the shared store.
    static func insert(_ names: [(name: String, bit: Int64)], on connection: PGConnection) throws {
        var start = 0
        while start < names.count {
            let chunk = names[start..<min(start + rowsPerInsert, names.count)]
            try connection.query(insertSQL(rows: chunk.count), chunk.flatMap { [SQLiteValue.text($0.name), .integer($0.bit)] })
            start += rowsPerInsert
        }
    }

    /// A name and its column bit, ordered by the name's UTF-8 bytes, then the bit.
    private struct NameBit: Hashable, Comparable {
        let name: String
        let bit: Int64
        static func < (a: NameBit, b: NameBit) -> Bool {
            a.name == b.name ? a.bit < b.bit : a.name.utf8.lexicographicallyPrecedes(b.name.utf8)
        }
    }
}
