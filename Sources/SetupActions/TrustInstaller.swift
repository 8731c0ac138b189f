import CertificateSetup
import Foundation
import LocalCA
import TrustStore
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// `tv ca trust --apply` and `tv ca remove --apply`: the steps of a `TrustGuide` as actions this
/// machine can perform, said before they are done (DESIGN.md §3 "say what will happen, then do it").
public enum TrustInstaller {
    /// Set to 1 in an environment where the machine's own trust store must never be changed (test
    /// suites, CI): system targets (debian, fedora, arch) are then refused.
    public static let refuseSystemVariable = "TV_NO_SYSTEM_TRUST_CHANGES"

    /// One action, with the sentence that announces it.
    public enum Action: Sendable, Equatable {
        case copy(from: String, to: String)
        case delete(String)
        case run(program: String, arguments: [String])
        case bundleAdd(path: String)
        case bundleRemove(path: String)
        case folderAdd(directory: String, fileName: String)
        case folderRemove(directory: String)
        /// Make an empty NSS database in a folder that has none (before `nssAdd`), making the
        /// folder first (0700) when it does not exist (`makesFolder`).
        case nssCreate(directory: String, makesFolder: Bool)
        case nssAdd(directory: String, nickname: String)
        case nssRemove(directory: String)
        /// Tell the system store's hooks (`TrustGuides.debianHooks`: Java's cacerts from
        /// ca-certificates-java) that the `pem` link is gone, as update-ca-certificates tells
        /// them of a root it takes out itself. It does not for a root deleted from
        /// /usr/local/share/ca-certificates, not even with `--fresh` (it clears every link
        /// first, so none counts as removed, and the hook never sees the option): Java kept
        /// trusting tv's removed root (a re-check). Nothing to tell when the folder is missing.
        case tellHooksRemoved(pem: String)

        public var sentence: String {
            switch self {
            case let .copy(from, to): return "copy \(from) to \(to)"
            case .delete(let path): return "delete \(path)"
            case let .run(program, arguments): return "run \(([program] + arguments).map(ShellWord.quote).joined(separator: " "))"
            case .bundleAdd(let path): return "rewrite \(path) with the root as a plain certificate (any other entry for it removed)"
            case .bundleRemove(let path): return "rewrite \(path) without the root"
            case let .folderAdd(dir, name): return "write \(dir)/\(name) and link its hash name to it (any other file holding the root removed)"
            case .folderRemove(let dir): return "delete the root's files and hash links from \(dir)"
            case let .nssCreate(dir, makesFolder):
                return makesFolder
                    ? "make the folder \(dir) (0700, as Chromium would on its first start) and an empty NSS database in it (certutil -N --empty-password)"
                    : "create an empty NSS database in \(dir), which has none (certutil -N --empty-password)"
            case let .nssAdd(dir, nickname): return "add the root to the NSS database \(dir) as '\(nickname)' trusted for websites (C,,)"
            case .nssRemove(let dir): return "delete the root from the NSS database \(dir)"
            case .tellHooksRemoved(let pem):
                return "tell the hooks in \(TrustGuides.debianHooks) (Java's cacerts) that \(pem) is gone, which update-ca-certificates does not"
            }
        }

        /// The bundle or folder a store edit writes; nil for the other actions.
        var storePath: String? {
            switch self {
            case .bundleAdd(let path), .bundleRemove(let path): return path
            case .folderAdd(let dir, _), .folderRemove(let dir): return dir
            default: return nil
            }
        }

        /// Whether the action changes the machine's own trust (needs root; refused under the guard).
        var changesSystem: Bool {
            switch self {
            case .copy, .delete, .run, .tellHooksRemoved: return true
            default: return false
            }
        }
    }

    /// Why an apply stopped.
    public enum Failure: UserFacingError, Equatable {
        case cannotApply(target: String)
        case refusedByEnvironment
        /// `systemStore`: the step changes the system's store, so root may be what it lacks.
        case stepFailed(step: String, reason: String, done: [String], systemStore: Bool = false)
        /// A step changes the system's store and this process is not root; `command` is the one
        /// to run instead (`SudoCommand.line`, with this data folder).
        case needsRoot(command: String)
        /// A `file:` or `dir:` store that is the system store's own output (the bundle or hashed
        /// folder `update-ca-certificates` builds): an edit there is undone by the next rebuild,
        /// and is a system change a `--yes` never makes (a trial's `tv setup --yes
        /// --trust-store file:/etc/ssl/certs/ca-certificates.crt` rewrote it).
        case systemGenerated(path: String, systemStoreCommand: String)

        public var message: String {
            switch self {
            case .cannotApply(let target):
                return "tv cannot do the steps for \(target) on this machine; follow them by hand (`tv ca trust` without --apply prints them)."
            case .refusedByEnvironment:
                return "\(TrustInstaller.refuseSystemVariable)=1 forbids changing this machine's trust store; unset it to apply, or choose a store with --trust-store."
            case let .systemGenerated(path, command):
                return "\(path) is what this machine's system trust store is built into (update-ca-certificates rebuilds it and drops what is added by hand); nothing was changed. Use the system store instead: `\(command)` (or `tv ca remove --apply --yes` to take the root out)."
            case .needsRoot(let command):
                // Said before anything runs (a trial's non-root run failed halfway, told to "fix
                // the cause (system stores need root: sudo)" and retry the same command).
                return "Changing the system's trust store needs root; nothing was changed. Run `\(command)` (sudo with this data folder, so the root it trusts is the one your sessions use)."
            case let .stepFailed(step, reason, done, systemStore):
                let before = done.isEmpty ? "nothing was done before it" : "already done: " + done.joined(separator: "; ")
                // The hint about root only for the system's store (a trial's NSS database in a
                // missing folder, and a full disk under a file: bundle, were told to use sudo).
                return "Could not \(step) (\(reason)); \(before). Fix the cause\(systemStore ? " (system stores need root: sudo)" : "") and run the command again."
            }
        }
    }

    /// Whether `path` (a bundle file or a hashed folder) is, once links are followed, OpenSSL's
    /// compiled-in default bundle or folder, or a file in that folder: the system store's output.
    public static func isSystemGenerated(_ path: String) -> Bool {
        func resolved(_ p: String) -> String? {
            guard let real = realpath(p, nil) else { return nil }
            defer { free(real) }
            return String(cString: real)
        }
        let defaults = TrustQuestions.systemPaths(environment: [:])
        let systemFile = resolved(defaults.file)
        let systemDirs = defaults.dirs.compactMap(resolved)
        if let target = resolved(path), target == systemFile || systemDirs.contains(target) { return true }
        // A file in the folder (its own links may lead anywhere, e.g. /usr/share/ca-certificates).
        var folder = path
        while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
        guard let slash = folder.lastIndex(of: "/") else { return false }
        let parent = slash == folder.startIndex ? "/" : String(folder[..<slash])
        return resolved(parent).map(systemDirs.contains) ?? false
    }

    /// The actions that install and trust the root for `target`, or nil when tv cannot do them here.
    /// - Parameter nssDatabase: the state of an NSS folder (`NSSDatabase.state`): one with no
    ///   database gets one first, and a folder that does not exist is made first (Chromium's
    ///   `~/.pki/nssdb` often is not there yet).
    public static func installActions(_ target: TrustTarget, root: RootDescription,
                                      nssDatabase: (String) -> NSSDatabase = NSSDatabase.state) -> [Action]? {
        switch target {
        case .debian:
            return [.copy(from: root.path, to: "/usr/local/share/ca-certificates/" + root.debianFileName),
                    .run(program: "update-ca-certificates", arguments: [])]
        case .fedora:
            return [.copy(from: root.path, to: "/etc/pki/ca-trust/source/anchors/" + root.pemFileName),
                    .run(program: "update-ca-trust", arguments: ["extract"])]
        case .arch:
            return [.run(program: "trust", arguments: ["anchor", "--store", root.path])]
        case .nss(let dir?):
            let create: [Action]
            switch nssDatabase(dir) {
            case .noFolder: create = [.nssCreate(directory: dir, makesFolder: true)]
            case .noDatabase: create = [.nssCreate(directory: dir, makesFolder: false)]
            case .present, .notAFolder: create = []
            }
            return create + [.nssAdd(directory: dir, nickname: root.commonName)]
        case .bundle(let path): return [.bundleAdd(path: path)]
        case .folder(let dir): return [.folderAdd(directory: dir, fileName: root.pemFileName)]
        case .nss(nil), .macos, .ios, .android, .windows, .runtime: return nil
        }
    }

    /// The actions that take the root out of `target`, or nil when tv cannot do them here.
    public static func removalActions(_ target: TrustTarget, root: RootDescription) -> [Action]? {
        switch target {
        case .debian:
            return [.delete("/usr/local/share/ca-certificates/" + root.debianFileName),
                    .run(program: "update-ca-certificates", arguments: ["--fresh"]),
                    .tellHooksRemoved(pem: "/etc/ssl/certs/" + root.pemFileName)]
        case .fedora:
            return [.delete("/etc/pki/ca-trust/source/anchors/" + root.pemFileName),
                    .run(program: "update-ca-trust", arguments: ["extract"])]
        case .arch:
            return [.run(program: "trust", arguments: ["anchor", "--remove", root.path])]
        case .nss(let dir?): return [.nssRemove(directory: dir)]
        case .bundle(let path): return [.bundleRemove(path: path)]
        case .folder(let dir): return [.folderRemove(directory: dir)]
        case .nss(nil), .macos, .ios, .android, .windows, .runtime: return nil
        }
    }

    /// Performs `actions` in order, stopping at the first that fails.
    /// - Parameters:
    ///   - root: the root certificate (its PEM must be at the `RootDescription.path` the actions name).
    ///   - announce: called with each action's sentence just before it runs.
    ///   - asRoot: the command to run as root instead (`SudoCommand.line`), said when a step
    ///     changes the system's store and `euid` is not root; nil: tried anyway.
    ///   - dataDir: the data folder, for the system store's command said when a store is the
    ///     system's own output (`Failure.systemGenerated`: `SudoCommand.line`, with
    ///     `--trust-store system`, since the saved store would be refused again).
    /// - Throws: `Failure` (`.refusedByEnvironment`, `.needsRoot` before anything runs).
    public static func perform(_ actions: [Action], root: Certificate, rootPath: String,
                               environment: [String: String], asRoot: String? = nil, dataDir: String? = nil, euid: uid_t = geteuid(),
                               announce: (String) -> Void = { _ in }) throws {
        // Not root: nothing of the system's store can change, whatever else holds.
        if let asRoot, euid != 0, actions.contains(where: \.changesSystem) { throw Failure.needsRoot(command: asRoot) }
        if environment[refuseSystemVariable] == "1" && actions.contains(where: \.changesSystem) {
            throw Failure.refusedByEnvironment
        }
        for action in actions {
            if let path = action.storePath, isSystemGenerated(path) {
                let words = "ca trust --trust-store system --apply --yes"
                throw Failure.systemGenerated(path: path, systemStoreCommand: dataDir.map { SudoCommand.line(words, dataDir: $0, euid: euid) }
                                                  ?? "sudo tv " + words)
            }
        }
        var done: [String] = []
        for action in actions {
            announce(action.sentence)
            do {
                try perform(action, root: root, rootPath: rootPath, environment: environment)
            } catch let failure as Failure {
                if case let .stepFailed(step, reason, _, _) = failure {
                    throw Failure.stepFailed(step: step, reason: reason, done: done, systemStore: action.changesSystem)
                }
                throw failure
            } catch let failure as StoreEditor.Failure {
                throw Failure.stepFailed(step: action.sentence, reason: "could not \(failure.step): \(failure.reason)", done: done,
                                         systemStore: action.changesSystem)
            } catch let write as FileWriteError {
                // Its reason, not its sentence: the step names the file (a trial read a sentence
                // inside parentheses, then "again..").
                throw Failure.stepFailed(step: action.sentence, reason: write.reason, done: done, systemStore: action.changesSystem)
            } catch {
                throw Failure.stepFailed(step: action.sentence, reason: (error as? UserFacingError)?.message ?? "\(error)", done: done,
                                         systemStore: action.changesSystem)
            }
            done.append(action.sentence)
        }
    }

    private static func perform(_ action: Action, root: Certificate, rootPath: String, environment: [String: String]) throws {
        switch action {
        case let .copy(_, to):
            try FileModes.writeAtomically(root.pem, to: to, mode: 0o644)
        case .delete(let path):
            if unlink(path) != 0 && errno != ENOENT {
                throw Failure.stepFailed(step: action.sentence, reason: String(cString: strerror(errno)), done: [])
            }
        case let .run(program, arguments):
            try run(program, arguments, input: [], for: action, environment: environment)
        case .tellHooksRemoved(let pem):
            var isFolder = false
            guard FileManager.default.fileExists(atPath: TrustGuides.debianHooks, isDirectory: &isFolder), isFolder else { return }
            try run("run-parts", ["--stdin", TrustGuides.debianHooks], input: Array("-\(pem)\n".utf8), for: action,
                    environment: environment)
        case .bundleAdd(let path): try StoreEditor.rewriteBundle(path, root: root, add: true)
        case .bundleRemove(let path): try StoreEditor.rewriteBundle(path, root: root, add: false)
        case let .folderAdd(dir, name): try StoreEditor.installInFolder(dir, root: root, fileName: name)
        case .folderRemove(let dir): try StoreEditor.removeFromFolder(dir, root: root)
        case .nssCreate(let dir, _): try StoreEditor.createNSSDatabase(dir, environment: environment)
        case let .nssAdd(dir, nickname):
            try StoreEditor.trustInNSS(dir, root: root, rootPath: rootPath, nickname: nickname, environment: environment)
        case .nssRemove(let dir): try StoreEditor.removeFromNSS(dir, root: root, environment: environment)
        }
    }

    /// Runs one step's program (two minutes at most: update-ca-certificates starts a JVM for
    /// Java's keystore); a failure or a non-zero exit stops the apply.
    private static func run(_ program: String, _ arguments: [String], input: [UInt8], for action: Action,
                            environment: [String: String]) throws {
        do {
            let result = try BoundedProcess.run(program, arguments, environment: environment, input: input, timeout: 120)
            guard result.status == 0 else {
                throw Failure.stepFailed(step: action.sentence, reason: "exit status \(result.status): \(result.firstErrorLine)", done: [])
            }
        } catch let failure as BoundedProcess.Failure {
            throw Failure.stepFailed(step: action.sentence, reason: failure.reason, done: [])
        }
    }
}

/// The running Linux distribution, from `/etc/os-release` (os-release(5)).
public enum OSRelease {
    public static func distribution(path: String = "/etc/os-release") -> LinuxDistribution? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return LinuxDistribution.from(osRelease: String(decoding: data, as: UTF8.self))
    }
}
