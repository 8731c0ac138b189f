/// Byte counts in words, shared by every layer that writes sentences (the presentation layer's
/// `Units` forwards here): binary steps (`64 KiB`) and exact grouped figures (`1,048,776`).
public enum ByteWords {
    /// Bytes in binary steps: `512 B`, `1.5 KiB`, `64.0 KiB`, `35.0 MiB`, `2.10 GiB` (one decimal
    /// below 100 units, whole units above).
    public static func binary(_ n: Int64) -> String {
        if n < 1024 { return "\(n) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(n) / 1024
        var index = 0
        // A value that rounds to 1024 is the next unit's 1.0 (1,048,524 B read "1024 KiB": a re-check).
        while value.rounded() >= 1024 && index < units.count - 1 { value /= 1024; index += 1 }
        if value >= 100 { return "\(Int(value.rounded())) \(units[index])" }
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[index])"
    }

    /// A whole number with thousands grouped by commas: `1,048,776`.
    public static func grouped(_ n: Int64) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return (n < 0 ? "-" : "") + out
    }

    /// `1 byte`, `27 bytes`, `65,536 bytes`.
    public static func bytes(_ n: Int) -> String {
        n == 1 ? "1 byte" : "\(grouped(Int64(n))) bytes"
    }
}
