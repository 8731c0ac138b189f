import CTVShims
import LocalCA
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Something a loop delivers readiness, timers and "run again" turns to. Confined to the loop's
/// thread: only the loop calls these.
protocol LoopHandler: AnyObject {
    /// `side` is the low two bits of the token the fd was registered with.
    func loopEvent(side: Int, events: UInt32)
    /// A timer this handler armed is due (or a stale one fired: check your own deadlines).
    func loopTimer(deadline: UInt64)
    /// The turn asked for with `EventLoop.runAgain` (work left over for fairness).
    func loopRunAgain()
    /// The loop is stopping and this handler is still alive: close now.
    func loopShutdown()
}

/// The thread-safe door into a loop: other threads (the server, resolver threads) post jobs that
/// the loop runs on its own thread.
final class LoopInbox: Sendable {
    typealias Job = @Sendable (EventLoop) -> Void
    let wakeFD: Int32
    private struct State {
        var jobs: [Job] = []
        var signalled = false
    }
    private let state = Mutex(State())

    init() { wakeFD = tv_eventfd() }

    func post(_ job: @escaping Job) {
        let signal = state.withLock { s -> Bool in
            s.jobs.append(job)
            if s.signalled { return false }
            s.signalled = true
            return true
        }
        if signal {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
    }

    func take() -> [Job] {
        var drained: UInt64 = 0
        _ = read(wakeFD, &drained, 8)
        return state.withLock { s in
            let jobs = s.jobs
            s.jobs = []
            s.signalled = false
            return jobs
        }
    }
}

/// One event-loop thread: an epoll set, the handlers it owns, its timers and its relay buffer.
///
/// Not Sendable: created on its thread and used only there. Everything another thread needs goes
/// through `inbox` (jobs) or the Sendable `shared` state.
final class EventLoop {
    let index: Int
    let shared: ProxyShared
    let inbox: LoopInbox
    let counters: LoopCounters
    private let epfd: Int32
    /// The relay buffer: every read on this loop lands here, so the data path never allocates.
    let buffer: UnsafeMutableRawBufferPointer

    /// The facts of the upstream certificate this loop read last, with a reference to it (so its
    /// address cannot be reused by another certificate while kept). Resumed upstream legs share
    /// the X509 of the session they resume: the digest, hex and names are then read once.
    var lastUpstreamCertificate: (certificate: Certificate, facts: ServerCertificateFacts, names: [SubjectAlternativeName])?

    /// This loop's view of the listening socket (nil for a loop that only adopts connections).
    var listener: Listener?
    private var handlers: [LoopHandler?] = []
    private var generations: [UInt32] = []
    private var freeSlots: [Int] = []
    private(set) var liveHandlers = 0
    private var timers = TimerHeap()
    private var again: [UInt64] = []
    private var events: UnsafeMutablePointer<epoll_event>
    private let maxEvents = 256
    private var running = true
    private var drainDeadline: UInt64?
    /// `--busy-poll`: poll a while before sleeping after a wait that found work (off by default).
    private let busyPoll: BusyPollPolicy
    private var lastWaitFoundEvents = false

    /// Monotonic ns and wall-clock µs, read once per loop turn.
    private(set) var now: UInt64
    private(set) var wallNow: Int64

    static let wakeToken: UInt64 = .max

    init(index: Int, shared: ProxyShared, counters: LoopCounters) throws {
        self.index = index
        self.shared = shared
        self.counters = counters
        epfd = tv_epoll_create()
        guard epfd >= 0 else { throw ProxyError.threadsUnavailable("epoll_create: \(Errno(errno))") }
        inbox = LoopInbox()
        guard inbox.wakeFD >= 0 else { throw ProxyError.threadsUnavailable("eventfd: \(Errno(errno))") }
        buffer = .allocate(byteCount: max(16 * 1024, shared.configuration.relayBufferSize), alignment: 16)
        events = .allocate(capacity: maxEvents)
        busyPoll = BusyPollPolicy(micros: shared.configuration.busyPollMicros)
        now = Clock.monotonicNanos()
        wallNow = Clock.wallMicros()
        _ = tv_epoll_ctl(epfd, tv_EPOLL_CTL_ADD, inbox.wakeFD, tv_EPOLLIN, EventLoop.wakeToken)
    }

    deinit {
        buffer.deallocate()
        events.deallocate()
        close(epfd)
        close(inbox.wakeFD)
    }

    // MARK: handlers and tokens

    /// Registers a handler; its token (side 0) is returned. Tokens carry a generation so that an
    /// event for a slot that was freed and reused is dropped.
    func register(_ handler: LoopHandler) -> UInt64 {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            handlers[slot] = handler
        } else {
            slot = handlers.count
            handlers.append(handler)
            generations.append(1)
        }
        liveHandlers += 1
        return UInt64(generations[slot]) << 32 | UInt64(slot) << 2
    }

    func unregister(_ token: UInt64) {
        let slot = Int((token >> 2) & 0x3FFF_FFFF)
        guard slot < handlers.count, generations[slot] == UInt32(truncatingIfNeeded: token >> 32), handlers[slot] != nil else { return }
        handlers[slot] = nil
        generations[slot] &+= 1
        if generations[slot] == 0 { generations[slot] = 1 }
        freeSlots.append(slot)
        liveHandlers -= 1
    }

    func handler(for token: UInt64) -> LoopHandler? {
        let slot = Int((token >> 2) & 0x3FFF_FFFF)
        guard slot < handlers.count, generations[slot] == UInt32(truncatingIfNeeded: token >> 32) else { return nil }
        return handlers[slot]
    }

    /// Watches `fd` (edge-triggered unless `level`); events go to the handler of `token` with `side`.
    @discardableResult
    func watch(_ fd: Int32, token: UInt64, side: Int, events: UInt32, level: Bool = false) -> Bool {
        let bits = level ? events : (events | tv_EPOLLET)
        return tv_epoll_ctl(epfd, tv_EPOLL_CTL_ADD, fd, bits, token | UInt64(side)) == 0
    }

    func rewatch(_ fd: Int32, token: UInt64, side: Int, events: UInt32, level: Bool = false) {
        let bits = level ? events : (events | tv_EPOLLET)
        _ = tv_epoll_ctl(epfd, tv_EPOLL_CTL_MOD, fd, bits, token | UInt64(side))
    }

    func unwatch(_ fd: Int32) {
        _ = tv_epoll_ctl(epfd, tv_EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Calls the handler's `loopTimer` at (or soon after) `deadline` (monotonic ns).
    func armTimer(_ token: UInt64, at deadline: UInt64) {
        timers.push(deadline, token)
    }

    /// Gives the handler another turn after this round of events (work left for fairness).
    func runAgain(_ token: UInt64) {
        again.append(token)
    }

    /// Refreshes `now`/`wallNow` (after a long piece of work, e.g. a leaf mint).
    func refreshClock() {
        now = Clock.monotonicNanos()
        wallNow = Clock.wallMicros()
    }

    // MARK: running

    /// Starts draining: no new work is taken by listeners (they close themselves); open handlers
    /// get until `grace` ns from now, then are told to shut down.
    func beginStop(graceNanos: UInt64) {
        listener?.stopListening()
        listener = nil
        drainDeadline = now + graceNanos
    }

    func run() {
        while running {
            var timeout: Int32 = -1
            if !again.isEmpty {
                timeout = 0
            } else if let next = timers.nextDeadline {
                let wait = next > now ? (next - now + 999_999) / 1_000_000 : 0
                timeout = Int32(min(wait, 60_000))
            }
            if drainDeadline != nil { timeout = timeout < 0 ? 20 : min(timeout, 20) }
            var n: Int32
            if let until = busyPoll.spinUntil(now: now, previousWaitFoundEvents: lastWaitFoundEvents, timeoutMillis: timeout) {
                repeat { n = tv_epoll_wait(epfd, events, Int32(maxEvents), 0) } while n == 0 && Clock.monotonicNanos() < until
                if n == 0 { n = tv_epoll_wait(epfd, events, Int32(maxEvents), timeout) }
            } else {
                n = tv_epoll_wait(epfd, events, Int32(maxEvents), timeout)
            }
            lastWaitFoundEvents = n > 0
            now = Clock.monotonicNanos()
            wallNow = Clock.wallMicros()
            if n > 0 {
                for i in 0..<Int(n) {
                    let token = tv_epoll_event_token(events, Int32(i))
                    let bits = tv_epoll_event_bits(events, Int32(i))
                    if token == EventLoop.wakeToken {
                        for job in inbox.take() { job(self) }
                        continue
                    }
                    handler(for: token)?.loopEvent(side: Int(token & 3), events: bits)
                }
            }
            while let (deadline, token) = timers.popDue(now) {
                handler(for: token)?.loopTimer(deadline: deadline)
            }
            if !again.isEmpty {
                let turn = again
                again.removeAll(keepingCapacity: true)
                for token in turn { handler(for: token)?.loopRunAgain() }
            }
            if let deadline = drainDeadline, liveHandlers == 0 || now >= deadline {
                for h in handlers { h?.loopShutdown() }
                running = false
            }
        }
        for job in inbox.take() { job(self) }
        timers.removeAll()
    }
}
