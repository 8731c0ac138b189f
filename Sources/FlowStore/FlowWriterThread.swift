import Dispatch
import FlowTerms

/// What the flow writer thread owns, and what one batch write is: the connection, the flows a
/// failed write left for the next attempt (`UnwrittenFlows`) and whether writes reach the disk
/// (`WriteHealth`). Everything here runs on that one thread, driven by its
/// `BoundedWriterQueue`.
///
/// Each batch is written after the flows still unwritten, in one transaction; while flows wait,
/// the writer tries again every `retryMillis` even when nothing new comes. On stop, one last
/// attempt, then the connection is closed and what is still unwritten is given up (and counted).
final class FlowWriterThread: QueueWriter {
    typealias Queue = BoundedWriterQueue<FlowWriterThread>

    private let queue: Queue
    /// The connection, or nil when it could not be opened yet (a full disk at start, a shared
    /// store out of reach): each attempt then tries to open it first.
    private var writer: (any FlowBatchStore)?
    /// What the writer writes to (the SQLite file or the shared store), to open it later.
    private let backend: any FlowBatchBackend
    /// The database file or server, for errors that are not `FlowStoreError`s.
    private let path: String
    /// How the writer is being closed (see `FlowWriter.close(interruptingOpenFlows:)`), for a
    /// connection opened late.
    private let closing: ClosingChoice
    private var unwritten: UnwrittenFlows
    /// Exchanges still open, held back so most are written once, at their end.
    private var openExchanges = OpenExchangeHold()
    /// Rows of requests made before this time (µs since the epoch) are written without their
    /// query (`FlowWriter.removeQueries(requestedBefore:waitingUntil:)`).
    private var queriesRemovedBefore: Int64?
    private var health = WriteHealth()
    /// Failed attempts since the last one that succeeded (the backoff's count).
    private var failuresInARow = 0
    /// How the last attempt failed (the backoff's kind: `FlowBatchBackend.retryDelay`).
    private var lastFailure: FlowStoreError?
    /// While the store is not open: when it may be tried again. A batch that comes sooner waits
    /// with the unwritten flows and opens nothing (every batch opened a connection: with a wrong
    /// password, one failed login per batch, many a second under traffic).
    private var reopenAt: DispatchTime?
    /// True when a lost connection was dropped while the store had its own work
    /// (`FlowBatchStore.sideWorkDue`, the shared store's local tables): the idle timer then
    /// reconnects with backoff, without waiting for a batch.
    private var sideWorkOwed = false
    /// Told when writes start failing and when they resume.
    private let onHealthChange: (@Sendable (WriteHealth.Change, FlowWriterCounters) -> Void)?

    /// - Parameters:
    ///   - retryLimit: how many flows whose write failed are kept for the next attempt.
    ///   - startFailure: why `writer` is nil; reported (counted, and told to `onHealthChange`)
    ///     before `init` returns.
    init(queue: Queue, writer: (any FlowBatchStore)?, backend: any FlowBatchBackend, path: String, closing: ClosingChoice, retryLimit: Int,
         startFailure: FlowStoreError? = nil,
         onHealthChange: (@Sendable (WriteHealth.Change, FlowWriterCounters) -> Void)?) {
        self.queue = queue
        self.writer = writer
        self.backend = backend
        self.path = path
        self.closing = closing
        unwritten = UnwrittenFlows(limit: retryLimit)
        self.onHealthChange = onHealthChange
        if let startFailure {
            report(startFailure)
            // Opened again on the idle timer, with backoff, not only when a flow comes.
            sideWorkOwed = backend.opensWhenIdle
        }
    }

    func tick() {}

    var idleDeadline: DispatchTime? {
        let retry = reopenAt ?? .now() + .milliseconds(backend.retryDelay(failures: failuresInARow, after: lastFailure))
        let side = writer?.sideWorkDue ?? (sideWorkOwed ? retry : nil)
        if !unwritten.isEmpty { return earliest(retry, side) }
        guard let due = openExchanges.nextDue else { return side }
        // At the held exchange's due time (µs of wall clock), and never in a tight loop.
        return earliest(.now() + .microseconds(Int(max(1_000, min(due - EngineClock.wallMicros(), 60_000_000)))), side)
    }

    func idleDeadlinePassed() {
        _ = attempt([])
        // The store's own work waits on the server as a batch does: said the same way (a server
        // that hung during it read "connected": a re-check).
        let began = EngineClock.wallMicros()
        queue.updateCounters { $0.writingSince = began }
        defer { queue.updateCounters { $0.writingSince = nil } }
        // The store's own work (`FlowBatchStore.sideWorkDue`). A connection lost doing it is
        // dropped and made anew on a later tick (`sideWorkOwed`, with the batches' backoff);
        // both the failure and the recovery are reported as a batch's are.
        var reconnected = false
        if writer == nil, sideWorkOwed, reopenDue {
            do {
                writer = try backend.open(closing: closing)
                sideWorkOwed = false
                reconnected = true
            } catch {
                report(error as? FlowStoreError ?? .failed(path: path, reason: "\(error)"))
                return
            }
        }
        // A new connection copies at once (its first `sideWorkDue` is an interval away).
        guard let store = writer, let due = store.sideWorkDue, reconnected || due <= .now() else { return }
        do {
            try store.doSideWork()
            if health.failing { report(nil) }
        } catch {
            if store.isLost {
                store.close()
                writer = nil
                sideWorkOwed = true
                report(error as? FlowStoreError ?? .failed(path: path, reason: "\(error)"))
            }
        }
    }

    /// Whether the store, not open, may be tried now (`reopenAt` passed, or never failed).
    private var reopenDue: Bool { reopenAt.map { DispatchTime.now() >= $0 } ?? true }

    private func earliest(_ deadline: DispatchTime, _ other: DispatchTime?) -> DispatchTime {
        guard let other else { return deadline }
        return min(deadline, other)
    }

    func write(_ batch: PendingFlowEvents) -> Int {
        attempt(batch.events) ? 0 : batch.count
    }

    /// From now on, writes the rows of requests made before `cutoff` without their query.
    func removeQueries(before cutoff: Int64) {
        queriesRemovedBefore = max(queriesRemovedBefore ?? cutoff, cutoff)
    }

    /// `events` with the query taken out of each exchange row requested before
    /// `queriesRemovedBefore` (one comparison a row once those have gone by).
    private func removingQueries(_ events: [FlowEvent]) -> [FlowEvent] {
        guard let cutoff = queriesRemovedBefore else { return events }
        return events.map { event in
            guard case var .exchange(exchange) = event, exchange.requestTime < cutoff, exchange.removeQuery() else { return event }
            return .exchange(exchange)
        }
    }

    /// Writes every exchange held open now (`FlowWriter.flush`).
    func writeOpenExchanges() {
        guard openExchanges.count > 0 else { return }
        _ = attempt([], releasingOpenExchanges: true)
    }

    func stop() {
        // One last try whatever the backoff says: what fails now is given up.
        reopenAt = nil
        if (!unwritten.isEmpty || openExchanges.count > 0), attempt([], releasingOpenExchanges: true) == false {
            let before = unwritten.exchangesGivenUp
            giveUp(unwritten.giveUpAll())
            countExchangesGivenUp(since: before)
            queue.updateCounters { $0.unwrittenFlows = 0 }
        }
        writer?.close()
    }

    /// Writes `batch` after the flows still unwritten, in one transaction (opening the connection
    /// first when it is not open yet); on failure keeps them all for the next attempt (giving up
    /// the oldest past the retry limit). Counts, and tells `onHealthChange` when writes start
    /// failing or resume.
    /// - Returns: true when the transaction committed.
    private func attempt(_ batch: [FlowEvent], releasingOpenExchanges: Bool = false) -> Bool {
        let represented = unwritten.representedEvents
        let backlog = unwritten.isEmpty ? [] : unwritten.takeAll()
        let taken = backlog.isEmpty ? batch : backlog + batch
        let events = removingQueries(openExchanges.sift(taken, now: EngineClock.wallMicros(), releasingAll: releasingOpenExchanges))
        guard !events.isEmpty else { return true }
        guard writer != nil || reopenDue else {
            // Not tried: they wait with the others for the next attempt.
            let before = unwritten.exchangesGivenUp
            giveUp(unwritten.keep(events, representing: represented + batch.count))
            countExchangesGivenUp(since: before)
            let count = unwritten.count
            queue.updateCounters { $0.unwrittenFlows = count }
            return false
        }
        var failure: FlowStoreError?
        let began = EngineClock.wallMicros()
        queue.updateCounters { $0.writingSince = began }
        do {
            if writer == nil {
                writer = try backend.open(closing: closing)
                sideWorkOwed = false
            }
            try writer!.write(events)
        } catch let error as FlowStoreError {
            failure = error
        } catch {
            failure = .failed(path: path, reason: "\(error)")
        }
        queue.updateCounters { $0.writingSince = nil }
        if failure != nil {
            // A lost connection (the shared store's server went away) is made anew next time.
            if let lost = writer, lost.isLost {
                sideWorkOwed = lost.sideWorkDue != nil
                lost.close()
                writer = nil
            }
            let before = unwritten.exchangesGivenUp
            giveUp(unwritten.keep(events, representing: represented + batch.count))
            countExchangesGivenUp(since: before)
        }
        // What waited from earlier attempts is written now (a trial's status said 52 of 157
        // events written, every flow in the store).
        if failure == nil, represented > 0 { queue.updateCounters { $0.writtenOnRetry += represented } }
        report(failure)
        return failure == nil
    }

    /// Records an attempt's outcome in the counters and `health`; tells `onHealthChange` of a
    /// change.
    private func report(_ failure: FlowStoreError?) {
        let change = health.record(succeeded: failure == nil)
        failuresInARow = failure == nil ? 0 : failuresInARow + 1
        lastFailure = failure
        reopenAt = failure != nil && writer == nil
            ? .now() + .milliseconds(backend.retryDelay(failures: failuresInARow, after: failure)) : nil
        let unwrittenCount = unwritten.count, failedAttempts = health.failedAttempts
        queue.updateCounters { counters in
            counters.unwrittenFlows = unwrittenCount
            counters.failedWrites = failedAttempts
            if let failure { counters.lastError = failure }
        }
        // Said before `failing` shows in the counters, so whoever sees it can find the line.
        if let change {
            var counters = queue.counters
            counters.failing = health.failing
            onHealthChange?(change, counters)
        }
        let failing = health.failing
        queue.updateCounters { $0.failing = failing }
    }

    /// Counts the exchanges `unwritten` gave up since it had given up `before`.
    private func countExchangesGivenUp(since before: Int) {
        let lost = unwritten.exchangesGivenUp - before
        if lost > 0 { queue.updateCounters { $0.exchangesNotSaved += lost } }
    }

    /// Counts `flows` as given up: not saved at all when the database has no row of them, saved
    /// without their latest state otherwise (asked of the connection, or of a read-only one
    /// when it is not open).
    private func giveUp(_ flows: [FlowRecord]) {
        guard !flows.isEmpty else { return }
        let ids = flows.map(\.id)
        backend.gaveUp(ids)
        let missing: Int
        if let writer {
            missing = writer.countMissing(ids)
        } else {
            missing = backend.countMissingWithoutStore(ids)
        }
        queue.updateCounters { counters in
            counters.flowsNotSaved += missing
            counters.flowUpdatesNotSaved += flows.count - missing
        }
    }
}

extension BoundedWriterQueue where Writer == FlowWriterThread {
    /// The flow writer's counters: the queue's figures (accepted, written, failed, pending)
    /// with the writer's own.
    var counters: FlowWriterCounters {
        read { counters, batch, handshake in
            var snapshot = counters
            snapshot.accepted = handshake.accepted
            snapshot.written = handshake.finished - handshake.failed
            snapshot.failed = handshake.failed
            snapshot.pending = batch.count
            return snapshot
        }
    }
}
