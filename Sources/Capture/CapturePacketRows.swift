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
        let summary = PacketSummary.read(bytes, originalLength: packet.originalLength)
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
    /// `packets`, in one transaction.
    /// - Throws: `FlowStoreError` (nothing of it is committed then).
    func commit(seq: Int64, bytes: Int64, packets: Int64, database: SQLiteDatabase) throws {
        try database.transaction {
            if !rows.isEmpty {
                let insert = try database.prepare("""
                    INSERT OR REPLACE INTO packets (flow_id, n, capture_seq, file_offset, time_us, direction, orig_len, incl_len, tcp_flags, meaning)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                for row in rows {
                    insert.reset()
                    try insert.bind([
                        .integer(Int64(bitPattern: row.flow)), .integer(row.n), .integer(seq), .integer(row.offset), .integer(row.time),
                        .text(row.direction.rawValue), .integer(Int64(row.originalLength)), .integer(Int64(row.includedLength)),
                        .integerOrNull(row.summary.tcpFlags.map { Int64($0) }), .text(row.summary.meaning.rawValue),
                    ])
                    _ = try insert.step()
                }
            }
            if !counts.isEmpty {
                let upsert = try database.prepare("""
                    INSERT INTO packet_counts (flow_id, packets) VALUES (?, ?)
                    ON CONFLICT (flow_id) DO UPDATE SET packets = max(packets, excluded.packets)
                    """)
                for (flow, n) in counts {
                    upsert.reset()
                    try upsert.bind([.integer(Int64(bitPattern: flow)), .integer(n)])
                    _ = try upsert.step()
                }
            }
            let update = try database.prepare("UPDATE captures SET bytes = ?, packets = ? WHERE seq = ?")
            try update.bind([.integer(bytes), .integer(packets), .integer(seq)])
            _ = try update.step()
        }
    }
}
