import Proxy
#if canImport(Glibc)
import Glibc
#endif

/// Upstream connects of the TUN's TCP (connect-first): the one under way, the one done and
/// waiting for the listener's accept, and when each is given up.
extension EngineLoop {
    /// An upstream connect under way (connect-first): the app's SYN waits here for its outcome.
    final class PendingConnect: LoopHandler {
        private unowned let engine: EngineLoop
        let fd: Int32
        let entry: TCPNATTable.Entry
        var syn: [UInt8]
        /// The SYN's virtio-net header (its checksum may be partial), written back with it.
        var synHeader: VirtioNetHeader
        /// When tv gives up (`TunnelEngineConfiguration.connectTimeout`); nil: its kernel's SYN
        /// retries decide, or the program giving up (`retries`).
        let deadline: UInt64?
        let startMicros: Int64
        /// The program's SYN retransmissions while this connect goes on: when they stop, it gave up.
        var retries: SYNRetrySchedule
        /// This connect's token on the loop (registered by `EngineLoop.startConnect`).
        var token: UInt64 = 0
        /// Its flow was reported opened while it connected (`EngineLoop.announceSlowConnects`).
        var announced = false

        init(engine: EngineLoop, fd: Int32, entry: TCPNATTable.Entry, syn: [UInt8], synHeader: VirtioNetHeader,
             deadline: UInt64?, startMicros: Int64, firstSYNAt: UInt64) {
            self.engine = engine
            self.fd = fd
            self.entry = entry
            self.syn = syn
            self.synHeader = synHeader
            self.deadline = deadline
            self.startMicros = startMicros
            retries = SYNRetrySchedule(firstAt: firstSYNAt)
        }

        func loopEvent(side: Int, events: UInt32) {
            engine.syncClock()
            engine.connectFinished(entry.id, bits: events)
        }
    }

    struct ReadyUpstream {
        let fd: Int32
        let deadline: UInt64
        /// When the connect started (µs since the epoch): the flow's start.
        let startMicros: Int64
        /// Its flow was reported opened while it connected.
        let announced: Bool
    }

    /// Gives up what waited too long, at each housekeeping tick: a connect past tv's own
    /// deadline (the program answered as `FailedConnectAnswer` says), a connect whose program
    /// stopped resending its SYN (`SYNRetrySchedule`), a completed connect whose program's
    /// handshake never reached the listener.
    func expireConnects() {
        for (id, pending) in pendingConnects {
            if let deadline = pending.deadline, deadline <= now {
                loop.unregister(pending.token)
                close(pending.fd)
                pendingConnects[id] = nil
                connectFailed(pending.entry, .noAnswer(seconds: configuration.connectTimeout.map { Int($0) }), startMicros: pending.startMicros,
                              announced: pending.announced, syn: pending.syn)
            } else if pending.retries.givenUpAt <= now {
                // The program stopped resending its SYN: it gave up, and so does tv.
                if let entry = nat.entry(id) {
                    programLeft(entry, reset: false, stoppedResendingSYN: true)
                } else {
                    discardUpstream(id)
                }
                nat.remove(id, now: now)
            }
        }
        for (id, ready) in readyUpstreams where ready.deadline <= now {
            // `programLeft` closes the socket itself (closing it here too could close a descriptor a
            // loop thread was given in between).
            if let entry = nat.entry(id) {
                programLeft(entry, reset: false)
            } else {
                close(ready.fd)
                readyUpstreams[id] = nil
            }
            nat.remove(id, now: now)
        }
    }
}
