/// One value bound to, or read from, an SQLite statement: SQLite's five storage classes.
public enum SQLiteValue: Sendable, Equatable {
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE 754 double.
    case real(Double)
    /// UTF-8 text (may hold NUL).
    case text(String)
    /// Bytes; `[]` is an empty blob, not NULL.
    case blob([UInt8])
    /// SQL NULL.
    case null

    /// `.text(value)`, or `.null` when `value` is nil.
    public static func textOrNull(_ value: String?) -> SQLiteValue {
        value.map { .text($0) } ?? .null
    }

    /// `.integer(value)`, or `.null` when `value` is nil.
    public static func integerOrNull(_ value: Int64?) -> SQLiteValue {
        value.map { .integer($0) } ?? .null
    }
}
