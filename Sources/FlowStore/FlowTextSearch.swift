import Foundation

/// The SQL for `--host TEXT`: a case-insensitive substring of the host name, the other names its
/// address had (a name inferred from DNS), or either address.
///
/// The distinct texts those four columns ever held are `flow_names` (a few thousand, against
/// millions of flows), kept by triggers on `flows` (migration 20); for three characters or more,
/// an FTS5 phrase over `flow_names_text` (trigram tokenizer; sqlite.org/fts5.html §4.3.5: a phrase
/// of trigrams matches exactly the substrings) finds the names holding the text, and each
/// name's column index (`flows_by_day_host`, `flows_by_day_other_hosts`, `flows_by_day_server`,
/// `flows_by_day_client`: the day, the name, the time, the status; `FlowDays`) finds its flows
/// by one seek per day and name, never a scan of `flows`.
/// A name's `columns` bits say in which of the four columns it was ever written, so a host name
/// is never looked for among the addresses. Fewer than three characters cannot make a trigram:
/// the names are then matched by LIKE (a scan of the few thousand names, never of the flows),
/// and found the same way.
public enum FlowTextSearch {
    /// The fewest characters the trigram index can answer.
    public static let indexedLength = 3

    /// Whether `text` is looked up through the names (any text but the empty one, which is no
    /// filter).
    public static func readsNames(_ text: String) -> Bool {
        !text.isEmpty
    }

    /// Whether the names holding `text` are found by the trigram index (three characters or
    /// more) rather than by LIKE over `flow_names`.
    static func usesTrigrams(_ text: String) -> Bool {
        text.unicodeScalars.count >= indexedLength
    }

    /// The condition on `flow_names` that keeps the names holding `text` (one binding, `match(_:)`):
    /// the trigram index's phrase, or LIKE with the text as a substring.
    static func nameCondition(_ text: String) -> String {
        usesTrigrams(text) ? "id IN (SELECT rowid FROM flow_names_text WHERE flow_names_text MATCH ?)" : "name LIKE ? ESCAPE '\\'"
    }

    /// `nameCondition(_:)`'s binding: the FTS5 phrase, or the LIKE pattern (wildcards escaped).
    static func match(_ text: String) -> SQLiteValue {
        .text(usesTrigrams(text) ? phrase(text) : "%" + FlowQuery.escapeLike(text) + "%")
    }

    /// `text` as one FTS5 phrase: double quotes doubled (fts5.html §3.1).
    public static func phrase(_ text: String) -> String {
        var phrase = "\""
        for character in text {
            if character == "\"" { phrase.append("\"") }
            phrase.append(character)
        }
        phrase.append("\"")
        return phrase
    }

    /// The four columns a name is looked for in, each with its bit in `flow_names.columns`.
    static let columns: [(column: String, bit: Int64)] = [
        ("host", 1), ("other_hosts", 2), ("server_address", 4), ("client_address", 8),
    ]

    /// `column IN (names)` for one of the four, with `other_hosts`'s partial index's own
    /// condition (its index holds only flows with other names); with `days` (a subquery), the
    /// day too, inside the term: SQLite's OR optimization plans each term on its own, so a
    /// term seeks its index by (day, name) only when it carries both (`FlowDays`).
    static func term(_ column: String, _ names: String, days: String? = nil) -> String {
        let named = column == "other_hosts" ? "other_hosts <> '' AND other_hosts IN (\(names))" : "\(column) IN (\(names))"
        guard let days else { return column == "other_hosts" ? "(\(named))" : named }
        return "(\(FlowDays.expression) IN (\(days)) AND \(named))"
    }

    /// The condition on `flows` and its bindings, for any reading that is not a `tv flows`
    /// page (counts, `--follow`, the export, exchanges' filters): the names found by the
    /// phrase are looked up afresh for each of the four columns, on every day that has flows
    /// (`FlowDays.daysWithFlowsSQL`).
    /// With `from` (µs; the `--since` / `--from` filter, `--follow`'s moment), only the days
    /// from its own on are read: a poll of a long history seeks today, not every day since.
    public static func condition(_ text: String, from: Int64? = nil) -> (String, [SQLiteValue]) {
        let terms = columns.map { column, bit in
            term(column, "SELECT name FROM flow_names WHERE columns & \(bit) AND \(nameCondition(text))",
                 days: from == nil ? FlowDays.daysWithFlowsSQL : FlowDays.daysWithFlowsFromSQL)
        }
        let termBindings = (from.map { [SQLiteValue.integer($0)] } ?? []) + [match(text)]
        return ("(" + terms.joined(separator: " OR ") + ")", Array(Array(repeating: termBindings, count: columns.count).joined()))
    }

    /// LIKE with `text` as a substring of any of the four columns, for a walk (rows read through
    /// the time or status index) over a text shorter than a trigram that many names hold (`ap`):
    /// cheaper per row read than lists of a thousand names bound and built into lookups first
    /// (tv-bench, `--host ap`: 0.6 ms against 5 ms).
    static func likeCondition(_ text: String) -> (String, [SQLiteValue]) {
        let pattern = SQLiteValue.text("%" + FlowQuery.escapeLike(text) + "%")
        return ("(host LIKE ? ESCAPE '\\' OR other_hosts LIKE ? ESCAPE '\\' OR server_address LIKE ? ESCAPE '\\' OR client_address LIKE ? ESCAPE '\\')",
                [pattern, pattern, pattern, pattern])
    }

    /// The names holding `text` (one binding, `match(_:)`), with their `columns` bits.
    static func namesSQL(_ text: String) -> String {
        "SELECT name, columns FROM flow_names WHERE \(nameCondition(text))"
    }

    /// The condition for names already found (`FlowNameMatches`): each column's names as one
    /// bound JSON array, read by `json_each` (sqlite.org/json1.html), so a page's rounds repeat
    /// no text search. In a `window` of start times, each term seeks its index on the window's
    /// days (`FlowDays.days`, one more bound array a term); without, the condition only filters
    /// rows read through another index (a walk).
    /// A walk over a text shorter than a trigram filters by `likeCondition(text)` instead.
    public static func condition(names: FlowNameMatches, window: Range<Int64>?, text: String) -> (String, [SQLiteValue]) {
        if window == nil && !usesTrigrams(text) { return likeCondition(text) }
        let lists = [names.hosts, names.otherHosts, names.serverAddresses, names.clientAddresses].map { SQLiteValue.text(FlowNameMatches.json($0)) }
        guard let window else {
            let terms = columns.map { column, _ in term(column, "SELECT value FROM json_each(?)") }
            return ("(" + terms.joined(separator: " OR ") + ")", lists)
        }
        let terms = columns.map { column, _ in term(column, "SELECT value FROM json_each(?)", days: "SELECT value FROM json_each(?)") }
        let days = SQLiteValue.text(FlowDays.json(FlowDays.days(window)))
        return ("(" + terms.joined(separator: " OR ") + ")", lists.flatMap { [days, $0] })
    }
}

/// The names (`flow_names`) holding a `--host` text, by the column they were written in.
public struct FlowNameMatches: Sendable, Equatable {
    public var hosts: [String] = []
    public var otherHosts: [String] = []
    public var serverAddresses: [String] = []
    public var clientAddresses: [String] = []

    /// Sorts `rows` of `FlowTextSearch.namesSQL` (name, `columns` bits) by column.
    public init(rows: [(name: String, columns: Int64)]) {
        for (name, bits) in rows {
            if bits & 1 != 0 { hosts.append(name) }
            if bits & 2 != 0 { otherHosts.append(name) }
            if bits & 4 != 0 { serverAddresses.append(name) }
            if bits & 8 != 0 { clientAddresses.append(name) }
        }
    }

    /// How many (name, column) lookups a round of a page costs: one index seek each.
    public var lookups: Int { hosts.count + otherHosts.count + serverAddresses.count + clientAddresses.count }

    /// `names` as a JSON array of strings (RFC 8259).
    static func json(_ names: [String]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: names, options: [.withoutEscapingSlashes]),
              let text = String(data: data, encoding: .utf8) else { return "[]" }
        return text
    }
}
