/// A list of short strings kept in one TEXT column (versions, ALPN ids, SANs) so a person reading
/// the table with `sqlite3` sees `h2,http/1.1`.
///
/// Items are joined with `,`; a `%` or `,` inside an item is written `%25` / `%2C`, so any list
/// survives a round trip. The empty list is the empty string.
public enum TextList {
    /// `["h2", "http/1.1"]` → `"h2,http/1.1"`.
    public static func encode(_ items: [String]) -> String {
        items.map { item in
            item.replacingPercentAndComma()
        }.joined(separator: ",")
    }

    /// `"h2,http/1.1"` → `["h2", "http/1.1"]`; `""` → `[]`.
    public static func decode(_ text: String) -> [String] {
        if text.isEmpty { return [] }
        return text.split(separator: ",", omittingEmptySubsequences: false).map { part in
            String(part).restoringPercentAndComma()
        }
    }
}

extension String {
    fileprivate func replacingPercentAndComma() -> String {
        // Byte scans (stdlib), not `contains("%")`, which goes through Foundation's string search
        // (~4.5 k instructions a list, ~0.1 M per proxied connection, callgrind). `%` and `,` are ASCII:
        // their bytes never occur inside a multi-byte UTF-8 sequence.
        guard utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: ",") }) else { return self }
        var out = ""
        for character in self {
            switch character {
            case "%": out += "%25"
            case ",": out += "%2C"
            default: out.append(character)
            }
        }
        return out
    }

    fileprivate func restoringPercentAndComma() -> String {
        guard utf8.contains(UInt8(ascii: "%")) else { return self }
        var out = ""
        var rest = Substring(self)
        while let percent = rest.firstIndex(of: "%") {
            out += rest[..<percent]
            let code = rest[percent...].prefix(3)
            switch code {
            case "%25": out += "%"
            case "%2C": out += ","
            default: out += code
            }
            rest = rest[code.endIndex...]
        }
        out += rest
        return out
    }
}
