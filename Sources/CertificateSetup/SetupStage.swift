/// The steps of the CA flow (seed 002 "Enabling HTTPS inspection"), brought to a trust store.
public enum SetupStep: String, Sendable, CaseIterable, Equatable, Hashable {
    /// Step 0: no CA yet; explain the trade-off before anything is made.
    case explain
    /// Step 1: the user agreed; create the CA.
    case create
    /// Steps 2 + 3 shown together: put the root in the store and trust it for TLS servers.
    case installAndTrust
    /// Step 4: the store accepts a leaf for TLS; inspection can be turned on.
    case ready
    /// Step 4, done: ready and inspection is on.
    case inspecting
    /// The CA or the store is in doubt: says what is wrong, offers nothing that generates.
    case closedDoor

    /// The seed's step number ("2+3" shown together), or nil for the closed door.
    public var number: String? {
        switch self {
        case .explain: return "0"
        case .create: return "1"
        case .installAndTrust: return "2+3"
        case .ready, .inspecting: return "4"
        case .closedDoor: return nil
        }
    }

    /// A short title for people.
    public var title: String {
        switch self {
        case .explain: return "What inspection means"
        case .create: return "Create the certificate"
        case .installAndTrust: return "Install and trust the root"
        case .ready: return "Ready to inspect"
        case .inspecting: return "Inspection on"
        case .closedDoor: return "Something is in doubt"
        }
    }
}

/// Where a step stands (seed 002 "States to design for every step").
public enum StepState: Sendable, Equatable {
    case notStarted
    /// Waiting on something outside `tv` (the user, the system); says what.
    case inProgress(waitingFor: String)
    case succeeded
    /// It failed; `retry` says how to try again.
    case failed(reason: String, retry: String)
    /// Some of it is done (e.g. the root is installed but not trusted for TLS).
    case partiallyDone(done: String, missing: String)

    /// `not started`, `in progress`, `succeeded`, `failed`, `partially done`.
    public var word: String {
        switch self {
        case .notStarted: return "not started"
        case .inProgress: return "in progress"
        case .succeeded: return "succeeded"
        case .failed: return "failed"
        case .partiallyDone: return "partially done"
        }
    }
}

/// One stage of the setup flow as a value: what it means, what to do next, where it stands.
///
/// Views (the command line) only print it; every sentence and every rule about what may be
/// offered is decided in `CertificateSetupPolicy`.
public struct SetupStage: Sendable, Equatable {
    public let step: SetupStep
    /// What this stage means, in one or two sentences.
    public let meaning: String
    /// The next thing to do, as a sentence.
    public let nextStep: String
    /// The command that does (or starts) the next step, when there is one (`tv …`).
    public let nextCommand: String?
    /// `nextCommand` must run as root (the system's store): said as `sudo tv --data-dir DIR …`
    /// by whoever knows the data folder (`SudoCommand`; a bare `sudo tv` reads root's).
    public let nextCommandNeedsRoot: Bool
    public let state: StepState
    /// An extra notice: for installed-but-not-usable, the exact missing step for the store.
    public let notice: String?
    /// True only when it is known that there is no CA: nothing generates over doubt.
    public let canGenerate: Bool
    /// Whether `tv inspect on` would be accepted now.
    public var canTurnInspectionOn: Bool { step == .ready }

    public init(step: SetupStep, meaning: String, nextStep: String, nextCommand: String?, nextCommandNeedsRoot: Bool = false,
                state: StepState, notice: String?, canGenerate: Bool) {
        self.step = step
        self.meaning = meaning
        self.nextStep = nextStep
        self.nextCommand = nextCommand
        self.nextCommandNeedsRoot = nextCommandNeedsRoot
        self.state = state
        self.notice = notice
        self.canGenerate = canGenerate
    }
}
