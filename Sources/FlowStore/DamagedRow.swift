import TVHome

/// A row holding a value no tv writer writes (a negative byte count, a port above 65,535, an
/// unknown direction or status, text where a number belongs): edited by hand, or damaged in a way
/// SQLite's own page checks do not see. Readers leave such a row out, say which one and why, and
/// go on with the others; nothing is shown as if it were true.
public struct DamagedRow: Error, Sendable, Equatable {
    /// The row in words: `flow 12`, `turn 3 of flow 7`.
    public var row: String
    /// The column holding the bad value (`bytes_up`).
    public var column: String
    /// The value as stored.
    public var value: SQLiteValue

    public init(row: String, column: String, value: SQLiteValue) {
        self.row = row
        self.column = column
        self.value = value
    }

    /// `flow 12: bytes_up is -5`.
    public var summary: String { "\(row): \(column) is \(DamagedRow.words(value))" }

    /// One sentence for a reader: `The row of turn 3 of flow 7 is damaged (kept_bytes is -5); it is left out.`
    public var sentence: String { "The row of \(row) is damaged (\(column) is \(DamagedRow.words(value))); it is left out." }

    /// A stored value as a reader sees it: numbers as they are, text quoted and escaped as every
    /// string that reaches a terminal is (`TerminalText.line`), at most 64 characters of it, so a
    /// damaged row cannot write to the terminal.
    static func words(_ value: SQLiteValue) -> String {
        switch value {
        case let .integer(n): return String(n)
        case let .real(d): return String(d)
        case let .text(t):
            let escaped = TerminalText.line(t)
            return "'\(escaped.count > 64 ? String(escaped.prefix(64)) + "…" : escaped)'"
        case let .blob(b): return "a blob of \(b.count) bytes"
        case .null: return "NULL"
        }
    }
}

/// One row's values read by column name, each checked against what a writer could have written.
/// Pure: built from the values alone, so every check is tested with exact inputs.
public struct CheckedRow: Sendable {
    /// The row in words, for `DamagedRow.row`.
    public let row: String
    private let values: [String: SQLiteValue]

    /// - Parameters:
    ///   - names: the column names, in `values` order.
    ///   - values: the stored values.
    public init(row: String, names: [String], values: [SQLiteValue]) {
        self.row = row
        var byName: [String: SQLiteValue] = [:]
        for (name, value) in zip(names, values) { byName[name] = value }
        self.values = byName
    }

    private func damaged(_ column: String) -> DamagedRow {
        DamagedRow(row: row, column: column, value: values[column] ?? .null)
    }

    /// An integer in `range`. - Throws: `DamagedRow` for NULL, non-integers and values outside it.
    public func integer(_ column: String, in range: ClosedRange<Int64> = Int64.min...Int64.max) throws(DamagedRow) -> Int64 {
        guard case let .integer(n) = values[column], range.contains(n) else { throw damaged(column) }
        return n
    }

    /// NULL as nil, else an integer in `range`. - Throws: `DamagedRow` otherwise.
    public func optionalInteger(_ column: String, in range: ClosedRange<Int64> = Int64.min...Int64.max) throws(DamagedRow) -> Int64? {
        if case .null = values[column] ?? .null { return nil }
        return try integer(column, in: range)
    }

    /// 0 as false, 1 as true. - Throws: `DamagedRow` for anything else.
    public func flag(_ column: String) throws(DamagedRow) -> Bool {
        try integer(column, in: 0...1) == 1
    }

    /// NULL as nil, else text. - Throws: `DamagedRow` for numbers and blobs.
    public func optionalText(_ column: String) throws(DamagedRow) -> String? {
        switch values[column] ?? .null {
        case .null: return nil
        case let .text(t): return t
        default: throw damaged(column)
        }
    }

    /// Text, NULL read as "". - Throws: `DamagedRow` for numbers and blobs.
    public func text(_ column: String) throws(DamagedRow) -> String {
        try optionalText(column) ?? ""
    }

    /// A value of a closed set stored as its raw text. - Throws: `DamagedRow` for any other text.
    public func known<T: RawRepresentable>(_ type: T.Type, _ column: String) throws(DamagedRow) -> T where T.RawValue == String {
        guard case let .text(t) = values[column], let value = T(rawValue: t) else { throw damaged(column) }
        return value
    }

    /// NULL as nil, else a value of a closed set. - Throws: `DamagedRow` for any other text.
    public func optionalKnown<T: RawRepresentable>(_ type: T.Type, _ column: String) throws(DamagedRow) -> T? where T.RawValue == String {
        if case .null = values[column] ?? .null { return nil }
        return try known(type, column)
    }
}
