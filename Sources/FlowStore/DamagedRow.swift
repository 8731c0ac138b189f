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

/// Which row a `CheckedRow` holds, put in words only when the row is damaged (`words`): a
/// listing reads hundreds of thousands of rows, and the words of each cost more than its checks.
public enum RowName: Sendable, Equatable {
    case flow(Int64)
    case exchange(Int64)
    /// A turn (its number) of a flow.
    case turn(Int64, flow: Int64)

    /// `flow 12`, `exchange 40`, `turn 3 of flow 7`.
    public var words: String {
        switch self {
        case let .flow(id): "flow \(id)"
        case let .exchange(id): "exchange \(id)"
        case let .turn(number, flow): "turn \(number) of flow \(flow)"
        }
    }
}

/// The column names of one row shape and where each is, made once per shape (a `static let`
/// beside the names), so that reading a row by column name builds nothing per row.
public struct ColumnIndex: Sendable {
    /// The names, in the order of a row's values.
    public let names: [String]
    private let positions: [String: Int]

    public init(_ names: [String]) {
        self.names = names
        var positions: [String: Int] = [:]
        positions.reserveCapacity(names.count)
        for (index, name) in names.enumerated() where positions[name] == nil { positions[name] = index }
        self.positions = positions
    }

    /// Where `column` is among the names, nil when it is not one.
    public func position(_ column: String) -> Int? { positions[column] }
}

/// One row's values read by column name, each checked against what a writer could have written.
/// Pure: built from the values alone, so every check is tested with exact inputs.
///
/// Measured (perf of the content writer removing 30,000 requests' queries): the dictionary of
/// names to values this built for every row (grown by doubling, each name hashed twice) was
/// ~60 % of `ExchangeColumns.record`; the names' positions are now made once per shape
/// (`ColumnIndex`), and a row's name is put in words only when it is damaged (`RowName`).
public struct CheckedRow: Sendable {
    /// Which row it is, for `DamagedRow.row`.
    public let name: RowName
    private let columns: ColumnIndex
    private let values: [SQLiteValue]

    /// - Parameters:
    ///   - columns: the column names, in `values` order; a column past the end of `values`
    ///     reads as NULL.
    ///   - values: the stored values.
    public init(_ name: RowName, columns: ColumnIndex, values: [SQLiteValue]) {
        self.name = name
        self.columns = columns
        self.values = values
    }

    /// The value stored in `column` (NULL when the row has none).
    private func value(_ column: String) -> SQLiteValue {
        guard let index = columns.position(column), index < values.count else { return .null }
        return values[index]
    }

    private func damaged(_ column: String) -> DamagedRow {
        DamagedRow(row: name.words, column: column, value: value(column))
    }

    /// An integer in `range`. - Throws: `DamagedRow` for NULL, non-integers and values outside it.
    public func integer(_ column: String, in range: ClosedRange<Int64> = Int64.min...Int64.max) throws(DamagedRow) -> Int64 {
        guard case let .integer(n) = value(column), range.contains(n) else { throw damaged(column) }
        return n
    }

    /// NULL as nil, else an integer in `range`. - Throws: `DamagedRow` otherwise.
    public func optionalInteger(_ column: String, in range: ClosedRange<Int64> = Int64.min...Int64.max) throws(DamagedRow) -> Int64? {
        if case .null = value(column) { return nil }
        return try integer(column, in: range)
    }

    /// 0 as false, 1 as true. - Throws: `DamagedRow` for anything else.
    public func flag(_ column: String) throws(DamagedRow) -> Bool {
        try integer(column, in: 0...1) == 1
    }

    /// NULL as nil, else text. - Throws: `DamagedRow` for numbers and blobs.
    public func optionalText(_ column: String) throws(DamagedRow) -> String? {
        switch value(column) {
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
        guard case let .text(t) = value(column), let value = T(rawValue: t) else { throw damaged(column) }
        return value
    }

    /// NULL as nil, else a value of a closed set. - Throws: `DamagedRow` for any other text.
    public func optionalKnown<T: RawRepresentable>(_ type: T.Type, _ column: String) throws(DamagedRow) -> T? where T.RawValue == String {
        if case .null = value(column) { return nil }
        return try known(type, column)
    }
}
