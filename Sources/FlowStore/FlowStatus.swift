/// What became of a flow's contents, as the timeline shows it. Stored as the raw value.
public enum FlowStatus: String, Sendable, Equatable, CaseIterable {
    /// Plain traffic (no TLS seen).
    case notEncrypted = "not_encrypted"
    /// TLS passed through untouched (inspection off, or not chosen for this flow).
    case encrypted
    /// TLS terminated by both legs; plaintext seen.
    case inspected
    /// The client refused our leaf (pinning); passed through untouched, as promised.
    case keptPrivate = "kept_private"
    /// The flow could not be carried; `failureReason` says why.
    case failed
    /// The session carrying the flow ended without closing it (killed, crashed, power lost), or
    /// its close was never written; `duration` ends at its last known activity. Set by the flow
    /// writer (`FlowWriterRegistry`), never by the proxy.
    case interrupted
}
