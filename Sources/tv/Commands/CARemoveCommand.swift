import CertificateSetup
import CommandLineParser
import LocalCA
import SetupActions
import Settings
import TrustStore
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
        if !inv.yes {
            inv.console.note("This deletes the root key, the root certificate and the leaf key in \(folder.directory); tv's certificates stop working everywhere the root is trusted. \(SetupText.removeKeeps)")
            guard inv.confirmed("Remove the CA?") else {
                throw CAError.consentRequired(what: "Removing the CA was not confirmed; nothing changed.")
            }
        }
        let settings = try inv.settingsStore()
        let outcome = try CARemoval.remove(home: home, settings: settings) { root in
            guard apply else { return }
            guard let root else {
                throw UsageRefusal("The root certificate cannot be read, so it cannot be taken out of a store; run without --apply and follow the steps by hand.", exitCode: 1)
            }
            let description = RootDescription(root: root, path: folder.rootPath)
            guard let actions = TrustInstaller.removalActions(target, root: description) else {
                throw TrustInstaller.Failure.cannotApply(target: TrustGuides.removal(target, root: description).title)
            }
            inv.console.line("Taking the root out of \(TrustGuides.removal(target, root: description).title):")
            try TrustInstaller.perform(actions, root: root, rootPath: folder.rootPath, environment: inv.environment) {
                inv.console.line("→ " + $0)
            }
        }
        inv.console.line(outcome.inspectionOff.sentence(settingsPath: settings.file.path))
        guard outcome.removedSomething else {
            inv.console.line("There was no CA to remove in \(folder.directory).")
            return 0
        }
        inv.console.line("Deleted the root key, the root certificate and the leaf key from \(folder.directory).")
        inv.console.line(SetupText.removeKeeps)
        guard let root = outcome.removedRoot else {
            inv.console.line("The root could not be read, so remove any TunnelVision root from your stores by hand.")
            return 0
        }
        let description = RootDescription(root: root, path: folder.rootPath)
        inv.console.line("")
        inv.console.line("To take the removed root (\(description.commonName), SHA-256 \(description.sha256)) out of the stores that trust it:")
        var targets: [TrustTarget] = [.debian, .fedora, .arch, .nss(directory: nil), .macos, .ios, .android, .windows]
        switch store {
        case .file, .dir, .nss: targets.insert(TrustTarget.forStore(store, distribution: nil), at: 0)
        case .system: break
        }
        for t in targets { for line in SetupRendering.guideLines(TrustGuides.removal(t, root: description)) { inv.console.line(line) } }
        return 0
    }
}
