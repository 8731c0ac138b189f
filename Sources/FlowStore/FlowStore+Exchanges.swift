import FlowTerms

/// Reading the exchanges the flow writer wrote from `FlowEvent.exchange`: rows of `exchanges`
/// and packed runs of `exchange_runs`, as one list (`StoredExchanges`).
extension FlowStore {
    /// One page of exchanges matching `query`, newest first (request time, then id, descending).
    /// - Returns: at most `query.effectiveLimit` exchanges and the next page's cursor (nil at the end).
    /// - Throws: `FlowStoreError.badCursor` for a cursor tv did not give out, or a read failure.
    public func exchanges(_ query: ExchangeQuery) throws -> ExchangePage {
        try connection.withDatabase { try StoredExchanges.page(query, in: $0) }
    }

    /// The exchange with `id`, or nil when there is none.
    /// - Throws: `FlowStoreError` when the database cannot be read, `.damagedRow` for a damaged row.
    public func exchange(id: Int64) throws -> ExchangeRecord? {
        try connection.withDatabase { try StoredExchanges.exchange(id: id, in: $0) }
    }

    /// The largest request id given out so far (`exchanges`' AUTOINCREMENT counter, which also
    /// gives the packed runs theirs), 0 when none was.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func highestExchangeID() throws -> Int64 {
        try connection.withDatabase { database in
            guard case let .integer(seq) = try database.scalar("SELECT seq FROM sqlite_sequence WHERE name = 'exchanges'") else { return 0 }
            return seq
        }
    }

    /// Every exchange of flow `flowID` in request order (`seq`), damaged rows left out and
    /// returned beside them.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func exchanges(ofFlow flowID: Int64) throws -> (exchanges: [ExchangeRecord], damaged: [DamagedRow]) {
        try connection.withDatabase { try StoredExchanges.ofFlow(flowID, in: $0) }
    }

    /// The first `limit` exchanges of flow `flowID` in request order (`seq`), damaged rows
    /// beside them, and how many exchanges the flow has in all.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func exchanges(ofFlow flowID: Int64, first limit: Int) throws -> (exchanges: [ExchangeRecord], damaged: [DamagedRow], total: Int) {
        try connection.withDatabase { try StoredExchanges.firstOfFlow(flowID, limit: limit, in: $0) }
    }
}

extension FlowStore {
    /// Of the flows `ids`, those whose connections had requests counted and not written
    /// (`FlowRecord.requestsLeftOut`), with how many, by flow id (ids with no flow row are
    /// left out): what a list of request rows says it lacks (`tv requests`, `tv export har`).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func requestsLeftOut(flows ids: some Sequence<Int64>) throws -> [(flow: Int64, count: Int64)] {
        let distinct = Array(Set(ids)).sorted()
        var found: [(flow: Int64, count: Int64)] = []
        // 500 ids a statement, well inside SQLite's bound on variables (999 before 3.32).
        for start in stride(from: 0, to: distinct.count, by: 500) {
            let chunk = distinct[start..<min(start + 500, distinct.count)]
            try connection.withDatabase { database in
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                let statement = try database.prepare(
                    "SELECT id, requests_left_out FROM flows WHERE id IN (\(marks)) AND requests_left_out > 0 ORDER BY id")
                try statement.bind(chunk.map { .integer($0) })
                while try statement.step() { found.append((statement.int64(at: 0), statement.int64(at: 1))) }
            }
        }
        return found
    }
}
