/// Which packets the capture writer holds back so that a TLS connection's client secret is in
/// the file before the packet that carries the client's Finished (pure: the writer feeds it
/// what it reads, and does what it answers).
///
/// Wireshark and tshark derive a direction's keys when they read that direction's Finished and
/// never look back: a secret later in the file is ignored. The server leg's secrets are queued
/// before its flight (`tv_wbio_hold`), but OpenSSL logs `CLIENT_TRAFFIC_SECRET_0` (TLS 1.2:
/// `CLIENT_RANDOM`) only when the proxy's loop reads the client's Finished, after the TUN engine
/// queued that packet; a batch boundary between them (the writer's linger ends, a busy loop)
/// would put the secret after the Finished. So, from a client's ClientHello (its client random,
/// `TLSClientRandom.ofClientHello`) until a client-Finished secret with that random is written
/// (`TLSClientRandom.clientFinishedLabels`), the flow *waits*: its later packets, both
/// directions, are held (copied aside, in order) and written right after that secret. A wait
/// ends without its secret (the packets are written as they are) when it is older than
/// `Limits.maximumAgeMicros` (a connection tv does not inspect never logs one), when the flow's
/// held packets reach `packetsPerFlow` or `bytesPerFlow`, when all held bytes would pass
/// `totalBytes` (the flow offering is let go), and at a flush, a rotation or the session's end
/// (`releaseAll`). A ClientHello whose random already had its secret written, or one past
/// `Limits.flows` waits, starts no wait. Times are the packets' (wall µs, `EngineClock`).
public struct CaptureHoldPolicy: Sendable, Equatable {
    /// The bounds of what is held.
    public struct Limits: Sendable, Equatable {
        /// How long a flow waits for its secret, µs from its ClientHello's time. The secret comes
        /// within microseconds of the loop reading the Finished; a second covers a loaded machine.
        public var maximumAgeMicros: Int64 = 1_000_000
        /// Packets held per flow (a handshake's last flights and the first request are a few).
        public var packetsPerFlow: Int = 64
        /// Bytes of blocks held per flow.
        public var bytesPerFlow: Int = 256 << 10
        /// Bytes of blocks held in all.
        public var totalBytes: Int = 4 << 20
        /// Flows waiting at once.
        public var flows: Int = 1024
        /// Client randoms whose secret was written, remembered (a ClientHello in the same batch
        /// as its secret, or later, must not wait for a secret already in the file).
        public var rememberedSecrets: Int = 4096

        public init() {}
    }

    /// What to do with a packet of a waiting flow (`offer`).
    public enum Decision: Sendable, Equatable {
        /// Hold it behind the flow's other held packets.
        case hold
        /// The wait is over (a limit reached): write the flow's held packets, then this one.
        case release
    }

    /// A flow's wait: the random it waits for, since when, what it holds.
    public struct Wait: Sendable, Equatable {
        public var random: TLSClientRandom
        public var sinceMicros: Int64
        public var packets: Int
        public var bytes: Int

        public init(random: TLSClientRandom, sinceMicros: Int64, packets: Int, bytes: Int) {
            self.random = random
            self.sinceMicros = sinceMicros
            self.packets = packets
            self.bytes = bytes
        }
    }

    /// The bounds it was made with.
    public let limits: Limits
    /// The waiting flows by id.
    public private(set) var waiting: [UInt64: Wait] = [:]
    /// The waiting flows in the order their waits began.
    public private(set) var order: [UInt64] = []
    /// Bytes held by every waiting flow.
    public private(set) var heldBytes = 0
    private var byRandom: [TLSClientRandom: UInt64] = [:]
    private var known: Set<TLSClientRandom> = []
    /// `known` in the order learnt, a ring of `limits.rememberedSecrets`.
    private var knownRing: [TLSClientRandom] = []
    private var knownNext = 0

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Whether `flow` waits (its packets are offered with `offer`). Cheap when none waits.
    @inline(__always)
    public func isWaiting(_ flow: UInt64) -> Bool { !waiting.isEmpty && waiting[flow] != nil }

    /// The writer read a client's ClientHello with `random` in a packet of `flow` at `timeMicros`
    /// (the packet itself is written).
    /// - Returns: true when the flow now waits (its later packets go to `offer`).
    public mutating func clientHello(flow: UInt64, random: TLSClientRandom, timeMicros: Int64) -> Bool {
        guard !known.contains(random), waiting[flow] == nil, byRandom[random] == nil, waiting.count < limits.flows else { return false }
        waiting[flow] = Wait(random: random, sinceMicros: timeMicros, packets: 0, bytes: 0)
        byRandom[random] = flow
        order.append(flow)
        return true
    }

    /// A packet of the waiting `flow`, its block `bytes` long.
    public mutating func offer(flow: UInt64, bytes: Int) -> Decision {
        guard var wait = waiting[flow] else { return .release }
        guard wait.packets < limits.packetsPerFlow, wait.bytes + bytes <= limits.bytesPerFlow, heldBytes + bytes <= limits.totalBytes else {
            end(flow)
            return .release
        }
        wait.packets += 1
        wait.bytes += bytes
        heldBytes += bytes
        waiting[flow] = wait
        return .hold
    }

    /// A client-Finished secret with `random` goes into the file now (before what follows).
    /// - Returns: the flow that waited for it, its wait ended (write its held packets next).
    public mutating func secretWritten(_ random: TLSClientRandom) -> UInt64? {
        if known.insert(random).inserted {
            if knownRing.count < limits.rememberedSecrets {
                knownRing.append(random)
            } else if !knownRing.isEmpty {
                known.remove(knownRing[knownNext])
                knownRing[knownNext] = random
                knownNext = (knownNext + 1) % knownRing.count
            }
        }
        guard let flow = byRandom[random] else { return nil }
        end(flow)
        return flow
    }

    /// Ends the waits older than `limits.maximumAgeMicros` at `nowMicros`.
    /// - Returns: their flows, in the order the waits began.
    public mutating func expire(nowMicros: Int64) -> [UInt64] {
        let due = order.filter { waiting[$0].map { nowMicros - $0.sinceMicros >= limits.maximumAgeMicros } ?? false }
        due.forEach { end($0) }
        return due
    }

    /// Ends every wait (a flush, a rotation, the end).
    /// - Returns: the flows, in the order the waits began.
    public mutating func releaseAll() -> [UInt64] {
        let all = order
        waiting = [:]
        byRandom = [:]
        order = []
        heldBytes = 0
        return all
    }

    /// When the oldest wait expires (µs), nil when none waits.
    public var deadlineMicros: Int64? {
        order.first.flatMap { waiting[$0] }.map { $0.sinceMicros + limits.maximumAgeMicros }
    }

    private mutating func end(_ flow: UInt64) {
        guard let wait = waiting.removeValue(forKey: flow) else { return }
        byRandom[wait.random] = nil
        heldBytes -= wait.bytes
        order.removeAll { $0 == flow }
    }
}
