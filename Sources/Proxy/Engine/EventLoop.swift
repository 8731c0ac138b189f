import CTVShims
import LocalCA
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms
import TVHome

/// One proxy worker thread: its `EpollLoop` (tokens, timers, inbox, busy-poll), the shared proxy
/// state, its counters, its relay buffer and its listener view. The loop mechanism is
/// `EpollLoop`'s; this type adds only what the proxy's handlers need beside it.
///
/// Not Sendable: created on its thread and used only there. Everything another thread needs goes
/// through `inbox` (jobs) or the Sendable `shared` state.
final class EventLoop {
    let index: Int
    let shared: ProxyShared
    let inbox: LoopInbox<EventLoop>
    let counters: LoopCounters
    /// The loop mechanism this thread runs.
    let core: EpollLoop
    /// The relay buffer: every read on this loop lands here, so the data path never allocates.
    let buffer: UnsafeMutableRawBufferPointer

    /// The facts of the upstream certificate this loop read last, with a reference to it (so its
    /// address cannot be reused by another certificate while kept). Resumed upstream legs share
    /// the X509 of the session they resume: the digest, hex and names are then read once.
    var lastUpstreamCertificate: (certificate: Certificate, facts: ServerCertificateFacts, names: [SubjectAlternativeName])?
    /// The server certificates whose DER this loop has handed to the sink
    /// (`ProxyConnection.serverChain`; bounded in count and age).
    var certificatesSent = SentCertificates()

    /// This loop's view of the listening socket (nil for a loop that only adopts connections).
    var listener: Listener?

    /// Returns the heap's free pages to the kernel after idle connections released their TLS
    /// buffers (`HeapTrimPolicy`).
    private(set) lazy var heapTrimmer = HeapTrimmer(loop: self)

    /// Monotonic ns and wall-clock µs, read once per loop turn.
    var now: UInt64 { core.now }
    var wallNow: Int64 { core.wallNow }
    var liveHandlers: Int { core.liveHandlers }

    init(index: Int, shared: ProxyShared, counters: LoopCounters) throws {
        self.index = index
        self.shared = shared
        self.counters = counters
        do {
            core = try EpollLoop(busyPoll: BusyPollPolicy(micros: shared.configuration.busyPollMicros), busyPollCounts: counters.busyPoll)
        } catch {
            if let shortage = TooManyOpenFiles(errno: error.code, opening: "an event loop (\(error.call))") { throw shortage }
            throw ProxyError.threadsUnavailable("\(error.call): \(Errno(error.code))")
        }
        inbox = LoopInbox()
        guard inbox.wakeFD >= 0 else {
            let code = inbox.wakeErrno
            if let shortage = TooManyOpenFiles(errno: code, opening: "an event loop (eventfd)") { throw shortage }
            throw ProxyError.threadsUnavailable("eventfd: \(Errno(code))")
        }
        buffer = .allocate(byteCount: max(16 * 1024, shared.configuration.relayBufferSize), alignment: 16)
        core.attach(inbox, to: self)
    }

    deinit {
        buffer.deallocate()
    }

    // MARK: handlers and tokens (EpollLoop's)

    func register(_ handler: LoopHandler) -> UInt64 { core.register(handler) }

    func unregister(_ token: UInt64) { core.unregister(token) }

    func handler(for token: UInt64) -> LoopHandler? { core.handler(for: token) }

    @discardableResult
    func watch(_ fd: Int32, token: UInt64, side: Int, events: UInt32, level: Bool = false) -> Bool {
        core.watch(fd, token: token, side: side, events: events, level: level)
    }

    func rewatch(_ fd: Int32, token: UInt64, side: Int, events: UInt32, level: Bool = false) {
        core.rewatch(fd, token: token, side: side, events: events, level: level)
    }

    func unwatch(_ fd: Int32) { core.unwatch(fd) }

    func armTimer(_ token: UInt64, at deadline: UInt64) { core.armTimer(token, at: deadline) }

    func runAgain(_ token: UInt64) { core.runAgain(token) }

    func refreshClock() { core.refreshClock() }

    // MARK: running

    /// Starts draining: no new work is taken by listeners (they close themselves); open handlers
    /// get until `grace` ns from now, then are told to shut down.
    func beginStop(graceNanos: UInt64) {
        listener?.stopListening()
        listener = nil
        core.beginDrain(graceNanos: graceNanos)
    }

    /// Runs until a drain ends (a failed epoll_wait, which does not happen with a valid set,
    /// also ends it).
    func run() {
        core.run()
    }
}
