import CTVShims
#if canImport(Glibc)
import Glibc
#endif

/// A listening socket as seen by one `EpollLoop`: accepts (accept4, non-blocking and
/// close-on-exec) in bursts and hands each client to its owner. Used by every proxy loop (all
/// watch the same socket with EPOLLEXCLUSIVE, so one loop is woken per burst of connections and
/// no thread per connection ever exists) and by the TUN engine's listeners.
///
/// Out of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM): the owner is told (it counts
/// and says it), and this loop stops watching the socket for `pauseNanos` rather than spin on a
/// level-triggered listener; the waiting clients stay in the backlog.
public final class Listener: LoopHandler {
    /// Called with each accepted client and its peer's `sockaddr_storage` (valid for the call).
    public typealias Accepted = (_ client: Int32, _ peer: UnsafeRawPointer) -> Void
    /// How long accepting pauses after running out of descriptors: 100 ms.
    public static let pauseNanos: UInt64 = 100_000_000

    private unowned let loop: EpollLoop
    private let fd: Int32
    private let exclusive: Bool
    private let burst: Int
    private let accepted: Accepted
    private let acceptFailed: (Int32) -> Void
    private var token: UInt64 = 0
    private var watching = false
    private var closed = false

    /// - Parameters:
    ///   - fd: a listening, non-blocking socket (not closed by the listener).
    ///   - exclusive: watch with EPOLLEXCLUSIVE (several loops share the socket).
    ///   - burst: the most accepts per readiness event (fairness with the loop's other work).
    ///   - accepted: takes each client (its fd is the callee's).
    ///   - acceptFailed: told the errno when accepting fails for lack of descriptors or memory.
    public init(loop: EpollLoop, fd: Int32, exclusive: Bool, burst: Int, accepted: @escaping Accepted,
                acceptFailed: @escaping (Int32) -> Void) {
        self.loop = loop
        self.fd = fd
        self.exclusive = exclusive
        self.burst = burst
        self.accepted = accepted
        self.acceptFailed = acceptFailed
    }

    /// Registers with the loop and starts watching the socket (level-triggered).
    public func start() {
        token = loop.register(self)
        watch()
    }

    private func watch() {
        let events = exclusive ? tv_EPOLLIN | tv_EPOLLEXCLUSIVE : tv_EPOLLIN
        watching = loop.watch(fd, token: token, side: 0, events: events, level: true)
    }

    /// Stops taking connections on this loop (the socket's owner closes it). Twice is harmless.
    public func stopListening() {
        guard !closed else { return }
        closed = true
        if watching { loop.unwatch(fd) }
        watching = false
        loop.unregister(token)
    }

    public func loopEvent(side: Int, events: UInt32) {
        guard !closed else { return }
        var storage = sockaddr_storage()
        for _ in 0..<burst {
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { tv_accept(fd, $0, &length) }
            }
            if client < 0 {
                let err = errno
                if err == EINTR || err == ECONNABORTED { continue }
                if err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM {
                    acceptFailed(err)
                    loop.unwatch(fd)
                    watching = false
                    loop.armTimer(token, at: loop.now + Self.pauseNanos)
                }
                return
            }
            withUnsafeBytes(of: &storage) { accepted(client, $0.baseAddress!) }
        }
    }

    public func loopTimer(deadline: UInt64) {
        if !closed && !watching { watch() }
    }

    public func loopShutdown() { stopListening() }
}
