import CSQLite
import Dispatch
import Foundation
import Synchronization

/// When the flow writer asks for a checkpoint of its write-ahead log, and when it waits for one
/// (pure; one per writer connection, fed the WAL's frame count after each commit).
///
/// The writer checkpoints nothing itself (`wal_autocheckpoint=0`): `WALCheckpointer` copies the
/// WAL into the database file on a thread and connection of its own while the writer goes on.
/// SQLite starts the WAL over only at a write transaction that begins with every frame copied,
/// which a writer that never pauses does not see; so past `restartAt` frames the writer waits
/// for one checkpoint that starts after its commit (then all frames are copied, and its next
/// transaction starts the WAL over). The WAL thus holds at most `restartAt` frames and one
/// batch's, unless a reader's older snapshot keeps the checkpoint short of the end (as with
/// SQLite's own autocheckpoint): then the writer waits again only every `askEvery` frames.
struct WALCheckpointSchedule: Sendable, Equatable {
    /// Frames committed since the last request before the next one (4 KiB pages).
    let askEvery: Int
    /// Frames in the WAL past which the writer waits for a checkpoint of all of them.
    let restartAt: Int
    /// The WAL's frame count at the last request (0 after the WAL started over).
    private(set) var askedAt = 0

    /// What to do after a commit.
    enum Decision: Equatable, Sendable {
        /// Nothing yet.
        case nothing
        /// Ask the checkpointer, without waiting.
        case ask
        /// Ask, and wait until that checkpoint ends.
        case waitForAll
    }

    /// The flow writer's: a request every 4,096 frames (16 MiB), a wait past 16,384 (64 MiB).
    static let flowWriter = WALCheckpointSchedule(askEvery: 4_096, restartAt: 16_384)

    init(askEvery: Int, restartAt: Int) {
        self.askEvery = max(askEvery, 1)
        self.restartAt = max(restartAt, self.askEvery)
    }

    /// The decision for a commit that left `frames` frames in the WAL (`sqlite3_wal_hook`'s count).
    mutating func committed(frames: Int) -> Decision {
        // Fewer frames than at the last request: the WAL started over since.
        if frames < askedAt { askedAt = 0 }
        guard frames - askedAt >= askEvery else { return .nothing }
        askedAt = frames
        return frames >= restartAt ? .waitForAll : .ask
    }
}

/// The flow database's WAL checkpoints (`PRAGMA wal_checkpoint(PASSIVE)`), on a thread and
/// connection of their own, so the copy into the database file and its fdatasync(2) overlap the
/// writer's next batches on another core instead of stalling them (they were ~15 % of the
/// writer's samples: `fdatasync` 6.3 %, the copy's reads and writes; perf, i27-hist).
///
/// The writer asks (`ask`) or asks and waits (`askAndWait`); a request is answered by one
/// checkpoint that begins after it (requests made meanwhile share it). A failed checkpoint (a
/// `tv storage` command's own running, SQLITE_BUSY) is left to the next request. `stop` ends the
/// thread and closes its connection.
final class WALCheckpointer: Sendable {
    private struct State {
        var requested = 0
        var completed = 0
        /// The request the writer waits for, if it waits.
        var awaited: Int?
        var stopping = false
        /// Checkpoints run (tests).
        var runs = 0
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let answered = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the thread, which opens its own connection to `path` (a file the writer already
    /// opened and migrated). A connection that cannot be opened leaves every request unanswered
    /// but answered as done: the WAL then grows as it would without checkpoints.
    init(path: String) {
        let thread = Thread { [self] in run(path: path) }
        thread.name = "tv checkpoint"
        thread.start()
    }

    /// Asks for a checkpoint; returns at once.
    func ask() {
        state.withLock { $0.requested += 1 }
        wake.signal()
    }

    /// Asks for a checkpoint and waits until it has ended.
    func askAndWait() {
        let stopping = state.withLock { state -> Bool in
            state.requested += 1
            state.awaited = state.requested
            return state.stopping
        }
        guard !stopping else { return }
        wake.signal()
        answered.wait()
    }

    /// How many checkpoints have run.
    var runs: Int { state.withLock { $0.runs } }

    /// Ends the thread (after the checkpoint running, if one is) and waits for it.
    func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
        finished.wait()
    }

    private func run(path: String) {
        let database = try? SQLiteDatabase(path: path, oneThread: true)
        defer {
            database?.close()
            finished.signal()
        }
        while true {
            wake.wait()
            let (request, stopping, due) = state.withLock { ($0.requested, $0.stopping, $0.completed < $0.requested) }
            if due, let database {
                database.checkpointPassively()
            }
            let waiter = state.withLock { state -> Bool in
                state.completed = request
                if due { state.runs += 1 }
                guard let awaited = state.awaited, awaited <= request else { return false }
                state.awaited = nil
                return true
            }
            if waiter { answered.signal() }
            if stopping {
                // A writer that asked after the last check is not left waiting.
                if state.withLock({ state -> Bool in defer { state.awaited = nil }; return state.awaited != nil }) {
                    answered.signal()
                }
                return
            }
        }
    }
}

extension SQLiteDatabase {
    /// `sqlite3_wal_checkpoint_v2(PASSIVE)`: copies what frames it can into the database file
    /// without waiting for any lock; a failure (SQLITE_BUSY: another checkpoint runs) is ignored.
    func checkpointPassively() {
        guard let db = try? connection() else { return }
        var log: Int32 = 0, copied: Int32 = 0
        _ = sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
    }

    /// `sqlite3_wal_checkpoint_v2(TRUNCATE)`: copies every frame of the WAL into the database
    /// file and truncates the WAL to nothing, so its room goes back to the file system (the
    /// frames of a failed transaction included). Waits at most `waitMillis` for readers (the
    /// busy handler, set for the call) and for another connection's checkpoint (which holds the
    /// checkpoint lock: SQLite answers busy at once, without the handler; tried again every 10 ms).
    /// - Returns: nil when the WAL was emptied; `.diskFull` when the database file cannot grow
    ///   to take the frames (the WAL stays as it was), `.busy`, or another failure.
    @discardableResult
    func checkpointTruncating(waitingAtMost waitMillis: Int32) -> FlowStoreError? {
        let db: OpaquePointer
        do { db = try connection() } catch { return error as? FlowStoreError }
        SQLiteBusyWait.install(on: db, timeoutMilliseconds: waitMillis)
        defer { SQLiteBusyWait.install(on: db, timeoutMilliseconds: busyTimeoutMillis) }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(waitMillis, 0)) * 1_000_000
        while true {
            var log: Int32 = 0, copied: Int32 = 0
            let rc = sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_TRUNCATE, &log, &copied)
            if rc == SQLITE_OK { return nil }
            guard rc & 0xff == SQLITE_BUSY, DispatchTime.now().uptimeNanoseconds < deadline else { return error(code: rc) }
            usleep(10_000)
        }
    }

    /// Calls `hook` after each commit with the frames then in the WAL (`sqlite3_wal_hook`, which
    /// replaces SQLite's autocheckpoint on this connection). `counter` must outlive the connection.
    func watchWAL(_ counter: WALFrameCount) {
        guard let db = try? connection() else { return }
        sqlite3_wal_hook(db, { context, _, _, frames in
            guard let context else { return SQLITE_OK }
            Unmanaged<WALFrameCount>.fromOpaque(context).takeUnretainedValue().frames = Int(frames)
            return SQLITE_OK
        }, Unmanaged.passUnretained(counter).toOpaque())
    }
}

/// The WAL's frame count after the last commit of a connection (`SQLiteDatabase.watchWAL`); set
/// and read on that connection's thread only.
final class WALFrameCount {
    var frames = 0
}
