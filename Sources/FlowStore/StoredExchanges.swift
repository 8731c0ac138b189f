import FlowTerms

/// Reading exchanges where the flow writer keeps them (migration 22): rows of `exchanges`
/// (open ones, ones whose open row was written, and every row from before) and packed runs of
/// `exchange_runs` (`ExchangeRunCoding`). Every reader of this data folder's exchanges goes
/// through here, so the two places read as one list.
public enum StoredExchanges {
    /// `exchange_runs`' columns in reading and binding order.
    static let runColumns = "first_id, flow_id, exchange_count, first_request_time, last_request_time, exchanges"

    /// One read exchange (or the damage found in its place) and its page key.
    typealias Found = (key: FlowCursor, exchange: Result<ExchangeRecord, DamagedRow>)

    /// The exchanges of the run the statement is on (selected `runColumns`): each one, or its
    /// damage; a run whose bytes do not read is one damaged entry keyed by its latest time.
    static func run(_ row: SQLiteStatement) -> [Found] {
        let firstID = row.int64(at: 0)
        let bytes = row.blob(at: 5) ?? []
        do throws(ExchangeRunCoding.Malformed) {
            let values = try ExchangeRunCoding.values(bytes, firstID: firstID, flowID: row.int64(at: 1),
                                                      count: Int(clamping: row.int64(at: 2)))
            return values.map { values in
                let key = FlowCursor(startTime: values[18].integerValue ?? 0, id: values[0].integerValue ?? 0)
                do throws(DamagedRow) {
                    return (key, .success(try ExchangeColumns.record(values)))
                } catch {
                    return (key, .failure(error))
                }
            }
        } catch {
            let damage = DamagedRow(row: "exchange run \(firstID)", column: "exchanges (byte \(error.offset))", value: .blob(bytes))
            return [(FlowCursor(startTime: row.int64(at: 4), id: firstID), .failure(damage))]
        }
    }

    /// One row of `exchanges` (selected `ExchangeColumns.selectList`) and its key.
    static func row(_ row: SQLiteStatement) -> Found {
        let key = FlowCursor(startTime: row.int64(at: 18), id: row.int64(at: 0))
        do throws(DamagedRow) {
            return (key, .success(try ExchangeColumns.record(from: row)))
        } catch {
            return (key, .failure(error))
        }
    }

    /// One page of `query`, newest first: the rows' page as `ExchangeQuery.plan` selects it,
    /// merged with the runs that can hold a newer exchange (`ExchangePageMerge`), read in order
    /// of their latest request time until no further run can change the page.
    /// - Throws: `FlowStoreError.badCursor` for a cursor tv did not give out, or a read failure.
    static func page(_ query: ExchangeQuery, in database: SQLiteDatabase) throws -> ExchangePage {
        let plan = try query.plan()
        var merge = ExchangePageMerge(size: plan.limit + 1)
        let rows = try database.prepare(plan.sql)
        try rows.bind(plan.bindings)
        try rows.forEachRow { merge.add(row($0)) }
        let runPlan = try query.runPlan()
        let runs = try database.prepare(runPlan.sql)
        try runs.bind(runPlan.bindings)
        defer { runs.reset() }
        let window = try query.window()
        while try runs.step() {
            guard merge.needs(runUpTo: runs.int64(at: 4)) else { break }
            for found in run(runs) where window.admits(found.key) { merge.add(found) }
        }
        var found = merge.newestFirst
        let more = found.count > plan.limit
        if more { found.removeLast(found.count - plan.limit) }
        var page = ExchangePage(exchanges: [], nextCursor: more ? found.last.map { $0.key.string } : nil)
        for entry in found {
            switch entry.exchange {
            case let .success(exchange): page.exchanges.append(exchange)
            case let .failure(damage): page.damaged.append(damage)
            }
        }
        return page
    }

    /// The exchange with `id`, from its row or from the run whose ids hold it; nil when none has it.
    /// - Throws: `FlowStoreError` when the database cannot be read, `.damagedRow` for a damaged one.
    static func exchange(id: Int64, in database: SQLiteDatabase) throws -> ExchangeRecord? {
        let rows = try database.prepare("SELECT \(ExchangeColumns.selectList) FROM exchanges WHERE id = ?")
        try rows.bind([.integer(id)])
        var found: Found?
        if try rows.step() {
            found = row(rows)
        } else {
            let runs = try database.prepare(
                "SELECT \(runColumns) FROM exchange_runs WHERE first_id <= ? ORDER BY first_id DESC LIMIT 1")
            try runs.bind([.integer(id)])
            if try runs.step(), id < runs.int64(at: 0) + runs.int64(at: 2) {
                // A run whose bytes do not read is one damaged entry: it stands for each of its ids.
                let entries = run(runs)
                found = entries.first { $0.key.id == id } ?? (entries.count == 1 ? entries[0] : nil)
            }
        }
        switch found?.exchange {
        case nil: return nil
        case let .success(exchange): return exchange
        case let .failure(damage): throw FlowStoreError.damagedRow(path: database.path, damage)
        }
    }

    /// Every exchange of flow `flowID` in request order (`seq`, then id), damaged ones beside them.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    static func ofFlow(_ flowID: Int64, in database: SQLiteDatabase) throws -> (exchanges: [ExchangeRecord], damaged: [DamagedRow]) {
        var all: [Found] = []
        let rows = try database.prepare("SELECT \(ExchangeColumns.selectList) FROM exchanges WHERE flow_id = ?")
        try rows.bind([.integer(flowID)])
        try rows.forEachRow { all.append(row($0)) }
        let runs = try database.prepare("SELECT \(runColumns) FROM exchange_runs WHERE flow_id = ?")
        try runs.bind([.integer(flowID)])
        try runs.forEachRow { all += run($0) }
        var exchanges: [ExchangeRecord] = []
        var damaged: [DamagedRow] = []
        for entry in all {
            switch entry.exchange {
            case let .success(exchange): exchanges.append(exchange)
            case let .failure(damage): damaged.append(damage)
            }
        }
        exchanges.sort { ($0.sequence, $0.id) < ($1.sequence, $1.id) }
        return (exchanges, damaged)
    }

    /// The first `limit` exchanges of flow `flowID` in request order (`seq`, then id; damaged
    /// ones beside them), and how many the flow has in all: `tv flow` shows a connection's first
    /// requests and their count, as it does its packets (a trial's connection had 200,000 and
    /// every one was printed). Reads at most `limit` rows and the runs up to the one whose first
    /// request comes after the `limit`-th found (runs are read in request order).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    static func firstOfFlow(_ flowID: Int64, limit: Int, in database: SQLiteDatabase)
        throws -> (exchanges: [ExchangeRecord], damaged: [DamagedRow], total: Int) {
        var total = 0
        if case let .integer(n) = try database.scalar("SELECT count(*) FROM exchanges WHERE flow_id = ?", [.integer(flowID)]) {
            total += Int(n)
        }
        if case let .integer(n) = try database.scalar("SELECT coalesce(sum(exchange_count), 0) FROM exchange_runs WHERE flow_id = ?",
                                                      [.integer(flowID)]) {
            total += Int(n)
        }
        var found: [Found] = []
        let rows = try database.prepare("SELECT \(ExchangeColumns.selectList) FROM exchanges WHERE flow_id = ? ORDER BY seq, id LIMIT ?")
        try rows.bind([.integer(flowID), .integer(Int64(max(0, limit)))])
        try rows.forEachRow { found.append(row($0)) }
        let runs = try database.prepare("SELECT \(runColumns) FROM exchange_runs WHERE flow_id = ? ORDER BY first_request_time, first_id")
        try runs.bind([.integer(flowID)])
        defer { runs.reset() }
        while try runs.step() {
            // `limit` found that all came before this run's first request: no later run can
            // hold one of the first `limit`.
            if found.count >= limit {
                let times = found.map(\.key.startTime).sorted()
                if limit == 0 || times[limit - 1] < runs.int64(at: 3) { break }
            }
            found += run(runs)
        }
        var exchanges: [ExchangeRecord] = []
        var damaged: [DamagedRow] = []
        for entry in found {
            switch entry.exchange {
            case let .success(exchange): exchanges.append(exchange)
            case let .failure(damage): damaged.append(damage)
            }
        }
        exchanges.sort { ($0.sequence, $0.id) < ($1.sequence, $1.id) }
        return (Array(exchanges.prefix(limit)), damaged, total)
    }

    /// Exchanges requested at or after `since` (µs) of the flows `flowCondition` selects (a
    /// `WHERE` body over `flows` with `flowBindings`; nil for all), oldest first, at most `limit`;
    /// damaged ones left out.
    /// - Throws: `FlowStoreError` when the database cannot be read.
    static func requested(since: Int64, flowCondition: String?, _ flowBindings: [SQLiteValue], limit: Int,
                          in database: SQLiteDatabase) throws -> [ExchangeRecord] {
        let flows = flowCondition.map { " AND flow_id IN (SELECT id FROM flows WHERE \($0))" } ?? ""
        var all: [Found] = []
        let rows = try database.prepare("SELECT \(ExchangeColumns.selectList) FROM exchanges WHERE request_time >= ?"
            + flows + " ORDER BY request_time, id LIMIT ?")
        try rows.bind([.integer(since)] + flowBindings + [.integer(Int64(limit))])
        try rows.forEachRow { all.append(row($0)) }
        let runs = try database.prepare("SELECT \(runColumns) FROM exchange_runs WHERE last_request_time >= ?" + flows)
        try runs.bind([.integer(since)] + flowBindings)
        try runs.forEachRow { all += run($0).filter { $0.key.startTime >= since } }
        all.sort { ($0.key.startTime, $0.key.id) < ($1.key.startTime, $1.key.id) }
        return all.prefix(limit).compactMap { try? $0.exchange.get() }
    }

    /// The exchanges with these ids (any order; missing ids absent, damaged ones left out).
    /// - Throws: `FlowStoreError` when the database cannot be read.
    static func withIDs(_ ids: [Int64], in database: SQLiteDatabase) throws -> [ExchangeRecord] {
        var found: [Int64: ExchangeRecord] = [:]
        let wanted = Set(ids)
        let rows = try database.prepare("SELECT \(ExchangeColumns.selectList) FROM exchanges WHERE id = ?")
        let runs = try database.prepare(
            "SELECT \(runColumns) FROM exchange_runs WHERE first_id <= ? ORDER BY first_id DESC LIMIT 1")
        for id in ids where found[id] == nil {
            defer { rows.reset(); runs.reset() }
            try rows.bind([.integer(id)])
            if try rows.step() {
                if case let .success(exchange) = row(rows).exchange { found[id] = exchange }
                continue
            }
            try runs.bind([.integer(id)])
            guard try runs.step(), id < runs.int64(at: 0) + runs.int64(at: 2) else { continue }
            // The whole run is read: the ids asked for next are often its neighbours.
            for entry in run(runs) {
                if case let .success(exchange) = entry.exchange, wanted.contains(exchange.id) { found[exchange.id] = exchange }
            }
        }
        return ids.compactMap { found[$0] }.uniqued()
    }

    /// Deletes the exchanges (rows and runs) of the flows `flows` selects (`SELECT id FROM …`),
    /// inside the caller's transaction. Retention's step for issue 16's exchanges.
    /// - Returns: how many exchanges were deleted.
    /// - Throws: `FlowStoreError` when the database cannot be written.
    public static func deleteRows(ofFlowsIn flows: String, database: SQLiteDatabase) throws -> Int {
        try database.execute("DELETE FROM exchanges WHERE flow_id IN (\(flows))")
        var deleted = database.changes
        if case let .integer(packed) = try database.scalar(
            "SELECT coalesce(sum(exchange_count), 0) FROM exchange_runs WHERE flow_id IN (\(flows))") {
            deleted += Int(packed)
        }
        try database.execute("DELETE FROM exchange_runs WHERE flow_id IN (\(flows))")
        return deleted
    }
}

/// Query strings are content (README: "headers, bodies and query strings are content"): a
/// request row keeps its query only while the content it was kept with is kept. When content is
/// deleted (`tv content delete`) or expires, the rows' queries go too, in rows and packed runs
/// alike, as if content had not been kept (`query_removed` set). A trial found them in
/// `tv requests`, HAR exports and the database file after `tv content delete`.
extension StoredExchanges {
    /// Removes the query of every exchange (`tv content delete`), inside the caller's transaction.
    /// - Parameter sparing: flows whose exchanges keep their queries (audit evidence).
    /// - Returns: how many exchanges lost a query.
    /// - Throws: `FlowStoreError` when the database cannot be read or written; a run whose bytes
    ///   do not read is left as it is.
    public static func removeQueries(sparing: Set<Int64>, database: SQLiteDatabase) throws -> Int {
        try removeQueries(from: nil, before: nil, sparing: sparing, database: database)
    }

    /// The `settings` key holding the time before which expired requests' queries are gone.
    static let queriesRemovedBeforeKey = "exchanges.queriesRemovedBefore"

    /// How far one `removeExpiredQueries` went: the queries it removed, and whether it reached
    /// its cutoff (false: a budget stopped it; the next call goes on from where it stopped).
    public struct QueryRemoval: Sendable, Equatable {
        public var removed: Int
        public var reachedCutoff: Bool

        public init(removed: Int, reachedCutoff: Bool) {
            self.removed = removed
            self.reachedCutoff = reachedCutoff
        }
    }

    /// Removes the queries of the exchanges requested before `cutoff` (content's expiry) that an
    /// earlier call did not reach (from the time the last one kept in `settings`), so each sweep
    /// reads only the stretch since the last, inside the caller's transaction.
    /// - Parameter budget: about how many packed exchanges to read at most (`sliceEnd`); nil
    ///   for all up to `cutoff`. The content writer's sweep takes one slice, and the rest a
    ///   slice at a time while its queue is empty: the first sweep past a ceiling once rewrote
    ///   30,000 requests' runs in one transaction (~0.5 s), while 200 MB/s of content filled the
    ///   writer's 16 MiB queue and 4,864 chunks were dropped.
    /// - Throws: as `removeQueries`.
    public static func removeExpiredQueries(before cutoff: Int64, sparing: Set<Int64>, database: SQLiteDatabase,
                                            budget: Int? = nil) throws -> QueryRemoval {
        var since: Int64 = 0
        if case let .integer(n) = try database.scalar("SELECT CAST(value AS INTEGER) FROM settings WHERE key = ?", [.text(queriesRemovedBeforeKey)]) {
            since = n
        }
        guard cutoff > since else { return QueryRemoval(removed: 0, reachedCutoff: true) }
        let end = try budget.map { try sliceEnd(since: since, cutoff: cutoff, exchanges: $0, database: database) } ?? cutoff
        let removed = try removeQueries(from: since, before: end, sparing: sparing, database: database)
        let keep = try database.prepare("""
            INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value
            """)
        try keep.bind([.text(queriesRemovedBeforeKey), .text(String(end))])
        _ = try keep.step()
        return QueryRemoval(removed: removed, reachedCutoff: end == cutoff)
    }

    /// Makes the next `removeExpiredQueries` read again from `time` (µs since the epoch) when it
    /// had gone past it, inside the caller's transaction: flows it spared (audit evidence) are
    /// no longer spared. Rows whose query is gone already are read and left as they are.
    /// - Throws: `FlowStoreError`.
    static func revisitQueries(from time: Int64, database: SQLiteDatabase) throws {
        let lower = try database.prepare("""
            UPDATE settings SET value = ? WHERE key = ? AND CAST(value AS INTEGER) > ?
            """)
        try lower.bind([.text(String(time)), .text(queriesRemovedBeforeKey), .integer(time)])
        _ = try lower.step()
    }

    /// Where a slice of the stretch `since..<cutoff` ends so that it reads about `exchanges`
    /// packed exchanges: just past the latest request of the run (in the order of their latest
    /// requests) at which the count reaches it, or `cutoff` when the stretch holds fewer. Always
    /// past `since`, so every slice makes progress. Runs that span the end are read by both
    /// slices (each strips only its own stretch's exchanges); a run spans at most 60 s
    /// (`ExchangeRunCoding.span`).
    static func sliceEnd(since: Int64, cutoff: Int64, exchanges budget: Int, database: SQLiteDatabase) throws -> Int64 {
        let runs = try database.prepare("""
            SELECT last_request_time, exchange_count FROM exchange_runs
            WHERE last_request_time >= ? AND last_request_time < ? ORDER BY last_request_time
            """)
        try runs.bind([.integer(since), .integer(cutoff)])
        var read = 0
        while try runs.step() {
            read += Int(runs.int64(at: 1))
            if read >= max(budget, 1) { return min(cutoff, runs.int64(at: 0) + 1) }
        }
        return cutoff
    }

    private static func removeQueries(from since: Int64?, before cutoff: Int64?, sparing: Set<Int64>, database: SQLiteDatabase) throws -> Int {
        let spared = sparing.isEmpty ? "" : " AND flow_id NOT IN (\(sparing.sorted().map(String.init).joined(separator: ",")))"
        let window = (since.map { " AND request_time >= \($0)" } ?? "") + (cutoff.map { " AND request_time < \($0)" } ?? "")
        try database.execute("""
            UPDATE exchanges SET path = substr(path, 1, instr(path, '?') - 1), query_removed = 1
            WHERE instr(path, '?') > 0\(window)\(spared)
            """)
        var removed = database.changes
        let runWindow = (since.map { " AND last_request_time >= \($0)" } ?? "") + (cutoff.map { " AND first_request_time < \($0)" } ?? "")
        let runs = try database.prepare("""
            SELECT \(runColumns) FROM exchange_runs WHERE instr(exchanges, '?') > 0\(runWindow)\(spared)
            """)
        var rewritten: [(Int64, [UInt8])] = []
        runs: while try runs.step() {
            var encoder = ExchangeRunCoding.Encoder()
            var stripped = 0
            for found in run(runs) {
                guard case var .success(exchange) = found.exchange else { continue runs }
                if cutoff.map({ exchange.requestTime < $0 }) ?? true, since.map({ exchange.requestTime >= $0 }) ?? true,
                   exchange.removeQuery() {
                    stripped += 1
                }
                encoder.append(exchange)
            }
            if stripped > 0 {
                rewritten.append((runs.int64(at: 0), encoder.bytes))
                removed += stripped
            }
        }
        let update = try database.prepare("UPDATE exchange_runs SET exchanges = ? WHERE first_id = ?")
        for (firstID, bytes) in rewritten {
            update.reset()
            try update.bind([.blob(bytes), .integer(firstID)])
            _ = try update.step()
        }
        return removed
    }
}

private extension SQLiteValue {
    var integerValue: Int64? {
        if case let .integer(n) = self { return n }
        return nil
    }
}

private extension Array where Element == ExchangeRecord {
    /// The records in order, each id once.
    func uniqued() -> [ExchangeRecord] {
        var seen = Set<Int64>()
        return filter { seen.insert($0.id).inserted }
    }
}

extension ExchangeRecord {
    /// Takes the query out of `path` (from its first `?`, as the SQL above does) and sets
    /// `queryRemoved`, as content's deletion or expiry leaves a row. Pure.
    /// - Returns: false when the path had no query (nothing changed).
    @discardableResult
    public mutating func removeQuery() -> Bool {
        guard let mark = path.firstIndex(of: "?") else { return false }
        path = String(path[..<mark])
        queryRemoved = true
        return true
    }
}
