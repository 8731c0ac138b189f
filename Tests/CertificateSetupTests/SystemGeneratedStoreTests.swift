import CertificateSetup
import Foundation
import LocalCA
import SetupActions
import Testing
import TrustStore
import TVHome

/// `TrustInstaller.isSystemGenerated`: a `file:` or `dir:` store that is the system store's own
/// output is never edited by an apply (a trial's `tv setup --yes --trust-store
/// file:/etc/ssl/certs/ca-certificates.crt` rewrote the system bundle). Only read here: no test
/// points an apply at the machine's own store.
struct SystemGeneratedStoreTests {
    @Test("OpenSSL's default bundle and folder, by any path that leads to them, and files in that folder, are the system's; other paths are not")
    func systemPaths() throws {
        let defaults = TrustQuestions.systemPaths(environment: [:])
        let file = defaults.file
        try #require(FileManager.default.fileExists(atPath: file), "this machine has no default bundle at \(file)")
        #expect(TrustInstaller.isSystemGenerated(file))
        for dir in defaults.dirs where FileManager.default.fileExists(atPath: dir) {
            #expect(TrustInstaller.isSystemGenerated(dir))
            #expect(TrustInstaller.isSystemGenerated(dir + "/"))
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
            if let one = entries.first { #expect(TrustInstaller.isSystemGenerated(dir + "/" + one), "\(dir)/\(one)") }
        }
        // The Debian bundle by its usual name and through the link OpenSSL's default is.
        if FileManager.default.fileExists(atPath: "/etc/ssl/certs/ca-certificates.crt") {
            #expect(TrustInstaller.isSystemGenerated("/etc/ssl/certs/ca-certificates.crt"))
            #expect(TrustInstaller.isSystemGenerated("/etc/ssl/certs/../certs/ca-certificates.crt"))
        }
        let own = NSTemporaryDirectory() + "tv-bundle-\(UUID().uuidString).pem"
        #expect(!TrustInstaller.isSystemGenerated(own))            // not there yet
        FileManager.default.createFile(atPath: own, contents: Data())
        defer { try? FileManager.default.removeItem(atPath: own) }
        #expect(!TrustInstaller.isSystemGenerated(own))
        #expect(!TrustInstaller.isSystemGenerated(NSTemporaryDirectory()))
        #expect(TrustInstaller.Failure.systemGenerated(path: "/etc/ssl/certs/ca-certificates.crt",
                                                       systemStoreCommand: SudoCommand.line("ca trust --trust-store system --apply --yes", dataDir: "/home/u/tv data", euid: 1000)).message
                == "/etc/ssl/certs/ca-certificates.crt is what this machine's system trust store is built into (update-ca-certificates rebuilds it and drops what is added by hand); nothing was changed. Use the system store instead: `sudo tv --data-dir '/home/u/tv data' ca trust --trust-store system --apply --yes` (or `tv ca remove --apply --yes` to take the root out).")
    }

    @Test("not root: a step on the system's store is refused before anything runs, with the sudo command that keeps this data folder (sudo drops TV_HOME and HOME)")
    func notRootIsToldTheCommandWithTheDataFolder() throws {
        let home = NSTemporaryDirectory() + "tv-sudo-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: home) }
        let folder = CAFolder(home: TVHome(path: home))
        let ca = try folder.create(now: Int64(Date().timeIntervalSince1970 * 1_000_000))
        let root = RootDescription(path: folder.rootPath, commonName: "TunnelVision Root CA", tag: "0000aaaa", sha256: "00")
        let actions = try #require(TrustInstaller.installActions(.debian, root: root))
        let command = SudoCommand.line("ca trust --apply --yes", dataDir: home + "/my data", euid: 1000)
        #expect(command == "sudo tv --data-dir '\(home)/my data' ca trust --apply --yes")
        #expect(SudoCommand.line("ca trust --apply --yes", dataDir: home, euid: 0) == "tv ca trust --apply --yes")
        var announced: [String] = []
        #expect(throws: TrustInstaller.Failure.needsRoot(command: command)) {
            try TrustInstaller.perform(actions, root: ca.root, rootPath: folder.rootPath, environment: [:], asRoot: command, euid: 1000) { announced.append($0) }
        }
        #expect(announced.isEmpty)
        #expect(TrustInstaller.Failure.needsRoot(command: command).message
                == "Changing the system's trust store needs root; nothing was changed. Run `\(command)` (sudo with this data folder, so the root it trusts is the one your sessions use).")
    }

    @Test("a failed step names root (sudo) as a cause only for the system's store: a file: bundle or NSS database that fails (a full disk, a missing folder) was told to use sudo")
    func sudoOnlyForTheSystemStore() {
        #expect(TrustInstaller.Failure.stepFailed(step: "rewrite /b.pem", reason: "No space left on device", done: []).message
                == "Could not rewrite /b.pem (No space left on device); nothing was done before it. Fix the cause and run the command again.")
        #expect(TrustInstaller.Failure.stepFailed(step: "run update-ca-certificates", reason: "exit status 1: Permission denied", done: ["copy the root"],
                                                  systemStore: true).message
                == "Could not run update-ca-certificates (exit status 1: Permission denied); already done: copy the root. Fix the cause (system stores need root: sudo) and run the command again.")
    }
}
