import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Which flow writers are alive, so that flows a dead one left open are closed and a live one's
/// are left alone.
///
/// Every `FlowWriter` registers a row in `flow_writers` and stamps its id on every flow it writes
/// (`flows.writer`). While it runs it holds an exclusive `flock(2)` on its own lock file beside
/// the database (`<database>-writer-<id>.lock`, 0600). The kernel drops that lock when the process
/// ends in any way, `kill -9` included, so a lock that can be taken is a writer that is gone; a
/// process id is not evidence (ids are reused). `flock` locks belong to the open file description,
/// so two writers in one process (a test, `tv exec`'s) exclude each other too.
///
/// A writer that stops cleanly but cannot record its end (its database cannot be written: a full
/// disk) renames its lock file to `<database>-writer-<id>.stopped` instead of removing it: a
/// rename takes no room, so the fact survives where no row can be written, and the next start
/// says those flows' session stopped unable to save them, not that it was killed (trial 43: a
/// clean `tv stop` on a full disk, then `tv flow` and the next `tv run` said "killed or crashed").
///
/// `register` runs in one `BEGIN IMMEDIATE` transaction: two sessions starting at once see each
/// other either fully registered and locked or not at all, only one of them closes a dead
/// writer's flows, and each takes a range of flow ids no live writer has (`FlowIDRanges`).
struct FlowWriterRegistry {
    /// A registered writer: its id, the first of its flow ids, and the open lock file (closed by
    /// `unregister`).
    struct Registration {
        let id: Int64
        let lockDescriptor: Int32
        let lockPath: String
        /// The writer hands out flow ids from here up (`FlowIDRanges`).
        let firstFlowID: Int64
    }

    /// What `register` found and did.
    typealias Recovery = FlowWriterRecovery

    let database: SQLiteDatabase

    /// The lock file of writer `id`.
    static func lockPath(database path: String, writer id: Int64) -> String {
        "\(path)-writer-\(id).lock"
    }

    /// The mark writer `id` leaves when it stopped cleanly without recording its end (its lock
    /// file, renamed by `unregister`): empty, so it needs no room.
    static func stoppedMarkPath(database path: String, writer id: Int64) -> String {
        "\(path)-writer-\(id).stopped"
    }

    /// How writer `id`, gone without ending, ended: stopped unable to record its end when its
    /// mark is there, else killed (crashed, lost power).
    static func cause(database path: String, writer id: Int64) -> LeftOpenCause {
        access(stoppedMarkPath(database: path, writer: id), F_OK) == 0 ? .stoppedUnsaved : .killed
    }

    /// Registers a new writer (row + held lock), after closing the flows of every writer found
    /// dead as `interrupted` at their last activity and marking those writers ended.
    /// - Parameter now: µs since the epoch.
    /// - Throws: `FlowStoreError` (the database), `.cannotOpen` when the lock file cannot be made.
    func register(pid: Int32, now: Int64) throws -> (Registration, Recovery) {
        var made: Registration?
        do {
            return try registerInTransaction(pid: pid, now: now, made: &made)
        } catch {
            // Registered and locked, then COMMIT failed: give the lock and its file back.
            if let made {
                unlink(made.lockPath)
                close(made.lockDescriptor)
            }
            throw error
        }
    }

    private func registerInTransaction(pid: Int32, now: Int64, made: inout Registration?) throws -> (Registration, Recovery) {
        // The marks of the writers ended here, removed once that is committed (a rollback leaves
        // them for the next start to read).
        var marks: [String] = []
        let result = try database.transaction {
            var recovery = Recovery()
            let unended = try database.prepare("SELECT id FROM flow_writers WHERE ended IS NULL")
            var candidates: [Int64] = []
            try unended.forEachRow { candidates.append($0.int64(at: 0)) }
            for writer in candidates where FlowWriterRegistry.isGone(lockPath: FlowWriterRegistry.lockPath(database: database.path, writer: writer)) {
                let closed = try closeOpenFlows(writer: writer)
                switch FlowWriterRegistry.cause(database: database.path, writer: writer) {
                case .killed:
                    recovery.deadWriters += 1
                    recovery.interruptedFlows += closed
                case .stoppedUnsaved:
                    recovery.stoppedWriters += 1
                    recovery.stoppedFlows += closed
                    marks.append(FlowWriterRegistry.stoppedMarkPath(database: database.path, writer: writer))
                }
                try end(writer: writer, at: now)
                unlink(FlowWriterRegistry.lockPath(database: database.path, writer: writer))
            }
            // Its flow ids: above every id used here and every live writer's range.
            let highest: Int64
            if case let .integer(value) = try database.scalar(FlowIDFloor.highestSQL) { highest = value } else { highest = 0 }
            let live = try database.prepare("SELECT flow_id_end FROM flow_writers WHERE ended IS NULL")
            var liveEnds: [Int64?] = []
            try live.forEachRow { liveEnds.append($0.isNull(at: 0) ? nil : $0.int64(at: 0)) }
            let first = FlowIDRanges.first(highestUsed: highest, liveEnds: liveEnds)
            let insert = try database.prepare("INSERT INTO flow_writers (pid, started, first_flow_id, flow_id_end) VALUES (?, ?, ?, ?)")
            try insert.bind([.integer(Int64(pid)), .integer(now), .integer(first), .integer(first + FlowIDRanges.size)])
            try insert.step()
            guard case let .integer(id) = try database.scalar("SELECT last_insert_rowid()") else {
                throw FlowStoreError.failed(path: database.path, reason: "the writer's row has no id")
            }
            // A mark left by an earlier writer of this id (a history deleted and made anew) is
            // not this writer's.
            unlink(FlowWriterRegistry.stoppedMarkPath(database: database.path, writer: id))
            let path = FlowWriterRegistry.lockPath(database: database.path, writer: id)
            let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw FlowStoreError.opening(errno, path: path, what: "the flow writer's lock \(path)") }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                throw FlowStoreError.cannotOpen(path: path, reason: reason)
            }
            let registration = Registration(id: id, lockDescriptor: fd, lockPath: path, firstFlowID: first)
            made = registration
            return (registration, recovery)
        }
        for mark in marks { unlink(mark) }
        return result
    }

    /// Ends a writer cleanly: its row is ended, its lock file removed and released; with
    /// `interruptingOpenFlows`, its flows still open (their close event was dropped or failed)
    /// become interrupted first.
    /// - Returns: how many flows were closed here.
    /// - Throws: `FlowStoreError`; the lock is released all the same and its file renamed to the
    ///   writer's stopped mark (`stoppedMarkPath`; removed when even that fails), so a later
    ///   session sees the writer gone, finishes the job and says it stopped unable to save.
    @discardableResult
    func unregister(_ registration: Registration, interruptingOpenFlows: Bool, now: Int64) throws -> Int {
        var ended = false
        defer {
            if ended || rename(registration.lockPath, FlowWriterRegistry.stoppedMarkPath(database: database.path, writer: registration.id)) != 0 {
                unlink(registration.lockPath)
            }
            close(registration.lockDescriptor)
        }
        let closed = try database.transaction {
            let closed = interruptingOpenFlows ? try closeOpenFlows(writer: registration.id) : 0
            try end(writer: registration.id, at: now)
            return closed
        }
        ended = true
        return closed
    }

    /// Closes `writer`'s open flows as interrupted, ending each at its last known activity: the
    /// row's, or its last captured packet's when later (a flow killed before its first progress
    /// report read 0 µs long beside 1.6 s of packets: a new-user trial).
    /// - Returns: how many.
    private func closeOpenFlows(writer: Int64) throws -> Int {
        let lastPacket = try database.prepare("""
            UPDATE flows SET last_activity_time = max(last_activity_time,
                coalesce((SELECT max(time_us) FROM packets WHERE packets.flow_id = flows.id), 0))
            WHERE writer = ? AND duration IS NULL
            """)
        try lastPacket.bind([.integer(writer)])
        try lastPacket.step()
        // Their exchanges still open end with them, incomplete (issue 16).
        let exchanges = try database.prepare("""
            UPDATE exchanges SET state = 'incomplete',
                end_time = (SELECT max(exchanges.request_time, last_activity_time) FROM flows WHERE flows.id = exchanges.flow_id)
            WHERE state = 'open' AND flow_id IN (SELECT id FROM flows WHERE writer = ? AND duration IS NULL)
            """)
        try exchanges.bind([.integer(writer)])
        try exchanges.step()
        let update = try database.prepare("""
            UPDATE flows SET status = 'interrupted', duration = max(0, last_activity_time - start_time)
            WHERE writer = ? AND duration IS NULL
            """)
        try update.bind([.integer(writer)])
        try update.step()
        return database.changes
    }

    private func end(writer: Int64, at now: Int64) throws {
        let statement = try database.prepare("UPDATE flow_writers SET ended = ? WHERE id = ?")
        try statement.bind([.integer(now), .integer(writer)])
        try statement.step()
    }

    /// Whether the writer whose lock file is `lockPath` is gone: the file is missing, or its lock
    /// can be taken (then it is released at once). A file that cannot be opened for another
    /// reason (another user's) counts as alive: nothing is closed on a guess.
    static func isGone(lockPath: String) -> Bool {
        let fd = open(lockPath, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        flock(fd, LOCK_UN)
        return true
    }
}

/// How a flow writer that is gone ended without recording its end, so that its open flows stayed
/// open (`FlowWriterRegistry`).
public enum LeftOpenCause: Sendable, Equatable {
    /// It never stopped: its session was killed, crashed or lost power.
    case killed
    /// It stopped, but could not write its end, nor its flows' last updates (its database could
    /// not be written: a full disk).
    case stoppedUnsaved
}

/// What a starting flow writer found of the writers gone before it, whose open flows it closed as
/// interrupted (`FlowWriter.interruptedAtStart`).
public struct FlowWriterRecovery: Sendable, Equatable {
    /// Writers found dead (registered, never ended, lock free, no stopped mark): killed,
    /// crashed or lost power.
    public var deadWriters = 0
    /// Their open flows, now closed as interrupted.
    public var interruptedFlows = 0
    /// Writers that stopped cleanly unable to record their end (`LeftOpenCause.stoppedUnsaved`).
    public var stoppedWriters = 0
    /// Their open flows, now closed as interrupted.
    public var stoppedFlows = 0

    public init(deadWriters: Int = 0, interruptedFlows: Int = 0, stoppedWriters: Int = 0, stoppedFlows: Int = 0) {
        self.deadWriters = deadWriters
        self.interruptedFlows = interruptedFlows
        self.stoppedWriters = stoppedWriters
        self.stoppedFlows = stoppedFlows
    }
}
