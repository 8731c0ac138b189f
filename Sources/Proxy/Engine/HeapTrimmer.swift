import CTVShims

/// One loop's driver of `HeapTrimPolicy`: told when a connection released its TLS buffers, it
/// runs `malloc_trim(0)` once the policy says so, on the loop's own thread. Registered with the
/// loop only while a trim is waited for, so a draining loop does not wait for it (at most
/// `HeapTrimPolicy.settleNanos` or until the policy's interval has passed).
final class HeapTrimmer: LoopHandler {
    private unowned let loop: EventLoop
    private var policy = HeapTrimPolicy()
    private var token: UInt64?

    init(loop: EventLoop) { self.loop = loop }

    /// A connection of this loop gave buffers back now.
    func released() {
        guard let due = policy.released(at: loop.now) else { return }
        let token = self.token ?? loop.register(self)
        self.token = token
        loop.armTimer(token, at: due)
    }

    func loopEvent(side: Int, events: UInt32) {}

    func loopTimer(deadline: UInt64) {
        guard policy.fire(at: loop.now) else { return }
        if let token { loop.unregister(token) }
        token = nil
        tv_malloc_trim()
    }

    func loopShutdown() {
        if let token { loop.unregister(token) }
        token = nil
    }
}
