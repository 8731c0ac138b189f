import FlowStore

/// Why a flow has no decrypted content, told apart — each of the four asserts something
/// different (seed: Flow Inspector, "Decrypted content"). None of them nudges towards a setting:
/// they explain, they do not invite.
public enum ContentAbsence: Sendable, Equatable {
    /// Plain traffic; nothing was kept of it (its packets are where to look).
    case notEncrypted
    /// TLS passed through: tv never decrypted it.
    case notInspected
    /// The client pins its certificate; tv passed it through unread, as a guarantee.
    case keptPrivate
    /// Inspected, and nothing is kept: the switch was off, or what was kept expired.
    case nothingKept
    /// The flow failed before content was kept.
    case failed(String?)

    /// The reason for `flow`, which has no turns in the index.
    public init(flow: FlowRecord) {
        switch flow.status {
        case .notEncrypted: self = .notEncrypted
        case .encrypted: self = .notInspected
        case .keptPrivate: self = .keptPrivate
        case .inspected: self = .nothingKept
        case .failed: self = .failed(flow.failureReason)
        }
    }

    /// One sentence; `flowID` names where the packets are.
    public func sentence(flowID: Int64) -> String {
        switch self {
        case .notEncrypted:
            return "Not encrypted: this connection was plain and nothing of it was kept; its byte and packet counts are in `tv flow \(flowID)`."
        case .notInspected:
            return "Not inspected: tv passed this connection through without decrypting it, so it never saw what was said."
        case .keptPrivate:
            return "Kept private: the app on the other end pins its certificate, so tv passed this connection through unread — that is a guarantee, not a failure."
        case .nothingKept:
            return "Inspected, and nothing was kept: keeping decrypted content was off for this connection, or what was kept has expired."
        case let .failed(reason):
            return "Nothing was kept: the connection failed before content was recorded" + (reason.map { " (\($0))." } ?? ".")
        }
    }

    /// A short machine word for `--json`: `not_encrypted`, `not_inspected`, `kept_private`,
    /// `nothing_kept`, `failed`.
    public var code: String {
        switch self {
        case .notEncrypted: return "not_encrypted"
        case .notInspected: return "not_inspected"
        case .keptPrivate: return "kept_private"
        case .nothingKept: return "nothing_kept"
        case .failed: return "failed"
        }
    }
}
