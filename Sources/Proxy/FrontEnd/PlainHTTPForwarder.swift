import CTVShims
#if canImport(Glibc)
import Glibc
#endif

/// Absolute-form plain HTTP through the explicit proxy (placeholder while being written).
final class PlainHTTPForwarder: LoopHandler {
    private unowned let loop: EventLoop
    private let client: Leg
    private var facts: FlowFacts
    private var token: UInt64 = 0

    init(loop: EventLoop, client: Leg, facts: FlowFacts) {
        self.loop = loop
        self.client = client
        self.facts = facts
    }

    func start() {
        token = loop.register(self)
        loop.rewatch(client.fd, token: token, side: 0, events: tv_EPOLLIN | tv_EPOLLOUT | tv_EPOLLRDHUP)
        finish()
    }

    private func finish() {
        client.close(reset: false)
        loop.unregister(token)
        _ = loop.shared.openConnections.wrappingSubtract(1, ordering: .relaxed)
        facts.status = .failed(reason: "plain HTTP forwarding is not written yet")
        loop.shared.sink?.flowClosed(facts)
    }

    func loopEvent(side: Int, events: UInt32) {}
    func loopTimer(deadline: UInt64) {}
    func loopRunAgain() {}
    func loopShutdown() {}
}
