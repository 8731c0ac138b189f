/// What became of a flow's contents, as the timeline shows it: the proxy decides it, the flow
/// database stores it as the raw value (`not_encrypted`, …; the schema's CHECK lists them), the
/// counters of a live session name it by `words`.
///
/// The reason of a failure is not part of the status: it travels beside it (`FlowFacts.failureReason`,
/// `FlowRecord.failureReason`).
public enum FlowStatus: String, Sendable, Hashable, CaseIterable {
    /// Plain traffic (no TLS seen): relayed as is.
    case notEncrypted = "not_encrypted"
    /// TLS passed through untouched (inspection off, excluded, or not possible).
    case encrypted
    /// TLS terminated on both legs; plaintext seen.
    case inspected
    /// The client refused our leaf before (pinning); passed through untouched, as promised.
    case keptPrivate = "kept_private"
    /// The flow could not be carried; the failure reason says why.
    case failed
    /// The session carrying the flow ended without closing it (killed, crashed, power lost), or
    /// its close was never written (dropped, or its database could not be written: a full disk,
    /// at the stop too); `duration` ends at its last known activity. Set by the flow
    /// writer (`FlowWriterRegistry`), never by the proxy.
    case interrupted

    /// The statuses the proxy gives a flow it closes (all but `interrupted`), in the order the
    /// counters list them.
    public static let closedByProxy: [FlowStatus] = [.notEncrypted, .encrypted, .inspected, .keptPrivate, .failed]

    /// The status as a name for programs (JSON keys, control-socket names): camelCase, no spaces
    /// (`notEncrypted`, `keptPrivate`, `failed`).
    public var key: String {
        switch self {
        case .notEncrypted: return "notEncrypted"
        case .keptPrivate: return "keptPrivate"
        default: return rawValue
        }
    }

    /// The status in words, as people read it: "not encrypted", "kept private", "failed".
    public var words: String {
        switch self {
        case .notEncrypted: return "not encrypted"
        case .keptPrivate: return "kept private"
        default: return rawValue
        }
    }
}
