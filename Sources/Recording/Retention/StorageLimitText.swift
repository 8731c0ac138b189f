import TVHome

/// Reads and writes the values of `history.maxAge`, `captures.maxAge` (`30d`, `12h`, `2w`,
/// `off`) and `captures.maxBytes` (`2GB`, `500MB`, `1.5GiB`, `off`): units in the value, so a
/// setting read alone says what it means.
public enum StorageLimitText {
    /// The word for "no limit".
    public static let off = "off"

    /// An age in µs, or nil for `off`. Units: `h`, `d`, `w` (hours, days, weeks); at least 1 h.
    /// - Throws: `StorageLimitError.badAge` for anything else.
    public static func age(_ text: String, key: String) throws(StorageLimitError) -> Int64? {
        let t = text.trimmingSpaces().lowercased()
        if t == off { return nil }
        let units: [Character: Int64] = ["h": 3_600, "d": 86_400, "w": 604_800]
        guard let unit = t.last, let factor = units[unit], let n = Int64(t.dropLast()), n > 0, n <= 100_000 else {
            throw .badAge(key: key, text: text)
        }
        return n * factor * 1_000_000
    }

    /// A size in bytes, or nil for `off`. Units: `KB`, `MB`, `GB`, `TB` (powers of 1000) and
    /// `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024), a decimal number before them; at least 1 MB.
    /// - Throws: `StorageLimitError.badSize` for anything else.
    public static func bytes(_ text: String, key: String) throws(StorageLimitError) -> Int64? {
        let t = text.trimmingSpaces().lowercased().replacingSpaces()
        if t == off { return nil }
        let units: [(String, Double)] = [("kib", 1_024), ("mib", 1_048_576), ("gib", 1_073_741_824),
                                         ("tib", 1_099_511_627_776), ("kb", 1e3), ("mb", 1e6), ("gb", 1e9), ("tb", 1e12)]
        guard let (suffix, factor) = units.first(where: { t.hasSuffix($0.0) }),
              let n = Double(t.dropLast(suffix.count)), n.isFinite, n > 0 else {
            throw .badSize(key: key, text: text)
        }
        let value = n * factor
        guard value >= 1e6, value <= 1e15 else { throw .badSize(key: key, text: text) }
        return Int64(value.rounded())
    }

    /// An age as it is typed back: `30d`, `2w`, `12h`, or `off`.
    public static func ageText(_ us: Int64?) -> String {
        guard let us else { return off }
        let hours = us / 3_600_000_000
        if hours % 168 == 0 { return "\(hours / 168)w" }
        if hours % 24 == 0 { return "\(hours / 24)d" }
        return "\(hours)h"
    }
}

/// A storage limit that is not one; the sentence says what a good value looks like.
public enum StorageLimitError: UserFacingError, Equatable {
    case badAge(key: String, text: String)
    case badSize(key: String, text: String)

    /// One sentence: what was wrong and what to type.
    public var message: String {
        switch self {
        case let .badAge(key, text):
            return "\(key) takes an age with its unit, from 1h to 100000w (e.g. 12h, 30d, 2w), or off for no limit, not '\(text)'."
        case let .badSize(key, text):
            return "\(key) takes a size with its unit, at least 1MB (e.g. 500MB, 2GB, 1.5GiB), or off for no limit, not '\(text)'."
        }
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
    fileprivate func replacingSpaces() -> String { filter { $0 != " " } }
}
