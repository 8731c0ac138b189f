import Foundation
import CTVShims
import Synchronization
import FlowTerms
#if canImport(Glibc)
import Glibc
#endif

/// Names the program behind each flow off the data path: the loops hand a request to
/// `lookUp(_:)` (never blocks: a bounded queue; full, the request is dropped and counted) and a
/// thread of its own resolves them in batches (`ProgramResolver`), handing each answer to
/// `deliver` (the session enqueues it on the flow writer).
public final class ProgramLookup: Sendable {
    /// What the lookup did since it started.
    public struct Counters: Sendable, Equatable {
        /// Flows looked up, and of them named / from a client on another machine (no local
        /// program to name) / not known (the socket or process gone, the lookup failed):
        /// `lookedUp == found + otherMachine + notKnown`.
        public var lookedUp: UInt64 = 0
        public var found: UInt64 = 0
        public var otherMachine: UInt64 = 0
        public var notKnown: UInt64 = 0
        /// Requests dropped because the queue was full (their flows say "not looked up").
        public var dropped: UInt64 = 0
        /// Full `/proc` rescans (cache misses).
        public var scans: UInt64 = 0
        /// Flows whose socket was found by its four-tuple (`SockDiagQuery.exact`), not by a dump.
        public var exact: UInt64 = 0
        /// sock_diag dumps made: each walks the kernel's whole table of one family's sockets (a
        /// flow whose socket was not asked for exactly; two when an IPv4 client is looked for
        /// among IPv6 sockets too).
        public var dumps: UInt64 = 0
        public init() {}
    }

    private struct State {
        var queue: [ProgramLookupRequest] = []
        var stopped = false
        /// A sock_diag socket made in another network namespace, and that namespace's inode, to
        /// use from the next batch on.
        var namespaceSocket: (socket: Int32, namespace: UInt64)?
        /// The listener's family, address and port, for the resolver's next batch (`setListener`).
        var listener: (family: UInt8, bytes: [UInt8], port: UInt16)?
        var counters = Counters()
        /// Who waits for a queued flow's answer (`lookUp(_:whenAnswered:)`), by flow id.
        var waiters: [Int64: @Sendable () -> Void] = [:]
    }

    /// What the thread and the callers share, by reference.
    private final class Shared: Sendable {
        let state = Mutex(State())
        let wake = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
    }

    private let shared = Shared()
    /// Requests held at most.
    public let capacity: Int

    /// Starts the lookup thread.
    /// - Parameters:
    ///   - capacity: requests waiting at most (at least 1).
    ///   - peersAreServers: each flow's server is its client socket's peer (the TUN and
    ///     transparent modes), so a socket is asked by its four-tuple (`SockDiagQuery`).
    ///   - deliver: called on the lookup thread with each flow's answer; must not block.
    public init(capacity: Int = 4_096, peersAreServers: Bool = false, deliver: @escaping @Sendable (Int64, FlowProgram) -> Void) {
        self.capacity = max(1, capacity)
        let shared = self.shared
        let thread = Thread {
            _ = tv_set_thread_name("tv-lookup")
            let state = shared
            let wake = shared.wake, finished = shared.finished
            let resolver = ProgramResolver()
            resolver.peersAreServers = peersAreServers
            while true {
                wake.wait()
                let (batch, socket, listener, stop) = state.state.withLock { s in
                    let out = s.queue
                    s.queue.removeAll(keepingCapacity: true)
                    let socket = s.namespaceSocket
                    s.namespaceSocket = nil
                    return (out, socket, s.listener, s.stopped)
                }
                resolver.listener = listener
                if let socket {
                    resolver.close()
                    resolver.netlink = socket.socket
                    resolver.namespace = socket.namespace
                    resolver.clientsAreLocal = true
                }
                if !batch.isEmpty {
                    let answers = resolver.resolve(batch)
                    let named = answers.filter { if case .known = $0.1 { return true } else { return false } }.count
                    let remote = answers.filter { $0.1 == .notKnown(.otherMachine) }.count
                    state.state.withLock {
                        $0.counters.lookedUp += UInt64(answers.count)
                        $0.counters.found += UInt64(named)
                        $0.counters.otherMachine += UInt64(remote)
                        $0.counters.notKnown += UInt64(answers.count - named - remote)
                        $0.counters.scans = resolver.scans
                        $0.counters.exact = resolver.exactAnswers
                        $0.counters.dumps = resolver.dumps
                    }
                    for (id, program) in answers { deliver(id, program) }
                    let told = state.state.withLock { s in answers.compactMap { s.waiters.removeValue(forKey: $0.0) } }
                    for waiter in told { waiter() }
                }
                if stop && state.state.withLock({ $0.queue.isEmpty }) { break }
            }
            resolver.close()
            finished.signal()
        }
        thread.name = "tv-program-lookup"
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Queues `request`; never blocks. `whenAnswered` is called on the lookup thread once the
    /// answer was delivered, or at once when the request is dropped.
    /// - Returns: false when it was dropped (queue full, or stopped).
    @discardableResult
    public func lookUp(_ request: ProgramLookupRequest, whenAnswered: (@Sendable () -> Void)? = nil) -> Bool {
        let queued = shared.state.withLock { s -> Bool in
            guard !s.stopped, s.queue.count < capacity else {
                s.counters.dropped += 1
                return false
            }
            s.queue.append(request)
            if let whenAnswered { s.waiters[request.flowID] = whenAnswered }
            return true
        }
        if queued { shared.wake.signal() } else { whenAnswered?() }
        return queued
    }

    /// From the next batch on, asks the kernel through `socket`: a sock_diag socket made inside
    /// `tv exec`'s namespace (`tv_sock_diag_open` on its thread), whose clients are all local;
    /// only processes in `namespace` (the inode of its `ns/net`) are read. The lookup owns and
    /// closes the socket.
    public func useNamespaceSocket(_ socket: Int32, namespace: UInt64) {
        shared.state.withLock { s in
            if let old = s.namespaceSocket { close(old.socket) }
            s.namespaceSocket = (socket, namespace)
        }
    }

    /// Tells the lookup where tv listens for clients that connect to it (the explicit proxy,
    /// SOCKS5, reverse mode): `address` (numeric) and `port`, the peer of each such client's
    /// socket, which is then asked for by its four-tuple instead of by a dump of every socket on
    /// its port (`SockDiagQuery`). Bound to every address (`0.0.0.0`, `::`), a client is asked
    /// for with its own address as its peer (the one a local client reached, unless it bound
    /// another; a miss falls back to the dump). Text that is no numeric address changes nothing.
    /// From the next batch on.
    public func setListener(address: String, port: UInt16) {
        let parsed = ProgramLookupRequest.addressBytes(address)
        shared.state.withLock { $0.listener = parsed.map { ($0.family, $0.bytes, port) } }
    }

    /// Resolves what is queued, then ends the thread (waits for it). Safe to call twice.
    public func stop() {
        let already = shared.state.withLock { s -> Bool in
            defer { s.stopped = true }
            return s.stopped
        }
        guard !already else { return }
        shared.wake.signal()
        shared.finished.wait()
    }

    public var counters: Counters { shared.state.withLock { $0.counters } }

    deinit { stop() }
}
