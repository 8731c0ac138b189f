import FlowTerms

/// Request rows (`exchanges`) on the shared store: SQLite's columns after the instance's, keyed
/// by (instance, flow id, seq), with the shared store's own `id` (the mirror never learns the
/// local one). A path travels without its query string, whatever `content.keep` says: a query
/// is content (what was said inside the connection), and content stays on the machine.
enum SharedExchangeRows {
    /// The written columns, in binding order: the instance's, then `ExchangeColumns.names`
    /// without `id`.
    static let upsertColumns: [String] = PostgresDialect.instanceColumns + Array(ExchangeColumns.names.dropFirst())

    /// Rows per multi-row INSERT (25 parameters a row).
    static let rowsPerInsert = 500

    /// `INSERT INTO exchanges (…) VALUES (…), … ON CONFLICT (instance_id, flow_id, seq) DO UPDATE`
    /// of every column but the key's, for `rows` rows.
    static func upsertSQL(rows: Int) -> String {
        let row = "(" + Array(repeating: "?", count: upsertColumns.count).joined(separator: ", ") + ")"
        return "INSERT INTO exchanges (\(upsertColumns.joined(separator: ", "))) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ") + conflictUpdate
    }

    /// `ON CONFLICT (instance_id, flow_id, seq) DO UPDATE SET` every column but the key's.
    static let conflictUpdate: String = {
        let key: Set<String> = ["instance_id", "flow_id", "seq"]
        return " ON CONFLICT (instance_id, flow_id, seq) DO UPDATE SET "
            + upsertColumns.filter { !key.contains($0) }.map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
    }()

    /// `exchange`'s values in `upsertColumns` order, its path cut at the query (`withoutQuery`).
    static func bindings(_ exchange: ExchangeRecord, instance: InstanceIdentity) -> [SQLiteValue] {
        [.text(instance.id), .text(instance.machine)] + Array(ExchangeColumns.bindings(withoutQuery(exchange)).dropFirst())
    }

    /// `exchange` with its path cut before `?` or `#` (`queryRemoved` set when there was one),
    /// and its authority too (a malformed target can put a query there). Pure: `/search?q=secret`
    /// → `/search`, query removed; `/page#frag` → `/page` (a fragment, never sent by a conforming
    /// client, came inside TLS whole: an audit trial).
    static func withoutQuery(_ exchange: ExchangeRecord) -> ExchangeRecord {
        func mark(_ text: String) -> String.Index? { text.firstIndex { $0 == "?" || $0 == "#" } }
        let pathMark = mark(exchange.path)
        let authorityMark = exchange.authority.flatMap(mark)
        guard pathMark != nil || authorityMark != nil else { return exchange }
        var cut = exchange
        if let pathMark { cut.path = String(exchange.path[..<pathMark]) }
        if let authority = exchange.authority, let authorityMark { cut.authority = String(authority[..<authorityMark]) }
        cut.queryRemoved = true
        return cut
    }

    /// The SELECT list of a shared request row: the local one, then the instance columns.
    static let selectList = ExchangeColumns.selectList + ", " + PostgresDialect.instanceColumns.joined(separator: ", ")
}
