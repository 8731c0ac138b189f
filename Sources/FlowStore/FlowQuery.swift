import FlowTerms

/// Which flows to list: filters, a page size and a keyset cursor. A pure value; `plan()` turns it
/// into SQL and bindings without touching a database.
public struct FlowQuery: Sendable, Equatable {
    /// The page size used when none is given.
    public static let defaultLimit = 50
    /// The largest page size honoured; larger values are cut to it.
    public static let maximumLimit = 10_000

    /// Case-insensitive (ASCII) substring of the host name, the other names the server address
    /// had (`other_hosts`, a name inferred from DNS), the server address or the client address,
    /// found through the names' trigram index (`FlowTextSearch`; pages: `FlowHostWindows`).
    public var host: String?
    /// Only flows with this status (`flows_by_status_time`).
    public var status: FlowStatus?
    /// Only flows that started at or after this time (µs); what `--since 1h` resolves to.
    public var since: Int64?
    /// Only flows that started at or after this time (µs); with `to`, a half-open window.
    public var from: Int64?
    /// Only flows that started before this time (µs), exclusive.
    public var to: Int64?
    /// Rows per page; clamped to 1…`maximumLimit` (default `defaultLimit`).
    public var limit: Int
    /// The previous page's `FlowPage.nextCursor`; nil for the first (newest) page.
    public var after: String?
    /// Only flows whose program's command name is exactly this (`curl`; the index
    /// `flows_by_program`).
    public var program: String?
    /// Only flows of this audit session (`flows_by_audit_session`; i21-audit).
    public var auditSession: Int64?

    /// A query; every filter left nil matches all flows. Times are µs since the epoch.
    public init(host: String? = nil, status: FlowStatus? = nil, since: Int64? = nil, from: Int64? = nil,
                to: Int64? = nil, limit: Int = FlowQuery.defaultLimit, after: String? = nil, program: String? = nil) {
        self.program = program
        self.host = host
        self.status = status
        self.since = since
        self.from = from
        self.to = to
        self.limit = limit
        self.after = after
    }

    /// `limit` clamped to 1…`maximumLimit`.
    public var effectiveLimit: Int {
        min(max(limit, 1), FlowQuery.maximumLimit)
    }

    /// The SELECT for one page. It asks for one row more than the page so the caller learns
    /// whether another page follows without a second query.
    /// - Throws: `FlowStoreError.badCursor` when `after` is not a cursor tv gave out.
    public func plan() throws -> FlowQueryPlan {
        var (conditions, bindings) = filterConditions()
        if let after {
            let cursor = try FlowCursor(after)
            conditions.append("(start_time, id) < (?, ?)")
            bindings += [.integer(cursor.startTime), .integer(cursor.id)]
        }
        let limit = effectiveLimit
        bindings.append(.integer(Int64(limit + 1)))
        let sql = "SELECT \(FlowRecordColumns.selectList) FROM flows"
            + FlowQuery.whereClause(conditions)
            + " ORDER BY start_time DESC, id DESC LIMIT ?"
        return FlowQueryPlan(sql: sql, bindings: bindings, limit: limit)
    }

    /// `SELECT count(*)` of every flow the filters match; `after` and `limit` are ignored.
    public func countPlan() -> FlowQueryPlan {
        let (conditions, bindings) = filterConditions()
        let sql = "SELECT count(*) FROM flows" + FlowQuery.whereClause(conditions)
        return FlowQueryPlan(sql: sql, bindings: bindings, limit: 1)
    }

    /// The filters' WHERE conditions and their bindings (also `FlowStore.follow`'s).
    /// - Parameter textSearch: `--host`'s condition; nil: SQLite's (`FlowTextSearch.condition`),
    ///   reading the days from the `since` / `from` filter's on.
    func filterConditions(textSearch: ((String) -> (String, [SQLiteValue]))? = nil) -> ([String], [SQLiteValue]) {
        var conditions: [String] = []
        var bindings: [SQLiteValue] = []
        if let host, !host.isEmpty {
            let lower = [since, from].compactMap { $0 }.max()
            let (condition, values) = textSearch?(host) ?? FlowTextSearch.condition(host, from: lower)
            conditions.append(condition)
            bindings += values
        }
        if let program {
            // Cut to what the kernel keeps, which no longer name can be (`--program
            // a-very-long-program-name` found nothing: a trial). One value: the index still orders.
            conditions.append("program_command = ?")
            bindings.append(.text(ProgramIdentity.kernelCommand(program)))
        }
        if let auditSession {
            conditions.append("audit_session_id = ?")
            bindings.append(.integer(auditSession))
        }
        if let status {
            conditions.append("status = ?")
            bindings.append(.text(status.rawValue))
        }
        if let since {
            conditions.append("start_time >= ?")
            bindings.append(.integer(since))
        }
        if let from {
            conditions.append("start_time >= ?")
            bindings.append(.integer(from))
        }
        if let to {
            conditions.append("start_time < ?")
            bindings.append(.integer(to))
        }
        return (conditions, bindings)
    }

    static func whereClause(_ conditions: [String]) -> String {
        conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
    }

    /// Escapes LIKE's wildcards so `a_b%` matches itself: `\` before `\`, `%` and `_`.
    static func escapeLike(_ text: String) -> String {
        var out = ""
        for character in text {
            if character == "\\" || character == "%" || character == "_" { out.append("\\") }
            out.append(character)
        }
        return out
    }
}

/// SQL and its bindings, as `FlowQuery` planned them.
public struct FlowQueryPlan: Sendable, Equatable {
    /// The statement, with `?` parameters.
    public var sql: String
    /// The values for the parameters, in order.
    public var bindings: [SQLiteValue]
    /// The page size the caller shows (the SQL asks for one more).
    public var limit: Int
}
