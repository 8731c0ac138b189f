import CTVShims
#if canImport(Glibc)
import Glibc
#endif

/// The end of a relay that one leg's read failure ended, or that tv ended with an answer of its
/// own to a refused head (`ConnectionMachine.Command.deliverThenClose`, and
/// `PlainHTTPMachine.Command.deliverThenClose` when the plain HTTP proxy's server leg failed):
/// what tv already read from the failed leg (or wrote itself) and holds for the other side
/// is delivered before the close, so the close (a reset, when the failed leg was reset) cannot
/// discard it. Nothing more is read from either leg. Delivered means: no unsent bytes in tv (the
/// stash, TLS records, the splice pipe) and, when the close is a reset, none in the socket's send
/// queue that the peer has not acknowledged (SIOCOUTQ, polled every `deliveryRecheckNanos`): a
/// reset sent before that would discard the queue, while the peer's kernel keeps what it
/// acknowledged readable after a reset. Measured: an 8 MiB response its server reset once
/// acknowledged reached a slow client whole directly, and 4.7-6.8 MB of it through tv before
/// (ServerResetRunTests). Bounded: after the idle timeout, when the leg fails, or when its peer
/// has reset (`tv_socket_gone`: the queue count never falls then), the close happens anyway.
extension ProxyConnection {
    struct Delivery {
        /// Toward the client (else the server).
        var toClient: Bool
        var reset: Bool
        /// When to give up (monotonic ns).
        var deadline: UInt64
        /// When to look at the send queue again (monotonic ns; 0: on the next writable event).
        var nextCheck: UInt64 = 0
    }

    /// The close the delivery waited for: the relay's (which reports the flow) or the plain
    /// HTTP proxy's (whose flows were reported already).
    func closeAfterDelivery(reset: Bool) {
        if plain != nil { closePlain(reset: reset) } else { finish(reset: reset) }
    }

    /// How often the send queue is looked at while the peer acknowledges it: 5 ms.
    static let deliveryRecheckNanos: UInt64 = 5_000_000

    func deliverThenFinish(to leg: Leg?, reset: Bool) {
        guard let leg, leg.fd >= 0 else { return closeAfterDelivery(reset: reset) }
        client.readClosed = true
        upstream?.readClosed = true
        delivery = Delivery(toClient: leg === client, reset: reset, deadline: loop.now &+ idleNanos)
        deliver()
    }

    /// One step: flush what tv holds; when nothing is left, close once the send queue is
    /// acknowledged (or the deadline passed), else look again later.
    func deliver() {
        guard !released, var step = delivery else { return }
        guard let leg = step.toClient ? client : upstream else { return closeAfterDelivery(reset: step.reset) }
        let now = loop.now
        if now >= step.deadline { return closeAfterDelivery(reset: step.reset) }
        switch leg.flushAll() {
        case .failed:
            return closeAfterDelivery(reset: step.reset)
        case .blocked:
            // The next writable event comes back here; the deadline still holds.
            step.nextCheck = step.deadline
        case .drained:
            // A close without a reset leaves the queue to the kernel, which sends it before the FIN.
            // A peer that reset (or closed both ways) acknowledges nothing more: its queue count
            // stays as it was, and the wait ran to the 10-minute deadline with the flow open (a
            // trial: an h2 client that closed on an HTTP/1 server's error page).
            if !step.reset || tv_socket_unacknowledged(leg.fd) <= 0 || tv_socket_gone(leg.fd) == 1 {
                return closeAfterDelivery(reset: step.reset)
            }
            step.nextCheck = now &+ Self.deliveryRecheckNanos
        }
        delivery = step
        rearm()
    }
}
