import FlowStore

/// Why a flow has no decrypted content, told apart — each of the four asserts something
/// different (seed: Flow Inspector, "Decrypted content"). None of them nudges towards a setting:
/// they explain, they do not invite.
public enum ContentAbsence: Sendable, Equatable {
    /// Plain traffic; none of its content was kept (its flow record is all there is).
    case notEncrypted
    /// An open flow on which nothing was sent yet (`FlowListPresentation.awaitsFirstBytes`).
    case nothingSentYet
    /// TLS passed through: tv never decrypted it.
    case notInspected
    /// The client pins its certificate or lacks tv's root; tv passed it through unread, as a guarantee.
    case keptPrivate
    /// Inspected, and nothing is kept: the switch was off, what was kept expired, or it could not be written.
    case nothingKept
    /// The flow failed before content was kept.
    case failed(String?)
    /// The session carrying the flow ended without closing it, and nothing of it was kept.
    case interrupted
    /// Turns were kept, but every one of their index rows is damaged (`DamagedRow`).
    case damagedIndex

    /// The reason for `flow`, which has no turns in the index.
    public init(flow: FlowRecord) {
        switch flow.status {
        case .notEncrypted where FlowListPresentation.awaitsFirstBytes(flow): self = .nothingSentYet
        case .notEncrypted: self = .notEncrypted
        case .encrypted: self = .notInspected
        case .keptPrivate: self = .keptPrivate
        case .inspected: self = .nothingKept
        case .failed: self = .failed(flow.failureReason)
        case .interrupted: self = .interrupted
        }
    }

    /// Where the sentence is printed, which decides where it points for the rest.
    public enum Context: Sendable, Equatable {
        /// Under `tv flow ID`'s own facts: the record is just above.
        case flowDetail
        /// Anywhere else (`tv turns`, `tv export har`): `tv flow ID` is where the record is.
        case elsewhere
    }

    /// One sentence; `flowID` names the flow's record when `context` is `.elsewhere`.
    public func sentence(flowID: Int64, context: Context = .elsewhere) -> String {
        switch self {
        case .notEncrypted:
            switch context {
            case .flowDetail:
                return "Not encrypted: this connection was plain and tv kept none of its content; the addresses, times and byte counts above are what it recorded."
            case .elsewhere:
                return "Not encrypted: this connection was plain and tv kept none of its content; `tv flow \(flowID)` shows its addresses, times and byte counts."
            }
        case .nothingSentYet:
            return "Nothing was sent on this connection yet, so there is no content to keep so far."
        case .notInspected:
            return "Not inspected: tv passed this connection through without decrypting it, so it never saw what was said."
        case .keptPrivate:
            // Pinning or a client lacking tv's root: the flow's error says which (it said "pins"
            // of a curl that only lacked the root: a trial).
            let which = context == .flowDetail ? "the error line above says which" : "`tv flow \(flowID)` says which"
            return "Kept private: this client pins its certificate or lacks tv's root (\(which)), so tv passed this connection through unread — that is a guarantee, not a failure."
        case .nothingKept:
            return "Inspected, and nothing was kept: keeping decrypted content was off for this connection, what was kept has expired or was deleted (`tv content delete`), or it could not be written (a full disk: the session said so then)."
        case let .failed(reason):
            // Under `tv flow`'s status line the reason is just above (a trial read it twice).
            if context == .flowDetail { return "Nothing was kept: the connection failed before content was recorded (the status above says why)." }
            return "Nothing was kept: the connection failed before content was recorded" + (reason.map { " (\($0))." } ?? ".")
        case .interrupted:
            return "Nothing was kept: this connection's end was never recorded (its tv session was killed or crashed, or stopped unable to save it), and none of its content had been written."
        case .damagedIndex:
            return "Nothing can be shown: turns of this connection were kept, but every one of their index rows is damaged (each is named above)."
        }
    }

    /// A short machine word for `--json`: `not_encrypted`, `nothing_sent_yet`, `not_inspected`,
    /// `kept_private`, `nothing_kept`, `failed`, `interrupted`, `damaged_index`.
    public var code: String {
        switch self {
        case .notEncrypted: return "not_encrypted"
        case .nothingSentYet: return "nothing_sent_yet"
        case .notInspected: return "not_inspected"
        case .keptPrivate: return "kept_private"
        case .nothingKept: return "nothing_kept"
        case .failed: return "failed"
        case .interrupted: return "interrupted"
        case .damagedIndex: return "damaged_index"
        }
    }
}
