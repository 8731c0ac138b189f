import CSQLite

/// One compiled SQL statement of an `SQLiteDatabase`, with typed binding and column reading.
///
/// Same threading rule as its database: one thread at a time. Parameters are 1-based as in SQLite;
/// columns are 0-based. The statement is finalized when the value goes away.
public final class SQLiteStatement {
    private let database: SQLiteDatabase
    private let handle: OpaquePointer

    init(database: SQLiteDatabase, handle: OpaquePointer) {
        self.database = database
        self.handle = handle
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Binds `values` to parameters 1…n, after resetting the statement and clearing old bindings.
    /// - Throws: `FlowStoreError` (e.g. too many values for the statement).
    public func bind(_ values: [SQLiteValue]) throws {
        reset()
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one value to parameter `index` (1-based). Text is copied as UTF-8, so it may hold NUL.
    /// - Throws: `FlowStoreError` when `index` is out of range.
    public func bind(_ value: SQLiteValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case let .integer(number):
            rc = sqlite3_bind_int64(handle, index, number)
        case let .real(number):
            rc = sqlite3_bind_double(handle, index, number)
        case let .text(string):
            var string = string
            rc = string.withUTF8 { bytes -> Int32 in
                // An empty buffer may have no address, and a nil pointer would bind NULL.
                guard let base = bytes.baseAddress, bytes.count > 0 else {
                    return sqlite3_bind_text(handle, index, "", 0, SQLiteStatement.transient)
                }
                return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    sqlite3_bind_text(handle, index, $0, Int32(bytes.count), SQLiteStatement.transient)
                }
            }
        case let .blob(bytes):
            rc = bytes.withUnsafeBytes { raw -> Int32 in
                guard let base = raw.baseAddress, raw.count > 0 else {
                    return sqlite3_bind_zeroblob(handle, index, 0)
                }
                return sqlite3_bind_blob(handle, index, base, Int32(raw.count), SQLiteStatement.transient)
            }
        case .null:
            rc = sqlite3_bind_null(handle, index)
        }
        if rc != SQLITE_OK { throw database.error(code: rc) }
    }

    /// Binds an integer to parameter `index` (1-based), the `.integer` case without the enum.
    /// - Throws: `FlowStoreError` when `index` is out of range.
    public func bind(integer value: Int64, at index: Int32) throws {
        let rc = sqlite3_bind_int64(handle, index, value)
        if rc != SQLITE_OK { throw database.error(code: rc) }
    }

    /// Binds an integer, or NULL for nil, to parameter `index` (1-based), without the enum.
    /// - Throws: `FlowStoreError` when `index` is out of range.
    public func bind(optionalInteger value: Int64?, at index: Int32) throws {
        let rc = value.map { sqlite3_bind_int64(handle, index, $0) } ?? sqlite3_bind_null(handle, index)
        if rc != SQLITE_OK { throw database.error(code: rc) }
    }

    /// Binds text, or NULL for nil, to parameter `index` (1-based), without the enum: the UTF-8
    /// is read where the string keeps it and copied once, by SQLite (`SQLITE_TRANSIENT`).
    /// - Throws: `FlowStoreError` when `index` is out of range.
    public func bind(text value: String?, at index: Int32) throws {
        guard var string = value else {
            let rc = sqlite3_bind_null(handle, index)
            if rc != SQLITE_OK { throw database.error(code: rc) }
            return
        }
        let rc = string.withUTF8 { bytes -> Int32 in
            // An empty buffer may have no address, and a nil pointer would bind NULL.
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                return sqlite3_bind_text(handle, index, "", 0, SQLiteStatement.transient)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(handle, index, $0, Int32(bytes.count), SQLiteStatement.transient)
            }
        }
        if rc != SQLITE_OK { throw database.error(code: rc) }
    }
    /// Binds `count` bytes of UTF-8 at `text` to parameter `index` without a copy
    /// (`SQLITE_STATIC`): the bytes must stay where they are, unchanged, until the parameter is
    /// bound again (`unbind(at:)`) or the statement is finalized. Zero bytes bind the empty
    /// text, never NULL. For `SQLiteTextRow`.
    /// - Throws: `FlowStoreError` when the value cannot be bound.
    func bind(staticText text: UnsafeRawPointer?, count: Int, at index: Int32) throws {
        let rc: Int32
        if let text, count > 0 {
            rc = sqlite3_bind_text(handle, index, text.assumingMemoryBound(to: CChar.self), Int32(count), nil)  // nil: SQLITE_STATIC
        } else {
            rc = sqlite3_bind_text(handle, index, "", 0, SQLiteStatement.transient)
        }
        if rc != SQLITE_OK { throw database.error(code: rc) }
    }

    /// Binds parameter `index` to NULL, letting go of what it pointed at (`bind(staticText:)`).
    func unbind(at index: Int32) {
        sqlite3_bind_null(handle, index)
    }


    /// Binds UTF-8 `bytes` as text to parameter `index` (1-based), copied by SQLite
    /// (`SQLITE_TRANSIENT`): text a writer assembled in a reused buffer, without a `String`.
    /// - Throws: `FlowStoreError` when `index` is out of range.
    public func bind(utf8 bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        // An empty buffer may have no address, and a nil pointer would bind NULL.
        let rc: Int32
        if let base = bytes.baseAddress, bytes.count > 0 {
            rc = sqlite3_bind_text(handle, index, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), SQLiteStatement.transient)
        } else {
            rc = sqlite3_bind_text(handle, index, "", 0, SQLiteStatement.transient)
        }
        if rc != SQLITE_OK { throw database.error(code: rc) }
    }

    /// Binds constant text to parameter `index` (1-based) without copying it: a `StaticString`
    /// lives as long as the program, so SQLite may keep the pointer (`SQLITE_STATIC`); nil binds
    /// NULL.
    /// - Throws: `FlowStoreError` when `index` is out of range.
    public func bind(constant text: StaticString?, at index: Int32) throws {
        let rc: Int32
        if let text {
            rc = text.withUTF8Buffer { bytes in
                bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    sqlite3_bind_text(handle, index, $0, Int32(bytes.count), nil)   // nil: SQLITE_STATIC
                }
            }
        } else {
            rc = sqlite3_bind_null(handle, index)
        }
        if rc != SQLITE_OK { throw database.error(code: rc) }
    }

    /// Runs the statement one step.
    /// - Returns: true when a row is ready to read, false when the statement is done.
    /// - Throws: `FlowStoreError` (constraint, busy, corrupt, disk full …).
    @discardableResult
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            // The statement's error is the connection's most recent one.
            let error = database.error(code: sqlite3_extended_errcode(sqlite3_db_handle(handle)))
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Rewinds the statement so it can run again and clears its bindings.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Rewinds the statement so it can run again, keeping its bindings: for a caller that binds
    /// every parameter again (clearing hundreds of bindings first is not free).
    public func rewind() {
        sqlite3_reset(handle)
    }

    /// Steps through every row, calling `body` with the statement positioned on each.
    /// - Throws: `FlowStoreError` from stepping, or what `body` throws.
    public func forEachRow(_ body: (SQLiteStatement) throws -> Void) throws {
        while try step() {
            try body(self)
        }
    }

    /// The number of columns in a result row.
    public var columnCount: Int32 { sqlite3_column_count(handle) }

    /// True when column `index` (0-based) of the current row is NULL.
    public func isNull(at index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    /// Column `index` as a 64-bit integer (0 for NULL).
    public func int64(at index: Int32) -> Int64 {
        sqlite3_column_int64(handle, index)
    }

    /// Column `index` as an integer, or nil for NULL.
    public func optionalInt64(at index: Int32) -> Int64? {
        isNull(at: index) ? nil : int64(at: index)
    }

    /// Column `index` as a double (0 for NULL).
    public func double(at index: Int32) -> Double {
        sqlite3_column_double(handle, index)
    }

    /// Column `index` as UTF-8 text, or nil for NULL.
    public func string(at index: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Column `index` as bytes, or nil for NULL (an empty blob reads as `[]`).
    public func blob(at index: Int32) -> [UInt8]? {
        if isNull(at: index) { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let base = sqlite3_column_blob(handle, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Column `index` in its stored class.
    public func value(at index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(int64(at: index))
        case SQLITE_FLOAT: return .real(double(at: index))
        case SQLITE_TEXT: return .text(string(at: index) ?? "")
        case SQLITE_BLOB: return .blob(blob(at: index) ?? [])
        default: return .null
        }
    }

    /// SQLITE_TRANSIENT: SQLite copies the bound bytes before the call returns. The C macro is a
    /// cast of -1 to a destructor pointer, which Swift cannot import.
    static var transient: sqlite3_destructor_type {
        unsafeBitCast(-1 as Int, to: sqlite3_destructor_type.self)
    }
}
