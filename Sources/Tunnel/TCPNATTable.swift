import Wire

/// The TCP NAT state of tun-nat.md: each app connection `A:p → R:r` gets a fake peer `F:q`, the
/// forward map finds the entry for the app's segments, the reverse map for the listener's.
///
/// Lifetimes (tun-nat.md "NAT state"):
/// - an entry is born `connecting` on the app's SYN (connect-first) and becomes `open` when the
///   upstream connect succeeds; a failed connect removes it;
/// - a SYN with the entry's ISN while connecting is a retransmission (dropped by the caller); a
///   SYN with another ISN is a new connection reusing the four-tuple: the old entry goes;
/// - a RST either way, or a FIN both ways, closes it; a closed entry lingers `lingerNanos`
///   (late ACKs, retransmitted FINs) and its fake endpoint then sits out the pool's quarantine;
/// - `connecting` entries expire after `synTimeoutNanos` (a backstop: the engine ends a connect
///   whose program stopped resending its SYN, `SYNRetrySchedule`); `open` ones never expire on
///   idleness;
/// - a failed connect's entry goes at once (`fail`), but its SYN is remembered for
///   `failureMemoryNanos` with the answer the program got (`FailedConnectAnswer`): a
///   retransmission of it (the same ISN) that crossed that answer gets the same answer again,
///   never a new connection; a connect the server never answered (`fail(…, answer: .nothing)`)
///   is remembered `unansweredMemoryNanos`, and its retransmissions are taken in silence for as
///   long as the program's kernel sends them;
/// - At most `capacity` entries exist; beyond it SYNs are refused;
/// - a SYN that would open a connection when the caller has no room for one (`appSYN(room:)`,
///   the proxy's connection cap) opens none and changes nothing.
public struct TCPNATTable: Sendable {
    public enum State: Sendable, Equatable {
        case connecting
        case open
        case closed
    }

    public struct Entry: Sendable, Equatable {
        public let id: UInt64
        /// The app's socket `A:p`.
        public let app: PacketEndpoint
        /// The real destination `R:r`.
        public let remote: PacketEndpoint
        /// The fake peer `F:q` the listener sees.
        public let fake: PacketEndpoint
        /// The app's initial sequence number (from its SYN).
        public let isn: UInt32
        public internal(set) var state: State
        public let createdAt: UInt64
        public internal(set) var closedAt: UInt64?
        /// The flow id of this connection (`FlowFacts.id`), given on the app's SYN; 0: none.
        public internal(set) var flowID: UInt64 = 0
        var finFromApp = false
        var finFromListener = false
    }

    /// What to do with an app's SYN (SYN without ACK).
    public enum SYNDecision: Sendable, Equatable {
        /// A new connection: connect upstream first, then forward the SYN rewritten.
        /// `replaced` is the entry a reused four-tuple pushed out (its upstream must be closed).
        case connectFirst(Entry, replaced: Entry?)
        /// The same SYN again while the upstream connect runs: drop it.
        case retransmitWhileConnecting
        /// The same SYN again after the connect: forward it rewritten to this entry.
        case forward(Entry)
        /// No room: the table or the fake pool is full. Answer with a reset. `replaced` is the
        /// entry a reused four-tuple pushed out before the pool was found empty (its upstream
        /// must be closed and its flow recorded, as for `connectFirst`'s).
        case full(replaced: Entry?)
        /// A new connection when the caller said it has no room (`appSYN(room: false)`): nothing
        /// was made or changed (an entry the SYN's other ISN would replace stays).
        case noRoom
        /// The same SYN again after its upstream connect failed (`fail`): a retransmission the
        /// program's kernel sent before tv's answer reached it, or after its socket took an ICMP
        /// destination unreachable as a soft error (Linux `tcp_v4_err` while the socket was
        /// owned by the user). Give it `answer` again, the failed connect's answer, as part of
        /// the failed flow `flowID`; no new connection. (Without it, a SYN retransmitted ~3 s
        /// into a connect that failed when ARP gave up, at ~3 s, opened a second flow, connected
        /// again for 3 s and was recorded once more: a test's flake; answered with a reset after
        /// tv's host unreachable, such a program would read ECONNREFUSED, not EHOSTUNREACH; a
        /// new connect per retransmission of a connect the server never answered would knock on
        /// the server's door again and again, each a new flow.)
        case failedAgain(flowID: UInt64, answer: FailedConnectAnswer)
    }

    public let capacity: Int
    public let lingerNanos: UInt64
    public let synTimeoutNanos: UInt64
    /// How long a failed connect's SYN is remembered (`fail`).
    public let failureMemoryNanos: UInt64
    /// How long the SYN of a connect the server never answered is remembered (`fail(…, answer:
    /// .nothing)`): past the program kernel's last retransmission whenever tv gave up. Linux (6.18,
    /// tcp_syn_retries 6, tcp_syn_linear_timeouts 4) resends a SYN at 1, 2, 3, 4, 5, 7, 11, 19,
    /// 35 and 67 s and gives up with ETIMEDOUT at 133 s (measured); older kernels at 1, 3, 7, 15,
    /// 31, 63 s and 127 s.
    public let unansweredMemoryNanos: UInt64
    public private(set) var pool4: FakeEndpointPool?
    public private(set) var pool6: FakeEndpointPool?
    private var entries: [UInt64: Entry] = [:]
    private var forwardMap: [FlowKey: UInt64] = [:]
    private var reverseMap: [PacketEndpoint: UInt64] = [:]
    private var nextID: UInt64 = 1
    /// Entries that may expire, in deadline order (one queue per delay keeps each sorted).
    private var synQueue = DeadlineQueue()
    private var lingerQueue = DeadlineQueue()
    /// Failed connects' SYNs by four-tuple (`fail`), at most `capacity` of them, and their
    /// expiry: each by the id its entry had, so a newer failure on the tuple is not forgotten
    /// by an older one's deadline.
    private var failed: [FlowKey: FailedSYN] = [:]
    private var failedQueue = DeadlineQueue()
    private var unansweredQueue = DeadlineQueue()
    private var failedKeys: [UInt64: FlowKey] = [:]

    /// A failed connect's SYN: its entry's id, the app's ISN, the flow it was, and what the
    /// program was answered.
    struct FailedSYN: Sendable {
        var id: UInt64
        var isn: UInt32
        var flowID: UInt64
        var answer: FailedConnectAnswer
    }

    /// The forward key: the app's endpoint and the real destination.
    public struct FlowKey: Sendable, Hashable {
        public var app: PacketEndpoint
        public var remote: PacketEndpoint
        public init(app: PacketEndpoint, remote: PacketEndpoint) {
            self.app = app
            self.remote = remote
        }
    }

    public init(capacity: Int, pool4: FakeEndpointPool?, pool6: FakeEndpointPool?,
                lingerNanos: UInt64 = 10_000_000_000, synTimeoutNanos: UInt64 = 180_000_000_000,
                failureMemoryNanos: UInt64 = 10_000_000_000, unansweredMemoryNanos: UInt64 = 140_000_000_000) {
        self.capacity = capacity
        self.pool4 = pool4
        self.pool6 = pool6
        self.lingerNanos = lingerNanos
        // Past the kernel's own SYN retries (133 s, `unansweredMemoryNanos`): tv's connect runs
        // as long as the program's (it was 75 s, under the 10 s connect timeout tv had then).
        self.synTimeoutNanos = synTimeoutNanos
        self.failureMemoryNanos = failureMemoryNanos
        self.unansweredMemoryNanos = unansweredMemoryNanos
    }

    /// Failed connects' SYNs remembered (`fail`).
    public var failedCount: Int { failed.count }

    public var count: Int { entries.count }
    public func entry(_ id: UInt64) -> Entry? { entries[id] }

    /// The entry for the app's segment `app → remote`.
    public func forward(app: PacketEndpoint, remote: PacketEndpoint) -> Entry? {
        forwardMap[FlowKey(app: app, remote: remote)].flatMap { entries[$0] }
    }

    /// The entry whose fake peer is `fake` (the listener's segments go to it).
    public func reverse(fake: PacketEndpoint) -> Entry? {
        reverseMap[fake].flatMap { entries[$0] }
    }

    /// Whether `endpoint` is in one of the fake pools.
    public func isFake(_ endpoint: PacketEndpoint) -> Bool {
        (endpoint.address.isIPv6 ? pool6 : pool4)?.contains(endpoint) ?? false
    }

    /// Decides about the app's SYN with initial sequence number `isn`.
    /// - Parameter room: whether the caller may start another connection (false: the proxy is at
    ///   its connection cap, or stopping); a SYN that would start one is then `.noRoom`, while
    ///   those of connections the table knows are decided as ever.
    public mutating func appSYN(app: PacketEndpoint, remote: PacketEndpoint, isn: UInt32, now: UInt64, room: Bool = true) -> SYNDecision {
        var replaced: Entry?
        let key = FlowKey(app: app, remote: remote)
        if let id = forwardMap[key], let old = entries[id] {
            if old.isn == isn {
                return old.state == .connecting ? .retransmitWhileConnecting : .forward(old)
            }
            guard room else { return .noRoom }
            replaced = remove(id, now: now)
        } else if let gone = failed[key] {
            // Remembered until `expire` passes its deadline; another ISN is a new connect.
            if gone.isn == isn { return .failedAgain(flowID: gone.flowID, answer: gone.answer) }
            guard room else { return .noRoom }
            forgetFailure(key)
        }
        guard room else { return .noRoom }
        guard entries.count < capacity else { return .full(replaced: replaced) }
        let fake: PacketEndpoint?
        if app.address.isIPv6 { fake = pool6?.allocate(now: now) } else { fake = pool4?.allocate(now: now) }
        guard let fake else { return .full(replaced: replaced) }
        let entry = Entry(id: nextID, app: app, remote: remote, fake: fake, isn: isn, state: .connecting, createdAt: now)
        nextID += 1
        entries[entry.id] = entry
        forwardMap[FlowKey(app: app, remote: remote)] = entry.id
        reverseMap[fake] = entry.id
        synQueue.append(entry.id, now &+ synTimeoutNanos)
        return .connectFirst(entry, replaced: replaced)
    }

    /// Gives entry `id` its flow id (the one its packets and its flow row carry).
    public mutating func assignFlowID(_ id: UInt64, _ flowID: UInt64) {
        entries[id]?.flowID = flowID
    }

    /// The upstream connect of entry `id` succeeded: the SYN may go to the listener.
    public mutating func connected(_ id: UInt64) {
        guard entries[id]?.state == .connecting else { return }
        entries[id]?.state = .open
    }

    /// Notes a segment of entry `id` for its life: `fromApp` says which way it went.
    /// - Returns: true when this segment closed the entry.
    @discardableResult
    public mutating func note(_ id: UInt64, fromApp: Bool, flags: UInt8, now: UInt64) -> Bool {
        // Most segments carry neither: nothing changes (and no dictionary write per packet).
        guard flags & (TCPFlags.rst | TCPFlags.fin) != 0 else { return false }
        guard var entry = entries[id], entry.state != .closed else { return false }
        if flags & TCPFlags.rst != 0 {
            entry.state = .closed
        } else if flags & TCPFlags.fin != 0 {
            if fromApp { entry.finFromApp = true } else { entry.finFromListener = true }
            if entry.finFromApp && entry.finFromListener { entry.state = .closed }
        }
        let closed = entry.state == .closed
        if closed {
            entry.closedAt = now
            lingerQueue.append(id, now &+ lingerNanos)
        }
        entries[id] = entry
        return closed
    }

    /// Removes entry `id` now (a failed connect, a refused accept); its fake endpoint is quarantined.
    @discardableResult
    public mutating func remove(_ id: UInt64, now: UInt64) -> Entry? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        let key = FlowKey(app: entry.app, remote: entry.remote)
        if forwardMap[key] == id { forwardMap[key] = nil }
        if reverseMap[entry.fake] == id { reverseMap[entry.fake] = nil }
        if entry.fake.address.isIPv6 { pool6?.release(entry.fake, now: now) } else { pool4?.release(entry.fake, now: now) }
        return entry
    }

    /// Removes entry `id` whose upstream connect failed and whose program was given `answer`,
    /// remembering its SYN and that answer (`SYNDecision.failedAgain`) for `failureMemoryNanos`,
    /// or, when the server never answered (`.nothing`), for `unansweredMemoryNanos`; at most
    /// `capacity` remembered, beyond them none. Returns what it removed.
    @discardableResult
    public mutating func fail(_ id: UInt64, now: UInt64, answer: FailedConnectAnswer = .reset) -> Entry? {
        guard let entry = remove(id, now: now) else { return nil }
        let key = FlowKey(app: entry.app, remote: entry.remote)
        if failed[key] != nil { forgetFailure(key) }
        guard failed.count < capacity else { return entry }
        failed[key] = FailedSYN(id: entry.id, isn: entry.isn, flowID: entry.flowID, answer: answer)
        failedKeys[entry.id] = key
        // One queue per delay keeps each in deadline order.
        if answer == .nothing {
            unansweredQueue.append(entry.id, now &+ unansweredMemoryNanos)
        } else {
            failedQueue.append(entry.id, now &+ failureMemoryNanos)
        }
        return entry
    }

    private mutating func forgetFailure(_ key: FlowKey) {
        guard let gone = failed.removeValue(forKey: key) else { return }
        failedKeys[gone.id] = nil
    }

    /// Removes closed entries whose linger has passed and connecting entries older than the SYN
    /// timeout. Returns what it removed.
    public mutating func expire(now: UInt64) -> [Entry] {
        var removed: [Entry] = []
        for id in synQueue.popDue(now: now) + lingerQueue.popDue(now: now) {
            guard let entry = entries[id] else { continue }
            let due: Bool
            switch entry.state {
            case .connecting: due = now &- entry.createdAt >= synTimeoutNanos
            case .open: due = false
            case .closed: due = now &- (entry.closedAt ?? now) >= lingerNanos
            }
            if due, let gone = remove(id, now: now) { removed.append(gone) }
        }
        for id in failedQueue.popDue(now: now) + unansweredQueue.popDue(now: now) {
            if let key = failedKeys[id] { forgetFailure(key) }
        }
        return removed
    }

    /// Every entry (teardown).
    public var allEntries: [Entry] { Array(entries.values) }
}

/// Ids with deadlines appended in non-decreasing deadline order; pops those due.
struct DeadlineQueue: Sendable {
    private var items: [(UInt64, UInt64)] = []
    private var head = 0

    var count: Int { items.count - head }

    mutating func append(_ id: UInt64, _ deadline: UInt64) { items.append((id, deadline)) }

    mutating func popDue(now: UInt64) -> [UInt64] {
        var out: [UInt64] = []
        while head < items.count, items[head].1 <= now {
            out.append(items[head].0)
            head += 1
        }
        if head > 1024 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return out
    }
}
