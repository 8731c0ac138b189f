import Synchronization

/// Weighs pinning suspicions (closes without an alert) per host, so that one stray close never
/// hides a host from inspection for good.
///
/// A suspicion counts only when:
/// - no inspected exchange with that host succeeded (the client sent data after our handshake)
///   while the suspicious connection was open: other clients of the host accept our certificate;
/// - its connection began after the previous counted suspicion for the host: a burst of closes
///   from connections that were all open at once (a load tool stopping, a browser dropping its
///   spare connections) is one episode, while a pinning client retries one attempt after another.
/// The host is remembered when `threshold` suspicions count in a row; a success starts over.
/// The state is a pure value (`HostRecord`); `PinningEvidence` keeps one per host under a lock,
/// touched only when a handshake ends or a first byte of data arrives, never per chunk.
public struct PinningEvidenceRule: Sendable, Hashable {
    public var threshold: Int
    public init(threshold: Int = 2) { self.threshold = max(1, threshold) }

    public struct HostRecord: Sendable, Hashable {
        public var lastSuccessMicros: Int64 = .min
        public var lastCountedMicros: Int64 = .min
        public var count = 0
        public init() {}
    }

    /// Records a suspicion for a connection accepted at `start`, ending at `now`. Returns true
    /// when the host is now to be remembered as pinned.
    public func suspicion(_ record: inout HostRecord, connectionStart start: Int64, now: Int64) -> Bool {
        if record.lastSuccessMicros >= start { return false }
        if start <= record.lastCountedMicros { return false }
        record.count += 1
        record.lastCountedMicros = now
        return record.count >= threshold
    }

    public func success(_ record: inout HostRecord, now: Int64) {
        record.lastSuccessMicros = now
        record.count = 0
    }
}

/// The per-host records of `PinningEvidenceRule`, shared by the loops.
final class PinningEvidence: Sendable {
    private let rule: PinningEvidenceRule
    private let records = Mutex<[String: PinningEvidenceRule.HostRecord]>([:])
    private let capacity = 4096

    init(rule: PinningEvidenceRule) { self.rule = rule }

    func suspicion(host: String, connectionStart: Int64, now: Int64) -> Bool {
        records.withLock { all in
            if all.count >= capacity && all[host] == nil { all.removeAll(keepingCapacity: true) }
            return rule.suspicion(&all[host, default: .init()], connectionStart: connectionStart, now: now)
        }
    }

    func success(host: String, now: Int64) {
        records.withLock { all in
            if all.count >= capacity && all[host] == nil { all.removeAll(keepingCapacity: true) }
            rule.success(&all[host, default: .init()], now: now)
        }
    }
}
