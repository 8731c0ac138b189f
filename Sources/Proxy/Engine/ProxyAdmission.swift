import CTVShims
import LocalCA
#if canImport(Glibc)
import Glibc
#endif

/// What a proxy loop does with a client its `Listener` accepted: admission (the connection cap,
/// the per-address limit), a short reply saying why when refused (explicit proxy mode), the
/// original destination in transparent mode, then a `ProxyConnection`.
final class ProxyAdmission {
    private unowned let loop: EventLoop
    private let frontEnd: ListenerFrontEnd
    /// Short replies for refused connections (explicit proxy mode): say why.
    private let capRefusal: [UInt8]?
    private let perClientRefusal: [UInt8]?

    init(loop: EventLoop, frontEnd: ListenerFrontEnd) {
        self.loop = loop
        self.frontEnd = frontEnd
        if case .connection(.explicitHTTP) = frontEnd {
            capRefusal = ConnectionMachine.errorResponse(503,
                body: "tv: too many connections are open (the limit is \(loop.shared.connectionCap)); try again later")
            // The address's count, not the client's: programs and machines behind one address
            // share it (a local client is never refused here: `ClientAddressLimit.counts`).
            let perClient = loop.shared.clientAddresses.withLock { $0.maximum }
            perClientRefusal = ConnectionMachine.errorResponse(503,
                body: "tv: \(perClient) connections from this client's address are open, the most one address may hold (every program and machine behind it counts); try again once some have closed")
        } else {
            capRefusal = nil
            perClientRefusal = nil
        }
    }

    /// The listener of `loop` on `fd`: 64 accepts a burst, EMFILE/ENFILE counted and said.
    static func listener(loop: EventLoop, fd: Int32, frontEnd: ListenerFrontEnd) -> Listener {
        let admission = ProxyAdmission(loop: loop, frontEnd: frontEnd)
        return Listener(loop: loop.core, fd: fd, exclusive: true, burst: 64, accepted: admission.take,
                        acceptFailed: admission.acceptFailed)
    }

    /// Out of descriptors: counted and said (`ProxyShared.acceptFailed`).
    func acceptFailed(_ err: Int32) {
        loop.shared.acceptFailed(err, now: loop.now)
    }

    func take(_ client: Int32, peer storage: UnsafeRawPointer) {
        let shared = loop.shared
        let peer = SocketAddress(storage: storage) ?? SocketAddress(numericHost: "0.0.0.0", port: 0)!
        let admitted: IPAddress?
        switch shared.admit(peer.ip, now: loop.now) {
        case .admitted(let address):
            admitted = address
        case .refusedByCap:
            refuse(client, capRefusal)
            return
        case .refusedPerClient:
            refuse(client, perClientRefusal)
            return
        }
        loop.counters.accepted.wrappingAdd(1, ordering: .relaxed)
        let kind: FrontEndKind
        switch frontEnd {
        case .connection(let fixed):
            kind = fixed
        case .transparent:
            guard let destination = TransparentDestination.read(client) else {
                shared.connectionEnded(address: admitted)
                shared.notRedirected(from: peer.ip.description, now: loop.now)
                Socket.reset(client)
                return
            }
            kind = .fixed(OriginalDestination(host: destination.ip.description, port: destination.port, origin: .none),
                          upstreamTLS: nil)
        }
        let connection = ProxyConnection(loop: loop, fd: client, peer: peer, frontEnd: kind)
        connection.admittedAddress = admitted
        connection.start()
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
}

/// What a listener does with an accepted connection.
enum ListenerFrontEnd: Sendable, Hashable {
    /// Starts a connection of this kind.
    case connection(FrontEndKind)
    /// Reads the original destination a REDIRECT rule left (`TransparentDestination`) first.
    case transparent
}
