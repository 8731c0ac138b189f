/// How the flow writer writes once the disk has been full (pure): the flows waiting in memory go
/// in parts of `partItems`, each its own transaction, and the write-ahead log is emptied
/// (`FlowBatchStore.emptyJournal`: checkpointed and truncated) after every failed write, before
/// the backlog is retried, and after every commit, until the disk has `roomToLeave` free again.
///
/// Why: a failed transaction's frames stay in the WAL file (SQLite reuses that room, it never
/// gives it back), and the whole backlog was retried as one transaction. In a trial, 16,384 flows
/// waited on a full 30 MB tmpfs; 4 MB freed went to the WAL (12.3 → 16.5 MB) and no flow was
/// saved; 14 MB more wrote them all, leaving a 25 MB WAL beside a 5.9 MB database, and the next
/// flows failed at once. In parts with the WAL emptied between them, freed room holds rows: the
/// database grows by what a part adds, the WAL never holds more than one part.
struct FullDiskWrites: Sendable, Equatable {
    /// Flows (each with its program), exchanges or programs per transaction while the backlog
    /// is written after a full disk. Measured on a 30 MiB tmpfs (`FullDiskRetryTests`: 16,384
    /// flows waiting, 4 MiB freed): parts of 1,024 flows saved 10,240 and left ~1 MB of WAL the
    /// database could not grow to take (a part writes ~3 times its rows' room to the WAL: whole
    /// index pages); parts of 512, 10,240 and 0.8 MB; parts of 256, 10,496 to 11,008, with at most
    /// ~0.6 MB left over, in the WAL or free. A part's checkpoint costs an fdatasync: 64 for
    /// 16,384 flows.
    static let partItems = 256

    /// Free bytes on the database's disk past which writes go back to the usual schedule (WAL
    /// checkpoints asked every 16 MiB, waited for past 64 MiB: `WALCheckpointSchedule.flowWriter`):
    /// twice the largest WAL that schedule keeps, room for the WAL and the database's growth
    /// as it is copied in.
    static let roomToLeave: Int64 = 2 * Int64(WALCheckpointSchedule.flowWriter.restartAt) * 4_096

    /// True from a write that failed for a full disk until a commit finds `roomToLeave` free.
    private(set) var active = false

    /// What to do after a write, given how it ended.
    enum Decision: Sendable, Equatable {
        /// Nothing more.
        case nothing
        /// Empty the WAL now (a failed write's frames, or a commit's while room is short).
        case emptyJournal
    }

    /// Records a write's outcome: `failure` nil for a commit; `freeBytes` the disk's free room
    /// (asked only after a commit while active; nil when it cannot be told).
    mutating func wrote(failure: FlowStoreError?, freeBytes: () -> Int64?) -> Decision {
        if let failure {
            guard case .diskFull = failure else { return .nothing }
            active = true
            return .emptyJournal
        }
        guard active else { return .nothing }
        // The last commit while short of room empties the WAL too: the usual schedule starts
        // from an empty log.
        if let free = freeBytes(), free >= Self.roomToLeave { active = false }
        return .emptyJournal
    }

    /// Transactions' size for the backlog: `partItems` while active, else all in one (nil).
    var partSize: Int? { active ? Self.partItems : nil }
}
