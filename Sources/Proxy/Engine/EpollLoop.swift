import CTVShims
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// Something an `EpollLoop` delivers readiness, timers and "run again" turns to. Confined to the
/// loop's thread: only the loop calls these.
public protocol LoopHandler: AnyObject {
    /// `side` is the low two bits of the token the fd was registered with (0–3).
    func loopEvent(side: Int, events: UInt32)
    /// A timer this handler armed is due (or a stale one fired: check your own deadlines).
    func loopTimer(deadline: UInt64)
    /// The turn asked for with `EpollLoop.runAgain` (work left over for fairness).
    func loopRunAgain()
    /// The loop is stopping after a drain and this handler is still alive: close now.
    func loopShutdown()
}

/// A handler that arms no timer, asks for no extra turn or is closed by its owner needs only
/// `loopEvent`: these do nothing.
extension LoopHandler {
    public func loopTimer(deadline: UInt64) {}
    public func loopRunAgain() {}
    public func loopShutdown() {}
}

/// Why an `EpollLoop` (or its inbox) could not be made: the call that failed and its errno.
public struct LoopSetupFailure: Error, Equatable, Sendable {
    /// "epoll_create" or "eventfd".
    public let call: String
    public let code: Int32
}

/// The one epoll event loop of tv: the proxy's worker threads (`EventLoop`) and the TUN engine
/// (`EngineLoop`) each run one on their own thread.
///
/// - Tokens: `register` gives a handler a token (generation << 32 | slot << 2); an fd is watched
///   with `token | side` (side 0–3), so one handler can own up to four fds. A token whose slot
///   was freed (and maybe reused) no longer reaches anyone: its events are dropped.
/// - Timers: `armTimer` puts (deadline, token) in a `TimerHeap`; entries are never removed early
///   (a handler ignores a stale one).
/// - Inbox: `attach` watches a `LoopInbox`'s eventfd; its jobs run on this thread.
/// - `--busy-poll`: `BusyPollPolicy` says when to poll instead of sleeping.
/// - Clock: `now` (monotonic ns) and `wallNow` (wall µs) are read once per turn.
///
/// Not Sendable: made on its thread and used only there. Steady state allocates nothing per
/// event: the event array, the handler table, the heap and the run-again list keep their storage.
public final class EpollLoop {
    /// The token epoll reports for the inbox's eventfd (never a handler's: slots stay below 2^30).
    public static let wakeToken: UInt64 = .max

    private let epfd: Int32
    private let events: UnsafeMutablePointer<epoll_event>
    private let maxEvents: Int32
    private var handlers: [LoopHandler?] = []
    private var generations: [UInt32] = []
    private var freeSlots: [Int] = []
    /// Handlers registered and not yet unregistered.
    public private(set) var liveHandlers = 0
    private var timers = TimerHeap()
    private var again: [UInt64] = []
    /// The run-again list being served (swapped with `again`, so neither reallocates).
    private var serving: [UInt64] = []
    private var running = true
    private var drainDeadline: UInt64?
    private var drainInbox: (() -> Void)?
    /// `--busy-poll`: poll a while before sleeping after a wait that found work (off by default),
    /// the window adapting to the gaps between events.
    private var busyPoll: BusyPollPolicy
    /// Where the policy's counts are published after each wait it saw (nil: not published).
    private let busyPollCounts: BusyPollCounts?
    private var lastWaitFoundEvents = false

    /// Monotonic ns and wall-clock µs, read once per loop turn (and by `refreshClock`). Stored
    /// internal and read through the getters below: every access to an internal field is seen by
    /// the whole-module optimizer, which then drops the dynamic exclusivity check on each read
    /// (a public stored var keeps it: other modules could write it).
    private var clockNanos: UInt64
    private var clockMicros: Int64
    /// Monotonic ns of this turn.
    public var now: UInt64 { clockNanos }
    /// Wall-clock µs of this turn.
    public var wallNow: Int64 { clockMicros }

    /// - Parameters:
    ///   - busyPoll: when to poll instead of sleeping (`BusyPollPolicy(micros: 0)`: never).
    ///   - busyPollCounts: where the policy's counts and window are published (nil: nowhere).
    ///   - maxEvents: events taken per `epoll_wait`.
    /// - Throws: `LoopSetupFailure` when the epoll set cannot be made.
    public init(busyPoll: BusyPollPolicy = BusyPollPolicy(micros: 0), busyPollCounts: BusyPollCounts? = nil,
                maxEvents: Int = 256) throws(LoopSetupFailure) {
        epfd = tv_epoll_create()
        guard epfd >= 0 else { throw LoopSetupFailure(call: "epoll_create", code: errno) }
        self.maxEvents = Int32(maxEvents)
        events = .allocate(capacity: maxEvents)
        self.busyPoll = busyPoll
        self.busyPollCounts = busyPollCounts
        clockNanos = EngineClock.monotonicNanos()
        clockMicros = EngineClock.wallMicros()
    }

    deinit {
        events.deallocate()
        close(epfd)
    }

    // MARK: the inbox

    /// Watches `inbox`; its jobs run on this thread with `target` (held unowned: the target owns
    /// the loop). One inbox per loop.
    public func attach<Target: AnyObject>(_ inbox: LoopInbox<Target>, to target: Target) {
        drainInbox = { [unowned target] in
            for job in inbox.take() { job(target) }
        }
        _ = tv_epoll_ctl(epfd, tv_EPOLL_CTL_ADD, inbox.wakeFD, tv_EPOLLIN, Self.wakeToken)
    }

    // MARK: handlers and tokens

    /// Registers a handler; its token (side 0) is returned. Tokens carry a generation so that an
    /// event for a slot that was freed and reused is dropped.
    public func register(_ handler: LoopHandler) -> UInt64 {
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

    /// Frees the token's slot: later events, timers and turns for it are dropped. Twice is harmless.
    public func unregister(_ token: UInt64) {
        let slot = Int((token >> 2) & 0x3FFF_FFFF)
        guard slot < handlers.count, generations[slot] == UInt32(truncatingIfNeeded: token >> 32), handlers[slot] != nil else { return }
        handlers[slot] = nil
        generations[slot] &+= 1
        if generations[slot] == 0 { generations[slot] = 1 }
        freeSlots.append(slot)
        liveHandlers -= 1
    }

    /// The handler a token (with any side bits) belongs to, nil once it was unregistered.
    public func handler(for token: UInt64) -> LoopHandler? {
        let slot = Int((token >> 2) & 0x3FFF_FFFF)
        guard slot < handlers.count, generations[slot] == UInt32(truncatingIfNeeded: token >> 32) else { return nil }
        return handlers[slot]
    }

    /// Watches `fd` (edge-triggered unless `level`); events go to the handler of `token` with `side`.
    /// - Returns: false when epoll refused the fd.
    @discardableResult
    public func watch(_ fd: Int32, token: UInt64, side: Int, events: UInt32, level: Bool = false) -> Bool {
        let bits = level ? events : (events | tv_EPOLLET)
        return tv_epoll_ctl(epfd, tv_EPOLL_CTL_ADD, fd, bits, token | UInt64(side)) == 0
    }

    /// Changes what `fd` is watched for (same rules as `watch`).
    public func rewatch(_ fd: Int32, token: UInt64, side: Int, events: UInt32, level: Bool = false) {
        let bits = level ? events : (events | tv_EPOLLET)
        _ = tv_epoll_ctl(epfd, tv_EPOLL_CTL_MOD, fd, bits, token | UInt64(side))
    }

    /// Stops watching `fd` (closing it does so too).
    public func unwatch(_ fd: Int32) {
        _ = tv_epoll_ctl(epfd, tv_EPOLL_CTL_DEL, fd, 0, 0)
    }

    // MARK: timers and turns

    /// Calls the handler's `loopTimer` at (or soon after) `deadline` (monotonic ns).
    public func armTimer(_ token: UInt64, at deadline: UInt64) {
        timers.push(deadline, token)
    }

    /// Gives the handler another turn after this round of events (work left for fairness).
    public func runAgain(_ token: UInt64) {
        again.append(token)
    }

    /// Refreshes `now`/`wallNow` (after a long piece of work, e.g. a leaf mint).
    public func refreshClock() {
        clockNanos = EngineClock.monotonicNanos()
        clockMicros = EngineClock.wallMicros()
    }

    // MARK: running

    /// `--busy-poll`: a wait after work was found. Polls while the policy's window lasts, then
    /// blocks; tells the policy what the wait saw so the window follows the gaps between events.
    private func pollThenWait(_ timeout: Int32) -> Int32 {
        let start = EngineClock.monotonicNanos()
        var n: Int32 = 0
        var spun = false
        if let until = busyPoll.spinUntil(now: start, previousWaitFoundEvents: true, timeoutMillis: timeout) {
            spun = true
            repeat { n = tv_epoll_wait(epfd, events, maxEvents, 0) } while n == 0 && EngineClock.monotonicNanos() < until
            if n > 0 {
                busyPoll.record(.spinFound)
                busyPollCounts?.publish(busyPoll)
                return n
            }
        }
        n = tv_epoll_wait(epfd, events, maxEvents, timeout)
        busyPoll.record(.slept(spun: spun, foundEvents: n > 0, nanos: EngineClock.monotonicNanos() &- start))
        busyPollCounts?.publish(busyPoll)
        return n
    }

    /// Starts draining: handlers still registered get until `graceNanos` from now (or until none
    /// is left), then are told `loopShutdown` and the loop ends.
    public func beginDrain(graceNanos: UInt64) {
        drainDeadline = now + graceNanos
    }

    /// Ends the loop after this turn, without telling the handlers (their owner closes them).
    public func stop() {
        running = false
    }

    /// Runs turns until `stop`, the end of a drain, or a failed `epoll_wait`; then runs the jobs
    /// still in the inbox.
    /// - Returns: the errno of a failed `epoll_wait` (not EINTR), nil otherwise.
    @discardableResult
    public func run() -> Int32? {
        var failure: Int32?
        while running {
            if let code = turn() {
                failure = code
                break
            }
        }
        drainInbox?()
        timers.removeAll()
        return failure
    }

    /// One turn: wait (or poll), deliver events, due timers, run-again turns, then check a drain.
    /// - Returns: the errno of a failed `epoll_wait` (not EINTR).
    func turn() -> Int32? {
        var timeout: Int32 = -1
        if !again.isEmpty {
            timeout = 0
        } else if let next = timers.nextDeadline {
            let wait = next > now ? (next - now + 999_999) / 1_000_000 : 0
            timeout = Int32(min(wait, 60_000))
        }
        if drainDeadline != nil { timeout = timeout < 0 ? 20 : min(timeout, 20) }
        let n = busyPoll.isOn && lastWaitFoundEvents && timeout != 0 ? pollThenWait(timeout) : tv_epoll_wait(epfd, events, maxEvents, timeout)
        if n < 0 {
            let err = errno
            if err != EINTR { return err }
        }
        lastWaitFoundEvents = n > 0
        refreshClock()
        if n > 0 {
            for i in 0..<n {
                let token = tv_epoll_event_token(events, i)
                let bits = tv_epoll_event_bits(events, i)
                if token == Self.wakeToken {
                    drainInbox?()
                    continue
                }
                handler(for: token)?.loopEvent(side: Int(token & 3), events: bits)
                if !running { return nil }
            }
        }
        while running, let (deadline, token) = timers.popDue(now) {
            handler(for: token)?.loopTimer(deadline: deadline)
        }
        if !again.isEmpty {
            swap(&again, &serving)
            for token in serving { handler(for: token)?.loopRunAgain() }
            serving.removeAll(keepingCapacity: true)
        }
        if let deadline = drainDeadline, liveHandlers == 0 || now >= deadline {
            for h in handlers { h?.loopShutdown() }
            running = false
        }
        return nil
    }
}
