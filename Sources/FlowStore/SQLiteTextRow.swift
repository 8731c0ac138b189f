/// The text values of one row, bound without a copy (`SQLITE_STATIC`): their UTF-8 is gathered
/// into one buffer the caller keeps from row to row (no allocation once it has grown), the
/// statement's parameters point into it while it steps, and they are bound to NULL again before
/// the buffer can change (`step`), or, for a statement that sets every text before each of its
/// steps, left for the next row to rebind (`stepRebindingEveryText`). A writer's path:
/// `SQLiteStatement.bind(text:at:)` lets SQLite copy each value (`SQLITE_TRANSIENT`: an
/// allocation and a copy per value).
///
/// Not `Sendable`: it belongs to the one thread that owns the statement.
struct SQLiteTextRow {
    private var bytes: [UInt8] = []
    /// Parameter index (1-based), where its UTF-8 starts in `bytes`, and its length.
    private var texts: [(index: Int32, start: Int, count: Int)] = []
    /// Parameters set to NULL.
    private var nulls: [Int32] = []

    init() {
        bytes.reserveCapacity(1_024)
        texts.reserveCapacity(16)
        nulls.reserveCapacity(16)
    }

    /// Sets parameter `index` (1-based) to `text`, or to NULL for nil; bound at `step`.
    mutating func set(_ text: String?, at index: Int32) {
        guard let text else { return nulls.append(index) }
        let start = bytes.count
        bytes.append(contentsOf: text.utf8)
        texts.append((index, start, bytes.count - start))
    }

    /// Sets parameter `index` to `items` as `TextList.encode` writes them (`,` between items,
    /// `%` and `,` inside one escaped), gathered straight into the buffer.
    mutating func set(list items: [String], at index: Int32) {
        let start = bytes.count
        for (n, item) in items.enumerated() {
            if n > 0 { bytes.append(UInt8(ascii: ",")) }
            for byte in item.utf8 {
                switch byte {
                case UInt8(ascii: "%"): bytes.append(contentsOf: [UInt8(ascii: "%"), UInt8(ascii: "2"), UInt8(ascii: "5")])
                case UInt8(ascii: ","): bytes.append(contentsOf: [UInt8(ascii: "%"), UInt8(ascii: "2"), UInt8(ascii: "C")])
                default: bytes.append(byte)
                }
            }
        }
        texts.append((index, start, bytes.count - start))
    }

    /// Sets parameter `index` to `words` joined by one space (a flow's chain of fingerprints).
    mutating func set(words: [String], at index: Int32) {
        let start = bytes.count
        for (n, word) in words.enumerated() {
            if n > 0 { bytes.append(UInt8(ascii: " ")) }
            bytes.append(contentsOf: word.utf8)
        }
        texts.append((index, start, bytes.count - start))
    }

    /// Binds the values set since the last step to `statement` (the caller binds every other
    /// parameter), steps it once, then binds the texts to NULL and forgets every value.
    /// - Returns: what `SQLiteStatement.step` returns.
    /// - Throws: `FlowStoreError` from binding or stepping; the values are unbound and forgotten
    ///   all the same.
    mutating func step(_ statement: SQLiteStatement) throws -> Bool {
        defer {
            for text in texts { statement.unbind(at: text.index) }
            bytes.removeAll(keepingCapacity: true)
            texts.removeAll(keepingCapacity: true)
            nulls.removeAll(keepingCapacity: true)
        }
        return try bindAndStep(statement)
    }

    /// `step` for a statement whose every text parameter is set (a text or nil) before each of
    /// its steps, as `ExchangeColumns.write` sets all eight: the values are forgotten after the
    /// step but not unbound (unbinding cost ~1.8 k instructions a row: eight `sqlite3_bind_null`).
    ///
    /// Safe because SQLite reads a `SQLITE_STATIC` parameter only while the statement steps
    /// (binding, rewinding and finalizing never read it), and every step of such a statement is
    /// preceded by setting all its texts again, which rebinds each parameter to the buffer as it
    /// is then; until then a parameter may point at bytes the buffer has since overwritten or
    /// freed, which nothing reads.
    /// - Returns: what `SQLiteStatement.step` returns.
    /// - Throws: `FlowStoreError` from binding or stepping; the values are forgotten all the same.
    mutating func stepRebindingEveryText(_ statement: SQLiteStatement) throws -> Bool {
        defer {
            bytes.removeAll(keepingCapacity: true)
            texts.removeAll(keepingCapacity: true)
            nulls.removeAll(keepingCapacity: true)
        }
        return try bindAndStep(statement)
    }

    private func bindAndStep(_ statement: SQLiteStatement) throws -> Bool {
        for index in nulls { try statement.bind(optionalInteger: nil, at: index) }
        return try bytes.withUnsafeBytes { raw throws -> Bool in
            for text in texts {
                try statement.bind(staticText: raw.baseAddress.map { $0 + text.start }, count: text.count, at: text.index)
            }
            return try statement.step()
        }
    }
}
