import CertificateSetup
import Testing
import TrustStore

/// The stage machine over every combination of facts: CA (absent, present, doubt, cannot sign)
/// × installed (yes, no, unknown) × usable (yes, no, unknown) × store kind (4) × inspection (on,
/// off) = 288. Each expectation below is written out literally for its class; the table is
/// checked to cover all 288 combinations and every stage.
struct StageMachineTests {
    static let stores: [TrustStoreSpec] = [.system, .file("/s/b.pem"), .dir("/s/d"), .nss("/s/n")]
    static let cas: [CAFact] = [.absent, .present, .doubt(reason: "/h/ca/root-key.pem cannot be parsed as a PEM private key"),
                                .cannotSign(reason: "its root expired on 2025-01-01 00:00:00 UTC",
                                            remedy: "make a new one with `tv ca remake` (devices that trusted the old root must be given the new one)")]
    static let answers: [TrustAnswer] = [.yes, .no, .unknown(because: "/s cannot be read")]

    /// The finding the trust check would report for installed-yes/usable-no in each store kind.
    static func partialFinding(_ store: TrustStoreSpec) -> TrustFinding {
        switch store {
        case .system, .file: return .rejectedForTLS
        case .dir: return .notHashed(hash: "1894afaf")
        case .nss: return .nssNotTrustedForTLS(nickname: "TunnelVision Root CA 1a2b3c4d", trust: ",,")
        }
    }

    /// The exact missing step for each store kind, as the user reads it.
    static let missing: [String: String] = [
        "system": "The system store holds the root as a TRUSTED CERTIFICATE entry whose trust settings reject TLS servers (serverAuth). Replace it with the plain certificate: the system store's trust steps do it (`tv ca trust` prints them; run as root with --apply --yes, tv does them).",
        "file:/s/b.pem": "In /s/b.pem the root is a TRUSTED CERTIFICATE entry whose trust settings reject TLS servers (serverAuth). Replace that entry with the plain certificate: `tv ca trust --trust-store file:/s/b.pem --apply --yes` does it.",
        "dir:/s/d": "The root's file is in /s/d, but no hash link (1894afaf.0) leads to it, so OpenSSL cannot find it. Run `openssl rehash /s/d`.",
        "nss:/s/n": "It is stored as 'TunnelVision Root CA 1a2b3c4d' with trust flags ',,' — known, but not trusted to identify websites. Give it the C flag: `certutil -M -d sql:/s/n -n 'TunnelVision Root CA 1a2b3c4d' -t C,,` (in Firefox: Settings → Privacy & Security → View Certificates → Authorities → Edit Trust → \"This certificate can identify websites\").",
    ]

    static let names: [String: String] = [
        "system": "the system trust store", "file:/s/b.pem": "the bundle /s/b.pem",
        "dir:/s/d": "the folder /s/d", "nss:/s/n": "the NSS database /s/n",
    ]
    static let options: [String: String] = [
        "system": "", "file:/s/b.pem": " --trust-store file:/s/b.pem",
        "dir:/s/d": " --trust-store dir:/s/d", "nss:/s/n": " --trust-store nss:/s/n",
    ]

    struct Expected: Equatable, CustomStringConvertible {
        let step: SetupStep
        let next: String
        let command: String?
        let state: String
        let canGenerate: Bool
        var description: String { "\(step) / \(state) / \(command ?? "-") / \(next)" }
    }

    /// The expectation for one combination, class by class.
    static func expected(ca: CAFact, installed: TrustAnswer, usable: TrustAnswer, store: TrustStoreSpec, on: Bool) -> Expected {
        let key = store.description
        let opt = options[key]!
        switch ca {
        case .doubt:
            return Expected(step: .closedDoor, next: "Repair or restore that file (or, to start over on purpose, delete root.pem, root-key.pem and leaf-key.pem from the ca folder and keep profile-identity.json), then check again.",
                            command: "tv setup" + opt, state: "failed", canGenerate: false)
        case .absent:
            return Expected(step: .explain, next: "Read the explanation, then agree to create the certificate.",
                            command: "tv setup" + opt, state: "not started", canGenerate: true)
        case .cannotSign:
            return Expected(step: .closedDoor, next: "Make a new one with `tv ca remake` (devices that trusted the old root must be given the new one).",
                            command: "tv ca remake", state: "failed", canGenerate: false)
        case .present:
            break
        }
        let closed = Expected(step: .closedDoor, next: "Make the store readable, or choose another with --trust-store, then check again.",
                              command: "tv ca status" + opt, state: "failed", canGenerate: false)
        switch (installed, usable) {
        case (_, .yes):
            return on
                ? Expected(step: .inspecting, next: "Nothing to do. Turn inspection off any time.", command: "tv inspect off", state: "succeeded", canGenerate: false)
                : Expected(step: .ready, next: "Turn inspection on.", command: "tv inspect on", state: "succeeded", canGenerate: false)
        case (_, .unknown), (.unknown, .no):
            return closed
        case (.yes, .no):
            return Expected(step: .installAndTrust, next: missing[key]!, command: "tv ca trust" + opt, state: "partially done", canGenerate: false)
        case (.no, .no):
            return Expected(step: .installAndTrust, next: "Install the root in \(names[key]!) and trust it for TLS servers.",
                            command: "tv ca trust" + opt, state: "not started", canGenerate: false)
        }
    }

    static var combinations: [(CAFact, TrustAnswer, TrustAnswer, TrustStoreSpec, Bool)] {
        var out: [(CAFact, TrustAnswer, TrustAnswer, TrustStoreSpec, Bool)] = []
        for ca in cas { for i in answers { for u in answers { for s in stores { for on in [false, true] { out.append((ca, i, u, s, on)) } } } } }
        return out
    }

    @Test func everyCombinationHasTheExactStageAndNextStep() {
        var seen: Set<SetupStep> = []
        var count = 0
        for (ca, installed, usable, store, on) in Self.combinations {
            let finding: TrustFinding? = installed == .yes && usable == .no ? Self.partialFinding(store) : nil
            let facts = SetupFacts(ca: ca, store: store, installed: installed, usable: usable, finding: finding, inspectionEnabled: on)
            let stage = CertificateSetupPolicy.stage(facts)
            let got = Expected(step: stage.step, next: stage.nextStep, command: stage.nextCommand, state: stage.state.word, canGenerate: stage.canGenerate)
            #expect(got == Self.expected(ca: ca, installed: installed, usable: usable, store: store, on: on),
                    "ca=\(ca) installed=\(installed) usable=\(usable) store=\(store) on=\(on)")
            #expect(stage.canTurnInspectionOn == (stage.step == .ready))
            seen.insert(stage.step)
            count += 1
        }
        #expect(count == 288)
        // Without progress, `create` is reached only after consent (see ProgressTests).
        #expect(seen == [.explain, .installAndTrust, .ready, .inspecting, .closedDoor])
    }

    @Test func canGenerateOnlyWhenItIsKnownThereIsNoCA() {
        for (ca, installed, usable, store, on) in Self.combinations {
            for accepted in [false, true] {
                let facts = SetupFacts(ca: ca, store: store, installed: installed, usable: usable, inspectionEnabled: on)
                let stage = CertificateSetupPolicy.stage(facts, progress: SetupProgress(explanationAccepted: accepted))
                #expect(stage.canGenerate == (ca == .absent))
            }
        }
    }

    @Test func installedButNotUsableNamesTheMissingStepInTheNoticeAndState() {
        for store in Self.stores {
            let facts = SetupFacts(ca: .present, store: store, installed: .yes, usable: .no,
                                   finding: Self.partialFinding(store), inspectionEnabled: false)
            let stage = CertificateSetupPolicy.stage(facts)
            let missing = Self.missing[store.description]!
            #expect(stage.notice == "Installed, but not trusted for TLS. " + missing)
            #expect(stage.state == .partiallyDone(done: "The root is installed in \(Self.names[store.description]!).", missing: missing))
            #expect(stage.meaning == "The root is in \(Self.names[store.description]!), but it is not trusted for TLS servers, so a leaf from it is refused.")
        }
    }

    @Test func afterTheStepsWereShownTheNextCommandDoesThem() {
        for store in Self.stores {
            let facts = SetupFacts(ca: .present, store: store, installed: .no, usable: .no, inspectionEnabled: false)
            let shown = CertificateSetupPolicy.stage(facts, progress: SetupProgress(stepsShownCanApply: true))
            // The system store's as root, which the renderer says with the data folder (`SudoCommand`).
            #expect(shown.nextCommand == "tv ca trust" + Self.options[store.description]! + " --apply --yes")
            #expect(shown.nextCommandNeedsRoot == (store == .system))
            #expect(CertificateSetupPolicy.stage(facts).nextCommand == "tv ca trust" + Self.options[store.description]!)
            #expect(!CertificateSetupPolicy.stage(facts).nextCommandNeedsRoot)
        }
    }

    @Test func closedDoorSaysWhatIsWrong() {
        let doubt = CertificateSetupPolicy.stage(SetupFacts(ca: .doubt(reason: "/h/ca/root.pem is missing while other CA files are there"),
                                                            store: .system, installed: .no, usable: .no, inspectionEnabled: false))
        #expect(doubt.meaning == "The CA is in doubt: /h/ca/root.pem is missing while other CA files are there. Nothing will be generated over it, because devices may already trust that root.")
        #expect(doubt.state == .failed(reason: "/h/ca/root.pem is missing while other CA files are there", retry: "Check again after repairing it."))
        let store = CertificateSetupPolicy.stage(SetupFacts(ca: .present, store: .nss("/n"), installed: .unknown(because: "x"),
                                                            usable: .unknown(because: "certutil is not installed"), inspectionEnabled: false))
        #expect(store.meaning == "The NSS database /n cannot be read: certutil is not installed. It is not known whether the root is installed or trusted.")
        let expired = CertificateSetupPolicy.stage(SetupFacts(ca: .cannotSign(reason: "its root expired on 2025-01-01 00:00:00 UTC", remedy: "make a new one with `tv ca remake`"),
                                                              store: .system, installed: .yes, usable: .yes, inspectionEnabled: true))
        #expect(expired.meaning == "The CA cannot sign: its root expired on 2025-01-01 00:00:00 UTC. Every certificate it made would be refused, so nothing can be inspected with it.")
        #expect(expired.state == .failed(reason: "its root expired on 2025-01-01 00:00:00 UTC", retry: "Make a new one with `tv ca remake`, then check again: `tv setup`."))
        let clock = CertificateSetupPolicy.stage(SetupFacts(ca: .cannotSign(reason: "its root is not valid until 2030-01-01 00:00:00 UTC", remedy: "check this machine's clock (`date`)"),
                                                            store: .file("/b"), installed: .no, usable: .no, inspectionEnabled: false))
        #expect(clock.nextStep == "Check this machine's clock (`date`).")
        #expect(clock.nextCommand == "tv setup --trust-store file:/b")
        #expect(clock.state == .failed(reason: "its root is not valid until 2030-01-01 00:00:00 UTC", retry: "Check this machine's clock (`date`), then check again: `tv setup --trust-store file:/b`."))
    }
}

/// The visit's progress: consent, waiting on the user, failures with a retry.
struct ProgressTests {
    @Test func consentMovesExplainToCreate() {
        let facts = SetupFacts(ca: .absent, store: .system, installed: .no, usable: .no, inspectionEnabled: false)
        let stage = CertificateSetupPolicy.stage(facts, progress: SetupProgress(explanationAccepted: true))
        #expect(stage.step == .create)
        #expect(stage.nextCommand == "tv ca create")
        #expect(stage.state == .notStarted)
        #expect(stage.canGenerate)
    }

    @Test func aFailedCreateOffersARetry() {
        let facts = SetupFacts(ca: .absent, store: .system, installed: .no, usable: .no, inspectionEnabled: false)
        let stage = CertificateSetupPolicy.stage(facts, progress: SetupProgress(explanationAccepted: true,
            lastFailure: SetupFailure(step: .create, reason: "disk full")))
        #expect(stage.state == .failed(reason: "disk full", retry: "Try again: `tv ca create`."))
    }

    @Test func waitingOnTheUserIsInProgress() {
        let facts = SetupFacts(ca: .present, store: .nss("/n"), installed: .no, usable: .no, inspectionEnabled: false)
        let stage = CertificateSetupPolicy.stage(facts, progress: SetupProgress(waitingOnUser: true))
        #expect(stage.state == .inProgress(waitingFor: "you to install and trust the root in the NSS database /n"))
    }

    @Test func aFailedApplyOffersARetry() {
        let facts = SetupFacts(ca: .present, store: .file("/b"), installed: .no, usable: .no, inspectionEnabled: false)
        let stage = CertificateSetupPolicy.stage(facts, progress: SetupProgress(waitingOnUser: true,
            lastFailure: SetupFailure(step: .installAndTrust, reason: "read-only")))
        #expect(stage.state == .failed(reason: "read-only", retry: "Try again: `tv ca trust --trust-store file:/b --apply --yes`, or follow the steps by hand."))
    }

    @Test func aFailedTurnOnOffersARetry() {
        let facts = SetupFacts(ca: .present, store: .system, installed: .yes, usable: .yes, inspectionEnabled: false)
        let stage = CertificateSetupPolicy.stage(facts, progress: SetupProgress(lastFailure: SetupFailure(step: .ready, reason: "no space")))
        #expect(stage.step == .ready)
        #expect(stage.state == .failed(reason: "no space", retry: "Try again: `tv inspect on`."))
    }

    @Test("an NSS folder with no database yet, or none at all, is a store without the root: install and trust, not started, with [a] offered")
    func nssWithoutADatabaseIsNotStarted() {
        for exists in [true, false] {
            let facts = SetupFacts(ca: .present, store: .nss("/n"), trust: TrustFacts(store: .nss("/n"), installed: .no, usable: .no,
                                                                                     finding: .nssNoDatabase(folderExists: exists)),
                                   inspectionEnabled: false)
            let stage = CertificateSetupPolicy.stage(facts)
            #expect(stage.step == .installAndTrust)
            #expect(stage.state == .notStarted)
            #expect(stage.meaning == "The certificate exists, but the NSS database /n does not have the root yet.")
            #expect(CertificateSetupPolicy.stage(facts, progress: SetupProgress(stepsShownCanApply: true)).nextCommand
                    == "tv ca trust --trust-store nss:/n --apply --yes")
        }
        #expect(FindingWords.sentence(.nssNoDatabase(folderExists: true)) == "there is no NSS database in the folder yet; `tv ca trust --apply` makes one")
        #expect(FindingWords.sentence(.nssNoDatabase(folderExists: false)) == "the folder does not exist yet; `tv ca trust --apply` makes it and an NSS database in it")
        #expect(FindingWords.code(.nssNoDatabase(folderExists: false)) == "nssNoDatabase")
    }

    @Test("the consent texts say precisely where the root key stays and the one way it leaves")
    func keyStaysPrecisely() {
        #expect(SetupText.keyStays(in: "/h/ca")
                == "stays in /h/ca, readable only by you: tv never sends it anywhere, and it leaves that folder only in a file you ask for by name (`tv ca export --p12-with-key --yes`)")
        #expect(SetupText.tradeOff[1] == "To do that, tv makes its own certificate authority here. Its private key stays in tv's data folder, readable only by you: tv never sends it anywhere, and it leaves that folder only in a file you ask for by name (`tv ca export --p12-with-key --yes`). You then tell this machine (or a browser) to trust it: whatever trusts it accepts the certificates tv makes, so trust it only where you want inspection.")
        let create = CertificateSetupPolicy.stage(SetupFacts(ca: .absent, store: .system, installed: .no, usable: .no, inspectionEnabled: false),
                                                  progress: SetupProgress(explanationAccepted: true))
        #expect(create.meaning == "You agreed. The next step makes the local certificate authority; its private key stays in the data folder, readable only by you: tv never sends it anywhere, and it leaves that folder only in a file you ask for by name (`tv ca export --p12-with-key --yes`).")
        for text in SetupText.tradeOff + [create.meaning] { #expect(!text.contains("never leaves")) }
    }

    @Test func progressNeverOverridesTheFacts() {
        // Consent does not create over doubt; waiting does not hide readiness.
        let doubt = SetupFacts(ca: .doubt(reason: "x"), store: .system, installed: .no, usable: .no, inspectionEnabled: false)
        #expect(CertificateSetupPolicy.stage(doubt, progress: SetupProgress(explanationAccepted: true)).step == .closedDoor)
        let ready = SetupFacts(ca: .present, store: .system, installed: .yes, usable: .yes, inspectionEnabled: false)
        #expect(CertificateSetupPolicy.stage(ready, progress: SetupProgress(waitingOnUser: true)).step == .ready)
    }
}
