import CTVShims
import LocalCA
#if canImport(Glibc)
import Glibc
#endif

/// The listening socket as seen by one loop. Every loop watches the same socket with
/// EPOLLEXCLUSIVE, so one loop is woken per burst of connections and no thread per connection
/// ever exists.
final class Listener: LoopHandler {
    private unowned let loop: EventLoop
    private let fd: Int32
    private let frontEnd: ListenerFrontEnd
    private var token: UInt64 = 0
    private var watching = false
    private var closed = false
    /// Short replies for refused connections (explicit proxy mode): say why.
    private let capRefusal: [UInt8]?
    private let perClientRefusal: [UInt8]?

    init(loop: EventLoop, fd: Int32, frontEnd: ListenerFrontEnd) {
        self.loop = loop
        self.fd = fd
        self.frontEnd = frontEnd
        if case .connection(.explicitHTTP) = frontEnd {
            capRefusal = ConnectionMachine.errorResponse(503, "Service Unavailable",
                "too many connections are open (the limit is \(loop.shared.connectionCap)); try again later")
            let perClient = loop.shared.clientAddresses.withLock { $0.maximum }
            perClientRefusal = ConnectionMachine.errorResponse(503, "Service Unavailable",
                "your address has \(perClient) connections open, the most one client may; close some and try again")
        } else {
            capRefusal = nil
            perClientRefusal = nil
        }
    }

    func start() {
        token = loop.register(self)
        watch()
    }

    private func watch() {
        watching = loop.watch(fd, token: token, side: 0, events: tv_EPOLLIN | tv_EPOLLEXCLUSIVE, level: true)
    }

    /// Stops taking connections on this loop (the server closes the socket after every loop did).
    func stopListening() {
        guard !closed else { return }
        closed = true
        if watching { loop.unwatch(fd) }
        watching = false
        loop.unregister(token)
    }

    func loopEvent(side: Int, events: UInt32) {
        guard !closed else { return }
        let shared = loop.shared
        var storage = sockaddr_storage()
        for _ in 0..<64 {
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { tv_accept(fd, $0, &length) }
            }
            if client < 0 {
                let err = errno
                if err == EINTR || err == ECONNABORTED { continue }
                if err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM {
                    // Out of descriptors (or memory): counted and said, and this loop stops
                    // listening for a moment rather than spin on a level-triggered listener.
                    shared.acceptFailed(err, now: loop.now)
                    loop.unwatch(fd)
                    watching = false
                    loop.armTimer(token, at: loop.now + 100_000_000)
                }
                return
            }
            let peer = withUnsafeBytes(of: &storage) { SocketAddress(storage: $0.baseAddress!) }
                ?? SocketAddress(numericHost: "0.0.0.0", port: 0)!
            let admitted: IPAddress?
            switch shared.admit(peer.ip, now: loop.now) {
            case .admitted(let address):
                admitted = address
            case .refusedByCap:
                refuse(client, capRefusal)
                continue
            case .refusedPerClient:
                refuse(client, perClientRefusal)
                continue
            }
            loop.counters.accepted.wrappingAdd(1, ordering: .relaxed)
            let kind: FrontEndKind
            switch frontEnd {
            case .connection(let fixed):
                kind = fixed
            case .transparent:
                guard let destination = TransparentDestination.read(client) else {
                    shared.connectionEnded(address: admitted)
                    shared.notRedirected.wrappingAdd(1, ordering: .relaxed)
                    Socket.reset(client)
                    continue
                }
                kind = .fixed(OriginalDestination(host: destination.ip.description, port: destination.port, origin: .none),
                              upstreamTLS: nil)
            }
            let connection = ProxyConnection(loop: loop, fd: client, peer: peer, frontEnd: kind)
            connection.admittedAddress = admitted
            connection.start()
        }
    }

    /// Says why (explicit proxy mode) and closes, or resets.
    private func refuse(_ client: Int32, _ reply: [UInt8]?) {
        if let reply {
            _ = reply.withUnsafeBytes { tv_send(client, $0.baseAddress, $0.count) }
            close(client)
        } else {
            Socket.reset(client)
        }
    }

    func loopTimer(deadline: UInt64) {
        if !closed && !watching { watch() }
    }

    func loopRunAgain() {}

    func loopShutdown() { stopListening() }
}

/// What a listener does with an accepted connection.
enum ListenerFrontEnd: Sendable, Hashable {
    /// Starts a connection of this kind.
    case connection(FrontEndKind)
    /// Reads the original destination a REDIRECT rule left (`TransparentDestination`) first.
    case transparent
}
