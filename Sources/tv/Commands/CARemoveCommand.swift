import CertificateSetup
import CommandLineParser
import LocalCA
import SetupActions
import Settings
import TrustStore
import TVCore
import TVHome

/// `tv ca remove --yes`: inspection off, then the root key, root certificate and leaf key deleted;
/// prints how to take the root out of each store (`--apply` does it for a Linux store first).
enum CARemoveCommand {
    static let spec = CommandSpec(
        name: "remove", summary: "Turn inspection off and delete the root, its key and the leaf key.",
        discussion: SetupText.removeKeeps + " With --apply, the root is first taken out of the trust store (--trust-store, or --platform) on this machine.",
        options: [OptionSpecs.trustStore, OptionSpecs.platform,
                  OptionSpec("apply", help: "Also take the root out of the trust store on this machine (Linux stores)."),
                  OptionSpecs.yes])

    static func run(_ inv: Invocation) throws -> Int32 {
        let home = try inv.home()
        let folder = CAFolder(home: home)
        let apply = inv.command.has("apply")
        let store = apply ? try inv.chosenStore() : ((try? inv.chosenStore()) ?? .system)
        let target = try CATrustCommand.target(inv, store: store)
        let replaced = apply ? ReplacedRoots.kept(home: home) : []
        if !inv.yes {
            inv.console.note("This deletes the root key, the root certificate and the leaf key in \(folder.directory); tv's certificates stop working everywhere the root is trusted. \(SetupText.removeKeeps)"
                + (replaced.isEmpty ? "" : " It also takes the roots `tv ca remake` replaced out of the stores tv had put them in (" + replaced.map { "\($0.description.commonName) in " + $0.stores.map(StoreWords.name).joined(separator: " and ") }.joined(separator: "; ") + ")."))
            guard inv.confirmed("Remove the CA?") else {
                throw CAError.consentRequired(what: "Removing the CA was not confirmed; nothing changed.")
            }
        }
        let settings = try inv.settingsStore()
        let record = TrustInstallRecord.read(home: home)
        var done: [TrustStoreSpec] = []
        var failures: [(TrustStoreSpec, String)] = []
        var remembered: [TrustStoreSpec] = []
        // Stores that did not hold the root before their steps ran: "took it out" would be
        // untrue there (a re-check's system store never had it).
        var notThere: [TrustStoreSpec] = []
        // Stores that still hold the root after their steps (another copy, put there by hand
        // under another name: a re-check's system store kept trusting it after "took it out").
        var stillThere: [TrustStoreSpec] = []
        let outcome = try CARemoval.remove(home: home, settings: settings) { root in
            guard let root else {
                guard !apply else {
                    throw UsageRefusal("The root certificate cannot be read, so it cannot be taken out of a store; run without --apply and follow the steps by hand.", exitCode: 1)
                }
                return
            }
            let description = RootDescription(root: root, path: folder.rootPath)
            remembered = record.stores(for: description.sha256)
            let stores = TrustRemovalPlan.storesToApply(apply: apply, chosen: store, remembered: remembered)
            for (index, each) in stores.enumerated() {
                // The store named must come out (else nothing is deleted, for a retry); another
                // store tv remembers is tried, and a failure is said and left to do.
                let eachTarget = index == 0 ? target : TrustTarget.forStore(each, distribution: OSRelease.distribution())
                let guide = TrustGuides.removal(eachTarget, root: description)
                guard let actions = TrustInstaller.removalActions(eachTarget, root: description) else {
                    if index == 0 { throw TrustInstaller.Failure.cannotApply(target: guide.title) }
                    continue
                }
                let asked = index == 0 ? (CATrustCommand.storeOf(target) ?? each) : each
                let held = TrustQuestions.installed(asked, root: root, environment: inv.environment)
                inv.console.line("Taking the root out of \(guide.title):")
                do {
                    try TrustInstaller.perform(actions, root: root, rootPath: folder.rootPath, environment: inv.environment) {
                        inv.console.line("→ " + $0)
                    }
                    if held == .no {
                        notThere.append(asked)
                    } else if TrustQuestions.installed(asked, root: root, environment: inv.environment) == .yes {
                        stillThere.append(asked)
                    } else {
                        done.append(asked)
                    }
                } catch let error as UserFacingError where index > 0 {
                    failures.append((each, error.message))
                }
            }
        }
        // The running session before anything more is printed (output cut short by a closed
        // pipe must not leave it minting from a CA that is gone; a trial's remake did).
        let delivery = outcome.removedSomething ? ControlSocketNotifier(home: home).caChanged() : nil
        // Only news is said (inspection that was already off is no news: a re-check).
        if case .wasAlreadyOff = outcome.inspectionOff {} else { inv.console.line(outcome.inspectionOff.sentence(settingsPath: settings.file.path)) }
        // Roots a remake replaced, still in stores tv put them in: out too (also when the CA
        // itself was removed earlier without --apply).
        if !replaced.isEmpty {
            let report = ReplacedRoots.takeOut(home: home, current: nil, environment: inv.environment) { inv.console.line("→ " + $0) }
            for (old, each) in report.takenOut { inv.console.line("Took the replaced root \(old.commonName) (SHA-256 \(old.sha256)) out of \(StoreWords.name(each)).") }
            for (old, each, reason) in report.failed { inv.console.note("tv: Could not take the replaced root \(old.commonName) (SHA-256 \(old.sha256)) out of \(StoreWords.name(each)): \(reason)") }
        }
        guard outcome.removedSomething else {
            inv.console.line("There was no CA to remove in \(folder.directory).")
            return 0
        }
        inv.console.line("Deleted the root key, the root certificate and the leaf key from \(folder.directory).")
        inv.console.line(SetupText.removeKeeps)
        // A running session stops inspecting at once (no CA to mint from); said as that, not as
        // "could not be told … when it restarts" (a trial's session had applied it).
        if delivery == .applied {
            inv.console.line("The running session applied it: it inspects nothing, passing connections through, until there is a CA again (`tv ca create` or `tv ca import`, which it takes at once).")
        } else if let sentence = delivery?.sentence {
            inv.console.line(sentence)
        }
        guard let root = outcome.removedRoot else {
            inv.console.line("The root could not be read, so remove any TunnelVision root from your stores by hand.")
            return 0
        }
        let description = RootDescription(root: root, path: folder.rootPath)
        // The record has done its work for this root: what is left is said below.
        for each in remembered { _ = try? TrustInstallRecord.read(home: home).forgetting(each, sha256: description.sha256).write(home: home) }
        if !done.isEmpty {
            inv.console.line("Took the root out of " + done.map(StoreWords.name).joined(separator: " and ") + ".")
        }
        if !notThere.isEmpty {
            inv.console.line("The root was not in " + notThere.map(StoreWords.name).joined(separator: " or ") + " when the steps began; nothing was there to take out.")
        }
        for each in stillThere {
            inv.console.note("tv: The root is still in \(StoreWords.name(each)) after the steps: another copy of it is there, under a name tv did not give it; find it (its SHA-256 is \(description.sha256)) and take it out by hand.")
        }
        for (each, reason) in failures { inv.console.note("tv: Could not take the root out of \(StoreWords.name(each)): \(reason)") }
        let left = TrustRemovalPlan.knownLeft(chosen: store, chosenExplicitly: inv.command.value("trust-store") != nil,
                                              remembered: remembered, done: done + notThere)
        inv.console.line("")
        if !left.isEmpty {
            inv.console.line("Left to do: take the removed root (\(description.commonName), SHA-256 \(description.sha256)) out of the stores tv knows still hold it:")
            for each in left {
                let guide = TrustGuides.removal(TrustTarget.forStore(each, distribution: OSRelease.distribution()), root: description)
                for line in SetupRendering.guideLines(guide) { inv.console.line(line) }
            }
            inv.console.line("")
        }
        inv.console.line("If you trusted the removed root (\(description.commonName), SHA-256 \(description.sha256)) anywhere else by hand, take it out there:")
        for t in TrustRemovalPlan.elsewhere(done: done + notThere, knownLeft: left) {
            for line in SetupRendering.guideLines(TrustGuides.removal(t, root: description)) { inv.console.line(line) }
        }
        return 0
    }
}
