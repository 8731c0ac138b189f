import FlowStore
import FlowTerms

/// The `packets` and `packet_counts` rows of one write of the capture writer, gathered packet by
/// packet in file order (`add`) and committed in one transaction once the bytes are in the file
/// (`commit`). Past `rowsPerFlow` a packet costs its flow's count only (the last flow's is kept
/// aside: a bulk transfer is long runs of one flow).
struct CapturePacketRows {
    /// A packet row waiting for the transaction.
    struct Row {
        var flow: UInt64
        var n: Int64
        var offset: Int64
        var time: Int64
        var direction: Direction
        var originalLength: Int
        var includedLength: Int
        var summary: PacketSummary
    }

    let rowsPerFlow: Int
    private(set) var rows: [Row] = []
    /// Each flow's count after this write.
    private(set) var counts: [UInt64: Int64] = [:]
    private var lastFlow: UInt64 = 0
    private var lastCount: Int64 = 0

    init(rowsPerFlow: Int) { self.rowsPerFlow = rowsPerFlow }

    /// Counts `packet` (its block at file offset `offset`, its captured bytes `bytes`) for its flow
    /// (`known` gives a flow's count before this write) and makes its row when the flow has room.
    /// - Returns: the row's summary when a row was made (nil: no flow, or past `rowsPerFlow`).
    mutating func add(_ packet: QueuedPacket, bytes: UnsafeRawBufferPointer, offset: Int64, known: (UInt64) -> Int64) -> PacketSummary? {
        guard packet.flow != 0 else { return nil }
        if packet.flow != lastFlow {
            if lastFlow != 0 { counts[lastFlow] = lastCount }
            lastFlow = packet.flow
            lastCount = counts[packet.flow] ?? known(packet.flow)
        }
        lastCount += 1
        guard lastCount <= rowsPerFlow else { return nil }
        let summary = packet.summary ?? PacketSummary.read(bytes, originalLength: packet.originalLength)
        rows.append(Row(flow: packet.flow, n: lastCount, offset: offset, time: packet.timeMicros, direction: packet.direction,
                        originalLength: packet.originalLength, includedLength: packet.includedLength, summary: summary))
        return summary
    }

    /// The counts, the last flow's included (call once, after the last `add`).
    mutating func finish() -> [UInt64: Int64] {
        if lastFlow != 0 { counts[lastFlow] = lastCount }
        lastFlow = 0
        return counts
    }

    /// Inserts the rows, raises the counts and sets the file's `captures` row to `bytes` and
    /// `packets`, in one transaction, with `statements` (prepared on its database).
    /// - Throws: `FlowStoreError` (nothing of it is committed then).
    func commit(seq: Int64, bytes: Int64, packets: Int64, statements: CapturePacketStatements) throws {
        try statements.database.transaction {
            let insert = statements.insertPacket
            for row in rows {
                insert.rewind()
                try insert.bind(integer: Int64(bitPattern: row.flow), at: 1)
                try insert.bind(integer: row.n, at: 2)
                try insert.bind(integer: seq, at: 3)
                try insert.bind(integer: row.offset, at: 4)
                try insert.bind(integer: row.time, at: 5)
                try insert.bind(text: row.direction.rawValue, at: 6)
                try insert.bind(integer: Int64(row.originalLength), at: 7)
                try insert.bind(integer: Int64(row.includedLength), at: 8)
                try insert.bind(optionalInteger: row.summary.tcpFlags.map { Int64($0) }, at: 9)
                try insert.bind(text: row.summary.meaning.rawValue, at: 10)
                _ = try insert.step()
            }
            let upsert = statements.raiseCount
            for (flow, n) in counts {
                upsert.rewind()
                try upsert.bind(integer: Int64(bitPattern: flow), at: 1)
                try upsert.bind(integer: n, at: 2)
                _ = try upsert.step()
            }
            let update = statements.updateCapture
            update.rewind()
            try update.bind(integer: bytes, at: 1)
            try update.bind(integer: packets, at: 2)
            try update.bind(integer: seq, at: 3)
            _ = try update.step()
        }
    }
}

/// The three statements a capture write commits with (`CapturePacketRows.commit`), prepared once
/// on the writer's database and kept for the writer's life (`CaptureWriterThread.statements`;
/// made again only for another database handle). Preparing them on every batch was ~15 % of the
/// writer thread's time in session 13's bulk-http profile (`sqlite3Parser` and code generation).
final class CapturePacketStatements {
    let database: SQLiteDatabase
    /// `packets`: one row (10 parameters: flow, n, seq, offset, time, direction, lengths, flags, meaning).
    let insertPacket: SQLiteStatement
    /// `packet_counts`: a flow's count raised to at least the one bound (flow, packets).
    let raiseCount: SQLiteStatement
    /// `captures`: the file's bytes and packets (bytes, packets, seq).
    let updateCapture: SQLiteStatement

    /// - Throws: `FlowStoreError` when a statement does not compile (the schema is not migrated).
    init(database: SQLiteDatabase) throws {
        self.database = database
        insertPacket = try database.prepare("""
            INSERT OR REPLACE INTO packets (flow_id, n, capture_seq, file_offset, time_us, direction, orig_len, incl_len, tcp_flags, meaning)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        raiseCount = try database.prepare("""
            INSERT INTO packet_counts (flow_id, packets) VALUES (?, ?)
            ON CONFLICT (flow_id) DO UPDATE SET packets = max(packets, excluded.packets)
            """)
        // Raised only: rows a full disk held back go in after later writes (or the file's close)
        // set larger figures (`CaptureRowBacklog`).
        updateCapture = try database.prepare("UPDATE captures SET bytes = max(bytes, ?1), packets = max(packets, ?2) WHERE seq = ?3")
    }
}
