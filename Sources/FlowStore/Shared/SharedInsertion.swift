import FlowTerms

/// How the shared writer sends a batch's flows and request rows to PostgreSQL (issue 25;
/// `tv-bench shared` measures both in one run).
public enum SharedInsertion: Sendable, CaseIterable {
    /// `COPY … FROM STDIN` (text format, `CopyText`) into temporary staging tables, then one
    /// `INSERT … SELECT … ON CONFLICT DO UPDATE` into the shared tables: the default.
    case copy
    /// Multi-row `INSERT … VALUES … ON CONFLICT DO UPDATE`, at most 500 rows a statement, every
    /// value a parameter.
    case rows
}

/// The staging tables of `SharedInsertion.copy`: made once per connection as temporary tables
/// (`ON COMMIT DELETE ROWS`: emptied by each batch's COMMIT, gone with the connection), with the
/// shared tables' written columns and types but none of their keys or checks, which the
/// `INSERT … SELECT` into the shared tables applies. Pure SQL text.
enum SharedStaging {
    /// The staging flows' columns: every written column, the program's included (NULL for a
    /// flow whose program did not come in the batch).
    static let flowColumns = PostgresDialect.upsertColumns(program: true)

    /// Makes both staging tables on this connection (nothing when they exist).
    static let createSQL = """
        CREATE TEMP TABLE IF NOT EXISTS tv_stage_flows ON COMMIT DELETE ROWS AS
            SELECT \(flowColumns.joined(separator: ", ")) FROM flows WITH NO DATA;
        CREATE TEMP TABLE IF NOT EXISTS tv_stage_exchanges ON COMMIT DELETE ROWS AS
            SELECT \(SharedExchangeRows.upsertColumns.joined(separator: ", ")) FROM exchanges WITH NO DATA
        """

    static let copyFlowsSQL = "COPY tv_stage_flows (\(flowColumns.joined(separator: ", "))) FROM STDIN"
    /// Flows the store has no row of yet (`SharedBatchRows.isNew`), straight into `flows` with the
    /// same columns: no staging table to fill and read back, no `ON CONFLICT` machinery. On a
    /// fresh store this was 40 µs a flow of the server's time against 48 µs by staging and upsert
    /// (100,000 flows of `tv-bench shared`, psql, PostgreSQL 15, 2026-12-03).
    static let copyNewFlowsSQL = "COPY flows (\(flowColumns.joined(separator: ", "))) FROM STDIN"
    /// The savepoint around that COPY: a row that exists after all (a batch retried after a
    /// COMMIT whose answer was lost) fails it, and the flows go through the upsert instead.
    static let newFlowsSavepoint = "tv_new_flows"
    static let copyExchangesSQL = "COPY tv_stage_exchanges (\(SharedExchangeRows.upsertColumns.joined(separator: ", "))) FROM STDIN"
    /// Request rows the store has no row of yet (`SharedNewExchanges`), straight into
    /// `exchanges` (its own `id` from the identity), under `newExchangesSavepoint` as the flows'.
    /// Their staging and upsert were a sixth of the flows' COPY time on the server
    /// (pg_stat_statements, `tv-bench shared --copy-only --flows 100000`, 2026-12-03: 3.3 s for
    /// 131,151 rows, 25 µs a row, against 16.3 s for the 200,000 flows).
    static let copyNewExchangesSQL = "COPY exchanges (\(SharedExchangeRows.upsertColumns.joined(separator: ", "))) FROM STDIN"
    static let newExchangesSavepoint = "tv_new_exchanges"

    /// The upsert of the staged flows with a program (`program`: every written column) or
    /// without one (the program's columns left as they are).
    static func insertFlowsSQL(program: Bool) -> String {
        let columns = PostgresDialect.upsertColumns(program: program).joined(separator: ", ")
        return "INSERT INTO flows (\(columns)) SELECT \(columns) FROM tv_stage_flows WHERE "
            + (program ? "" : "NOT ") + "(program_pid IS NOT NULL OR program_unknown IS NOT NULL)"
            + PostgresDialect.conflictUpdate(PostgresDialect.upsertColumns(program: program))
    }

    static let insertExchangesSQL: String = {
        let columns = SharedExchangeRows.upsertColumns.joined(separator: ", ")
        return "INSERT INTO exchanges (\(columns)) SELECT \(columns) FROM tv_stage_exchanges" + SharedExchangeRows.conflictUpdate
    }()
}

/// One batch's rows as the shared writer sends them: each flow's latest record (with its
/// program when the program came in the same batch) and each request row's latest state. The
/// batch was collapsed (`CollapsedFlowBatch`), so no key appears twice, as `ON CONFLICT DO
/// UPDATE` requires.
struct SharedBatchRows {
    let flows: [FlowRecord]
    let programs: [Int64: FlowProgram]
    let exchanges: [ExchangeRecord]
    let instance: InstanceIdentity
    /// The local audit session recording as the batch is written (nil: none).
    let auditSession: LiveAuditSession?
    /// Whether the store has no row of flow `id` yet, as far as the writer knows
    /// (`SharedNewFlows`); such flows are copied straight into `flows` by `.copy`. A wrong
    /// "new" costs a rolled-back COPY, never a row.
    var isNew: (Int64) -> Bool = { _ in false }
    /// The same for a request row (`SharedNewExchanges`), copied straight into `exchanges`.
    var isNewExchange: (SharedExchangeKey) -> Bool = { _ in false }

    /// Sends the rows on `connection`, inside the caller's transaction, as `insertion` says.
    /// - Returns: the batch's flows whose ids the store holds for other flows (`SharedIDClash`):
    ///   neither they nor their request rows and programs were written.
    /// - Throws: `FlowStoreError` from the shared store.
    func send(on connection: PGConnection, as insertion: SharedInsertion) throws -> Set<Int64> {
        var clashing: Set<Int64> = []
        switch insertion {
        case .copy:
            var data: [UInt8] = []
            data.reserveCapacity(flows.count * 320)
            var upserted = flows
            let new = flows.filter { isNew($0.id) }
            if !new.isEmpty {
                for flow in new { appendCopyRow(flow, to: &data) }
                if try copyNew(data, SharedStaging.copyNewFlowsSQL, savepoint: SharedStaging.newFlowsSavepoint, on: connection) {
                    upserted = flows.filter { !isNew($0.id) }
                }
                data.removeAll(keepingCapacity: true)
            }
            for flow in upserted {
                appendCopyRow(flow, to: &data)
            }
            if !data.isEmpty {
                try connection.copy(SharedStaging.copyFlowsSQL, data)
                var changed = 0
                if programs.isEmpty || upserted.contains(where: { programs[$0.id] == nil }) {
                    try connection.execute(SharedStaging.insertFlowsSQL(program: false))
                    changed += connection.changedRows
                }
                if upserted.contains(where: { programs[$0.id] != nil }) {
                    try connection.execute(SharedStaging.insertFlowsSQL(program: true))
                    changed += connection.changedRows
                }
                if changed < upserted.count { clashing = try SharedIDClash.find(among: upserted, on: connection, instance: instance) }
            }
            data.removeAll(keepingCapacity: true)
            let exchanges = clashing.isEmpty ? self.exchanges : self.exchanges.filter { !clashing.contains($0.flowID) }
            var upsertedExchanges = exchanges
            let newExchanges = exchanges.filter { isNewExchange(SharedExchangeKey($0)) }
            if !newExchanges.isEmpty {
                for exchange in newExchanges { CopyText.appendRow(SharedExchangeRows.bindings(exchange, instance: instance), to: &data) }
                if try copyNew(data, SharedStaging.copyNewExchangesSQL, savepoint: SharedStaging.newExchangesSavepoint, on: connection) {
                    upsertedExchanges = exchanges.filter { !isNewExchange(SharedExchangeKey($0)) }
                }
                data.removeAll(keepingCapacity: true)
            }
            for exchange in upsertedExchanges { CopyText.appendRow(SharedExchangeRows.bindings(exchange, instance: instance), to: &data) }
            if !data.isEmpty {
                try connection.copy(SharedStaging.copyExchangesSQL, data)
                try connection.execute(SharedStaging.insertExchangesSQL)
            }
        case .rows:
            var changed = 0
            for program in [false, true] {
                let group = flows.filter { (programs[$0.id] != nil) == program }
                try inChunks(group, of: PostgresDialect.rowsPerInsert) { chunk in
                    try connection.query(PostgresDialect.upsertSQL(rows: chunk.count, program: program), chunk.flatMap {
                        PostgresDialect.upsertBindings($0, instance: instance, auditSession: auditSession?.id(for: $0), program: programs[$0.id])
                    })
                    changed += connection.changedRows
                }
            }
            if changed < flows.count { clashing = try SharedIDClash.find(among: flows, on: connection, instance: instance) }
            let exchanges = clashing.isEmpty ? self.exchanges : self.exchanges.filter { !clashing.contains($0.flowID) }
            try inChunks(exchanges, of: SharedExchangeRows.rowsPerInsert) { chunk in
                try connection.query(SharedExchangeRows.upsertSQL(rows: chunk.count),
                                     chunk.flatMap { SharedExchangeRows.bindings($0, instance: instance) })
            }
        }
        // A program whose flow's record is not in this batch (it was written before).
        let written = Set(flows.map(\.id))
        for (id, program) in programs.sorted(by: { $0.key < $1.key }) where !written.contains(id) {
            try connection.query(PostgresDialect.programUpdateSQL,
                                 FlowProgramColumns.bindings(program) + [.text(instance.id), .integer(id)])
        }
        return clashing
    }

    private let noProgram = Array(repeating: SQLiteValue.null, count: FlowProgramColumns.names.count)

    /// `flow`'s row in `SharedStaging.flowColumns` order as COPY text (no program: NULLs).
    private func appendCopyRow(_ flow: FlowRecord, to data: inout [UInt8]) {
        var values = PostgresDialect.upsertBindings(flow, instance: instance, auditSession: auditSession?.id(for: flow))
        values += programs[flow.id].map(FlowProgramColumns.bindings) ?? noProgram
        CopyText.appendRow(values, to: &data)
    }

    /// Copies new rows straight into their table (`copy`: `SharedStaging.copyNewFlowsSQL` or
    /// `copyNewExchangesSQL`) under `savepoint`.
    /// - Returns: false when the COPY failed and was rolled back (a row existed after all): the
    ///   caller upserts those rows instead.
    /// - Throws: `FlowStoreError` when the connection is lost (nothing can be rolled back then).
    private func copyNew(_ data: [UInt8], _ copy: String, savepoint: String, on connection: PGConnection) throws -> Bool {
        try connection.execute("SAVEPOINT " + savepoint)
        do {
            try connection.copy(copy, data)
        } catch {
            if connection.isLost { throw error }
            try connection.execute("ROLLBACK TO SAVEPOINT " + savepoint)
            return false
        }
        try connection.execute("RELEASE SAVEPOINT " + savepoint)
        return true
    }

    private func inChunks<T>(_ items: [T], of size: Int, _ body: (ArraySlice<T>) throws -> Void) throws {
        var start = 0
        while start < items.count {
            try body(items[start..<min(start + size, items.count)])
            start += size
        }
    }
}
