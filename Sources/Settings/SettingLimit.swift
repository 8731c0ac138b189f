import Foundation

/// A size or a time limit as a setting holds it (`2GB`, `30d`, `off`), read: off, a limit, or
/// text that is not a limit (kept, so the sentence can quote it; never replaced by a default).
public enum SettingLimit: Sendable, Equatable {
    /// `off`, `none` or empty: no limit.
    case off
    /// Bytes, or µs for a time limit.
    case limit(Int64)
    /// The saved text is neither.
    case unreadable(String)

    /// Reads a size: a whole number with `B`, `KB`/`KiB`, `MB`/`MiB`, `GB`/`GiB` or `TB`/`TiB`
    /// (binary steps, as tv writes sizes: 1 KB = 1,024 bytes), case-insensitive, spaces allowed
    /// before the unit; a bare number is bytes. Zero is a limit of nothing, so it reads as off.
    public static func bytes(_ text: String) -> SettingLimit {
        read(text, units: byteUnits)
    }

    /// The size units `bytes(_:)` reads, each in bytes.
    private static let byteUnits: [String: Int64] = [
        "b": 1, "": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
        "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
    ]

    /// The largest size a setting holds, as `userBytes` writes it: 8,388,607 TB (just under
    /// 2⁶³ bytes, what a 64-bit signed count holds).
    public static let largestUserBytes = "\((Int64.max >> 40))TB"

    /// Whether `text` is a whole number with a size unit (not a bare number) that is more bytes than tv can count
    /// (2⁶³ or more): a size, but too large, not a text that is not one (a trial's
    /// `8589934592GB` was refused as not a size).
    public static func isTooManyBytes(_ text: String) -> Bool {
        let (_, number, unit) = parts(text)
        let word = text.trimmingCharacters(in: .whitespaces)
        guard !unit.isEmpty, let scale = byteUnits[unit], word.first?.isASCII == true, word.first?.isNumber == true else { return false }
        guard let number else { return true }
        return number.multipliedReportingOverflow(by: scale).overflow
    }

    /// Reads a duration into µs: a whole number with `s`, `m`/`min`, `h`, `d` or `w`.
    public static func micros(_ text: String) -> SettingLimit {
        let second: Int64 = 1_000_000
        return read(text, units: ["s": second, "m": 60 * second, "min": 60 * second, "h": 3_600 * second, "d": 86_400 * second,
                                  "w": 604_800 * second])
    }

    /// What a user may set a size limit to, as it is saved: `off` (any case), or a whole number
    /// above zero with its unit (`B`, `KB`/`KiB`, `MB`/`MiB`, `GB`/`GiB`, `TB`/`TiB`, any case,
    /// spaces allowed before it), written back canonically (`2 gb` and `2GiB` → `2GB`). Nil for anything
    /// else, including what `bytes(_:)` still reads when a file holds it (a bare number, `0`,
    /// `none`, empty): a user who types `0` or `2` most likely meant something else.
    public static func userBytes(_ text: String) -> String? {
        // KiB is KB here (1 KB = 1,024 bytes), so it is saved as KB: `2GiB` over `2GB` was
        // said as a change (a trial).
        userText(text, units: ["b": "B", "k": "KB", "kb": "KB", "kib": "KB", "m": "MB", "mb": "MB", "mib": "MB",
                               "g": "GB", "gb": "GB", "gib": "GB", "t": "TB", "tb": "TB", "tib": "TB"]) { bytes($0) }
    }

    /// What a user may set an age limit to, as it is saved: `off` (any case), or a whole number
    /// above zero with `s`, `m`/`min`, `h`, `d` or `w` (any case), written back canonically
    /// (`30 D` → `30d`). Nil for anything else (`0d`, `none`, empty, a bare number).
    public static func userMicros(_ text: String) -> String? {
        userText(text, units: ["s": "s", "m": "m", "min": "m", "h": "h", "d": "d", "w": "w"]) { micros($0) }
    }

    private static func userText(_ text: String, units: [String: String], reading: (String) -> SettingLimit) -> String? {
        let (word, number, unit) = parts(text)
        if word == "off" { return "off" }
        guard let number, let canonical = units[unit] else { return nil }
        let saved = "\(number)\(canonical)"
        guard case .limit = reading(saved) else { return nil }
        return saved
    }

    private static func read(_ text: String, units: [String: Int64]) -> SettingLimit {
        let (word, number, unit) = parts(text)
        if ["", "off", "none", "0"].contains(word) { return .off }
        guard let number, let scale = units[unit] else { return .unreadable(text) }
        let (product, overflow) = number.multipliedReportingOverflow(by: scale)
        guard !overflow else { return .unreadable(text) }
        return product == 0 ? .off : .limit(product)
    }

    /// `text` trimmed and lower-cased (`word`), its leading whole number (nil: none, or too
    /// large) and the unit after it, spaces between them dropped.
    private static func parts(_ text: String) -> (word: String, number: Int64?, unit: String) {
        let word = text.trimmingCharacters(in: .whitespaces).lowercased()
        let digits = word.prefix { $0.isASCII && $0.isNumber }
        return (word, Int64(digits), word.dropFirst(digits.count).trimmingCharacters(in: .whitespaces))
    }
}
