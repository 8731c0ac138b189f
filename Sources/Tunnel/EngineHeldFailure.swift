import Proxy

/// A connect that fails at once is answered after a short hold, so its program can be named.
///
/// The program behind a flow is looked up by its socket (`ProgramLookup`, on a thread of its
/// own). A connect the upstream refused within microseconds was answered with tv's reset at
/// once: the program's socket closed before the lookup asked for it, and every such flow read
/// "not known" under `tv exec` (20 of 20 refused connects in a trial; the explicit proxy, whose
/// client waits for its 502, named them all). Now the flow is reported opened first (which
/// queues its lookup while the program waits in SYN-SENT) and the reset follows once the lookup
/// has answered (it posts to the engine's inbox), or after `failedConnectHoldNanos` at most;
/// the failure is recorded then, as before.
extension EngineLoop {
    /// The longest a failed connect's reset waits for the lookup. The lookup answers within a
    /// millisecond or two on an idle machine; the bound is for a lookup thread far behind.
    static let failedConnectHoldNanos: UInt64 = 250_000_000

    /// A failed connect whose reset is held (`failConnect`).
    final class HeldFailure: LoopHandler {
        private unowned let engine: EngineLoop
        let entry: TCPNATTable.Entry
        let why: ConnectionFailure.Unreachable
        let startMicros: Int64
        /// The app's SYN as it sent it (an ICMP answer quotes it).
        let syn: [UInt8]
        /// Its token on the loop (its timer).
        var token: UInt64 = 0

        init(engine: EngineLoop, entry: TCPNATTable.Entry, why: ConnectionFailure.Unreachable, startMicros: Int64, syn: [UInt8]) {
            self.engine = engine
            self.entry = entry
            self.why = why
            self.startMicros = startMicros
            self.syn = syn
        }

        func loopEvent(side: Int, events: UInt32) {}

        func loopTimer(deadline: UInt64) {
            engine.syncClock()
            engine.heldFailureDue(entry.id)
        }
    }

    /// Fails `entry`'s connect for `why`: at once when its flow was already reported opened
    /// (its program was looked up while it waited) or has no id or sink; otherwise reported
    /// opened now and answered after the hold.
    /// - Parameter syn: the app's SYN as it sent it (`connectFailed` may quote it).
    func failConnect(_ entry: TCPNATTable.Entry, _ why: ConnectionFailure.Unreachable, startMicros: Int64, announced: Bool, syn: [UInt8]) {
        guard !announced, entry.flowID != 0, let sink, let facts = unadoptedFacts(entry, startMicros: startMicros) else {
            connectFailed(entry, why, startMicros: startMicros, announced: announced, syn: syn)
            return
        }
        let id = entry.id
        sink.flowOpened(facts) { [inbox] in inbox.post { $0.heldFailureDue(id) } }
        let held = HeldFailure(engine: self, entry: entry, why: why, startMicros: startMicros, syn: syn)
        held.token = loop.register(held)
        heldFailures[entry.id] = held
        loop.armTimer(held.token, at: now + Self.failedConnectHoldNanos)
    }

    /// The hold of `id`'s failed connect is over (or the engine stops): the program gets its
    /// answer (`FailedConnectAnswer`) and the flow its failure.
    func heldFailureDue(_ id: UInt64) {
        guard let held = heldFailures.removeValue(forKey: id) else { return }
        loop.unregister(held.token)
        connectFailed(held.entry, held.why, startMicros: held.startMicros, announced: true, syn: held.syn)
    }
}
