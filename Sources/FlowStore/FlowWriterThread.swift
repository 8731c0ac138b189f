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
    /// Told when flows start being given up past the retry limit (once until writes resume).
    private let onGivingUp: (@Sendable (FlowWriterCounters) -> Void)?
    /// Whether flows were given up past the retry limit since writes last resumed, and whether
    /// `onGivingUp` was told so (after the failure is said: `sayGivingUp`).
    private var givingUp = false
    private var givingUpSaid = false
    /// Whether writes go in parts with the WAL emptied between them (after a full disk).
    private var fullDisk = FullDiskWrites()
    /// Told where this writer stands after each attempt (`HistoryFirst.standing`), for the
    /// content and decrypted capture writers on the same disk; nil for the shared store's
    /// writer (its failures are the server's, not this disk's).
    private let historyFirst: HistoryFirstSignal?

    /// - Parameters:
    ///   - retryLimit: how many flows whose write failed are kept for the next attempt.
    ///   - startFailure: why `writer` is nil; reported (counted, and told to `onHealthChange`)
    ///     before `init` returns.
    ///   - historyFirst: told where the writer stands after each attempt (`HistoryFirst`).
    init(queue: Queue, writer: (any FlowBatchStore)?, backend: any FlowBatchBackend, path: String, closing: ClosingChoice, retryLimit: Int,
         startFailure: FlowStoreError? = nil, historyFirst: HistoryFirstSignal? = nil,
         onHealthChange: (@Sendable (WriteHealth.Change, FlowWriterCounters) -> Void)?,
         onGivingUp: (@Sendable (FlowWriterCounters) -> Void)? = nil) {
        self.historyFirst = historyFirst
        self.queue = queue
        self.writer = writer
        self.backend = backend
        self.path = path
        self.closing = closing
        unwritten = UnwrittenFlows(limit: retryLimit)
        self.onHealthChange = onHealthChange
        self.onGivingUp = onGivingUp
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
            let exchanges = unwritten.exchangesGivenUp, programs = unwritten.programsGivenUp
            giveUp(unwritten.giveUpAll(), stopping: true)
            countGivenUp(exchangesSince: exchanges, programsSince: programs)
            queue.updateCounters { $0.unwrittenFlows = 0 }
        }
        // Nothing waits any more (the other writers stopped first: `SessionWiring.close`).
        historyFirst?.set(.clear)
        writer?.close()
    }

    /// Writes `batch` after the flows still unwritten (opening the connection first when it is
    /// not open yet): in one transaction, or, after a full disk (`FullDiskWrites`), the backlog
    /// in parts, each its own transaction, then what is left of it with `batch`. On failure keeps
    /// what was not written for the next attempt (giving up the oldest past the retry limit).
    /// Counts, and tells `onHealthChange` when writes start failing or resume.
    /// - Returns: true when everything was committed.
    private func attempt(_ batch: [FlowEvent], releasingOpenExchanges: Bool = false) -> Bool {
        // Only the new events are sifted: what waits was sifted when it first came.
        let fresh = removingQueries(openExchanges.sift(batch, now: EngineClock.wallMicros(), releasingAll: releasingOpenExchanges))
        guard !fresh.isEmpty || !unwritten.isEmpty else { return true }
        if writer == nil {
            guard reopenDue else {
                // Not tried: they wait with the others for the next attempt.
                keepUnwritten(fresh, batch: batch.count)
                sayGivingUp()
                return false
            }
            do {
                writer = try backend.open(closing: closing)
                sideWorkOwed = false
            } catch {
                keepUnwritten(fresh, batch: batch.count)
                report(error as? FlowStoreError ?? .failed(path: path, reason: "\(error)"))
                return false
            }
        }
        if let size = fullDisk.partSize, unwritten.items > size {
            // The previous failure's frames may still fill the WAL (its truncation found the
            // checkpoint lock held, or a reader): emptied before the first part.
            writer?.emptyJournal()
            while unwritten.items > size {
                let part = unwritten.take(upTo: size)
                switch write(part.events) {
                case .failed(let failure):
                    unwritten.putBack(part)
                    keepUnwritten(fresh, batch: batch.count)
                    report(failure)
                    return false
                case .committed(let full):
                    countWrittenOnRetry(part.represented)
                    // The database could not grow to take the part from the WAL: the next part
                    // would only add a failed transaction's frames beside this one's. What is
                    // left waits for room.
                    if let full {
                        keepUnwritten(fresh, batch: batch.count)
                        report(full)
                        return false
                    }
                }
            }
        }
        let rest = unwritten.take(upTo: .max)
        // Most batches have no backlog: written as they came, not copied behind an empty one.
        if case .failed(let failure) = write(rest.items == 0 ? fresh : rest.events + fresh) {
            unwritten.putBack(rest)
            keepUnwritten(fresh, batch: batch.count)
            report(failure)
            return false
        }
        countWrittenOnRetry(rest.represented)
        report(nil)
        return true
    }

    /// How one transaction ended.
    private enum WriteOutcome {
        /// It committed; `full` when the WAL could not be emptied after it for a full disk.
        case committed(full: FlowStoreError?)
        case failed(FlowStoreError)
    }

    /// Writes `events` in one transaction on the open store; empties the journal after it when
    /// `fullDisk` says so.
    private func write(_ events: [FlowEvent]) -> WriteOutcome {
        guard !events.isEmpty, let store = writer else { return .committed(full: nil) }
        var failure: FlowStoreError?
        let began = EngineClock.wallMicros()
        queue.updateCounters { $0.writingSince = began }
        do {
            try store.write(events)
        } catch let error as FlowStoreError {
            failure = error
        } catch {
            failure = .failed(path: path, reason: "\(error)")
        }
        queue.updateCounters { $0.writingSince = nil }
        var full: FlowStoreError?
        if fullDisk.wrote(failure: failure, freeBytes: { store.freeBytes }) == .emptyJournal,
           let error = store.emptyJournal(), case .diskFull = error {
            full = error
        }
        guard let failure else { return .committed(full: full) }
        // A lost connection (the shared store's server went away) is made anew next time.
        if store.isLost {
            sideWorkOwed = store.sideWorkDue != nil
            store.close()
            writer = nil
        }
        return .failed(failure)
    }

    /// Keeps `events`, the batch's sifted (`batch` of them as queued), for the next attempt;
    /// gives up and counts what is past the retry limit.
    private func keepUnwritten(_ events: [FlowEvent], batch: Int) {
        let exchanges = unwritten.exchangesGivenUp, programs = unwritten.programsGivenUp
        giveUp(unwritten.keep(events, representing: batch))
        countGivenUp(exchangesSince: exchanges, programsSince: programs)
        let count = unwritten.count
        queue.updateCounters { $0.unwrittenFlows = count }
        // Flows kept without an attempt (the store not open yet after a full disk at start)
        // wait for room as surely as after a failed one.
        tellStanding(failure: lastFailure)
    }

    /// Tells `historyFirst` where the writer stands, `failure` being the last attempt's.
    private func tellStanding(failure: FlowStoreError?) {
        historyFirst?.set(HistoryFirst.standing(flowsWaiting: unwritten.count, failure: failure))
    }

    /// What waited from earlier attempts and is written now (a trial's status said 52 of 157
    /// events written, every flow in the store).
    /// (A part may count less than its events, or below zero, when the exchange hold moved
    /// events between batches; the parts add up.)
    private func countWrittenOnRetry(_ represented: Int) {
        if represented != 0 { queue.updateCounters { $0.writtenOnRetry += represented } }
    }

    /// Records an attempt's outcome in the counters and `health`; tells `onHealthChange` of a
    /// change.
    private func report(_ failure: FlowStoreError?) {
        // Told before the change is said: a writer that reads it next holds (or writes) already.
        tellStanding(failure: failure)
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
        if change == .resumed { (givingUp, givingUpSaid) = (false, false) }
        sayGivingUp()
    }

    /// Tells `onGivingUp` once that flows are being given up, after the failure was said.
    private func sayGivingUp() {
        guard givingUp, !givingUpSaid else { return }
        givingUpSaid = true
        onGivingUp?(queue.counters)
    }

    /// Counts the exchanges and programs `unwritten` gave up since it had given up
    /// `exchangesSince` and `programsSince`.
    private func countGivenUp(exchangesSince: Int, programsSince: Int) {
        let exchanges = unwritten.exchangesGivenUp - exchangesSince, programs = unwritten.programsGivenUp - programsSince
        if exchanges > 0 || programs > 0 {
            queue.updateCounters {
                $0.exchangesNotSaved += exchanges
                $0.programsNotSaved += programs
            }
        }
    }

    /// Counts `flows` as given up: not saved at all when the database has no row of them, saved
    /// without their latest state otherwise (asked of the connection, or of a read-only one
    /// when it is not open), and, of those saved, the ones whose program is lost with them.
    /// The first flows given up while writes fail, past the retry limit (not at the stop), are
    /// said once (`onGivingUp`): they went with only a counter before.
    private func giveUp(_ flows: [UnwrittenFlows.Kept], stopping: Bool = false) {
        guard !flows.isEmpty else { return }
        if !stopping { givingUp = true }
        let ids = flows.map(\.record.id)
        backend.gaveUp(ids)
        let withPrograms = flows.filter { $0.program != nil }.map(\.record.id)
        let missing = countMissing(ids)
        let programsLost = withPrograms.isEmpty ? 0 : withPrograms.count - countMissing(withPrograms)
        queue.updateCounters { counters in
            counters.flowsNotSaved += missing
            counters.flowUpdatesNotSaved += flows.count - missing
            counters.programsNotSaved += programsLost
        }
    }

    /// How many of `ids` have no row (asked of the connection, or of a read-only one).
    private func countMissing(_ ids: [Int64]) -> Int {
        writer?.countMissing(ids) ?? backend.countMissingWithoutStore(ids)
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
