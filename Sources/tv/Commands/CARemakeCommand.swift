import CertificateSetup
import CommandLineParser
import LocalCA
import SetupActions
import Settings
import TVHome

/// `tv ca remake --yes`: a new root and keys, with a confirmation naming what is lost; inspection
/// is turned off and saved before the CA is touched, and if that fails the CA stays as it was.
enum CARemakeCommand {
    static let spec = CommandSpec(
        name: "remake", summary: "Replace the root and its keys with new ones (every device must trust the new root).",
        discussion: SetupText.remakeLoses.joined(separator: " "),
        options: [OptionSpec("key", value: "TYPE", help: CACommands.keyHelp),
                  OptionSpec("leaf-key", value: "TYPE", help: "Key type of the new leaf key (default ecdsa-p256)."),
                  OptionSpecs.yes])

    static func run(_ inv: Invocation) throws -> Int32 {
        let rootType = try inv.command.value("key").map(KeyType.parse) ?? .ecdsaP256
        let leafType = try inv.command.value("leaf-key").map(KeyType.parse) ?? .ecdsaP256
        let home = try inv.home()
        if !inv.yes {
            for line in SetupText.remakeLoses { inv.console.note(line) }
            guard inv.confirmed("Remake the CA?") else {
                throw CAError.consentRequired(what: "Remaking the CA was not confirmed; nothing changed.")
            }
        }
        let outcome = try CARemake.remake(home: home, settings: try inv.settingsStore(), rootKeyType: rootType,
                                          leafKeyType: leafType, now: inv.now)
        // Running sessions before any output: output cut short (`| head -1`, SIGPIPE) left a
        // trial's session minting from the old root, whose key was gone, for minutes.
        let told = LiveSession.caChanged(inv)
        let settingsPath = try inv.settingsStore().file.path
        // Only news is said: "Inspection is off (it already was)" led a remake's output when
        // inspection had never been on (a re-check).
        if case .wasAlreadyOff = outcome.inspectionOff {} else { inv.console.line(outcome.inspectionOff.sentence(settingsPath: settingsPath)) }
        inv.console.line("Remade the CA.")
        inv.console.line("  old root  \(outcome.oldRoot.subject)  SHA-256 \(Hex.encode(outcome.oldRoot.sha256, separator: ":", uppercase: true))")
        inv.console.line("  new root  \(outcome.newCA.root.subject)  serial \(outcome.newCA.root.serialHex)")
        inv.console.line("            SHA-256 \(Hex.encode(outcome.newCA.root.sha256, separator: ":", uppercase: true))")
        for warning in outcome.warnings { inv.console.note(warning) }
        if let told { inv.console.line(told) }
        if outcome.oldRootStores.isEmpty {
            inv.console.line("Next: install and trust the new root (`tv ca trust`), and remove the old one where you had added it (`tv ca remove --help` lists how per store; look for the old SHA-256).")
        } else {
            // tv put the old root in these stores itself: the next apply there takes it out.
            inv.console.line("Next: install and trust the new root (`tv ca trust --apply`): in " + outcome.oldRootStores.map(StoreWords.name).joined(separator: " and ")
                + ", where tv had put the old root, it also takes the old one out (`tv ca remove --apply` does too). Remove it by hand wherever else you had added it.")
        }
        return 0
    }
}
