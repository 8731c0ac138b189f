import FlowTerms

/// A page of exchanges gathered from two places, newest first (pure): the rows' own page (the
/// newest `size` rows, exact for that table) and runs read in order of their latest request
/// time. A run whose latest request is at `t` cannot place an exchange above one requested after
/// `t`, so once `size` gathered exchanges are newer than the next run's latest, no later run can
/// change the page.
struct ExchangePageMerge {
    /// The page's rows and one more (whether another page follows).
    let size: Int
    /// The newest `size` gathered so far, newest first (request time, then id, descending).
    private(set) var newestFirst: [StoredExchanges.Found] = []

    init(size: Int) { self.size = max(size, 1) }

    /// Gathers `found`; keeps only the newest `size`.
    mutating func add(_ found: StoredExchanges.Found) {
        let key = (found.key.startTime, found.key.id)
        if newestFirst.count == size, let last = newestFirst.last, key <= (last.key.startTime, last.key.id) { return }
        let at = newestFirst.firstIndex { key > ($0.key.startTime, $0.key.id) } ?? newestFirst.count
        newestFirst.insert(found, at: at)
        if newestFirst.count > size { newestFirst.removeLast() }
    }

    /// Whether a run whose latest request time is `latest` (µs) can still change the page.
    func needs(runUpTo latest: Int64) -> Bool {
        guard newestFirst.count == size, let last = newestFirst.last else { return true }
        return last.key.startTime <= latest
    }
}

/// The runs side of `ExchangeQuery` (migration 22's `exchange_runs`).
extension ExchangeQuery {
    /// Which request times and ids a page admits: `from`/`to` and the cursor (pure).
    struct Window {
        var from: Int64?
        var to: Int64?
        var before: FlowCursor?

        /// Whether an exchange keyed (request time, id) belongs in the page.
        func admits(_ key: FlowCursor) -> Bool {
            if let from, key.startTime < from { return false }
            if let to, key.startTime >= to { return false }
            if let before, (key.startTime, key.id) >= (before.startTime, before.id) { return false }
            return true
        }
    }

    /// The query's window.
    /// - Throws: `FlowStoreError.badCursor` when `after` is not a cursor tv gave out.
    func window() throws -> Window {
        Window(from: from, to: to, before: try after.map { try FlowCursor($0) })
    }

    /// The SELECT of the runs that can hold an exchange of the page, latest request first. A
    /// run spans at most `ExchangeRunCoding.span`, so its latest request time bounds where its
    /// earliest can be (the index range starts there). No LIMIT: the reader stops stepping when
    /// `ExchangePageMerge` needs no more.
    /// - Throws: `FlowStoreError.badCursor` when `after` is not a cursor tv gave out.
    func runPlan() throws -> FlowQueryPlan {
        var conditions: [String] = []
        var bindings: [SQLiteValue] = []
        if let flowID {
            conditions.append("flow_id = ?")
            bindings.append(.integer(flowID))
        }
        if let from {
            conditions.append("last_request_time >= ?")
            bindings.append(.integer(from))
        }
        if let to {
            conditions.append("first_request_time < ? AND last_request_time < ?")
            bindings += [.integer(to), .integer(to &+ ExchangeRunCoding.span)]
        }
        if let after {
            let cursor = try FlowCursor(after)
            conditions.append("first_request_time <= ? AND last_request_time <= ?")
            bindings += [.integer(cursor.startTime), .integer(cursor.startTime &+ ExchangeRunCoding.span)]
        }
        let sql = "SELECT \(StoredExchanges.runColumns) FROM exchange_runs"
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + " ORDER BY last_request_time DESC"
        return FlowQueryPlan(sql: sql, bindings: bindings, limit: effectiveLimit)
    }
}
