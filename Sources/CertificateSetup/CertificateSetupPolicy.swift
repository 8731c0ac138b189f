import TVHome
import TrustStore

/// The stage machine: stage = f(CA facts, trust facts, inspection setting, this visit's progress).
///
/// Pure: no I/O, no clock. The order of the rules is the policy:
/// 1. A CA in doubt closes the door (never "no CA": generating would replace a root devices trust);
///    so does a root that cannot sign now (expired, or not valid yet: `tv ca remake` is its own step).
/// 2. No CA: explain first; after consent, create. Only here is `canGenerate` true.
/// 3. A leaf that verifies for TLS: ready, or inspecting when inspection is on.
/// 4. A store that cannot be read (usable unknown, or usable no with installed unknown): closed
///    door — partly done and not started cannot be told apart.
/// 5. Otherwise install and trust: partially done (with the exact missing step) when the root is
///    installed, not started when it is not.
public enum CertificateSetupPolicy {
    /// The stage for `facts`, in this visit's `progress`.
    public static func stage(_ facts: SetupFacts, progress: SetupProgress = SetupProgress()) -> SetupStage {
        let store = facts.store
        let opt = StoreWords.option(store)
        let failure = progress.lastFailure
        switch facts.ca {
        case .doubt(let reason):
            return SetupStage(
                step: .closedDoor,
                meaning: "The CA is in doubt: \(reason). Nothing will be generated over it, because devices may already trust that root.",
                nextStep: "Repair or restore that file (or, to start over on purpose, delete root.pem, root-key.pem and leaf-key.pem from the ca folder and keep profile-identity.json), then check again.",
                nextCommand: "tv setup" + opt,
                state: .failed(reason: reason, retry: "Check again after repairing it."),
                notice: nil, canGenerate: false)
        case .absent:
            if !progress.explanationAccepted {
                return SetupStage(
                    step: .explain,
                    meaning: "There is no certificate yet. Inspection needs a certificate authority made here and trusted by this machine; read what that means before anything is made.",
                    nextStep: "Read the explanation, then agree to create the certificate.",
                    nextCommand: "tv setup" + opt,
                    state: .notStarted, notice: nil, canGenerate: true)
            }
            let state: StepState = failure?.step == .create
                ? .failed(reason: failure!.reason, retry: "Try again: `tv ca create`.")
                : .notStarted
            return SetupStage(
                step: .create,
                meaning: "You agreed. The next step makes the local certificate authority; its private key \(SetupText.keyStays(in: "the data folder")).",
                nextStep: "Create the certificate.",
                nextCommand: "tv ca create",
                state: state, notice: nil, canGenerate: true)
        case let .cannotSign(reason, remedy):
            return SetupStage(
                step: .closedDoor,
                meaning: "The CA cannot sign: \(reason). Every certificate it made would be refused, so nothing can be inspected with it.",
                nextStep: remedy.prefix(1).uppercased() + remedy.dropFirst() + ".",
                nextCommand: remedy.contains("tv ca remake") ? "tv ca remake" : "tv setup" + opt,
                // The remedy itself, then the check: "Check again after that" followed the
                // reason alone in `tv ca status`, where nothing said what "that" was (a trial).
                state: .failed(reason: reason, retry: remedy.prefix(1).uppercased() + remedy.dropFirst() + ", then check again: `tv setup\(opt)`."),
                notice: nil, canGenerate: false)
        case .present:
            break
        }

        switch facts.usable {
        case .yes:
            if facts.inspectionEnabled {
                return SetupStage(
                    step: .inspecting,
                    meaning: "\(capitalized(StoreWords.name(store))) accepts leaves from the root for TLS, and inspection is on.",
                    nextStep: "Nothing to do. Turn inspection off any time.",
                    nextCommand: "tv inspect off",
                    state: .succeeded, notice: nil, canGenerate: false)
            }
            let state: StepState = failure?.step == .ready
                ? .failed(reason: failure!.reason, retry: "Try again: `tv inspect on`.")
                : .succeeded
            return SetupStage(
                step: .ready,
                meaning: "\(capitalized(StoreWords.name(store))) accepts leaves from the root for TLS; inspection can be turned on.",
                nextStep: "Turn inspection on.",
                nextCommand: "tv inspect on",
                state: state, notice: nil, canGenerate: false)
        case .unknown(let because):
            return storeInDoubt(store: store, because: because)
        case .no:
            break
        }

        switch facts.installed {
        case .unknown(let because):
            return storeInDoubt(store: store, because: because)
        case .yes:
            let missing = missingStep(store: store, finding: facts.finding)
            return SetupStage(
                step: .installAndTrust,
                meaning: "The root is in \(StoreWords.name(store)), but it is not trusted for TLS servers, so a leaf from it is refused.",
                nextStep: missing,
                nextCommand: trustCommand(store, progress),
                nextCommandNeedsRoot: trustNeedsRoot(store, progress),
                state: failure?.step == .installAndTrust
                    ? .failed(reason: failure!.reason, retry: "Try again: `tv ca trust\(opt) --apply --yes`, or follow the steps by hand.")
                    : .partiallyDone(done: "The root is installed in \(StoreWords.name(store)).", missing: missing),
                notice: "Installed, but not trusted for TLS. " + missing,
                canGenerate: false)
        case .no:
            let state: StepState
            if failure?.step == .installAndTrust {
                state = .failed(reason: failure!.reason, retry: "Try again: `tv ca trust\(opt) --apply --yes`, or follow the steps by hand.")
            } else if progress.waitingOnUser {
                state = .inProgress(waitingFor: "you to install and trust the root in \(StoreWords.name(store))")
            } else {
                state = .notStarted
            }
            return SetupStage(
                step: .installAndTrust,
                meaning: "The certificate exists, but \(StoreWords.name(store)) does not have the root yet.",
                nextStep: "Install the root in \(StoreWords.name(store)) and trust it for TLS servers.",
                nextCommand: trustCommand(store, progress),
                nextCommandNeedsRoot: trustNeedsRoot(store, progress),
                state: state, notice: nil, canGenerate: false)
        }
    }

    /// `tv ca trust` for `store`, or, once it has shown the steps and tv can do them, the command
    /// that does them (as root for the system store: `trustNeedsRoot`).
    private static func trustCommand(_ store: TrustStoreSpec, _ progress: SetupProgress) -> String {
        let opt = StoreWords.option(store)
        guard progress.stepsShownCanApply else { return "tv ca trust" + opt }
        return "tv ca trust\(opt) --apply --yes"
    }

    private static func trustNeedsRoot(_ store: TrustStoreSpec, _ progress: SetupProgress) -> Bool {
        progress.stepsShownCanApply && store == .system
    }

    private static func storeInDoubt(store: TrustStoreSpec, because: String) -> SetupStage {
        SetupStage(
            step: .closedDoor,
            meaning: "\(capitalized(StoreWords.name(store))) cannot be read: \(because). It is not known whether the root is installed or trusted.",
            nextStep: "Make the store readable, or choose another with --trust-store, then check again.",
            nextCommand: "tv ca status" + StoreWords.option(store),
            state: .failed(reason: because, retry: "Check again once the store can be read."),
            notice: nil, canGenerate: false)
    }

    /// The exact step missing when the root is installed in `store` but not usable for TLS.
    public static func missingStep(store: TrustStoreSpec, finding: TrustFinding?) -> String {
        let opt = StoreWords.option(store)
        switch finding {
        case .nssNotTrustedForTLS(let nickname, let trust):
            guard case .nss(let dir) = store else { break }
            return "It is stored as '\(nickname)' with trust flags '\(trust)' — known, but not trusted to identify websites. Give it the C flag: `certutil -M -d \(ShellWord.quote("sql:" + dir)) -n \(ShellWord.quote(nickname)) -t C,,` (in Firefox: Settings → Privacy & Security → View Certificates → Authorities → Edit Trust → \"This certificate can identify websites\")."
        case .rejectedForTLS, .untrustedForTLS:
            let what = finding == .rejectedForTLS
                ? "whose trust settings reject TLS servers (serverAuth)"
                : "whose trust settings allow other uses only, not TLS servers"
            switch store {
            case .file(let path):
                return "In \(path) the root is a TRUSTED CERTIFICATE entry \(what). Replace that entry with the plain certificate: `tv ca trust\(opt) --apply --yes` does it."
            case .dir(let path):
                return "In \(path) the root is a TRUSTED CERTIFICATE file \(what). Replace it with the plain certificate and rehash the folder: `tv ca trust\(opt) --apply --yes` does both."
            case .system:
                // No command in the sentence: the stage's own (`nextCommand`, said with sudo and
                // this data folder) follows it; a bare `sudo tv …` reads root's data folder.
                return "The system store holds the root as a TRUSTED CERTIFICATE entry \(what). Replace it with the plain certificate: the system store's trust steps do it (`tv ca trust` prints them; run as root with --apply --yes, tv does them)."
            case .nss:
                break
            }
        case .notHashed(let hash):
            switch store {
            case .dir(let path):
                return "The root's file is in \(path), but no hash link (\(hash).0) leads to it, so OpenSSL cannot find it. Run `openssl rehash \(ShellWord.quote(path))`."
            case .system:
                return "The root's file is in the system certificate folder, but no hash link (\(hash).0) leads to it. Rebuild the links: `sudo update-ca-certificates` (Debian/Ubuntu) or `sudo update-ca-trust` (Fedora, Arch)."
            default:
                break
            }
        case .rootCannotAnchor(_, let text):
            return "OpenSSL cannot use tv's root as its own anchor (\(text)), so no trust store or hash link will make it trusted. Make a new one with `tv ca remake --yes`, or import a root that `openssl verify -CAfile ROOT ROOT` accepts, and trust that."
        case .verifyFailed(_, let text):
            return "OpenSSL refuses a leaf from it (\(text)). If the root has expired or is not yet valid, check the clock, or make a new one with `tv ca remake --yes` and trust that."
        default:
            break
        }
        return "A leaf from it does not verify for TLS servers. Install it again as a plain certificate: `tv ca trust\(opt)` shows how."
    }

    /// Whether `tv inspect on` may turn inspection on now, and if not, the refusal naming the
    /// missing step.
    public static func inspectOn(_ facts: SetupFacts) -> InspectOnDecision {
        let stage = stage(facts)
        switch stage.step {
        case .ready: return .turnOn
        case .inspecting: return .alreadyOn
        default:
            let command = stage.nextCommand.map { " (`\($0)`)" } ?? ""
            return .refuse("Inspection stays off. \(stage.meaning) Next: \(stage.nextStep)\(command)")
        }
    }

    /// Whether inspection must turn itself off, decided each time trust is asked again.
    ///
    /// Off when there is no usable CA any more (absent or in doubt: nothing can be minted) or the
    /// store answers that a leaf is no longer usable for TLS — leaving it on would break
    /// connections that work today. A store that cannot be read leaves the saved choice alone
    /// and warns: a transient read error must not undo a deliberate setting.
    public static func inspectionAction(_ facts: SetupFacts) -> InspectionAction {
        guard facts.inspectionEnabled else { return .leaveAsIs }
        switch facts.ca {
        case .absent:
            return .turnOff(TurnOffReason(why: "there is no CA any more, so nothing can be inspected",
                                          advice: "`tv setup` starts again."))
        case .doubt(let reason):
            return .turnOff(TurnOffReason(why: "the CA is in doubt (\(reason))", advice: "Repair the CA, then `tv setup`."))
        case let .cannotSign(reason, remedy):
            return .turnOff(TurnOffReason(why: "the CA cannot sign (\(reason))", advice: remedy.prefix(1).uppercased() + remedy.dropFirst() + "."))
        case .present:
            break
        }
        switch facts.usable {
        case .yes:
            return .leaveAsIs
        case .no:
            return .turnOff(TurnOffReason(
                why: "\(StoreWords.name(facts.store)) no longer accepts leaves from the root for TLS, so connections would fail",
                advice: "`tv setup\(StoreWords.option(facts.store))` shows how to trust it again."))
        case .unknown(let because):
            return .keepWithWarning("Inspection stays on, but \(StoreWords.name(facts.store)) cannot be read (\(because)), so it is not known whether the root is still trusted; `tv inspect off` turns it off.")
        }
    }

    private static func capitalized(_ s: String) -> String { s.prefix(1).uppercased() + s.dropFirst() }
}

/// The answer to `tv inspect on`.
public enum InspectOnDecision: Sendable, Equatable {
    case turnOn
    case alreadyOn
    /// Refused; the sentence names the missing step.
    case refuse(String)
}

/// What to do with a saved `inspection.enabled = true` after asking trust again.
public enum InspectionAction: Sendable, Equatable {
    case leaveAsIs
    /// Save inspection off, then tell the user `reason.savedSentence`.
    case turnOff(TurnOffReason)
    /// Leave it on and tell the user this sentence.
    case keepWithWarning(String)
}

/// Why inspection turns itself off, and what to do about it.
public struct TurnOffReason: Sendable, Equatable {
    /// A clause: "the bundle /x no longer accepts leaves from the root for TLS, …".
    public let why: String
    /// A sentence: what to do to have it back.
    public let advice: String

    public init(why: String, advice: String) {
        self.why = why
        self.advice = advice
    }

    /// Said after inspection off was saved.
    public var savedSentence: String { "Inspection was on, but \(why); it is now off. \(advice)" }

    /// Said when inspection off could not be saved; `error` is the save error's sentence.
    public func unsavedSentence(_ error: String) -> String {
        "Inspection is on, but \(why); it must be turned off, and that could not be saved: \(error)"
    }
}
