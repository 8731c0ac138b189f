import FlowTerms

/// Which exchanges to list: filters, a page size and a keyset cursor, newest first. A pure
/// value; `plan()` turns it into SQL and bindings without touching a database.
///
/// The cursor is a `FlowCursor` over (request_time, id) (the same opaque text form `tv flows`
/// pages with).
public struct ExchangeQuery: Sendable, Equatable {
    /// Only exchanges of this flow.
    public var flowID: Int64?
    /// Only exchanges whose request started at or after this time (µs since the epoch).
    public var from: Int64?
    /// Only exchanges whose request started before this time (µs since the epoch), exclusive.
    public var to: Int64?
    /// Rows per page; clamped to 1…`FlowQuery.maximumLimit` (default `FlowQuery.defaultLimit`).
    public var limit: Int
    /// The previous page's `ExchangePage.nextCursor`; nil for the first (newest) page.
    public var after: String?

    /// A query; every filter left nil matches all exchanges.
    public init(flowID: Int64? = nil, from: Int64? = nil, to: Int64? = nil, limit: Int = FlowQuery.defaultLimit,
                after: String? = nil) {
        self.flowID = flowID
        self.from = from
        self.to = to
        self.limit = limit
        self.after = after
    }

    /// `limit` clamped to 1…`FlowQuery.maximumLimit`.
    public var effectiveLimit: Int { min(max(limit, 1), FlowQuery.maximumLimit) }

    /// The SELECT for one page (one row more than the page, to learn whether another follows).
    /// - Throws: `FlowStoreError.badCursor` when `after` is not a cursor tv gave out.
    /// - Parameters:
    ///   - narrowing: more conditions (ANDed), with their bindings in `extra` (the shared
    ///     store's instance).
    ///   - selectList: the columns read (the shared store's adds the instance's).
    public func plan(narrowing: [String] = [], _ extra: [SQLiteValue] = [],
                     selectList: String = ExchangeColumns.selectList) throws -> FlowQueryPlan {
        var conditions: [String] = narrowing
        var bindings: [SQLiteValue] = extra
        if let flowID {
            conditions.append("flow_id = ?")
            bindings.append(.integer(flowID))
        }
        if let from {
            conditions.append("request_time >= ?")
            bindings.append(.integer(from))
        }
        if let to {
            conditions.append("request_time < ?")
            bindings.append(.integer(to))
        }
        if let after {
            let cursor = try FlowCursor(after)
            conditions.append("(request_time, id) < (?, ?)")
            bindings += [.integer(cursor.startTime), .integer(cursor.id)]
        }
        let limit = effectiveLimit
        bindings.append(.integer(Int64(limit + 1)))
        let sql = "SELECT \(selectList) FROM exchanges"
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + " ORDER BY request_time DESC, id DESC LIMIT ?"
        return FlowQueryPlan(sql: sql, bindings: bindings, limit: limit)
    }
}

/// One page of exchanges, newest first, and the cursor for the page after it.
public struct ExchangePage: Sendable, Equatable {
    /// At most the query's limit, ordered by request time then id, both descending.
    public var exchanges: [ExchangeRecord]
    /// The text to pass as `ExchangeQuery.after` for the next page; nil when this page is the last.
    public var nextCursor: String?
    /// Rows of this page left out because they hold values no writer writes.
    public var damaged: [DamagedRow] = []
    /// The instance that saw each row, by request id (the shared store's pages; empty for
    /// this data folder's).
    public var instances: [Int64: InstanceIdentity] = [:]

    /// A page of `exchanges` and the cursor of the next one (nil when none follows).
    public init(exchanges: [ExchangeRecord], nextCursor: String?) {
        self.exchanges = exchanges
        self.nextCursor = nextCursor
    }
}
