/// Packet rows whose transaction failed, kept to go in before the next write's.
///
/// A write's packets reach the file before their rows reach the database (`CapturePacketRows`).
/// When the database cannot take the rows (a full disk: SQLite needs room the file's own write
/// did not), they were dropped, so packets that are in the file had no rows for good, and
/// `tv packets` said none were captured for flows whose packets tshark read there (a trial:
/// 1,810 packets in the file, rows for 1,784). Now each failed write's rows wait here, in
/// order, and go in with the next write (or at the writer's next tick) once there is room.
/// Bounded: past `maxRows`, the oldest writes' rows go (their packets counted failed).
struct CaptureRowBacklog {
    /// One write's rows, with the file's size and packets after it (its `captures` row's).
    struct Write {
        var seq: Int64
        var bytes: Int64
        var packets: Int64
        var rows: CapturePacketRows
        /// Its packets (rows made or not: past a flow's row limit only the count is kept).
        var packetCount: Int
    }

    /// Rows kept at most (~100 bytes each).
    let maxRows: Int
    private(set) var writes: [Write] = []
    private(set) var rowCount = 0

    init(maxRows: Int = 100_000) { self.maxRows = maxRows }

    var isEmpty: Bool { writes.isEmpty }

    /// Adds a write's rows after the others.
    /// - Returns: the packets of the oldest writes let go to stay within `maxRows`.
    mutating func append(_ write: Write) -> Int {
        writes.append(write)
        rowCount += write.rows.rows.count
        var dropped = 0
        while rowCount > maxRows, writes.count > 1 {
            let oldest = writes.removeFirst()
            rowCount -= oldest.rows.rows.count
            dropped += oldest.packetCount
        }
        return dropped
    }

    /// `flow`'s count after the newest write that counted it; nil when none here did.
    func latestCount(of flow: UInt64) -> Int64? {
        for write in writes.reversed() { if let n = write.rows.counts[flow] { return n } }
        return nil
    }

    /// Commits the writes in order, each in its own transaction, removing each as it goes in.
    /// - Returns: the packets whose rows went in.
    /// - Throws: the first failure (`FlowStoreError`); what was not committed stays.
    mutating func commit(statements: CapturePacketStatements) throws -> Int {
        var committed = 0
        while let write = writes.first {
            try write.rows.commit(seq: write.seq, bytes: write.bytes, packets: write.packets, statements: statements)
            writes.removeFirst()
            rowCount -= write.rows.rows.count
            committed += write.packetCount
        }
        return committed
    }

    /// Empties it. - Returns: the packets whose rows were let go.
    mutating func drop() -> Int {
        defer { writes = []; rowCount = 0 }
        return writes.reduce(0) { $0 + $1.packetCount }
    }
}
