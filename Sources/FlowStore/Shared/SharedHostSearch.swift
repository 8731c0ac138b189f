import FlowTerms

/// `--host TEXT` on the shared store, answered as SQLite's `FlowTextSearch` answers it: the
/// distinct texts the four searched columns ever held are `flow_names` (one row per name and
/// column bit, `FlowTextSearch.columns`' bits; kept by statement triggers on `flows`, PostgreSQL
/// migration 5), a few thousand against millions of flows. A case-insensitive substring
/// (`ILIKE`, served by the names' trigram index `PostgresSchema.hostIndexName` when `pg_trgm` is
/// there; without it the small names table is read whole) finds the names holding the text, then
/// each name's column index (`flows_by_host_time`, `flows_by_other_hosts_time`,
/// `flows_by_server_time`, `flows_by_client_time`) finds its flows newest first. Pure SQL text
/// and bindings.
///
/// A page over at most `mergedLookups` (name, column) pairs is one `UNION ALL` of a branch per
/// pair, each newest first and cut at the page's size, which PostgreSQL merges (`Merge Append`)
/// and stops reading when the page is full: a few index seeks whatever the history's size. A
/// flow found through two columns comes from the first only (each branch excludes the names of
/// the columns before it). Over more pairs (a text as common as `com`) one condition lists the
/// names and the server walks its start-time index (a common text fills the page within a few
/// hundred rows); past `listedLookups`, the `ILIKE` on the flows themselves
/// (`PostgresDialect.textCondition`).
enum SharedHostSearch {
    /// The most (name, column) pairs a page reads as one merged branch each.
    static let mergedLookups = 64
    /// The most pairs listed in one condition (each is a parameter; libpq takes 65,535).
    static let listedLookups = 4_096

    /// The names holding a text (bound by `namesBindings`), with their column bits OR-ed, as
    /// `FlowNameMatches(rows:)` takes them.
    static let namesSQL = "SELECT name, bit_or(column_bit) FROM flow_names WHERE name ILIKE ? ESCAPE '\\' GROUP BY name ORDER BY name"

    /// `namesSQL`'s binding: `text` as a substring, LIKE's wildcards escaped.
    static func namesBindings(_ text: String) -> [SQLiteValue] {
        [.text("%" + FlowQuery.escapeLike(text) + "%")]
    }

    /// The (column, name) pairs of `names`, in `FlowTextSearch.columns`' order.
    static func pairs(_ names: FlowNameMatches) -> [(column: String, name: String)] {
        let lists = [names.hosts, names.otherHosts, names.serverAddresses, names.clientAddresses]
        return zip(FlowTextSearch.columns, lists).flatMap { column, list in list.map { (column.column, $0) } }
    }

    /// The condition on `flows` for every flow holding `text`, given the names holding it:
    /// each column `IN` its names (`FALSE` for none); past `listedLookups`, the `ILIKE`.
    static func condition(_ names: FlowNameMatches, text: String) -> (String, [SQLiteValue]) {
        guard names.lookups <= listedLookups else { return PostgresDialect.textCondition(text) }
        let terms = columnTerms(pairs(names))
        guard !terms.isEmpty else { return ("FALSE", []) }
        return ("(" + terms.map(\.0).joined(separator: " OR ") + ")", terms.flatMap(\.1))
    }

    /// One `FlowTextSearch.term` per column that has names, with its names as bindings.
    private static func columnTerms(_ pairs: [(column: String, name: String)]) -> [(String, [SQLiteValue])] {
        FlowTextSearch.columns.compactMap { column, _ in
            let names = pairs.filter { $0.column == column }.map(\.name)
            guard !names.isEmpty else { return nil }
            return (FlowTextSearch.term(column, Array(repeating: "?", count: names.count).joined(separator: ", ")),
                    names.map { .text($0) })
        }
    }

    /// The page's order (`flows_by_start_time` and each name index's order after the name).
    static let order = " ORDER BY start_time DESC, id DESC, instance_id DESC LIMIT ?"

    /// A page of at most `rows` flows holding one of `names` (at most `mergedLookups` pairs)
    /// and meeting `filters` (the query's other filters, the instance narrowing and the cursor),
    /// newest first: one branch per pair, merged.
    static func mergedPageSQL(_ names: FlowNameMatches, filters: ([String], [SQLiteValue]), rows: Int) -> (String, [SQLiteValue]) {
        let all = pairs(names)
        precondition(!all.isEmpty && all.count <= mergedLookups, "a merged page reads 1…mergedLookups names")
        var branches: [String] = []
        var bindings: [SQLiteValue] = []
        for (column, name) in all {
            var conditions = [FlowTextSearch.term(column, "?")]
            var values: [SQLiteValue] = [.text(name)]
            let before = columnTerms(all.prefix { $0.column != column })
            if !before.isEmpty {
                conditions.append("(" + before.map(\.0).joined(separator: " OR ") + ") IS NOT TRUE")
                values += before.flatMap(\.1)
            }
            conditions += filters.0
            values += filters.1
            values.append(.integer(Int64(rows)))
            branches.append("(SELECT \(PostgresDialect.selectList) FROM flows" + FlowQuery.whereClause(conditions) + order + ")")
            bindings += values
        }
        bindings.append(.integer(Int64(rows)))
        return ("SELECT * FROM (" + branches.joined(separator: " UNION ALL ") + ") AS page" + order, bindings)
    }
}
