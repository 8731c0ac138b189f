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
        "packets_up", "packets_down",
    ]

    /// `id, start_time, …` for a SELECT list.
    static let selectList: String = names.joined(separator: ", ")

    /// `INSERT … ON CONFLICT(id) DO UPDATE SET every other column`: one statement that both opens
    /// and updates a flow, so an update whose open was dropped still lands whole.
    static let upsertSQL: String = {
        let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
        let updates = names.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return "INSERT INTO flows (\(selectList)) VALUES (\(placeholders)) ON CONFLICT(id) DO UPDATE SET \(updates)"
    }()

    /// The record's values in `names` order.
    static func bindings(_ flow: FlowRecord) -> [SQLiteValue] {
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
        ]
    }

    /// Reads the current row of a statement that selected `selectList`.
    /// - Throws: `FlowStoreError.corrupt` when a status, transport or origin is not one this code knows.
    static func record(from row: SQLiteStatement, path: String) throws -> FlowRecord {
        let id = row.int64(at: 0)
        func known<T: RawRepresentable<String>>(_ type: T.Type, at index: Int32) throws -> T {
            let text = row.string(at: index) ?? ""
            guard let value = T(rawValue: text) else {
                throw FlowStoreError.corrupt(path: path, reason: "flow \(id) has \(names[Int(index)]) '\(text)'")
            }
            return value
        }
        return FlowRecord(
            id: id,
            startTime: row.int64(at: 1),
            lastActivityTime: row.int64(at: 2),
            clientAddress: row.string(at: 3) ?? "",
            clientPort: Int(row.int64(at: 4)),
            serverAddress: row.string(at: 5) ?? "",
            serverPort: Int(row.int64(at: 6)),
            transport: try known(FlowTransport.self, at: 7),
            host: row.string(at: 8),
            hostOrigin: try known(HostOrigin.self, at: 9),
            alpn: row.string(at: 10),
            tlsVersion: row.string(at: 11),
            status: try known(FlowStatus.self, at: 12),
            failureReason: row.string(at: 13),
            bytesUp: row.int64(at: 14),
            bytesDown: row.int64(at: 15),
            duration: row.optionalInt64(at: 16),
            error: row.string(at: 17),
            clientVersions: TextList.decode(row.string(at: 18) ?? ""),
            clientALPN: TextList.decode(row.string(at: 19) ?? ""),
            chosenVersionSource: row.string(at: 20),
            certificateSubject: row.string(at: 21),
            certificateIssuer: row.string(at: 22),
            certificateSANs: TextList.decode(row.string(at: 23) ?? ""),
            certificateNotBefore: row.optionalInt64(at: 24),
            certificateNotAfter: row.optionalInt64(at: 25),
            certificateSHA256: row.string(at: 26),
            packetsUp: row.optionalInt64(at: 27),
            packetsDown: row.optionalInt64(at: 28)
        )
    }
}
