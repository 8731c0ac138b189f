/// The SQL for `--host TEXT`: a case-insensitive substring of the host name, the other names its
/// address had (a name inferred from DNS), or either address.
///
/// Three characters or more: an FTS5 phrase over `flows_text` (trigram tokenizer;
/// sqlite.org/fts5.html §4.3.5: a phrase of trigrams matches exactly the substrings), so the
/// matching rows come from the index, never a scan of `flows`. Fewer than three characters
/// cannot make a trigram: the page then walks `flows_by_start_time` newest first and stops when
/// the page is full (a bounded read for any text that occurs; a text that occurs nowhere reads
/// the index to its end, which is the one case the trigram index cannot answer).
public enum FlowTextSearch {
    /// The condition on `flows` and its bindings.
    public static func condition(_ text: String) -> (String, [SQLiteValue]) {
        if text.unicodeScalars.count >= 3 {
            // An FTS5 string: double quotes doubled (fts5.html §3.1); the whole text is one phrase.
            var phrase = "\""
            for character in text {
                if character == "\"" { phrase.append("\"") }
                phrase.append(character)
            }
            phrase.append("\"")
            return ("id IN (SELECT rowid FROM flows_text WHERE flows_text MATCH ?)", [.text(phrase)])
        }
        let pattern = SQLiteValue.text("%" + FlowQuery.escapeLike(text) + "%")
        return ("(host LIKE ? ESCAPE '\\' OR other_hosts LIKE ? ESCAPE '\\' OR server_address LIKE ? ESCAPE '\\' OR client_address LIKE ? ESCAPE '\\')",
                [pattern, pattern, pattern, pattern])
    }
}
