/// The seam between a saved setting and a running session ("saved first, applied second").
///
/// `SettingsStore` calls `settingSaved` only after the new value is durable. The proxy issue
/// implements this over the control socket in `$TV_HOME/run/`; until then `NoLiveSession` answers.
public protocol LiveSessionNotifier: Sendable {
    /// Tells a running session that `key` changed; `record` is what is now on disk.
    /// Must not throw: the save already happened, so a failure is reported, never undone.
    func settingSaved(key: String, record: SettingsRecord) -> LiveSessionDelivery
}

/// What became of telling a running session about a saved setting.
public enum LiveSessionDelivery: Sendable, Equatable {
    /// No session is running; the saved value is read when one starts.
    case noSession
    /// A running session took the new value.
    case applied
    /// A running session took the new value and did something with it at once, said in
    /// `lines` (a storage limit: what its retention pass deleted; none when nothing went).
    case appliedSaying([String])
    /// A running session heard of it and keeps the value it started with (`reason`: what reads
    /// it only as a session starts); the saved value applies when the next session starts.
    case atNextStart(reason: String)
    /// A session is running but could not be told.
    case failed(reason: String)

    /// A sentence for people, or nil when there is nothing worth saying.
    public var sentence: String? {
        switch self {
        case .noSession: return nil
        case .applied: return "The running session applied it."
        case .appliedSaying(let lines): return (["The running session applied it."] + lines).joined(separator: "\n")
        case .atNextStart(let reason):
            return "The running session keeps the value it started with (\(reason))."
        case .failed(let reason):
            return "The running session could not be told (\(reason)); the saved value takes effect when it restarts (`tv stop`, then `tv run`)."
        }
    }
}

/// The notifier used when there is no live-session wiring: always `.noSession`.
public struct NoLiveSession: LiveSessionNotifier {
    public init() {}
    public func settingSaved(key: String, record: SettingsRecord) -> LiveSessionDelivery { .noSession }
}
