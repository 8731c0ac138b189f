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

    /// Records a close for a connection accepted at `start`, ending at `now`. Returns true when
    /// it tipped the balance: the client's next connection is to be passed through.
    public func suspicion(_ record: inout Record, connectionStart start: Int64, now: Int64) -> Bool {
        if record.lastSuccessMicros != .min && record.lastSuccessMicros >= start - trustMemoryMicros { return false }
        if start <= record.lastCountedMicros { return false }
        record.count += 1
        record.lastCountedMicros = now
        return record.count >= threshold
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

/// The per-key records of `PinningEvidenceRule`, shared by the loops.
final class PinningEvidence: Sendable {
    private let rule: PinningEvidenceRule
    private let records = Mutex<[PinKey: PinningEvidenceRule.Record]>([:])
    private let capacity = 4096

    init(rule: PinningEvidenceRule) { self.rule = rule }

    func suspicion(_ key: PinKey, connectionStart: Int64, now: Int64) -> Bool {
        records.withLock { all in
            if all.count >= capacity && all[key] == nil { all.removeAll(keepingCapacity: true) }
            return rule.suspicion(&all[key, default: .init()], connectionStart: connectionStart, now: now)
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
