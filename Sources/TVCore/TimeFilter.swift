import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// Parses the time words of `tv flows`: `--since 1h` and `--from/--to` moments.
public enum TimeFilter {
    /// A span such as `90s`, `15m`, `1h`, `2d`, `1w` in microseconds.
    /// - Throws: `TimeFilterError.badSpan`, or `.emptySpan` for a span of zero.
    public static func span(_ text: String) throws -> Int64 {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800]
        guard let unit = text.last, let factor = units[unit], let n = Int64(text.dropLast()), n >= 0 else {
            throw TimeFilterError.badSpan(text)
        }
        // Past what µs since 1970 can hold it is no span (a trial's 99999999999d trapped).
        let (seconds, over1) = n.multipliedReportingOverflow(by: factor)
        let (micros, over2) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !over1, !over2 else { throw TimeFilterError.badSpan(text) }
        // A stretch of nothing selects nothing, for every command alike (`tv flows --since 0s`
        // listed no flows while `tv activity --since 0s` refused it: a trial).
        guard micros > 0 else { throw TimeFilterError.emptySpan(text) }
        return micros
    }

    /// A moment: seconds since the epoch (`1764471900`), or UTC `YYYY-MM-DDTHH:MM[:SS][Z]`,
    /// `YYYY-MM-DD HH:MM[:SS]`, `YYYY-MM-DD`; after whole seconds, a fraction (`.713`; to the
    /// microsecond, digits past the sixth dropped) and a UTC offset (`+01:00`, `-0530`) in place of `Z` (RFC 3339 §5.6: the HAR's
    /// own `startedDateTime` form was refused: a trial); returned in microseconds since the epoch.
    /// - Throws: `TimeFilterError.badMoment`.
    public static func moment(_ text: String) throws -> Int64 {
        if let seconds = Int64(text) {
            // Seconds since 1970, not before it, and within what µs can hold.
            let (micros, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
            guard seconds >= 0, !overflow else { throw TimeFilterError.badMoment(text) }
            return micros
        }
        var trimmed = Array(text.utf8)
        // An offset from UTC (after whole seconds only), else Z; then a fraction of a second.
        var offsetSeconds: Int64 = 0
        // RFC 3339 §5.6 NOTE: "T" and "Z" may be lowercase.
        if trimmed.last == UInt8(ascii: "Z") || trimmed.last == UInt8(ascii: "z") {
            trimmed.removeLast()
        } else if trimmed.count > 19, let sign = trimmed.lastIndex(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }), sign >= 19 {
            // HH:MM or HHMM.
            let rest = Array(trimmed[(sign + 1)...])
            let zone = rest.count == 5 && rest[2] == UInt8(ascii: ":") ? Array(rest[0..<2] + rest[3..<5]) : rest
            guard zone.count == 4, zone.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { throw TimeFilterError.badMoment(text) }
            let hours = Int64(zone[0] - 0x30) * 10 + Int64(zone[1] - 0x30), minutes = Int64(zone[2] - 0x30) * 10 + Int64(zone[3] - 0x30)
            guard hours < 24, minutes < 60 else { throw TimeFilterError.badMoment(text) }
            offsetSeconds = (hours * 3_600 + minutes * 60) * (trimmed[sign] == UInt8(ascii: "-") ? -1 : 1)
            trimmed.removeLast(trimmed.count - sign)
        }
        var fractionMicros: Int64 = 0
        if trimmed.count > 19, trimmed[19] == UInt8(ascii: ".") {
            let digits = trimmed[20...]
            // Any number of digits (RFC 3339 §5.6; `date +%N` gives nine), to the microsecond:
            // digits past the sixth are dropped (seven and more were refused: a trial).
            guard (1...18).contains(digits.count), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { throw TimeFilterError.badMoment(text) }
            fractionMicros = digits.prefix(6).reduce(0) { $0 * 10 + Int64($1 - 0x30) }
            for _ in min(digits.count, 6)..<6 { fractionMicros *= 10 }
            trimmed.removeLast(trimmed.count - 19)
        }
        // YYYY-MM-DD, then optionally T or space, HH:MM, then optionally :SS.
        func number(_ range: Range<Int>) -> Int32? {
            guard range.upperBound <= trimmed.count else { return nil }
            var v: Int32 = 0
            for c in trimmed[range] {
                guard c >= 0x30 && c <= 0x39 else { return nil }
                v = v * 10 + Int32(c - 0x30)
            }
            return v
        }
        func char(_ i: Int, _ allowed: String) -> Bool { i < trimmed.count && allowed.utf8.contains(trimmed[i]) }
        if [10, 16, 19].contains(trimmed.count), let y = number(0..<4), char(4, "-"), let mo = number(5..<7), char(7, "-"),
           let d = number(8..<10), (1...12).contains(mo), (1...31).contains(d) {
            var parts = tm()
            parts.tm_year = y - 1900
            parts.tm_mon = mo - 1
            parts.tm_mday = d
            if trimmed.count >= 16 {
                guard char(10, "Tt "), let h = number(11..<13), char(13, ":"), let mi = number(14..<16), h < 24, mi < 60 else {
                    throw TimeFilterError.badMoment(text)
                }
                parts.tm_hour = h
                parts.tm_min = mi
            }
            if trimmed.count == 19 {
                guard char(16, ":"), let sec = number(17..<19), sec < 61 else { throw TimeFilterError.badMoment(text) }
                parts.tm_sec = sec
            }
            let seconds = Int64(timegm(&parts))
            // timegm folds an impossible day into the next month (2026-02-30 is March 2): refused.
            var back = tm()
            var t = time_t(seconds)
            guard gmtime_r(&t, &back) != nil, back.tm_mday == d, back.tm_mon == mo - 1 else { throw TimeFilterError.badMoment(text) }
            // A fraction or an offset belongs after whole seconds (`…T14:05:00.5`, `…:00+01:00`).
            guard trimmed.count == 19 || (fractionMicros == 0 && offsetSeconds == 0) else { throw TimeFilterError.badMoment(text) }
            return (seconds - offsetSeconds) * 1_000_000 + fractionMicros
        }
        throw TimeFilterError.badMoment(text)
    }
}

public enum TimeFilterError: UserFacingError, Equatable {
    case badSpan(String)
    /// A span of no time at all (`0s`, `0d`).
    case emptySpan(String)
    case badMoment(String)
    public var message: String {
        switch self {
        case .badSpan(let t): return "'\(t)' is not a time span; write a number and a unit, such as 90s, 15m, 1h, 2d or 1w."
        case .emptySpan(let t): return "'\(t)' is no time at all; write a stretch longer than zero, such as 90s, 15m, 1h, 2d or 1w."
        case .badMoment(let t): return "'\(t)' is not a moment; write UTC as 2026-11-30T14:05:00Z (a fraction and an offset such as .713+01:00 may follow the seconds), 2026-11-30 14:05, 2026-11-30, or seconds since 1970."
        }
    }
    public var exitCode: Int32 { 2 }
}
