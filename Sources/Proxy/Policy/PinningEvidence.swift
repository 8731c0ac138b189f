import Synchronization

/// Weighs possible pinning (closes without an alert, `PinningDetector`) per client, host and
/// port (`PinKey`), so that a close is held against that client only, never against the host.
///
/// A close counts only when:
/// - the same client had no successful inspected exchange with that host and port (it sent data
///   after tv's handshake) while the closing connection was open, nor in the `trustMemory`
///   before it began: a client that took tv's certificate for the host does not pin it, and a
///   browser's spare connection, opened after its first one succeeded and dropped unused, was
///   taken for pinning and its next connection passed through (a trial with Chromium);
/// - its connection began after the previous counted close for the key: a burst of closes from
///   connections that were all open at once (a load tool stopping, a browser dropping its spare
///   connections) is one episode, while a pinning client retries one attempt after another.
/// - no other connection of the same key holds tv's certificate at the close (`othersOpen`): a
///   browser opens connections in parallel and closes the one it does not need the moment its
///   handshake ends, as a client checking a pin does. Measured with Debian's Chromium 156
///   through tv (tcpdump on the proxy port): the spare sent its Finished and its FIN 0.3 ms
///   apart (curl --pinnedpubkey: close_notify 0.3 ms after its Finished; Python checking a
///   pinned hash: its reset 20 ms after), while the connection it kept had sent its Finished
///   0.5 ms before that FIN and its first bytes 34 µs after it; so neither the time after the
///   handshake nor a success seen so far tells the spare from a pin check, while the other
///   connection, open with tv's leaf, does. A pinning client's parallel connections all close,
///   so the last of them is counted.
/// When `threshold` closes count in a row (1 by default), the client's next connection that
/// began after the last of them is its retry: `retry` says so once, the engine passes it through
/// and remembers the key as pinned. A client that checks a pin (curl --pinnedpubkey) therefore
/// gets through on its second attempt, and the memory holds only what was repeated: a close,
/// then the same client again. A success starts over.
/// The state is a pure value (`Record`); `PinningEvidence` keeps one per key under a lock,
/// touched only when a handshake ends, a first byte of data arrives, or a ClientHello is decided.
public struct PinningEvidenceRule: Sendable, Hashable {
    public var threshold: Int
    /// How long a success keeps a client's quiet closes with that host from counting (µs;
    /// default 10 minutes, longer than a browser keeps a spare connection).
    public var trustMemoryMicros: Int64
    public init(threshold: Int = 1, trustMemoryMicros: Int64 = 600_000_000) {
        self.threshold = max(1, threshold)
        self.trustMemoryMicros = trustMemoryMicros
    }

    public struct Record: Sendable, Hashable {
        public var lastSuccessMicros: Int64 = .min
        public var lastCountedMicros: Int64 = .min
        public var count = 0
        public init() {}
    }

    /// What a close weighs.
    public enum Weight: Sendable, Hashable {
        /// Counted against the client; `tipped`: its next connection is to be passed through.
        case counted(tipped: Bool)
        /// Part of an episode already counted: its connection began before the last counted close.
        case sameEpisode
        /// Not held against the client: it sent data over tv's certificate for this host and
        /// port while this connection was open, or within `trustMemoryMicros` before it began.
        case usedTVCertificate
        /// Not held against the client: another of its connections to this host and port held
        /// tv's certificate when this one closed (a browser's spare, dropped unused).
        case anotherConnectionOpen

        /// Whether the close counts as a sign of pinning (counted, or part of a counted episode).
        public var isEvidence: Bool {
            switch self {
            case .counted, .sameEpisode: return true
            case .usedTVCertificate, .anotherConnectionOpen: return false
            }
        }
    }

    /// Weighs a close for a connection accepted at `start`, ending at `now`, while `othersOpen`
    /// other connections of its key held tv's certificate.
    public func weigh(_ record: inout Record, connectionStart start: Int64, now: Int64, othersOpen: Int = 0) -> Weight {
        if record.lastSuccessMicros != .min && record.lastSuccessMicros >= start - trustMemoryMicros { return .usedTVCertificate }
        if othersOpen > 0 { return .anotherConnectionOpen }
        if start <= record.lastCountedMicros { return .sameEpisode }
        record.count += 1
        record.lastCountedMicros = now
        return .counted(tipped: record.count >= threshold)
    }

    /// `weigh` with no other connection open: true when the close tipped the balance.
    public func suspicion(_ record: inout Record, connectionStart start: Int64, now: Int64) -> Bool {
        weigh(&record, connectionStart: start, now: now) == .counted(tipped: true)
    }

    /// Whether a connection of the key accepted at `start` is the retry after closes that tipped
    /// the balance. True once: the record starts over (the engine remembers the key instead).
    public func retry(_ record: inout Record, connectionStart start: Int64) -> Bool {
        guard record.count >= threshold, start > record.lastCountedMicros else { return false }
        record = Record()
        return true
    }

    public func success(_ record: inout Record, now: Int64) {
        record.lastSuccessMicros = now
        record.count = 0
    }
}

/// The per-key records of `PinningEvidenceRule`, shared by the loops, and how many connections
/// of each key hold tv's certificate now (`leafOffered` to `leafConnectionEnded`).
final class PinningEvidence: Sendable {
    private let rule: PinningEvidenceRule
    private let records = Mutex<[PinKey: PinningEvidenceRule.Record]>([:])
    /// Open connections per key that tv offered its leaf; a key leaves at 0. Never cleared at
    /// `capacity`: each count is taken back by the connection that added it.
    private let offered = Mutex<[PinKey: Int]>([:])
    private let capacity = 4096

    init(rule: PinningEvidenceRule) { self.rule = rule }

    /// Weighs a close of a connection of `key` (itself among those offered tv's leaf when it was).
    func weigh(_ key: PinKey, connectionStart: Int64, now: Int64, heldLeaf: Bool = true) -> PinningEvidenceRule.Weight {
        let others = offered.withLock { max(0, ($0[key] ?? 0) - (heldLeaf ? 1 : 0)) }
        return records.withLock { all in
            if all.count >= capacity && all[key] == nil { all.removeAll(keepingCapacity: true) }
            return rule.weigh(&all[key, default: .init()], connectionStart: connectionStart, now: now, othersOpen: others)
        }
    }

    /// `weigh` of a connection that held no leaf, as a Bool: whether it tipped the balance.
    func suspicion(_ key: PinKey, connectionStart: Int64, now: Int64) -> Bool {
        weigh(key, connectionStart: connectionStart, now: now, heldLeaf: false) == .counted(tipped: true)
    }

    /// A connection of `key` was offered tv's leaf (its client TLS began).
    func leafOffered(_ key: PinKey) {
        offered.withLock { $0[key, default: 0] += 1 }
    }

    /// A connection `leafOffered` for `key` ended.
    func leafConnectionEnded(_ key: PinKey) {
        offered.withLock { all in
            let left = (all[key] ?? 0) - 1
            all[key] = left > 0 ? left : nil
        }
    }

    func retry(_ key: PinKey, connectionStart: Int64) -> Bool {
        records.withLock { all in
            guard all[key] != nil else { return false }
            let isRetry = rule.retry(&all[key]!, connectionStart: connectionStart)
            if isRetry { all[key] = nil }
            return isRetry
        }
    }

    /// Drops every record for `host` (`tv pinned forget HOST`): a suspicion not yet tipped, or
    /// one whose retry has not come, no longer passes the next connection through.
    func forget(host: String) {
        let name = PinKey.normalize(host)
        records.withLock { all in all = all.filter { $0.key.host != name } }
    }

    func success(_ key: PinKey, now: Int64) {
        records.withLock { all in
            if all.count >= capacity && all[key] == nil { all.removeAll(keepingCapacity: true) }
            rule.success(&all[key, default: .init()], now: now)
        }
    }
}
