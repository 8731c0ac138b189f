import CertificateSetup
import CommandLineParser
import Foundation
import LocalCA
import SetupActions
import Settings
import TrustStore
import TVHome

/// `tv ca trust`: the exact steps to install and trust the root for a store or platform; with
/// `--apply --yes` on Linux, does them (after saying what will happen), then asks again.
enum CATrustCommand {
    static let spec = CommandSpec(
        name: "trust", summary: "Show (or, with --apply, do) the steps that install and trust the root.",
        discussion: "Without --platform the steps are the trust store's own: the running distribution's system store for `system`, or the bundle, folder or NSS database named. --apply does them on this machine for Linux stores (system stores need root) after saying what will happen; it needs --yes (or a yes at the terminal).",
        options: [OptionSpecs.trustStore, OptionSpecs.platform,
                  OptionSpec("apply", help: "Do the steps on this machine (Linux stores only)."),
                  OptionSpecs.yes,
                  OptionSpec("doctor", help: "For each place programs on this machine read roots from (the OpenSSL system store, Firefox and Chromium NSS databases, Java's cacerts, certifi in each Python on PATH, node, go, curl), say whether it trusts the root now, the command that fixes it, and whether `tv exec --proxy` avoids the need."),
                  OptionSpec("json", help: "With --doctor: print as JSON.")])

    static func run(_ inv: Invocation) throws -> Int32 {
        if inv.command.has("doctor") { return try CATrustDoctorCommand.run(inv) }
        if inv.json { throw UsageRefusal("--json goes with --doctor.") }
        let (ca, folder) = try CACommands.loadPresent(inv)
        let store = try inv.chosenStore()
        let target = try target(inv, store: store)
        let root = RootDescription(ca, folder: folder)
        inv.console.line("Root: \(root.commonName)  SHA-256 \(root.sha256)")
        if !inv.command.has("apply") {
            for line in SetupRendering.guideLines(TrustGuides.install(target, root: root)) { inv.console.line(line) }
            if let checked = storeOf(target) {
                inv.console.line("")
                // The steps are on the screen already: the next command is the one that does them.
                let applies = TrustInstaller.installActions(target, root: root) != nil
                return try reask(inv, store: checked, stepsShown: applies)
            }
            if case .nss(directory: nil) = target {
                inv.console.line("Then check with `tv ca status --trust-store nss:$HOME/.pki/nssdb` (or the Firefox profile folder).")
            } else if case .runtime = target {
                inv.console.line("Start the program again: it reads its list when it starts.")
            } else {
                inv.console.line("Then check on that device; tv on this machine cannot ask its trust store.")
            }
            return 0
        }
        guard let actions = TrustInstaller.installActions(target, root: root) else {
            throw TrustInstaller.Failure.cannotApply(target: TrustGuides.install(target, root: root).title)
        }
        // A file that is not a bundle is said before the plan, not after it (a re-check).
        if case .bundle(let path) = target, let data = FileManager.default.contents(atPath: path), PEMBundle.isNotABundle([UInt8](data)) {
            throw UsageRefusal("Nothing was changed: \(path) is refused (\(PEMBundle.notABundleReason)).", exitCode: 1)
        }
        // Roots a remake replaced that tv had put in this store go out with the same consent.
        let home = try inv.home()
        let replaced = storeOf(target).map { ReplacedRoots.kept(home: home, in: $0).filter { $0.description.sha256 != root.sha256 } } ?? []
        inv.console.line("This will:")
        for (i, action) in actions.enumerated() { inv.console.line("  \(i + 1). \(action.sentence)") }
        for (i, old) in replaced.enumerated() {
            inv.console.line("  \(actions.count + i + 1). take the replaced root \(old.description.commonName) (SHA-256 \(old.description.sha256)) out of it")
        }
        guard inv.yes || inv.confirmed("Do it now?") else {
            throw UsageRefusal("Nothing was changed; add --yes to do these steps.", exitCode: 1)
        }
        try TrustInstaller.perform(actions, root: ca.root, rootPath: folder.rootPath, environment: inv.environment,
                                   asRoot: SudoCommand.line("ca trust" + (inv.command.value("trust-store").map { " --trust-store " + ShellWord.quote($0) } ?? "") + " --apply --yes", dataDir: home.path),
                                   dataDir: home.path) {
            inv.console.line("→ " + $0)
        }
        if let installed = storeOf(target), let note = TrustInstallRecord.remember(installed, sha256: root.sha256, home: home) {
            inv.console.note("tv: " + note)
        }
        // What was remembered as lacking the root was said before this trust (`LacksRootMemory`).
        if let forgotten = LiveSession.lacksRootForgotten(home) { inv.console.line(forgotten) }
        if let installed = storeOf(target), !replaced.isEmpty {
            let report = ReplacedRoots.takeOut(home: home, from: installed, current: root, environment: inv.environment) { inv.console.line("→ " + $0) }
            for (old, each) in report.takenOut { inv.console.line("Took the replaced root \(old.commonName) (SHA-256 \(old.sha256)) out of \(StoreWords.name(each)).") }
            for (old, each, reason) in report.failed { inv.console.note("tv: Could not take the replaced root \(old.commonName) (SHA-256 \(old.sha256)) out of \(StoreWords.name(each)): \(reason)") }
        }
        inv.console.line("Done. Asking \(StoreWords.name(storeOf(target) ?? store)) again:")
        return try reask(inv, store: storeOf(target) ?? store)
    }

    /// `--platform`, else the store's own target.
    static func target(_ inv: Invocation, store: TrustStoreSpec) throws -> TrustTarget {
        if let name = inv.command.value("platform") {
            guard let target = TrustTarget(platform: name, store: store) else {
                throw UsageRefusal("'\(name)' is not a platform tv has steps for; use one of \(TrustTarget.platformNames.joined(separator: ", ")).")
            }
            return target
        }
        return TrustTarget.forStore(store, distribution: OSRelease.distribution())
    }

    /// The trust store a target's steps change on this machine, when tv can ask it.
    static func storeOf(_ target: TrustTarget) -> TrustStoreSpec? {
        switch target {
        case .debian, .fedora, .arch: return .system
        case .nss(let dir?): return .nss(dir)
        case .bundle(let p): return .file(p)
        case .folder(let p): return .dir(p)
        case .nss(nil), .macos, .ios, .android, .windows, .runtime: return nil
        }
    }

    /// Asks `store` now (and re-checks inspection) and prints both answers and the stage.
    /// - Parameter stepsShown: the install steps were just printed and tv can do them here
    ///   (`SetupProgress.stepsShownCanApply`).
    static func reask(_ inv: Invocation, store: TrustStoreSpec, stepsShown: Bool = false) throws -> Int32 {
        let home = try inv.home()
        var enabled = false
        var notices: [String] = []
        if let report = try? InspectionGuard.recheck(home: home, settings: try inv.settingsStore(), environment: inv.environment, now: inv.now) {
            notices = report.notices
            // Inspection is one switch for the session, whichever store was asked: the stage
            // says "on" when it is on, never "turn it on".
            enabled = report.record[SettingKeys.inspectionEnabled]
        }
        for notice in notices { inv.console.note(notice) }
        let snapshot = SetupSnapshot.read(home: home, store: store, inspectionEnabled: enabled, environment: inv.environment, now: inv.now)
        if let trust = snapshot.trust { for line in SetupRendering.trustLines(trust) { inv.console.line(line) } }
        let stage = CertificateSetupPolicy.stage(snapshot.facts, progress: SetupProgress(stepsShownCanApply: stepsShown))
        for line in SetupRendering.stageLines(stage, dataDir: (try? inv.home().path) ?? "") { inv.console.line(line) }
        return 0
    }
}
