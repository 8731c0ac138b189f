import Foundation
import CTVShims
import Synchronization
import FlowTerms

/// The one writer of flow rows: a background `Thread` with its own SQLite connection, fed through
/// a bounded in-memory queue, so the data path never waits on disk or SQLite.
///
/// - `open(_:)` assigns the flow's id at once (from an atomic counter that starts at max(id)+1),
///   so the caller can keep it; ids are unique only while this is the file's single writer.
/// - `enqueue(_:)` never blocks: when `capacity` events are already waiting, the event is dropped
///   and counted (`counters.dropped`); forwarding never stalls for the record.
/// - The thread writes everything waiting as one transaction (upsert by id), then sleeps.
/// - `flush()` waits until what was enqueued before it is committed; `close()` flushes and stops.
public final class FlowWriter: Sendable {
    /// Events the queue holds before it drops (65,536).
    public static let defaultCapacity = 65_536
    /// Flows whose write failed that are kept in memory for the next attempt (16,384; a few MiB).
    public static let defaultRetryLimit = 16_384

    /// The database file's path.
    public let path: String
    /// The queue's capacity, in events.
    public let capacity: Int

    private let queue: FlowWriterThread.Queue
    /// The session's flow ids (`FlowIDSequence`), starting past the database's highest; the
    /// engine takes its connections' ids from it too (`ProxyConfiguration.flowIDs`).
    public let ids: FlowIDSequence
    /// Set by `close(interruptingOpenFlows: true)`; read by the writer thread as it stops.
    private let closing: ClosingChoice
    /// Flows that writers found gone at start had left open, now closed as `interrupted`, and
    /// how many such writers there were, by how they ended (none after a clean stop that could
    /// write its end).
    public let interruptedAtStart: FlowWriterRecovery
    /// The shared store's writer, given every event this one takes (`tv run --store`); nil
    /// without a shared store.
    public let mirror: FlowWriter?
    /// Where this writer stands on its disk (`HistoryFirst`), for the content writer and the
    /// decrypted capture's writer to leave it the room first. The shared store's writer never
    /// sets it (its failures are the server's, not a disk's here): it stays `.clear`.
    public let historyFirst = HistoryFirstSignal()

    /// Opens the database at `path` on a new writer thread (applying migrations) and starts it.
    /// - Parameters:
    ///   - capacity: how many events may wait before new ones are dropped (at least 1).
    ///   - retryLimit: how many flows whose write failed are kept in memory and retried (the
    ///     oldest are given up past it, and counted in `counters.flowsNotSaved`).
    ///   - onHealthChange: called on the writer thread when writes start failing (a full disk)
    ///     and when they succeed again, with the counters at that moment.
    /// - Throws: `FlowStoreError` when the writer's connection cannot open the file (`.corrupt`,
    ///   `.newerSchema`, `.cannotOpen` …); no thread is left running then. A full disk is not
    ///   thrown when the file can be read: the writer starts failing (`onHealthChange` hears it
    ///   at once) and opens its connection at the first attempt that finds room.
    ///   - mirror: the shared store's writer, which is given a copy of every event (ids are this
    ///     writer's: the shared row is keyed by instance and local id).
    ///   - onGivingUp: called on the writer thread when, writes failing, flows start being given
    ///     up past `retryLimit` (once, until writes resume), with the counters at that moment.
    public convenience init(path: String, capacity: Int = FlowWriter.defaultCapacity, retryLimit: Int = FlowWriter.defaultRetryLimit,
                mirror: FlowWriter? = nil,
                onHealthChange: (@Sendable (WriteHealth.Change, FlowWriterCounters) -> Void)? = nil,
                onGivingUp: (@Sendable (FlowWriterCounters) -> Void)? = nil) throws {
        try self.init(path: path, capacity: capacity, retryLimit: retryLimit, mirror: mirror, keepingTriggers: false,
                      onHealthChange: onHealthChange, onGivingUp: onGivingUp)
    }

    /// `init(path:…)`, with `keepingTriggers` true only for a test (`SQLiteFlowBackend.keepsTriggers`).
    init(path: String, capacity: Int = FlowWriter.defaultCapacity, retryLimit: Int = FlowWriter.defaultRetryLimit,
         mirror: FlowWriter? = nil, keepingTriggers: Bool,
         onHealthChange: (@Sendable (WriteHealth.Change, FlowWriterCounters) -> Void)? = nil,
         onGivingUp: (@Sendable (FlowWriterCounters) -> Void)? = nil) throws {
        self.path = path
        self.mirror = mirror
        let closing = ClosingChoice()
        self.closing = closing
        let backend = SQLiteFlowBackend(path: path, retryMillis: 1_000, keepsTriggers: keepingTriggers)
        let historyFirst = historyFirst
        let pending = PendingFlowEvents(capacity: capacity)
        self.capacity = pending.capacity
        // The writer, just woken by a first event, waits up to 100 ms for more, so that a flow's
        // opened/updated/closed events share one transaction and one upsert; a busy writer
        // (a request row per exchange) also waits that long after each write, so a transaction
        // carries at least 100 ms of events. Its COMMIT (a WAL frame per page it changed: the
        // exchanges table and its two indexes, ~18 k instructions) was the largest part of a
        // request row's cost at a browser's pace, with 20 ms (one or two rows a transaction).
        // Reading commands flush first (`LiveSessionFlush`); `tv flows --follow` may see a row
        // up to 100 ms later.
        let queue = FlowWriterThread.Queue(batch: pending, counters: FlowWriterCounters(accepted: 0, written: 0, dropped: 0, failed: 0, pending: 0, lastError: nil),
                                           lingerMillis: 100, lingerAfterWrite: true)
        self.queue = queue
        let startup = Mutex<Result<(Int64, FlowWriterRegistry.Recovery), FlowStoreError>?>(nil)
        let started = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = tv_set_thread_name("tv flow writer")
            // The connection is born, used and closed on this thread.
            let writer: FlowBatchWriter
            do {
                writer = try FlowBatchWriter(path: path, closing: closing, keepingTriggers: keepingTriggers)
            } catch FlowStoreError.diskFull(let full) {
                // A full disk at start: ids go on from the file's max(id), read read-only, and
                // every attempt tries to open the connection again, so recording starts as soon
                // as there is room; forwarding does not wait for it. (Registering, and closing
                // what a dead writer left open, happen at that first open; nothing is said then.)
                do {
                    let firstID = try FlowBatchWriter.firstID(readingAt: path)
                    startup.withLock { $0 = .success((firstID, FlowWriterRegistry.Recovery())) }
                } catch {
                    startup.withLock { $0 = .failure((error as? FlowStoreError) ?? .diskFull(path: full)) }
                    started.signal()
                    return
                }
                // Said before `init` returns, so a session warns before its banner.
                let thread = FlowWriterThread(queue: queue, writer: nil, backend: backend, path: path, closing: closing, retryLimit: retryLimit,
                                              startFailure: .diskFull(path: full), historyFirst: historyFirst,
                                              onHealthChange: onHealthChange, onGivingUp: onGivingUp)
                started.signal()
                queue.run(thread)
                return
            } catch {
                let failure = (error as? FlowStoreError) ?? .failed(path: path, reason: "\(error)")
                startup.withLock { $0 = .failure(failure) }
                started.signal()
                return
            }
            startup.withLock { $0 = .success((writer.firstID, writer.recovery)) }
            started.signal()
            queue.run(FlowWriterThread(queue: queue, writer: writer, backend: backend, path: path, closing: closing, retryLimit: retryLimit,
                                       historyFirst: historyFirst, onHealthChange: onHealthChange, onGivingUp: onGivingUp))
        }
        thread.name = "tv flow writer"
        thread.start()
        started.wait()
        switch startup.withLock({ $0 }) {
        case let .success((firstID, recovery)):
            ids = FlowIDSequence(first: firstID)
            interruptedAtStart = recovery
        case let .failure(error):
            queue.abandon()
            throw error
        case nil:
            queue.abandon()
            throw FlowStoreError.failed(path: path, reason: "the flow writer thread did not start")
        }
    }

    /// A writer of the shared store on PostgreSQL (`tv run --store`), on its own thread with its
    /// own connection, fed by a local writer (`mirror:`) with the same events and ids. Writes are
    /// batched as the local writer's are; while the server is away the queue drops and counts,
    /// the flows of failed batches wait in memory (up to `retryLimit`), and the connection is
    /// made anew with backoff (0.2 s doubling to 5 s).
    /// - Throws: `FlowStoreError.sharedStoreFailed` / `.newerSchema` when the store refuses what
    ///   tv asks of it once connected (the schema, a statement): said at once. A connection that
    ///   cannot be made (`isConnectionRefusal`: stopped, restarting, no route, no or a wrong
    ///   password) is not thrown: the writer starts with writes failing (told to `onHealthChange`
    ///   before `init` returns) and connects when it can, as after an outage mid-session.
    ///   - localPath: the data folder's SQLite file, read on the shared writer's thread for the
    ///     names, pinned hosts and audit rows that travel and the flows a killed run left open
    ///     (`PostgresBatchWriter`); nil: only the events travel.
    ///   - insertion: how batches are sent (`SharedInsertion`; COPY unless a benchmark compares).
    /// - Parameter idFloor: told the largest flow id the store holds for `instance` at each
    ///   connection (the local writer's ids go on past it).
    public init(shared target: SharedStoreTarget, instance: InstanceIdentity, localPath: String? = nil, insertion: SharedInsertion = .copy,
                idFloor: SharedIDFloor? = nil,
                capacity: Int = FlowWriter.defaultCapacity,
                retryLimit: Int = FlowWriter.defaultRetryLimit,
                onHealthChange: (@Sendable (WriteHealth.Change, FlowWriterCounters) -> Void)? = nil) throws {
        path = target.server
        mirror = nil
        let closing = ClosingChoice()
        self.closing = closing
        let pending = PendingFlowEvents(capacity: capacity)
        self.capacity = pending.capacity
        let queue = FlowWriterThread.Queue(batch: pending, counters: FlowWriterCounters(accepted: 0, written: 0, dropped: 0, failed: 0, pending: 0, lastError: nil),
                                           lingerMillis: 20, lingerAfterWrite: false)
        self.queue = queue
        let startup = Mutex<FlowStoreError?>(nil)
        let started = DispatchSemaphore(value: 0)
        let backend = PostgresFlowBackend(target: target, instance: instance, localPath: localPath, insertion: insertion, idFloor: idFloor)
        let thread = Thread {
            _ = tv_set_thread_name("tv shared writer")
            let store: any FlowBatchStore
            do {
                store = try backend.open(closing: closing)
            } catch let error as FlowStoreError where error.isConnectionRefusal {
                // The server does not take a connection now (stopped, restarting, the network,
                // a password the password file lacks or has wrong): the session starts anyway and
                // its flows wait for it as after a mid-session outage (the README: forwarding
                // never waits on the network; a trial's `tv run --store` and its service exited
                // while PostgreSQL was down). Said before `init` returns; each retry connects
                // anew, reading the password file again.
                let thread = FlowWriterThread(queue: queue, writer: nil, backend: backend, path: target.server, closing: closing,
                                              retryLimit: retryLimit, startFailure: error, onHealthChange: onHealthChange)
                started.signal()
                queue.run(thread)
                return
            } catch {
                startup.withLock { $0 = (error as? FlowStoreError) ?? .sharedStoreFailed(server: target.server, reason: "\(error)") }
                started.signal()
                return
            }
            started.signal()
            queue.run(FlowWriterThread(queue: queue, writer: store, backend: backend, path: target.server, closing: closing,
                                       retryLimit: retryLimit, onHealthChange: onHealthChange))
        }
        thread.name = "tv shared writer"
        thread.start()
        started.wait()
        if let failure = startup.withLock({ $0 }) {
            queue.abandon()
            throw failure
        }
        ids = FlowIDSequence(first: 1)
        interruptedAtStart = FlowWriterRecovery()
    }

    deinit {
        queue.stop()
    }

    /// Makes every id handed out from now on larger than `id` (`SharedIDFloor`: the shared
    /// store holds flows of this instance up to `id`, past the local database's).
    public func raiseIDFloor(above id: Int64) { ids.raise(above: id) }

    /// The largest id handed out since the start or the last `raiseIDFloor`
    /// (`FlowIDSequence.highestHandedOut`).
    public var highestAllocatedID: Int64? { ids.highestHandedOut }

    /// A fresh flow id (`ids.next()`). Ids are never reused in this process.
    public func allocateID() -> Int64 { ids.next() }

    /// Gives `flow` a fresh id and enqueues `.opened` with it; never blocks.
    /// - Returns: the record with its id; keep it for `.updated` / `.closed`. The id is valid even
    ///   when the event was dropped (a later update still creates the row).
    @discardableResult
    public func open(_ flow: FlowRecord) -> FlowRecord {
        var flow = flow
        flow.id = allocateID()
        _ = enqueue(.opened(flow))
        return flow
    }

    /// Queues `event` for the writer thread; never blocks.
    /// - Returns: true when queued; false when dropped (queue full or writer closed).
    @discardableResult
    public func enqueue(_ event: consuming FlowEvent) -> Bool {
        if let mirror { _ = mirror.enqueue(copy event) }
        return queue.enqueue(event)
    }

    /// Blocks until every event enqueued before the call is committed (or its batch failed; see
    /// `counters`), exchanges still open included. Returns at once after `close()`.
    public func flush() {
        _ = flush(waitingUntil: .distantFuture)
    }

    /// `flush()` bounded by `deadline`: true when every event enqueued before the call is
    /// committed (or its batch failed), false when the deadline came first.
    public func flush(waitingUntil deadline: DispatchTime) -> Bool {
        // Then the exchanges the writer holds back while open (`OpenExchangeHold`): a reading
        // command that flushed sees the requests in flight.
        guard queue.flush(waitingUntil: deadline) else { return false }
        // false: the writer stopped (nothing is held then) or the deadline came first.
        return queue.perform({ $0.writeOpenExchanges() }, waitingUntil: deadline) || DispatchTime.now() < deadline
    }

    /// Writes the rows of requests made before `cutoff` (µs since the epoch) without their query
    /// from now on: `tv content delete` in a live session takes the queries of the rows written
    /// so far, and a request made before it whose row came later (open then, or queued) kept its
    /// own, shown beside its deleted content (a trial). Waits, at most until `deadline`, for the
    /// writer thread to take it (between batches: a batch being written is committed first).
    /// - Returns: false when the writer is stopping, or the deadline came first.
    public func removeQueries(requestedBefore cutoff: Int64, waitingUntil deadline: DispatchTime) -> Bool {
        queue.perform({ $0.removeQueries(before: cutoff) }, waitingUntil: deadline)
    }

    /// Writes what is queued, stops the thread and closes its connection; later events are
    /// dropped. Idempotent; also done on deinit.
    /// - Parameter interruptingOpenFlows: true when the caller has closed every flow it opened
    ///   (a session that stopped its proxy): a flow of this writer still open in the file then
    ///   lost its close (dropped or failed) and is closed as `interrupted` at its last activity.
    ///   False (the default) leaves the rows as written.
    public func close(interruptingOpenFlows: Bool = false) {
        if interruptingOpenFlows { closing.interruptOpenFlows.store(true, ordering: .relaxed) }
        queue.stop()
    }

    /// `close`, waiting at most `seconds` for what is queued to be written: false when the
    /// writer was still blocked then (the shared store's server stopped answering mid-write:
    /// a trial's `tv stop` and SIGTERM waited as long as the server hung, minutes).
    public func close(waitingAtMost seconds: Double) -> Bool {
        queue.stop(waitingAtMost: seconds)
    }

    /// Counts since the writer started (accepted, written, dropped, failed, pending; flows waiting
    /// to be written again, and flows given up).
    public var counters: FlowWriterCounters {
        queue.counters
    }

    /// Test hook: the thread leaves queued events alone until `resumeForTesting()`.
    func pauseForTesting() {
        queue.pause()
    }

    /// Test hook: undoes `pauseForTesting()`.
    func resumeForTesting() {
        queue.resume()
    }
}
