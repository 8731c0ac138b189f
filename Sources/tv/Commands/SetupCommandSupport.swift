import CertificateSetup
import CommandLineParser
import Foundation
import LocalCA
import SetupActions
import Settings
import TrustStore
import TVCore
import TVHome

/// Where `tv` tells a running session about saved settings: its control socket.
enum LiveSession {
    static func notifier(_ home: TVHome) -> any LiveSessionNotifier { ControlSocketNotifier(home: home) }

    /// Tells a running session that the data folder's CA changed (nothing when none runs).
    /// Tells the running session, before the command prints anything (output cut short by a
    /// closed pipe must not leave a session on the old files); the caller prints the sentence
    /// where it belongs.
    /// - Returns: what the session answered, to say (nil: nothing to say).
    /// The clients remembered as lacking the root before are forgotten first (`LacksRootMemory`),
    /// and said.
    static func caChanged(_ inv: Invocation) -> String? {
        guard let home = try? inv.home() else { return nil }
        let forgotten = LacksRootMemory.forget(home: home)
        let told = ControlSocketNotifier(home: home).caChanged().sentence
        let said = [told, LacksRootMemory.sentence(forgotten)].compactMap { $0 }
        return said.isEmpty ? nil : said.joined(separator: "\n")
    }

    /// Forgets the clients remembered as lacking tv's root once trust changed (tv put the root in
    /// a store, or `tv pinned forget --lacks-root`), and tells every running session
    /// (`LacksRootMemory`, `.trustChanged`).
    /// - Returns: what to say (nil: nothing was remembered, and no session had to be told).
    static func lacksRootForgotten(_ home: TVHome) -> String? {
        let forgotten = LacksRootMemory.forget(home: home)
        let told = ControlSocketNotifier(home: home).lacksRootForgotten()
        var failure: String?
        if case .failed(let reason) = told {
            failure = "The running session could not be told (\(reason)); it forgets them when it restarts (`tv stop`, then `tv run`)."
        }
        let said = [LacksRootMemory.sentence(forgotten, .trustChanged), failure].compactMap { $0 }
        return said.isEmpty ? nil : said.joined(separator: "\n")
    }
}

extension Invocation {
    /// `-o`'s value as an output: `-` standard output, else a file outside the data folder
    /// (`OutputOutsideDataFolder`: an export there replaced the CA's key, a re-check).
    /// - Throws: `OutputOutsideDataFolder.Refusal`.
    func outputFile(_ argument: String) throws -> OutputFile {
        // An empty name is no file (a re-check read "Could not write  (No such file…)").
        guard !argument.isEmpty else { throw UsageRefusal("-o takes a file's path (or - for standard output), not an empty word.") }
        let file = OutputFile(argument: argument)
        if let path = file.path, let home = try? home() { try OutputOutsideDataFolder.check(path, home: home) }
        return file
    }

    /// The settings record of this data folder, with the live-session seam.
    func settingsStore() throws -> SettingsStore {
        let home = try home()
        return SettingsStore(file: SettingsFile(home: home), liveSession: LiveSession.notifier(home))
    }

    /// The `--trust-store` value given (the last one), parsed; a `file:` bundle's folder must
    /// exist (the bundle itself need not), checked before the command makes or saves anything.
    /// - Throws: `TrustStoreError.unknownStore`, `.bundleFolderMissing`.
    func trustStoreOption() throws -> TrustStoreSpec? {
        try command.value("trust-store").map(Invocation.checkedStore)
    }

    /// `path` from the current folder when relative, `.` and `..` resolved (`~` is the shell's).
    static func absolutePath(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        // `~` is $HOME, as the shell would have it (Foundation took the password database's:
        // a re-check's HOME elsewhere saved /root/…).
        if path == "~" || path.hasPrefix("~/"), let home = ProcessInfo.processInfo.environment["HOME"], home.hasPrefix("/") {
            return URL(fileURLWithPath: home + path.dropFirst()).standardizedFileURL.path
        }
        return URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true))
            .standardizedFileURL.path
    }

    /// `text` parsed as a trust store whose `file:` bundle folder exists (`--trust-store`, and
    /// `tv settings set trust.store`).
    /// - Throws: `TrustStoreError.unknownStore`, `.bundleFolderMissing`.
    static func checkedStore(_ text: String) throws -> TrustStoreSpec {
        // A relative path is made absolute now: saved as typed, it named another file from
        // every other folder, and inspection went off there (a trial).
        var store = try TrustStoreSpec(parsing: text)
        switch store {
        case .file(let path): store = .file(absolutePath(path))
        case .dir(let path): store = .dir(absolutePath(path))
        case .nss(let path): store = .nss(absolutePath(path))
        default: break
        }
        try store.checkNotSystemStore { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
        try store.checkBundleFolder { folder in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) && isDirectory.boolValue
        }
        return store
    }

    /// The store named with `--trust-store`, else the saved `trust.store`.
    /// - Throws: `TrustStoreError`, or `SettingsError` when the settings cannot be read and no
    ///   `--trust-store` was given.
    func chosenStore() throws -> TrustStoreSpec {
        if let given = try trustStoreOption() { return given }
        let settings = try settingsStore()
        return try InspectionGuard.savedStore(try settings.read(), settings: settings)
    }

    /// Asks a yes/no question when standard input is a terminal; otherwise the answer is no.
    func confirmed(_ question: String) -> Bool {
        console.stdinIsTerminal && console.confirm(question)
    }
}

/// The options the setup commands share.
enum OptionSpecs {
    static let trustStore = OptionSpec("trust-store", value: "STORE",
                                       help: "Trust store to ask: system (default, honours SSL_CERT_FILE/SSL_CERT_DIR), file:PATH, dir:PATH or nss:DIR (default: the saved trust.store).")
    static let json = OptionSpec("json", help: "Print as JSON.")
    static let yes = OptionSpec("yes", help: "Confirm; run without questions.")
    static let platform = OptionSpec("platform", value: "NAME",
                                     help: "Steps for \(TrustTarget.platformNames.joined(separator: "|")) (default: the store's own, or this Linux distribution's).")
}
