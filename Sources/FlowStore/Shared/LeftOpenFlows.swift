import FlowTerms

/// Flows an instance left open in the shared store when it was killed (`kill -9`, a crash, a
/// pulled plug) before it said they closed, closed when it starts again (its shared writer's
/// first connection, and every new one after a lost server). Each takes its local row's end:
/// closed locally, its closed record; still open locally with its writer gone (the local writer
/// closes it the same way moments later, `FlowWriterRegistry`), `interrupted` at its last
/// activity (`interrupted(_:)`) with its open request rows `incomplete`. A flow still open
/// locally under a live writer (a `tv exec` beside `tv run` on one data folder) is left open.
/// A flow with no local row at all (the shared writer sent it, the local writer never wrote it
/// before the kill) is closed from its shared row the same way, `interrupted` at its last
/// activity, but only when no local writer is alive: a live one may not have written it yet.
enum LeftOpenFlows {
    /// Closes, inside the caller's transaction, every flow `instance` has open in the shared
    /// store whose local row has ended or whose local writer is gone, or that has no local row
    /// while no local writer is alive, with its request rows.
    /// - Returns: how many shared flows were closed.
    /// - Throws: `FlowStoreError` from the shared store. A local file that cannot be read closes
    ///   nothing (0).
    static func close(on connection: PGConnection, instance: InstanceIdentity, localPath: String) throws -> Int {
        let open = try connection.query("SELECT \(FlowRecordColumns.selectList) FROM flows WHERE instance_id = ? AND duration IS NULL",
                                        [.text(instance.id)])
        let shared = open.compactMap { try? FlowRecordColumns.record($0) }
        guard !shared.isEmpty, let local = try? SQLiteDatabase(readingAt: localPath, busyTimeout: 1_000) else { return 0 }
        defer { local.close() }
        guard let (ended, endedExchanges) = try? ended(shared.map(\.id), in: local),
              let absent = try? absentLocally(shared.map(\.id), in: local)
        else { return 0 }
        // A local row under a shared row's id with another start is another flow
        // (`SharedIDClash`): the shared one stays as it is.
        let sharedStart = Dictionary(shared.map { ($0.id, $0.startTime) }, uniquingKeysWith: { first, _ in first })
        let closed = ended.filter { sharedStart[$0.id] == $0.startTime }
        let closedIDs = Set(closed.map(\.id))
        let exchanges = endedExchanges.filter { closedIDs.contains($0.flowID) }
        let unwritten = (absent.isEmpty || (try? anyWriterAlive(local)) != false) ? [] : shared.filter { absent.contains($0.id) }.map(interrupted)
        for record in closed + unwritten {
            try connection.query(PostgresDialect.upsertSQL(rows: 1), PostgresDialect.upsertBindings(record, instance: instance))
        }
        for exchange in exchanges {
            try connection.query(SharedExchangeRows.upsertSQL(rows: 1), SharedExchangeRows.bindings(exchange, instance: instance))
        }
        for record in unwritten {
            try connection.query("""
                UPDATE exchanges SET state = 'incomplete', end_time = GREATEST(request_time, ?)
                WHERE instance_id = ? AND flow_id = ? AND state = 'open'
                """, [.integer(record.lastActivityTime), .text(instance.id), .integer(record.id)])
        }
        return closed.count + unwritten.count
    }

    /// Which of `ids` have no row in the local file.
    static func absentLocally(_ ids: [Int64], in local: SQLiteDatabase) throws -> Set<Int64> {
        let select = try local.prepare("SELECT 1 FROM flows WHERE id = ?")
        var absent: Set<Int64> = []
        for id in ids {
            try select.bind([.integer(id)])
            var found = false
            try select.forEachRow { _ in found = true }
            select.reset()
            if !found { absent.insert(id) }
        }
        return absent
    }

    /// True when a writer registered in the local file has not ended and still holds its lock
    /// (`FlowWriterRegistry`).
    static func anyWriterAlive(_ local: SQLiteDatabase) throws -> Bool {
        let unended = try local.prepare("SELECT id FROM flow_writers WHERE ended IS NULL")
        var alive = false
        try unended.forEachRow { row in
            if let id = row.optionalInt64(at: 0), !FlowWriterRegistry.isGone(lockPath: FlowWriterRegistry.lockPath(database: local.path, writer: id)) {
                alive = true
            }
        }
        return alive
    }

    /// The local records of `ids` that have ended (or whose writer is gone, closed by
    /// `interrupted`), and their request rows.
    static func ended(_ ids: [Int64], in local: SQLiteDatabase) throws -> ([FlowRecord], [ExchangeRecord]) {
        let flow = try local.prepare("""
            SELECT \(FlowRecordColumns.selectList), writer, (SELECT ended IS NULL FROM flow_writers WHERE flow_writers.id = flows.writer)
            FROM flows WHERE id = ?
            """)
        let writerColumn = Int32(FlowRecordColumns.names.count + FlowProgramColumns.names.count)
        var closed: [FlowRecord] = []
        var exchanges: [ExchangeRecord] = []
        for id in ids {
            var found: (FlowRecord, Bool)?
            try flow.bind([.integer(id)])
            try flow.forEachRow { row in
                guard let record = try? FlowRecordColumns.record(from: row) else { return }
                // Dead as `FlowWriterRegistry` finds it: registered, never ended, its lock free.
                let writer = row.optionalInt64(at: writerColumn)
                let unended = row.optionalInt64(at: writerColumn + 1) == 1
                found = (record, writer.map { unended && FlowWriterRegistry.isGone(lockPath: FlowWriterRegistry.lockPath(database: local.path, writer: $0)) } ?? false)
            }
            flow.reset()
            guard let (found, gone) = found else { continue }
            var record = found
            if record.duration == nil {
                guard gone else { continue }
                record = interrupted(record)
            }
            closed.append(record)
            for exchange in try StoredExchanges.ofFlow(id, in: local).exchanges {
                exchanges.append(exchange.state == .open && gone ? incomplete(exchange, flow: record) : exchange)
            }
        }
        return (closed, exchanges)
    }

    /// A flow whose writer died, as `FlowWriterRegistry` closes it: `interrupted`, ending at its
    /// last recorded activity. Pure.
    static func interrupted(_ flow: FlowRecord) -> FlowRecord {
        var flow = flow
        flow.status = .interrupted
        flow.duration = max(0, flow.lastActivityTime - flow.startTime)
        return flow
    }

    /// An open request row of a flow whose writer died, as `FlowWriterRegistry` closes it:
    /// `incomplete`, ending at the later of its request and the flow's last activity. Pure.
    static func incomplete(_ exchange: ExchangeRecord, flow: FlowRecord) -> ExchangeRecord {
        var exchange = exchange
        exchange.state = .incomplete
        exchange.endTime = max(exchange.requestTime, flow.lastActivityTime)
        return exchange
    }
}
