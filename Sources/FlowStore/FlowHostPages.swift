import FlowTerms
/// `tv flows --host TEXT`'s pages (`FlowHostWindows`): the names holding the text, then their
/// flows window by window, newest first.
extension FlowQuery {
    /// The SELECT for one window of a `--host` page over `names` (every filter and the cursor
    /// kept), asking for at most `rows` rows; with no window, the walk of `flows_by_start_time`
    /// (of `flows_by_status_time` with a status).
    /// - Throws: `FlowStoreError.badCursor` when `after` is not a cursor tv gave out.
    public func hostPlan(names: FlowNameMatches, window: Range<Int64>?, rows: Int) throws -> FlowQueryPlan {
        // In a window, the names' seeks bound the rows read; the status, program or audit
        // session index would not (a rare name's windows grow to the whole history, and with
        // them a range of, say, every failed flow). A unary + keeps SQLite from choosing them
        // (sqlite.org/optoverview.html §18, "Disqualifying WHERE clause terms using unary-+").
        // The status is in the name indexes (migrations 23, 24): a flow of another status is
        // skipped from the index entry, its row never read.
        var rest = self
        if window != nil { (rest.status, rest.program, rest.auditSession) = (nil, nil, nil) }
        var (conditions, bindings) = rest.filterConditions(textSearch: { FlowTextSearch.condition(names: names, window: window, text: $0) })
        if window != nil {
            let kept: [(String, SQLiteValue?)] = [("+program_command = ?", program.map { .text(ProgramIdentity.kernelCommand($0)) }),
                                                  ("+audit_session_id = ?", auditSession.map { .integer($0) }),
                                                  ("+status = ?", status.map { .text($0.rawValue) })]
            for case let (condition, value?) in kept {
                conditions.append(condition)
                bindings.append(value)
            }
        }
        if let after {
            let cursor = try FlowCursor(after)
            conditions.append("(start_time, id) < (?, ?)")
            bindings += [.integer(cursor.startTime), .integer(cursor.id)]
        }
        if let window {
            conditions += ["start_time >= ?", "start_time < ?"]
            bindings += [.integer(window.lowerBound), .integer(window.upperBound)]
        }
        bindings.append(.integer(Int64(max(rows, 1))))
        // The walk reads the status index when there is a status (only that status's flows
        // are read, newest first), else the time index.
        let walked = status == nil ? "flows_by_start_time" : "flows_by_status_time"
        let sql = "SELECT \(FlowRecordColumns.selectList) FROM flows" + (window == nil ? " INDEXED BY \(walked)" : "")
            + FlowQuery.whereClause(conditions)
            + " ORDER BY start_time DESC, id DESC LIMIT ?"
        return FlowQueryPlan(sql: sql, bindings: bindings, limit: effectiveLimit)
    }

    /// The conditions the bounded walk reads `flows_by_status_time` with: the status, the time
    /// filters and the cursor (what that index orders), and their bindings.
    private func walkedConditions() throws -> ([String], [SQLiteValue]) {
        var walked = FlowQuery(status: status, since: since, from: from, to: to)
        walked.after = after
        var (conditions, bindings) = walked.filterConditions()
        if let after {
            let cursor = try FlowCursor(after)
            conditions.append("(start_time, id) < (?, ?)")
            bindings += [.integer(cursor.startTime), .integer(cursor.id)]
        }
        return (conditions, bindings)
    }

    /// The bounded walk of a `--host TEXT --status S` page (`FlowHostWindows.walksFirst`): the
    /// newest `walking` entries of `flows_by_status_time` (status, time filters and cursor
    /// applied; the index alone, no row read), then those rows by id, keeping the flows of
    /// `names` and every other filter, newest first, at most `rows`. Every flow it can return
    /// is at or after where the walk stopped (`hostWalkEndPlan`), so windows carry on from there.
    /// - Throws: `FlowStoreError.badCursor` when `after` is not a cursor tv gave out.
    public func hostWalkPlan(names: FlowNameMatches, walking: Int, rows: Int) throws -> FlowQueryPlan {
        var (conditions, bindings) = filterConditions(textSearch: { FlowTextSearch.condition(names: names, window: nil, text: $0) })
        let (walkedConditions, walkedBindings) = try walkedConditions()
        // NOT INDEXED: the rows are fetched by id from the walk's list (rowid lookups stay
        // allowed; sqlite.org/lang_indexedby.html), never through a name or status index.
        conditions.append("id IN (SELECT id FROM flows INDEXED BY flows_by_status_time" + FlowQuery.whereClause(walkedConditions)
                          + " ORDER BY start_time DESC, id DESC LIMIT ?)")
        bindings += walkedBindings + [.integer(Int64(max(walking, 1))), .integer(Int64(max(rows, 1)))]
        let sql = "SELECT \(FlowRecordColumns.selectList) FROM flows NOT INDEXED" + FlowQuery.whereClause(conditions)
            + " ORDER BY start_time DESC, id DESC LIMIT ?"
        return FlowQueryPlan(sql: sql, bindings: bindings, limit: effectiveLimit)
    }

    /// Where `hostWalkPlan`'s walk of `walking` entries stopped: the start time and id of its
    /// last entry (read from the index alone), or no row when the walk read every entry there is.
    /// - Throws: `FlowStoreError.badCursor` when `after` is not a cursor tv gave out.
    public func hostWalkEndPlan(walking: Int) throws -> FlowQueryPlan {
        let (conditions, bindings) = try walkedConditions()
        let sql = "SELECT start_time, id FROM flows INDEXED BY flows_by_status_time" + FlowQuery.whereClause(conditions)
            + " ORDER BY start_time DESC, id DESC LIMIT 1 OFFSET ?"
        return FlowQueryPlan(sql: sql, bindings: bindings + [.integer(Int64(max(walking, 1) - 1))], limit: 1)
    }
}

extension FlowStore {
    /// The names (`flow_names`) holding `text`, by the column they were written in.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    public func names(holding text: String) throws -> FlowNameMatches {
        try connection.withDatabase { try FlowStore.names(holding: text, in: $0) }
    }

    static func names(holding text: String, in database: SQLiteDatabase) throws -> FlowNameMatches {
        let lookup = try database.prepare(FlowTextSearch.namesSQL(text))
        try lookup.bind([FlowTextSearch.match(text)])
        var found: [(name: String, columns: Int64)] = []
        try lookup.forEachRow { row in found.append((row.string(at: 0) ?? "", row.int64(at: 1))) }
        return FlowNameMatches(rows: found)
    }

    /// One page of flows matching `query`, whose `host` the trigram index answers: the names
    /// holding it, then `FlowHostWindows`' windows (or its walk) until the page and one row more
    /// are read; with a status, a bounded walk of `walking` entries of the status index first.
    /// - Throws: `FlowStoreError.badCursor`, or a read failure.
    /// (`walking` and `seeks`, a window's most seeks (`FlowHostWindows.mostWidth`), are a test's to change.)
    func hostPage(_ query: FlowQuery, text: String, walking: Int = FlowHostWindows.walkedEntries,
                  seeks: Int = FlowHostWindows.mostSeeks) throws -> FlowPage {
        try connection.withDatabase { database in
            if let after = query.after { _ = try FlowCursor(after) }
            let names = try FlowStore.names(holding: text, in: database)
            let limit = query.effectiveLimit
            var rows = FlowPageRows()
            guard names.lookups > 0 else { return rows.page(limit: limit) }
            guard FlowHostWindows.readsWindows(names) else {
                let plan = try query.hostPlan(names: names, window: nil, rows: limit + 1)
                let statement = try database.prepare(plan.sql)
                try statement.bind(plan.bindings)
                try rows.read(statement)
                return rows.page(limit: limit)
            }
            var windowed = query
            if FlowHostWindows.walksFirst(query) {
                // A bounded walk of the status's own index first; windows from where it stopped.
                let walk = try query.hostWalkPlan(names: names, walking: walking, rows: limit + 1)
                let statement = try database.prepare(walk.sql)
                try statement.bind(walk.bindings)
                try rows.read(statement)
                if rows.count > limit { return rows.page(limit: limit) }
                let end = try query.hostWalkEndPlan(walking: walking)
                let stop = try database.prepare(end.sql)
                try stop.bind(end.bindings)
                guard try stop.step() else { return rows.page(limit: limit) }
                windowed.after = FlowCursor(startTime: stop.int64(at: 0), id: stop.int64(at: 1)).string
            }
            guard case let .integer(oldest) = try database.scalar("SELECT min(start_time) FROM flows"),
                  case let .integer(newest) = try database.scalar("SELECT max(start_time) FROM flows") else {
                return rows.page(limit: limit)
            }
            var windows = try FlowHostWindows(query: windowed, oldest: oldest, newest: newest,
                                              mostWidth: FlowHostWindows.mostWidth(lookups: names.lookups, seeks: seeks))
            var statement: SQLiteStatement?
            while rows.count <= limit, let window = windows.next() {
                let plan = try windowed.hostPlan(names: names, window: window, rows: limit + 1 - rows.count)
                let round = try statement ?? database.prepare(plan.sql)
                statement = round
                try round.bind(plan.bindings)
                let before = rows.count
                try rows.read(round)
                windows.found(rows.count - before, missing: limit + 1 - rows.count)
            }
            return rows.page(limit: limit)
        }
    }
}
