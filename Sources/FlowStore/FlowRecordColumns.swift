import FlowTerms

/// The mapping between `FlowRecord` fields and `flows` columns, kept in one place so the writer's
/// upsert and every query agree on names and order.
enum FlowRecordColumns {
    /// Column names in binding / reading order; `id` first.
    static let names: [String] = [
        "id", "start_time", "last_activity_time",
        "client_address", "client_port", "server_address", "server_port", "transport",
        "host", "host_origin", "alpn", "tls_version", "status", "failure_reason",
        "bytes_up", "bytes_down", "duration", "error",
        "client_versions", "client_alpn", "chosen_version_source",
        "cert_subject", "cert_issuer", "cert_sans", "cert_not_before", "cert_not_after", "cert_sha256",
        "packets_up", "packets_down", "client_tls_version",
        "other_hosts", "ech_public_name", "chain", "cert_verified", "cert_problem",
        "dns_type", "dns_asked", "dns_asked_address", "other_hosts_origin", "requests_left_out",
    ]

    /// The names a row read by `record` holds (`names`, then the program's), with their positions.
    static let columnIndex = ColumnIndex(names + FlowProgramColumns.names)

    /// `id, start_time, …` for a SELECT list, then the program's columns (`FlowProgramColumns`,
    /// which the upsert never writes).
    static let selectList: String = (names + FlowProgramColumns.names).joined(separator: ", ")

    /// `FlowEvent.program`'s statement and values (the flow's id is bound last).
    static let programUpdateSQL = FlowProgramColumns.updateSQL
    static func programBindings(_ program: FlowProgram) -> [SQLiteValue] { FlowProgramColumns.bindings(program) }

    /// `INSERT … ON CONFLICT(id) DO UPDATE SET every other column`: one statement that both opens
    /// and updates a flow, so an update whose open was dropped still lands whole.
    /// The last column, `writer`, is the writing `FlowWriter`'s id (not a `FlowRecord` field).
    static let upsertSQL: String = upsertSQL(program: false)

    /// `upsertSQL`, with the program's columns (`FlowProgramColumns.names`) after `writer`, for
    /// a flow whose program arrived in the same batch as its record: one row write instead of
    /// the upsert and then `programUpdateSQL` (each rewrote the row and its indexes).
    static let upsertWithProgramSQL: String = upsertSQL(program: true)

    private static func upsertSQL(program: Bool) -> String {
        let written = names + ["writer"] + (program ? FlowProgramColumns.names : [])
        let placeholders = Array(repeating: "?", count: written.count).joined(separator: ", ")
        let updates = written.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        // `audit_session_id` (i21-audit) is set on insert from the live audit session and never
        // updated: a flow belongs to the session that was recording when it was first written.
        // It is the last parameter, bound by the writer from `LiveAuditSession` read once per
        // batch (inside its write transaction nothing else can start or end a session), not a
        // subquery run again for every row (~1.1 k instructions a flow, callgrind, i27-hist).
        //
        // `OR FAIL`: a row that breaks a constraint (NOT NULL) ends the statement with an error,
        // and the writer's ROLLBACK of the whole batch undoes it. With the default (`ABORT`)
        // SQLite must be able to undo the statement alone, so the upsert's update path (a row
        // rewritten with its indexes) kept a statement journal, every page it changed copied
        // first (replaying 3,200 rewrites into a 100,000-flow file without triggers,
        // temp_store=FILE, strace: 6,943 journal page writes; with OR FAIL, 0; i27-hist).
        return "INSERT OR FAIL INTO flows (\(written.joined(separator: ", ")), audit_session_id) VALUES (\(placeholders), ?) "
            + "ON CONFLICT(id) DO UPDATE SET \(updates)"
    }

    /// The record's values in `names` order, then `writer` (the id of the writer writing it).
    static func bindings(_ flow: FlowRecord, writer: Int64) -> [SQLiteValue] {
        [
            .integer(flow.id), .integer(flow.startTime), .integer(flow.lastActivityTime),
            .text(flow.clientAddress), .integer(Int64(flow.clientPort)),
            .text(flow.serverAddress), .integer(Int64(flow.serverPort)), .text(flow.transport.rawValue),
            .textOrNull(flow.host), .text(flow.hostOrigin.rawValue), .textOrNull(flow.alpn),
            .textOrNull(flow.tlsVersion), .text(flow.status.rawValue), .textOrNull(flow.failureReason),
            .integer(flow.bytesUp), .integer(flow.bytesDown), .integerOrNull(flow.duration),
            .textOrNull(flow.error),
            .text(TextList.encode(flow.clientVersions)), .text(TextList.encode(flow.clientALPN)),
            .textOrNull(flow.chosenVersionSource),
            .textOrNull(flow.certificateSubject), .textOrNull(flow.certificateIssuer),
            .text(TextList.encode(flow.certificateSANs)),
            .integerOrNull(flow.certificateNotBefore), .integerOrNull(flow.certificateNotAfter),
            .textOrNull(flow.certificateSHA256),
            .integerOrNull(flow.packetsUp), .integerOrNull(flow.packetsDown),
            .textOrNull(flow.clientTLSVersion),
            .text(TextList.encode(flow.otherHosts)), .integer(flow.hostIsECHPublicName ? 1 : 0),
            .text(flow.certificateChain.joined(separator: " ")),
            .integerOrNull(flow.certificateVerified.map { $0 ? 1 : 0 }), .textOrNull(flow.certificateProblem),
            .integerOrNull(flow.dnsQuestionType.map(Int64.init)), .textOrNull(flow.dnsServerAsked?.rawValue),
            .textOrNull(flow.dnsAskedAddress), .textOrNull(flow.otherHostsOrigin?.rawValue),
            .integerOrNull(flow.requestsLeftOut),
            .integer(writer),
        ]
    }

    /// Binds `flow` (then `writer`, then `program`'s columns when given, then `auditSession`) to `upsertSQL`'s or
    /// `upsertWithProgramSQL`'s parameters, in `bindings`' order, and runs it once: integers one
    /// by one and texts through `texts` without a copy (`SQLiteTextRow.stepRebindingEveryText`:
    /// every text parameter is set before each step), so no array of values is built. The
    /// writer's path, once per flow; `bindings` stays for the writers that bind arrays.
    /// - Throws: `FlowStoreError` when a value cannot be bound or the row cannot be written.
    static func write(_ flow: FlowRecord, writer: Int64, program: FlowProgram?, auditSession: Int64?,
                      with statement: SQLiteStatement, texts: inout SQLiteTextRow) throws {
        statement.rewind()
        try statement.bind(integer: flow.id, at: 1)
        try statement.bind(integer: flow.startTime, at: 2)
        try statement.bind(integer: flow.lastActivityTime, at: 3)
        texts.set(flow.clientAddress, at: 4)
        try statement.bind(integer: Int64(flow.clientPort), at: 5)
        texts.set(flow.serverAddress, at: 6)
        try statement.bind(integer: Int64(flow.serverPort), at: 7)
        texts.set(flow.transport.rawValue, at: 8)
        texts.set(flow.host, at: 9)
        texts.set(flow.hostOrigin.rawValue, at: 10)
        texts.set(flow.alpn, at: 11)
        texts.set(flow.tlsVersion, at: 12)
        texts.set(flow.status.rawValue, at: 13)
        texts.set(flow.failureReason, at: 14)
        try statement.bind(integer: flow.bytesUp, at: 15)
        try statement.bind(integer: flow.bytesDown, at: 16)
        try statement.bind(optionalInteger: flow.duration, at: 17)
        texts.set(flow.error, at: 18)
        texts.set(list: flow.clientVersions, at: 19)
        texts.set(list: flow.clientALPN, at: 20)
        texts.set(flow.chosenVersionSource, at: 21)
        texts.set(flow.certificateSubject, at: 22)
        texts.set(flow.certificateIssuer, at: 23)
        texts.set(list: flow.certificateSANs, at: 24)
        try statement.bind(optionalInteger: flow.certificateNotBefore, at: 25)
        try statement.bind(optionalInteger: flow.certificateNotAfter, at: 26)
        texts.set(flow.certificateSHA256, at: 27)
        try statement.bind(optionalInteger: flow.packetsUp, at: 28)
        try statement.bind(optionalInteger: flow.packetsDown, at: 29)
        texts.set(flow.clientTLSVersion, at: 30)
        texts.set(list: flow.otherHosts, at: 31)
        try statement.bind(integer: flow.hostIsECHPublicName ? 1 : 0, at: 32)
        texts.set(words: flow.certificateChain, at: 33)
        try statement.bind(optionalInteger: flow.certificateVerified.map { $0 ? 1 : 0 }, at: 34)
        texts.set(flow.certificateProblem, at: 35)
        try statement.bind(optionalInteger: flow.dnsQuestionType.map(Int64.init), at: 36)
        texts.set(flow.dnsServerAsked?.rawValue, at: 37)
        texts.set(flow.dnsAskedAddress, at: 38)
        texts.set(flow.otherHostsOrigin?.rawValue, at: 39)
        try statement.bind(optionalInteger: flow.requestsLeftOut, at: 40)
        try statement.bind(integer: writer, at: 41)
        switch program {
        case .known(let p)?:
            try statement.bind(integer: Int64(p.pid), at: 42)
            texts.set(p.command, at: 43)
            texts.set(p.executable, at: 44)
            try statement.bind(integer: Int64(p.uid), at: 45)
            texts.set(p.user, at: 46)
            texts.set(nil, at: 47)
        case .notKnown(let reason)?:
            for index: Int32 in 42...45 { try statement.bind(optionalInteger: nil, at: index) }
            texts.set(nil, at: 46)
            texts.set(reason.rawValue, at: 47)
        case nil:
            break
        }
        try statement.bind(optionalInteger: auditSession, at: program == nil ? 42 : 48)
        _ = try texts.stepRebindingEveryText(statement)
    }

    /// Reads the current row of a statement that selected `selectList`, checking every value
    /// against what a writer writes.
    /// - Throws: `DamagedRow` naming the first column that holds a value no writer writes.
    static func record(from row: SQLiteStatement) throws(DamagedRow) -> FlowRecord {
        try record(columnIndex.names.indices.map { row.value(at: Int32($0)) })
    }

    /// The record `values` (in `names` order, then `FlowProgramColumns.names`; missing program
    /// values read as NULL) hold. Pure.
    /// - Throws: `DamagedRow` naming the first column that holds a value no writer writes.
    static func record(_ values: [SQLiteValue]) throws(DamagedRow) -> FlowRecord {
        let id: Int64
        if case let .integer(n) = values.first ?? .null { id = n } else { id = 0 }
        let r = CheckedRow(.flow(id), columns: columnIndex, values: values)
        let port: ClosedRange<Int64> = 0...65_535
        let count: ClosedRange<Int64> = 0...Int64.max
        var record = FlowRecord(
            id: try r.integer("id", in: 1...Int64.max),
            startTime: try r.integer("start_time", in: count),
            lastActivityTime: try r.integer("last_activity_time", in: count),
            clientAddress: try r.text("client_address"),
            clientPort: Int(try r.integer("client_port", in: port)),
            serverAddress: try r.text("server_address"),
            serverPort: Int(try r.integer("server_port", in: port)),
            transport: try r.known(FlowTransport.self, "transport"),
            host: try r.optionalText("host"),
            hostOrigin: try r.known(HostOrigin.self, "host_origin"),
            alpn: try r.optionalText("alpn"),
            tlsVersion: try r.optionalText("tls_version"),
            status: try r.known(FlowStatus.self, "status"),
            failureReason: try r.optionalText("failure_reason"),
            bytesUp: try r.integer("bytes_up", in: count),
            bytesDown: try r.integer("bytes_down", in: count),
            duration: try r.optionalInteger("duration", in: count),
            error: try r.optionalText("error"),
            clientVersions: TextList.decode(try r.text("client_versions")),
            clientALPN: TextList.decode(try r.text("client_alpn")),
            chosenVersionSource: try r.optionalText("chosen_version_source"),
            certificateSubject: try r.optionalText("cert_subject"),
            certificateIssuer: try r.optionalText("cert_issuer"),
            certificateSANs: TextList.decode(try r.text("cert_sans")),
            certificateNotBefore: try r.optionalInteger("cert_not_before"),
            certificateNotAfter: try r.optionalInteger("cert_not_after"),
            certificateSHA256: try r.optionalText("cert_sha256"),
            packetsUp: try r.optionalInteger("packets_up", in: count),
            packetsDown: try r.optionalInteger("packets_down", in: count),
            clientTLSVersion: try r.optionalText("client_tls_version"),
            program: try FlowProgramColumns.program(r)
        )
        record.otherHosts = TextList.decode(try r.text("other_hosts"))
        record.hostIsECHPublicName = try r.integer("ech_public_name", in: 0...1) == 1
        record.certificateChain = try r.text("chain").split(separator: " ").map(String.init)
        record.certificateVerified = try r.optionalInteger("cert_verified", in: 0...1).map { $0 == 1 }
        record.certificateProblem = try r.optionalText("cert_problem")
        record.dnsQuestionType = try r.optionalInteger("dns_type", in: 0...65_535).map(Int.init)
        record.dnsServerAsked = try r.optionalKnown(DNSServerAsked.self, "dns_asked")
        record.dnsAskedAddress = try r.optionalText("dns_asked_address")
        record.otherHostsOrigin = try r.optionalKnown(OtherHostsOrigin.self, "other_hosts_origin")
        record.requestsLeftOut = try r.optionalInteger("requests_left_out", in: 1...Int64.max)
        return record
    }
}
