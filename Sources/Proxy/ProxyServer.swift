import CTVShims
import Dispatch
import Foundation
import LocalCA
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms
import TVHome

/// The terminating proxy: a listening socket, a few event-loop threads, and everything they
/// share. The `tv run` command (or a test) makes one, starts it, reads its counters, switches
/// inspection, and stops it.
///
/// ```swift
/// var configuration = ProxyConfiguration()
/// configuration.listenPort = 0
/// configuration.authority = ca
/// let server = ProxyServer(configuration: configuration)
/// let address = try server.start()      // 127.0.0.1:<free port>
/// …
/// server.stop()
/// ```
///
/// `start()` sets SIGPIPE to be ignored for the whole process (OpenSSL writes with write(2)).
public final class ProxyServer: Sendable {
    public let configuration: ProxyConfiguration

    private struct Running: Sendable {
        let shared: ProxyShared
        let listenFD: Int32
        let inboxes: [LoopInbox<EventLoop>]
        let counters: [LoopCounters]
        let finished: [DispatchSemaphore]
        let address: Endpoint
    }

    private struct State {
        var running: Running?
        /// Counters of the last run, kept readable after stop.
        var lastCounters: [LoopCounters] = []
        var lastShared: ProxyShared?
        var nextLoop = 0
        var inspectionEnabled: Bool
        /// Set when the CA was swapped (`setAuthority`): the one a later start uses.
        var swappedAuthority: CertificateAuthority??
    }

    private let state: Mutex<State>

    public init(configuration: ProxyConfiguration) {
        self.configuration = configuration
        state = Mutex(State(inspectionEnabled: configuration.inspectionEnabled))
    }

    /// Binds, starts the loops, and returns the address it listens on (the real port when
    /// `listenPort` was 0).
    /// - Throws: `ProxyError` (port in use, bad pattern, unreadable CA file, key log…).
    @discardableResult
    public func start() throws -> Endpoint {
        if state.withLock({ $0.running != nil }) { throw ProxyError.alreadyStarted }
        // OpenSSL's socket BIOs write with write(2): a peer that went away must be an EPIPE error
        // on that connection, not a SIGPIPE that kills the process. Process-wide, as every
        // network server does.
        signal(SIGPIPE, SIG_IGN)
        var configuration = self.configuration
        if configuration.mode.reverseTargetIsListener(host: configuration.listenHost, port: configuration.listenPort) {
            throw ProxyError.reverseTargetIsListener(mode: configuration.mode.description,
                                                     listen: Endpoint(address: configuration.listenHost, port: configuration.listenPort).description)
        }
        configuration.inspectionEnabled = state.withLock { $0.inspectionEnabled }
        if let swapped = state.withLock({ $0.swappedAuthority }) {
            configuration.authority = swapped
            configuration.leafCache = nil
        }
        let workers = max(1, configuration.workers ?? Int(tv_cpu_count()))
        let descriptors = DescriptorLimit.raise()
        let cap = DescriptorBudget.connectionCap(configured: configuration.maxConnections,
                                                 limit: descriptors.soft, inUse: DescriptorLimit.inUse(), loops: workers)
        let shared = try ProxyShared(configuration: configuration, connectionCap: cap, descriptorLimit: descriptors.soft)
        let fd: Int32
        let boundEndpoint: Endpoint
        if configuration.listens {
            do {
                fd = try Self.listen(host: configuration.listenHost, port: configuration.listenPort)
            } catch {
                shared.resolver.stop()
                throw error
            }
            guard let bound = Socket.localAddress(fd) else {
                close(fd)
                shared.resolver.stop()
                throw ProxyError.cannotListen(host: configuration.listenHost, port: configuration.listenPort, reason: "getsockname failed")
            }
            boundEndpoint = bound.endpoint
        } else {
            // Adopt-only (the TUN front-end accepts on its own listener).
            fd = -1
            boundEndpoint = Endpoint(address: "", port: 0)
        }

        let frontEnd = Self.frontEnd(for: configuration.mode)
        let published = Mutex<[Int: LoopInbox<EventLoop>]>([:])
        // A loop's own failure, thrown as it is (it was wrapped in a second "could not start its
        // event loops (…)" around the first: a trial's sentence said it twice).
        let failures = Mutex<[any Error]>([])
        let ready = DispatchSemaphore(value: 0)
        var finished: [DispatchSemaphore] = []
        var counters: [LoopCounters] = []
        for index in 0..<workers {
            let done = DispatchSemaphore(value: 0)
            let loopCounters = LoopCounters()
            finished.append(done)
            counters.append(loopCounters)
            let thread = Thread {
                _ = tv_set_thread_name("tv-loop-\(index)")
                do {
                    let loop = try EventLoop(index: index, shared: shared, counters: loopCounters)
                    if fd >= 0 {
                        let listener = ProxyAdmission.listener(loop: loop, fd: fd, frontEnd: frontEnd)
                        loop.listener = listener
                        listener.start()
                    }
                    published.withLock { $0[index] = loop.inbox }
                    ready.signal()
                    loop.run()
                } catch {
                    failures.withLock { $0.append(error) }
                    ready.signal()
                }
                done.signal()
            }
            thread.name = "tv-loop-\(index)"
            thread.start()
        }
        for _ in 0..<workers { ready.wait() }
        let inboxes = published.withLock { map in (0..<workers).compactMap { map[$0] } }
        if let failure = failures.withLock({ $0.first }) {
            for inbox in inboxes { inbox.post { $0.beginStop(graceNanos: 0) } }
            for (i, done) in finished.enumerated() where i < inboxes.count { done.wait() }
            if fd >= 0 { close(fd) }
            shared.resolver.stop()
            throw failure
        }
        let running = Running(shared: shared, listenFD: fd, inboxes: inboxes, counters: counters,
                              finished: finished, address: boundEndpoint)
        state.withLock {
            $0.running = running
            $0.lastCounters = counters
            $0.lastShared = shared
        }
        return boundEndpoint
    }

    /// Stops: closes the listener, lets open connections finish for up to `graceSeconds`, resets
    /// the rest, joins the loop threads. Safe to call twice.
    public func stop(graceSeconds: Double = 0) {
        guard let running = state.withLock({ s -> Running? in
            let r = s.running
            s.running = nil
            return r
        }) else { return }
        let grace = UInt64(max(0, graceSeconds) * 1e9)
        for inbox in running.inboxes { inbox.post { $0.beginStop(graceNanos: grace) } }
        for done in running.finished { done.wait() }
        if running.listenFD >= 0 { close(running.listenFD) }
        running.shared.resolver.stop()
    }

    /// A fresh flow id from the engine's sequence, for flows a front-end reports itself (UDP,
    /// refused connects) so they never collide with the engine's; nil when not running.
    public func allocateFlowID() -> UInt64? {
        state.withLock { $0.running?.shared.newFlowID() }
    }

    /// A front end closed a flow of its own that no loop ever had (the TUN's refused connects,
    /// UDP flows and DNS queries):
    /// counted with the loops' closed flows, so `tv status` and `tv diag` agree with the flow
    /// list (a trial's refused connect was listed failed while both said 0 failed).
    public func frontEndClosed(_ status: FlowStatus) {
        state.withLock { $0.running?.shared }?.frontEndClosed.withLock { $0[status, default: 0] &+= 1 }
    }

    /// A front-end's own listener (the TUN engine's) ran out of descriptors: counted and said as
    /// the proxy's own listener's failures are (`ProxyCounters.acceptsFailedForDescriptors`, the
    /// out-of-descriptors notice). Other errnos are ignored; nothing happens when not running.
    public func acceptFailed(_ err: Int32) {
        state.withLock { $0.running?.shared }?.acceptFailed(err, now: EngineClock.monotonicNanos())
    }

    /// The address the server listens on, while it runs (empty when it does not listen).
    public var address: Endpoint? { state.withLock { $0.running?.address } }

    /// Whether TLS is inspected for new connections.
    public var inspectionEnabled: Bool { state.withLock { $0.inspectionEnabled } }

    /// Whether libssl makes key log lines for each of the running server's contexts (`(server,
    /// client)`: client legs, upstream legs; both false when it does not run). Tests.
    var keyLogArmed: (server: Bool, client: Bool) {
        state.withLock { $0.running?.shared.contexts.keyLogArmed } ?? (false, false)
    }

    /// Switches inspection for connections accepted from now on (open ones keep their decision).
    public func setInspection(enabled: Bool) {
        let shared = state.withLock { s -> ProxyShared? in
            s.inspectionEnabled = enabled
            return s.running?.shared
        }
        shared?.inspection.store(enabled, ordering: .relaxed)
    }

    /// The CA leaves are minted from now (nil: none).
    public var authority: CertificateAuthority? {
        state.withLock { s in s.running.map { $0.shared.authority } ?? (s.swappedAuthority ?? configuration.authority) }
    }

    /// Mints from `authority` for handshakes started from now on (a CA made or remade while the
    /// server runs); nil: no CA, nothing is inspected. Open connections keep their leaves.
    public func setAuthority(_ authority: CertificateAuthority?) {
        let shared = state.withLock { s -> ProxyShared? in
            s.swappedAuthority = .some(authority)
            return s.running?.shared
        }
        shared?.setAuthority(authority)
    }

    /// Drops what the running session weighs against `host` (`PinningEvidenceRule`'s records):
    /// `tv pinned forget HOST` of a suspicion not yet listed by `tv pinned`.
    public func forgetPinningEvidence(host: String) {
        state.withLock { $0.running?.shared }?.pinningEvidence.forget(host: host)
    }

    /// The counters now (also after stop: the last run's).
    public var counters: ProxyCounters {
        let (list, shared) = state.withLock { ($0.lastCounters, $0.lastShared) }
        var out = ProxyCounters()
        for c in list {
            out.accepted += c.accepted.load(ordering: .relaxed)
            out.bytesFromClients += c.bytesFromClients.load(ordering: .relaxed)
            out.bytesFromServers += c.bytesFromServers.load(ordering: .relaxed)
            out.pinningDetections += c.pinned.load(ordering: .relaxed)
            out.clientLacksRoot += c.clientLacksRoot.load(ordering: .relaxed)
            out.possiblePinning += c.possiblePinning.load(ordering: .relaxed)
            out.clientLeft += c.clientLeft.load(ordering: .relaxed)
            out.upstreamResumptions += c.upstreamResumptions.load(ordering: .relaxed)
            out.clientResumptions += c.clientResumptions.load(ordering: .relaxed)
            out.splicedBytes += c.splicedBytes.load(ordering: .relaxed)
            out.headTimeouts += c.headTimeouts.load(ordering: .relaxed)
            out.exchangeReadingStopped += c.exchangeReadingStopped.load(ordering: .relaxed)
            out.busyPollsFoundNothing += c.busyPoll.foundNothing.load(ordering: .relaxed)
            out.busyPollsFoundWork += c.busyPoll.foundWork.load(ordering: .relaxed)
            for kind in FlowStatus.closedByProxy { out.closedByStatus[kind, default: 0] += c.closedCount(kind) }
            out.inspection.merge(c.inspection.withLock { $0 }) { $0 &+ $1 }
        }
        if let shared {
            out.openConnections = shared.openConnections.load(ordering: .relaxed)
            out.refusedByCap = shared.refusedByCap.load(ordering: .relaxed)
            out.refusedPerClient = shared.refusedPerClient.load(ordering: .relaxed)
            out.acceptsFailedForDescriptors = shared.acceptsFailedForDescriptors.load(ordering: .relaxed)
            out.connectionCap = shared.connectionCap
            out.descriptorLimit = shared.descriptorLimit
            out.notRedirected = shared.notRedirected.load(ordering: .relaxed)
            for (kind, count) in shared.frontEndClosed.withLock({ $0 }) { out.closedByStatus[kind, default: 0] += count }
            if let stats = shared.leafCache?.statistics {
                out.leafCacheHits = stats.hits
                out.leafCacheMisses = stats.misses
            }
        }
        return out
    }

    /// Hands an accepted TCP connection with its original destination to the engine: the
    /// interface the transparent and TUN front-ends use. The engine owns `fd` from now on.
    /// - Parameter upstreamFD: a non-blocking socket already connected to `destination` (the TUN's
    ///   connect-first), used instead of connecting; the engine owns it too.
    /// - Parameter clientIsNonBlocking: `fd` is already O_NONBLOCK (accept4 with SOCK_NONBLOCK), so
    ///   the two fcntl calls that would make it so are skipped.
    /// - Parameter flowID: the flow id the front-end already gave this connection (the TUN's, so
    ///   its captured packets and its flow row share it; from `allocateFlowID`); nil: a new one.
    /// - Parameter flowAnnounced: the front end already reported that flow opened to the sink (a
    ///   slow connect, reported while the program waited): the connection reports it updated.
    /// - Returns: nil when adopted; else why not (and both are closed): the server is not running,
    ///   or the cap is reached (the per-address limit does not apply: the TUN's clients are this
    ///   host's own programs).
    @discardableResult
    public func adopt(clientFD fd: Int32, client: SocketAddress, destination: OriginalDestination, upstreamFD: Int32? = nil,
                      clientIsNonBlocking: Bool = false, flowID: UInt64? = nil, flowAnnounced: Bool = false) -> AdoptionRefusal? {
        guard let (running, index) = state.withLock({ s -> (Running, Int)? in
            guard let r = s.running else { return nil }
            s.nextLoop &+= 1
            return (r, s.nextLoop % r.inboxes.count)
        }) else {
            close(fd)
            if let upstreamFD { close(upstreamFD) }
            return .stopping
        }
        let shared = running.shared
        // The loops only do non-blocking I/O.
        if !clientIsNonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        // Not limited per address: the TUN's connections all come from this host's own programs.
        guard case .admitted = shared.admit(nil, now: EngineClock.monotonicNanos()) else {
            Socket.reset(fd)
            if let upstreamFD { Socket.reset(upstreamFD) }
            return .atConnectionCap(shared.connectionCap)
        }
        running.inboxes[index].post { loop in
            loop.counters.accepted.wrappingAdd(1, ordering: .relaxed)
            let connection = ProxyConnection(loop: loop, fd: fd, peer: client, frontEnd: .fixed(destination, upstreamTLS: nil), flowID: flowID,
                                             flowAnnounced: flowAnnounced)
            connection.preconnectedUpstream = upstreamFD
            connection.start()
        }
        return nil
    }

    /// Whether a front end that hands connections over (the TUN's) may start one more, with
    /// `starting` of its own under way and not yet adopted (`AdoptionRefusal.deciding`): nil when
    /// it may.
    public func refusal(starting: Int) -> AdoptionRefusal? {
        let shared = state.withLock { $0.running?.shared }
        return AdoptionRefusal.deciding(running: shared != nil, open: shared?.openConnections.load(ordering: .relaxed) ?? 0,
                                        starting: starting, cap: shared?.connectionCap ?? 0)
    }

    /// A front end dropped a program's SYN because `refusal` said the cap was reached: said as
    /// the cap's other refusals are, at most once a minute (`ProxyNotice.synsDroppedAtCap`).
    public func synDroppedAtCap() {
        state.withLock { $0.running?.shared }?.synDroppedAtCap(now: EngineClock.monotonicNanos())
    }

    // MARK: helpers

    static func frontEnd(for mode: ProxyMode) -> ListenerFrontEnd {
        switch mode {
        case .regular: return .connection(.explicitHTTP)
        case .socks5: return .connection(.socks5)
        case let .reverse(tls, host, port):
            return .connection(.fixed(OriginalDestination(host: host, port: port, origin: .reverse), upstreamTLS: tls))
        case .transparent, .tun:
            // `tun` never gets here: its server does not listen (`listens` is false).
            return .transparent
        }
    }

    /// A listening TCP socket (non-blocking, close-on-exec) bound to `host` (numeric, else
    /// resolved) and `port`; the proxy's listeners and `tv run --metrics` use it.
    /// - Throws: `ProxyError.portInUse`, `.permissionDenied`, `.cannotListen`; `TooManyOpenFiles`.
    public static func listen(host: String, port: UInt16) throws -> Int32 {
        let address: SocketAddress
        if let numeric = SocketAddress(numericHost: host, port: port) {
            address = numeric
        } else {
            switch Resolver.lookup(host, port) {
            case .success(let list): address = list[0]
            case .failure(let failure): throw ProxyError.cannotListen(host: host, port: port, reason: failure.message)
            }
        }
        let fd = tv_socket_stream(address.family)
        guard fd >= 0 else {
            let err = errno
            if let shortage = TooManyOpenFiles(errno: err, opening: "a socket to listen on \(Endpoint(address: host, port: port))") { throw shortage }
            throw ProxyError.cannotListen(host: host, port: port, reason: Errno(err).phrase)
        }
        _ = tv_set_reuse(fd, 0)
        let rc = address.withSockAddr { bind(fd, $0, $1) }
        if rc != 0 {
            let err = errno
            close(fd)
            switch err {
            case EADDRINUSE: throw ProxyError.portInUse(host: host, port: port)
            case EACCES: throw ProxyError.permissionDenied(host: host, port: port)
            default: throw ProxyError.cannotListen(host: host, port: port, reason: Errno(err).phrase)
            }
        }
        guard Glibc.listen(fd, 4096) == 0 else {
            let err = errno
            close(fd)
            throw ProxyError.cannotListen(host: host, port: port, reason: Errno(err).phrase)
        }
        return fd
    }
}
