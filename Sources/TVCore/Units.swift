#if canImport(Glibc)
import Glibc
#endif
import TVHome

/// How `tv` writes quantities for people: bytes, durations, relative times.
public enum Units {
    /// Bytes in SI-ish binary steps: `512 B`, `1.5 KiB`, `35.0 MiB`, `2.10 GiB`.
    public static func bytes(_ n: Int64) -> String { ByteWords.binary(n) }

    /// Items in a sentence: "a", "a and b", "a, b and c".
    public static func listed(_ items: [String]) -> String {
        guard let last = items.last, items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " and " + last
    }

    /// A duration given in microseconds: `850 µs`, `12 ms`, `1.2 s`, `3 min 05 s`, `2 h 04 min`.
    public static func duration(microseconds us: Int64) -> String {
        if us < 1_000 { return "\(us) µs" }
        if us < 1_000_000 { return "\(us / 1_000) ms" }
        let seconds = Double(us) / 1_000_000
        if seconds < 60 { return oneDecimal(seconds) + " s" }
        let s = us / 1_000_000
        if s < 3_600 { return "\(s / 60) min " + twoDigits(s % 60) + " s" }
        return "\(s / 3_600) h " + twoDigits((s % 3_600) / 60) + " min"
    }

    /// A moment relative to `now` (both µs since the epoch): `just now`, `12 s ago`, `5 min ago`,
    /// `3 h ago`; older than a day, the UTC date and time.
    public static func relative(_ time: Int64, now: Int64) -> String {
        let delta = (now - time) / 1_000_000
        if delta < 1 { return "just now" }
        if delta < 60 { return "\(delta) s ago" }
        if delta < 3_600 { return "\(delta / 60) min ago" }
        if delta < 86_400 { return "\(delta / 3_600) h ago" }
        return utc(time / 1_000_000, format: "%Y-%m-%d %H:%M")
    }

    /// UTC text for seconds since the epoch with a strftime(3) format.
    public static func utc(_ seconds: Int64, format: String = "%Y-%m-%d %H:%M:%S UTC") -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        var buf = [CChar](repeating: 0, count: 64)
        strftime(&buf, buf.count, format, &parts)
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// UTC with milliseconds for µs since the epoch: `2026-11-30 03:05:00.123 UTC`.
    public static func utcMillis(_ us: Int64) -> String {
        let ms = (us / 1_000) % 1_000
        let msText = String(ms)
        return utc(us / 1_000_000, format: "%Y-%m-%d %H:%M:%S") + "." + String(repeating: "0", count: 3 - msText.count) + msText + " UTC"
    }

    /// UTC with microseconds, as a capture stores the time and tshark shows it:
    /// `2026-11-30 03:05:00.123456 UTC`.
    public static func utcMicros(_ us: Int64) -> String {
        let fraction = String(us % 1_000_000)
        return utc(us / 1_000_000, format: "%Y-%m-%d %H:%M:%S") + "." + String(repeating: "0", count: 6 - fraction.count) + fraction + " UTC"
    }

    /// A whole number with thousands grouped by commas: `1,048,776`.
    public static func grouped(_ n: Int64) -> String { ByteWords.grouped(n) }

    /// An offset from the start of a flow (µs), in seconds to the nearest millisecond: `0.000 s`,
    /// `0.012 s`, `61.251 s`; negative offsets read 0. One rounding for every list and detail: the
    /// packet list rounded and a packet's detail truncated, so one packet read 0.003 s in one and
    /// 0.002 s in the other (a trial).
    public static func offsetSeconds(_ us: Int64) -> String {
        let ms = (max(0, us) + 500) / 1_000
        let fraction = String(ms % 1_000)
        return "\(ms / 1_000)." + String(repeating: "0", count: 3 - fraction.count) + fraction + " s"
    }

    static func oneDecimal(_ v: Double) -> String {
        let tenths = Int64((v * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    static func twoDigits(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
}
