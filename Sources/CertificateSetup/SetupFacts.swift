import TrustStore

/// What is known about the CA, read now.
public enum CAFact: Sendable, Equatable, Hashable {
    /// It is known that there is no CA (the only state in which one may be generated).
    case absent
    /// A usable CA exists.
    case present
    /// A CA exists, but its root cannot sign now (`reason`: "its root expired on …", one clause;
    /// `remedy`: what to do, one clause): every leaf would be refused, so nothing is inspected.
    case cannotSign(reason: String, remedy: String)
    /// Something is there that cannot be read or trusted; `reason` is one sentence.
    case doubt(reason: String)
}

/// The durable facts the stage is derived from, all read at the moment of asking.
///
/// `installed`, `usable` and `finding` come from `TrustQuestions.ask` and matter only when the
/// CA is present (with no CA there is nothing to ask about).
public struct SetupFacts: Sendable, Equatable {
    public var ca: CAFact
    /// The trust store that was asked (and whose steps the guidance names).
    public var store: TrustStoreSpec
    public var installed: TrustAnswer
    public var usable: TrustAnswer
    /// What the usability check saw; names the exact missing step when installed but not usable.
    public var finding: TrustFinding?
    /// The saved `inspection.enabled`.
    public var inspectionEnabled: Bool

    public init(ca: CAFact, store: TrustStoreSpec, installed: TrustAnswer, usable: TrustAnswer,
                finding: TrustFinding? = nil, inspectionEnabled: Bool) {
        self.ca = ca
        self.store = store
        self.installed = installed
        self.usable = usable
        self.finding = finding
        self.inspectionEnabled = inspectionEnabled
    }

    /// Facts from a CA state and, when there is a CA, the trust store's answers.
    /// - Parameter trust: nil when there was no CA to ask about; the answers are then `.no`.
    public init(ca: CAFact, store: TrustStoreSpec, trust: TrustFacts?, inspectionEnabled: Bool) {
        self.init(ca: ca, store: store, installed: trust?.installed ?? .no, usable: trust?.usable ?? .no,
                  finding: trust?.finding, inspectionEnabled: inspectionEnabled)
    }
}

/// What the guided flow knows about this visit and nothing durable: whether the explanation was
/// accepted, whether it is waiting on the user to act outside `tv`, and the last step that failed.
public struct SetupProgress: Sendable, Equatable {
    /// The user agreed, after step 0, to create the certificate.
    public var explanationAccepted: Bool
    /// The install-and-trust steps were shown and the user has not yet come back.
    public var waitingOnUser: Bool
    /// The last attempt that failed in this visit (create, apply trust, turn inspection on).
    public var lastFailure: SetupFailure?
    /// `tv ca trust` has just printed the install steps and tv can do them on this machine: the
    /// next command is the one that does them (`--apply --yes`), not `tv ca trust` again (a
    /// trial read `tv ca trust` as the next step of `tv ca trust`).
    public var stepsShownCanApply: Bool

    public init(explanationAccepted: Bool = false, waitingOnUser: Bool = false, lastFailure: SetupFailure? = nil,
                stepsShownCanApply: Bool = false) {
        self.explanationAccepted = explanationAccepted
        self.waitingOnUser = waitingOnUser
        self.lastFailure = lastFailure
        self.stepsShownCanApply = stepsShownCanApply
    }
}

/// An attempt that failed: at which step, and the one-sentence reason.
public struct SetupFailure: Sendable, Equatable {
    public let step: SetupStep
    public let reason: String
    public init(step: SetupStep, reason: String) {
        self.step = step
        self.reason = reason
    }
}
