import FlowTerms

/// The mapping between `ExchangeRecord` fields and `exchanges` columns, in one place so the
/// writer's upsert and every query agree on names and order. Public so other readers (filters,
/// exports) can select `selectList` in their own SQL and read rows with `record(from:)`.
public enum ExchangeColumns {
    /// Column names in binding / reading order; `id` first.
    public static let names: [String] = [
        "id", "flow_id", "seq", "stream_id", "http_version", "method", "scheme", "authority", "path",
        "query_removed", "status", "reason", "request_body_bytes", "request_wire_bytes",
        "response_body_bytes", "response_wire_bytes", "content_type", "content_encoding",
        "request_time", "response_time", "end_time", "upgrade", "connect", "state", "request_end_time",
    ]

    /// `names`' positions, for reading a row by column name (`CheckedRow`).
    static let columnIndex = ColumnIndex(names)

    /// `id, flow_id, …` for a SELECT list (prefix with a table alias yourself when joining).
    public static let selectList: String = names.joined(separator: ", ")

    /// `INSERT … ON CONFLICT(flow_id, seq) DO UPDATE SET every other column`: the first event of
    /// an exchange inserts its row (SQLite assigns `id`), later ones update it in place.
    static let upsertSQL: String = {
        let written = Array(names.dropFirst())
        let placeholders = Array(repeating: "?", count: written.count).joined(separator: ", ")
        let updates = written.dropFirst(2).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return "INSERT INTO exchanges (\(written.joined(separator: ", "))) VALUES (\(placeholders)) "
            + "ON CONFLICT(flow_id, seq) DO UPDATE SET \(updates)"
    }()

    /// `UPDATE exchanges SET every other column WHERE flow_id = ?1 AND seq = ?2 RETURNING id`,
    /// its parameters numbered as `upsertSQL`'s (so `write` binds either): the row of an exchange
    /// written before, changed in place. The upsert did that too, but under AUTOINCREMENT an
    /// INSERT that meets its conflict still moves the counter past the id it would have taken
    /// (SQLite: an upsert that updates bumps `sqlite_sequence`), so every later state of a row
    /// written open (a Server-Sent Events response's, streaming) skipped an id: a trial's
    /// request ids read 33, 35, and `tv request 34` said there was none.
    static let updateSQL: String = {
        let written = Array(names.dropFirst())
        let updates = written.enumerated().dropFirst(2).map { "\($0.element) = ?\($0.offset + 1)" }.joined(separator: ", ")
        return "UPDATE exchanges SET \(updates) WHERE flow_id = ?1 AND seq = ?2 RETURNING id"
    }()

    /// `exchange`'s values in `names` order (`id` first), for a writer that binds an array (the
    /// shared store's, `SharedExchangeRows`); the same values `write` binds one by one.
    static func bindings(_ exchange: ExchangeRecord) -> [SQLiteValue] {
        [.integer(exchange.id), .integer(exchange.flowID), .integer(Int64(exchange.sequence)), .integerOrNull(exchange.streamID),
         .text(exchange.httpVersion), .text(exchange.method), .textOrNull(exchange.scheme), .textOrNull(exchange.authority),
         .text(exchange.path), .integer(exchange.queryRemoved ? 1 : 0), .integerOrNull(exchange.status.map(Int64.init)),
         .textOrNull(exchange.reason), .integer(exchange.requestBodyBytes), .integer(exchange.requestWireBytes),
         .integerOrNull(exchange.responseBodyBytes), .integerOrNull(exchange.responseWireBytes),
         .textOrNull(exchange.contentType), .textOrNull(exchange.contentEncoding), .integer(exchange.requestTime),
         .integerOrNull(exchange.responseTime), .integerOrNull(exchange.endTime), .integer(exchange.upgrade ? 1 : 0),
         .integer(exchange.connect ? 1 : 0), .text(exchange.state.rawValue), .integerOrNull(exchange.requestEndTime)]
    }

    /// Binds `exchange` to `upsertSQL`'s parameters (`names` without `id`, in order) and runs it
    /// once: integers one by one, without building an array of values, texts through `texts`
    /// without a copy. The writer's path, once per row. The statement is rewound first; every
    /// parameter is bound again, so none is cleared (the texts stay bound to `texts`' buffer
    /// between rows: `SQLiteTextRow.stepRebindingEveryText`).
    /// - Throws: `FlowStoreError` when a value cannot be bound or the row cannot be written.
    /// - Returns: whether the statement gave a row (`updateSQL`'s: the row was there and changed).
    @discardableResult
    static func write(_ exchange: ExchangeRecord, with statement: SQLiteStatement, texts: inout SQLiteTextRow) throws -> Bool {
        statement.rewind()
        try statement.bind(integer: exchange.flowID, at: 1)
        try statement.bind(integer: Int64(exchange.sequence), at: 2)
        try statement.bind(optionalInteger: exchange.streamID, at: 3)
        texts.set(exchange.httpVersion, at: 4)
        texts.set(exchange.method, at: 5)
        texts.set(exchange.scheme, at: 6)
        texts.set(exchange.authority, at: 7)
        texts.set(exchange.path, at: 8)
        try statement.bind(integer: exchange.queryRemoved ? 1 : 0, at: 9)
        try statement.bind(optionalInteger: exchange.status.map(Int64.init), at: 10)
        texts.set(exchange.reason, at: 11)
        try statement.bind(integer: exchange.requestBodyBytes, at: 12)
        try statement.bind(integer: exchange.requestWireBytes, at: 13)
        try statement.bind(optionalInteger: exchange.responseBodyBytes, at: 14)
        try statement.bind(optionalInteger: exchange.responseWireBytes, at: 15)
        texts.set(exchange.contentType, at: 16)
        texts.set(exchange.contentEncoding, at: 17)
        try statement.bind(integer: exchange.requestTime, at: 18)
        try statement.bind(optionalInteger: exchange.responseTime, at: 19)
        try statement.bind(optionalInteger: exchange.endTime, at: 20)
        try statement.bind(integer: exchange.upgrade ? 1 : 0, at: 21)
        try statement.bind(integer: exchange.connect ? 1 : 0, at: 22)
        texts.set(exchange.state.rawValue, at: 23)
        try statement.bind(optionalInteger: exchange.requestEndTime, at: 24)
        return try texts.stepRebindingEveryText(statement)
    }

    /// Reads the current row of a statement that selected `selectList` (from its first column).
    /// - Throws: `DamagedRow` naming the first column that holds a value no writer writes.
    public static func record(from row: SQLiteStatement) throws(DamagedRow) -> ExchangeRecord {
        try record(names.indices.map { row.value(at: Int32($0)) })
    }

    /// The record `values` (in `names` order) hold. Pure.
    /// - Throws: `DamagedRow` naming the first column that holds a value no writer writes.
    public static func record(_ values: [SQLiteValue]) throws(DamagedRow) -> ExchangeRecord {
        let id: Int64
        if case let .integer(n) = values.first ?? .null { id = n } else { id = 0 }
        let r = CheckedRow(.exchange(id), columns: columnIndex, values: values)
        let count: ClosedRange<Int64> = 0...Int64.max
        return ExchangeRecord(
            id: try r.integer("id", in: 1...Int64.max),
            flowID: try r.integer("flow_id", in: 1...Int64.max),
            sequence: Int(try r.integer("seq", in: 1...Int64(Int32.max))),
            streamID: try r.optionalInteger("stream_id", in: 1...0x7fff_ffff),
            httpVersion: try r.text("http_version"),
            method: try r.text("method"),
            scheme: try r.optionalText("scheme"),
            authority: try r.optionalText("authority"),
            path: try r.text("path"),
            queryRemoved: try r.flag("query_removed"),
            status: try r.optionalInteger("status", in: 100...999).map { Int($0) },
            reason: try r.optionalText("reason"),
            requestBodyBytes: try r.integer("request_body_bytes", in: count),
            requestWireBytes: try r.integer("request_wire_bytes", in: count),
            responseBodyBytes: try r.optionalInteger("response_body_bytes", in: count),
            responseWireBytes: try r.optionalInteger("response_wire_bytes", in: count),
            contentType: try r.optionalText("content_type"),
            contentEncoding: try r.optionalText("content_encoding"),
            requestTime: try r.integer("request_time", in: count),
            responseTime: try r.optionalInteger("response_time", in: count),
            endTime: try r.optionalInteger("end_time", in: count),
            upgrade: try r.flag("upgrade"),
            connect: try r.flag("connect"),
            state: try r.known(ExchangeState.self, "state"),
            requestEndTime: try r.optionalInteger("request_end_time", in: count)
        )
    }
}
