import CertificateSetup
import CommandLineParser
import LocalCA
import SetupActions
import Settings
import TrustStore
import TVHome

/// `tv setup`: the guided CA flow (seed 002). Explains the trade-off first, creates the CA on
/// consent, shows how to install and trust it for the chosen store, re-derives the stage from the
/// system every time the user presses Enter, and ends with inspection on. `q` (or end of input)
/// is always "not now".
enum SetupCommand {
    static let spec = CommandSpec(
        name: "setup", summary: "Guided setup of TLS inspection: explain, create, install and trust, turn on.",
        discussion: "The stage is asked again every time (press Enter after doing a step outside tv); q leaves at any point and nothing is lost. --yes runs it without questions where nothing interactive is needed: it creates the CA, applies trust for a bundle, folder or NSS store (never the system store: use `sudo tv ca trust --apply --yes`) and turns inspection on; it exits 0 once inspection is on, and 1 when it stops short of that (a step left to you, or one that failed). Without a terminal and without --yes it prints where you are and the next step.",
        options: [OptionSpec("trust-store", value: "STORE", help: "The store to set up and remember as trust.store: system, file:PATH, dir:PATH or nss:DIR."),
                  OptionSpecs.yes])

    static func run(_ inv: Invocation) throws -> Int32 {
        let home = try inv.home()
        let settings = try inv.settingsStore()
        let named = try inv.trustStoreOption()
        let interactive = inv.console.stdinIsTerminal && !inv.yes
        if !interactive && !inv.yes {
            // Where you are, for the store named, and nothing saved (it saved trust.store while
            // its help said it only prints: a trial).
            let report = try InspectionGuard.recheck(home: home, settings: settings, environment: inv.environment, now: inv.now)
            for notice in report.notices { inv.console.note(notice) }
            let facts = named.map { SetupSnapshot.read(home: home, store: $0, inspectionEnabled: false, environment: inv.environment, now: inv.now).facts }
                ?? report.snapshot.facts
            for line in SetupRendering.stageLines(CertificateSetupPolicy.stage(facts), dataDir: (try? inv.home().path) ?? "") { inv.console.line(line) }
            inv.console.line("(Standard input is not a terminal: run `tv setup` in one to be guided, or add --yes; nothing was saved.)")
            return 0
        }
        if let store = named {
            let change = try settings.set(SettingKeys.trustStore, to: store.description)
            if change.saved { inv.console.line("Trust store for inspection: \(store) (saved).") }
        }

        inv.console.line("TLS inspection — what it means")
        for line in SetupText.tradeOff { inv.console.line("  " + line) }
        inv.console.line("")

        var progress = SetupProgress()
        var shown: SetupStep?
        var appliedOnce = false
        var runtimesShown = false
        while true {
            let report = try InspectionGuard.recheck(home: home, settings: settings, environment: inv.environment, now: inv.now)
            for notice in report.notices { inv.console.note(notice) }
            let stage = CertificateSetupPolicy.stage(report.snapshot.facts, progress: progress)
            for line in SetupRendering.stageLines(stage, dataDir: (try? inv.home().path) ?? "") { inv.console.line(line) }
                let firstTime = shown != stage.step
            shown = stage.step

            switch stage.step {
            case .explain:
                if inv.yes { progress.explanationAccepted = true; continue }
                switch choose(inv, "Create the certificate now? [y] yes · [Enter] check again · [q] not now", offer: .init(yes: true)) {
                case .yes: progress.explanationAccepted = true
                case .notNow: return notNow(inv)
                default: continue
                }

            case .create:
                do {
                    let ca = try CAFolder(home: home).create(now: inv.now)
                    let told = LiveSession.caChanged(inv)
                    progress.lastFailure = nil
                    inv.console.line("Created the certificate: \(ca.root.subject), SHA-256 \(Hex.encode(ca.root.sha256, separator: ":", uppercase: true)).")
                    inv.console.line("Its private key \(SetupText.keyStays(in: CAFolder(home: home).directory)).")
                    if let told { inv.console.line(told) }
                    inv.console.line("")
                } catch let error as CAError where error == .madeAtTheSameMoment(directory: CAFolder(home: home).directory) {
                    // Another tv's CA is complete: the next check goes on from it.
                    inv.console.line(error.message)
                } catch let error as UserFacingError {
                    progress.lastFailure = SetupFailure(step: .create, reason: error.message)
                    if inv.yes { inv.console.note("tv: " + error.message); return 1 }
                    if choose(inv, "[Enter] try again · [q] not now", offer: .init()) == .notNow { return notNow(inv) }
                }

            case .installAndTrust:
                guard let ca = report.snapshot.authority else { continue }
                let root = RootDescription(ca, folder: CAFolder(home: home))
                let target = TrustTarget.forStore(report.store, distribution: OSRelease.distribution())
                if firstTime {
                    inv.console.line("")
                    for line in SetupRendering.guideLines(TrustGuides.install(target, root: root, for: .setup)) { inv.console.line(line) }
                    for line in SetupRendering.runtimeLines(rootPath: root.path) { inv.console.line(line) }
                    runtimesShown = true
                    inv.console.line("")
                }
                let actions = TrustInstaller.installActions(target, root: root)
                if inv.yes {
                    guard let actions, report.store != .system, !appliedOnce else {
                        inv.console.line(appliedOnce
                            ? "The steps were done, but \(StoreWords.name(report.store)) still does not accept the root for TLS; see above."
                            : "Do the steps above (for the system store: `\(SudoCommand.line("ca trust --apply --yes", dataDir: home.path))`), then run `tv setup` again.")
                        if !appliedOnce { markIntroSeen(settings) }
                        // Not complete: inspection stays off, so a script's `tv setup --yes && …`
                        // does not go on as if it were on (it exited 0: a trial).
                        return 1
                    }
                    appliedOnce = true
                    if !apply(inv, actions: actions, ca: ca, store: report.store, home: home, progress: &progress) { return 1 }
                    continue
                }
                progress.waitingOnUser = true
                let offer = actions == nil ? "" : " · [a] do it for me"
                switch choose(inv, "Do the steps, then press [Enter] to check again\(offer) · [q] not now",
                              offer: .init(doItForMe: actions != nil)) {
                case .notNow: return notNow(inv)
                case .doItForMe:
                    inv.console.line("This will:")
                    for (i, action) in actions!.enumerated() { inv.console.line("  \(i + 1). \(action.sentence)") }
                    if ["y", "yes"].contains(ask(inv, "Go ahead? [y] yes · [n] no")) {
                        _ = apply(inv, actions: actions!, ca: ca, store: report.store, home: home, progress: &progress)
                    }
                default: continue
                }

            case .ready:
                if firstTime { for line in SetupText.whenOn(contentKept: report.record[SettingKeys.contentKeep]) { inv.console.line("  " + line) } }
                if !inv.yes {
                    switch choose(inv, "Turn inspection on now? [y] yes · [Enter] check again · [q] not now", offer: .init(yes: true)) {
                    case .yes: break
                    case .notNow: return notNow(inv)
                    default: continue
                    }
                }
                do {
                    let change = try settings.set(SettingKeys.inspectionEnabled, to: true)
                    progress.lastFailure = nil
                    if let sentence = change.delivery.sentence { inv.console.line(sentence) }
                } catch let error as SettingsError {
                    progress.lastFailure = SetupFailure(step: .ready, reason: error.message)
                    if inv.yes { inv.console.note("tv: " + error.message); return 1 }
                }

            case .inspecting:
                for line in SetupText.whenOn(contentKept: report.record[SettingKeys.contentKeep]) { inv.console.line("  " + line) }
                if !runtimesShown, report.snapshot.authority != nil {
                    for line in SetupRendering.runtimeLines(rootPath: CAFolder(home: home).rootPath) { inv.console.line(line) }
                }
                inv.console.line("Setup is complete. `tv inspect off` turns inspection off at any time.")
                markIntroSeen(settings)
                return 0

            case .closedDoor:
                if inv.yes { return 1 }
                if choose(inv, "[Enter] check again · [q] quit", offer: .init()) == .notNow { return notNow(inv) }
            }
        }
    }

    /// Asks `prompt` until the answer means something (`SetupAnswer`); an answer that does not is
    /// told which letters do, and the prompt is asked again.
    private static func choose(_ inv: Invocation, _ prompt: String, offer: SetupAnswer.Offer) -> SetupAnswer {
        while true {
            let answer = SetupAnswer(ask(inv, prompt), offer: offer)
            guard answer == .unknown else { return answer }
            inv.console.line(SetupAnswer.unknownSentence(offer: offer))
        }
    }

    /// Reads one answer (lowercased, trimmed); nil at end of input.
    private static func ask(_ inv: Invocation, _ prompt: String) -> String? {
        inv.console.out(prompt + " ")
        guard let line = readLine() else { inv.console.line(""); return nil }
        return line.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// A setup that ran to its end explained what `tv run`'s introduction would: the first
    /// `tv run` does not show it again. Best effort; a failure here only means it is shown once.
    private static func markIntroSeen(_ settings: SettingsStore) {
        _ = try? settings.set(SettingKeys.introSeen, to: true)
    }

    private static func notNow(_ inv: Invocation) -> Int32 {
        inv.console.line("Not now. Nothing else was changed; `tv setup` picks up from where you are.")
        return 0
    }

    /// Performs trust actions, announcing each; records a failure in `progress`.
    private static func apply(_ inv: Invocation, actions: [TrustInstaller.Action], ca: CertificateAuthority,
                              store: TrustStoreSpec, home: TVHome, progress: inout SetupProgress) -> Bool {
        do {
            try TrustInstaller.perform(actions, root: ca.root, rootPath: CAFolder(home: home).rootPath,
                                       environment: inv.environment, asRoot: SudoCommand.line("ca trust --apply --yes", dataDir: home.path),
                                       dataDir: home.path) { inv.console.line("→ " + $0) }
            let sha256 = RootDescription(ca, folder: CAFolder(home: home)).sha256
            if let note = TrustInstallRecord.remember(store, sha256: sha256, home: home) { inv.console.note("tv: " + note) }
            if let forgotten = LiveSession.lacksRootForgotten(home) { inv.console.line(forgotten) }
            progress.lastFailure = nil
            progress.waitingOnUser = false
            return true
        } catch let error as UserFacingError {
            progress.lastFailure = SetupFailure(step: .installAndTrust, reason: error.message)
            inv.console.note("tv: " + error.message)
            return false
        } catch {
            progress.lastFailure = SetupFailure(step: .installAndTrust, reason: "\(error)")
            return false
        }
    }
}
