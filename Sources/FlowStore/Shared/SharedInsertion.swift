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
    static let copyExchangesSQL = "COPY tv_stage_exchanges (\(SharedExchangeRows.upsertColumns.joined(separator: ", "))) FROM STDIN"

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
    let auditSession: Int64?

    /// Sends the rows on `connection`, inside the caller's transaction, as `insertion` says.
    /// - Throws: `FlowStoreError` from the shared store.
    func send(on connection: PGConnection, as insertion: SharedInsertion) throws {
        switch insertion {
        case .copy:
            var data: [UInt8] = []
            data.reserveCapacity(flows.count * 320)
            for flow in flows {
                var values = PostgresDialect.upsertBindings(flow, instance: instance, auditSession: auditSession)
                values += programs[flow.id].map(FlowProgramColumns.bindings) ?? noProgram
                CopyText.appendRow(values, to: &data)
            }
            if !data.isEmpty {
                try connection.copy(SharedStaging.copyFlowsSQL, data)
                if programs.isEmpty || flows.contains(where: { programs[$0.id] == nil }) {
                    try connection.execute(SharedStaging.insertFlowsSQL(program: false))
                }
                if flows.contains(where: { programs[$0.id] != nil }) {
                    try connection.execute(SharedStaging.insertFlowsSQL(program: true))
                }
            }
            data.removeAll(keepingCapacity: true)
            for exchange in exchanges { CopyText.appendRow(SharedExchangeRows.bindings(exchange, instance: instance), to: &data) }
            if !data.isEmpty {
                try connection.copy(SharedStaging.copyExchangesSQL, data)
                try connection.execute(SharedStaging.insertExchangesSQL)
            }
        case .rows:
            for program in [false, true] {
                let group = flows.filter { (programs[$0.id] != nil) == program }
                try inChunks(group, of: PostgresDialect.rowsPerInsert) { chunk in
                    try connection.query(PostgresDialect.upsertSQL(rows: chunk.count, program: program), chunk.flatMap {
                        PostgresDialect.upsertBindings($0, instance: instance, auditSession: auditSession, program: programs[$0.id])
                    })
                }
            }
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
    }

    private let noProgram = Array(repeating: SQLiteValue.null, count: FlowProgramColumns.names.count)

    private func inChunks<T>(_ items: [T], of size: Int, _ body: (ArraySlice<T>) throws -> Void) throws {
        var start = 0
        while start < items.count {
            try body(items[start..<min(start + size, items.count)])
            start += size
        }
    }
}
