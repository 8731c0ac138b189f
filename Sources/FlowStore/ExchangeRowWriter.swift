import FlowTerms

/// The flow writer's exchanges (issue 16): an exchange still open, and an exchange whose open
/// row was written before, is a row of `exchanges` (upserted by `(flow_id, seq)`, as before
/// migration 22); every other one (most: they end within `OpenExchangeHold`'s second) is packed
/// with its flow's other finished exchanges of the batch into one `exchange_runs` row
/// (`ExchangeRunPlan`, `ExchangeRunCoding`), its id reserved from `exchanges`' AUTOINCREMENT
/// counter so ids stay unique across both tables. One run costs three b-tree inserts where each
/// exchange cost four. Lives on the writer thread with `FlowBatchWriter`.
struct ExchangeRowWriter {
    private let upsert: SQLiteStatement
    /// Changes a row written before in place (`ExchangeColumns.updateSQL`): the upsert's
    /// conflict path moved the AUTOINCREMENT counter, skipping an id each time.
    private let update: SQLiteStatement
    /// The row's texts, bound without a copy (its buffer reused row after row).
    private var texts = SQLiteTextRow()
    /// Moves `exchanges`' counter past a block of ids and returns its last.
    private let reserve: SQLiteStatement
    /// Makes the counter's row when it is missing.
    private let reserveFirst: SQLiteStatement
    private let insertRun: SQLiteStatement
    /// The exchanges whose open row is in `exchanges` (this writer's, and any found at start):
    /// their end updates that row instead of going into a run.
    private var writtenOpen: Set<ExchangeKey>
    /// This batch's changes to `writtenOpen`, kept once it commits.
    private var opened: [ExchangeKey] = []
    private var ended: [ExchangeKey] = []

    private struct ExchangeKey: Hashable {
        var flow: Int64
        var sequence: Int
    }

    /// Prepares the statements on `database` and reads the open rows already there.
    /// - Throws: `FlowStoreError` when a statement cannot be prepared or the rows read.
    init(database: SQLiteDatabase) throws {
        upsert = try database.prepare(ExchangeColumns.upsertSQL)
        update = try database.prepare(ExchangeColumns.updateSQL)
        reserve = try database.prepare("""
            UPDATE sqlite_sequence SET seq = max(seq, (SELECT coalesce(max(id), 0) FROM exchanges)) + ?
            WHERE name = 'exchanges' RETURNING seq
            """)
        reserveFirst = try database.prepare("""
            INSERT INTO sqlite_sequence (name, seq) SELECT 'exchanges', max(
                (SELECT coalesce(max(id), 0) FROM exchanges),
                (SELECT coalesce(max(first_id + exchange_count - 1), 0) FROM exchange_runs)) + ?
            RETURNING seq
            """)
        insertRun = try database.prepare(
            "INSERT INTO exchange_runs (\(StoredExchanges.runColumns)) VALUES (?, ?, ?, ?, ?, ?)")
        var open = Set<ExchangeKey>()
        let rows = try database.prepare("SELECT flow_id, seq FROM exchanges WHERE state = 'open'")
        try rows.forEachRow { open.insert(ExchangeKey(flow: $0.int64(at: 0), sequence: Int($0.int64(at: 1)))) }
        writtenOpen = open
    }

    /// Writes `exchanges` (a batch's latest states) inside the caller's transaction.
    /// - Throws: `FlowStoreError`; the caller rolls back and calls `rolledBack()`.
    mutating func write(_ exchanges: [ExchangeRecord]) throws {
        opened.removeAll(keepingCapacity: true)
        ended.removeAll(keepingCapacity: true)
        var finished: [ExchangeRecord] = []
        finished.reserveCapacity(exchanges.count)
        for exchange in exchanges {
            let key = ExchangeKey(flow: exchange.flowID, sequence: exchange.sequence)
            if exchange.state == .open {
                try writeRow(exchange, known: writtenOpen.contains(key))
                opened.append(key)
            } else if writtenOpen.contains(key) {
                try writeRow(exchange, known: true)
                ended.append(key)
            } else {
                finished.append(exchange)
            }
        }
        guard !finished.isEmpty else { return }
        let plan = ExchangeRunPlan(finished)
        var nextID = try reserveIDs(plan.exchangeCount) - Int64(plan.exchangeCount) + 1
        for run in plan.runs {
            var encoder = ExchangeRunCoding.Encoder()
            for exchange in run.exchanges { encoder.append(exchange) }
            insertRun.rewind()
            try insertRun.bind(integer: nextID, at: 1)
            try insertRun.bind(integer: run.flowID, at: 2)
            try insertRun.bind(integer: Int64(run.exchanges.count), at: 3)
            try insertRun.bind(integer: run.firstRequestTime, at: 4)
            try insertRun.bind(integer: run.lastRequestTime, at: 5)
            try insertRun.bind(.blob(encoder.bytes), at: 6)
            try insertRun.step()
            nextID += Int64(run.exchanges.count)
        }
    }

    /// Writes `exchange`'s row: a row `known` to be there is updated in place (its id kept, and
    /// no id used up), else inserted; one known but gone (removed by hand, or with its flow) is
    /// inserted again.
    private mutating func writeRow(_ exchange: ExchangeRecord, known: Bool) throws {
        if known {
            defer { update.rewind() }
            if try ExchangeColumns.write(exchange, with: update, texts: &texts) { return }
        }
        try ExchangeColumns.write(exchange, with: upsert, texts: &texts)
    }

    /// The last of `count` ids taken from `exchanges`' counter (the first is `count - 1` below).
    private func reserveIDs(_ count: Int) throws -> Int64 {
        defer { reserve.rewind(); reserveFirst.rewind() }
        try reserve.bind(integer: Int64(count), at: 1)
        if try reserve.step() { return reserve.int64(at: 0) }
        // The counter's row is missing (removed by hand): made again above every id there is.
        try reserveFirst.bind(integer: Int64(count), at: 1)
        try reserveFirst.step()
        return reserveFirst.int64(at: 0)
    }

    /// The batch committed: its open rows are known written, its ended ones no longer open.
    mutating func committed() {
        for key in opened { writtenOpen.insert(key) }
        for key in ended { writtenOpen.remove(key) }
    }

    /// Rewinds the statements (a statement left on its row keeps a read transaction open).
    func rewind() {
        upsert.rewind()
        update.rewind()
        reserve.rewind()
        reserveFirst.rewind()
        insertRun.rewind()
    }
}
