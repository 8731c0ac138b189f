import Foundation

/// The data folder `$TV_HOME` and the layout of what `tv` keeps in it.
///
/// Resolution order (first that is set wins): the `--data-dir` option, the `TV_HOME` environment
/// variable, `$XDG_DATA_HOME/tunnelvision`, `~/.local/share/tunnelvision` (XDG Base Directory
/// Specification 0.8). The folder and every folder `tv` makes inside it are mode 0700.
public struct TVHome: Sendable, Equatable {
    /// The absolute path of the data folder.
    public let path: String

    /// A data folder at an explicit path (made absolute against the current directory).
    public init(path: String) {
        self.path = TVHome.absolute(path)
    }

    /// Resolves the data folder from the `--data-dir` value and the environment.
    /// - Parameters:
    ///   - dataDir: the `--data-dir` value, if given.
    ///   - environment: the process environment (`TV_HOME`, `XDG_DATA_HOME`, `HOME`).
    /// - Throws: `TVHomeError.noHome` when none of them names a folder; `.emptyDataDir` for an
    ///   empty `--data-dir`.
    public static func resolve(dataDir: String?, environment: [String: String]) throws -> TVHome {
        if let dataDir {
            // Never the default folder in its place: a script's unset variable would write there.
            guard !dataDir.isEmpty else { throw TVHomeError.emptyDataDir }
            return TVHome(path: dataDir)
        }
        if let home = environment["TV_HOME"], !home.isEmpty { return TVHome(path: home) }
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return TVHome(path: xdg + "/tunnelvision")
        }
        if let home = environment["HOME"], !home.isEmpty {
            return TVHome(path: home + "/.local/share/tunnelvision")
        }
        throw TVHomeError.noHome
    }

    /// `$TV_HOME/ca`: the root certificate, its key, the leaf key and the profile identity.
    public var caDirectory: String { path + "/ca" }
    /// `$TV_HOME/run`: the control socket of a live session.
    public var runDirectory: String { path + "/run" }
    /// `$TV_HOME/content`: segment files of decrypted content.
    public var contentDirectory: String { path + "/content" }
    /// `$TV_HOME/captures`: pcapng capture files, `capture-NNNNNN.pcapng` (0700; files 0600).
    public var captureDirectory: String { path + "/captures" }
    /// `$TV_HOME/tunnelvision.sqlite3`: flows, settings, pinned hosts.
    public var databasePath: String { path + "/tunnelvision.sqlite3" }

    /// Whether the data folder exists as a folder. Commands that only read check this first and
    /// say `TVHomeError.missing` instead of making a folder (a typo'd `--data-dir` stays a typo).
    public var exists: Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// The data folder, which must exist already.
    /// - Throws: `TVHomeError.missing` when there is no folder at `path`.
    /// - Throws: `TVHomeError.missing` when there is no folder at `path`; as `checkTrust()`.
    public func requireExisting() throws -> TVHome {
        try checkTrust()
        guard exists else { throw TVHomeError.missing(path: path) }
        return self
    }

    /// Creates the data folder (and its parents) if missing and sets it to 0700.
    /// - Throws: `TVHomeError.cannotCreate` naming the path and the system's reason; as
    ///   `checkTrust()` (another user's folder is never used, nor its mode changed).
    public func ensureExists() throws {
        try checkTrust()
        try FileModes.makeDirectory(path, mode: 0o700)
    }

    /// Creates `sub` (a folder inside the data folder) with mode 0700, the data folder first.
    public func ensureDirectory(_ sub: String) throws {
        try ensureExists()
        try FileModes.makeDirectory(sub, mode: 0o700)
    }

    static func absolute(_ path: String) -> String {
        var p = path
        if p.hasPrefix("~/"), let home = ProcessInfo.processInfo.environment["HOME"] {
            p = home + p.dropFirst(1)
        }
        if !p.hasPrefix("/") {
            p = FileManager.default.currentDirectoryPath + "/" + p
        }
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        return p
    }
}

/// Why the data folder could not be found or made.
public enum TVHomeError: UserFacingError, Equatable {
    case noHome
    case cannotCreate(path: String, reason: String)
    /// A file (not a folder) stands where tv keeps a folder (the data folder, or one in it such
    /// as `captures`): the old sentence called any of them "the data folder" and advised checking
    /// its parent (a trial's file at `captures`).
    case fileWhereFolderGoes(path: String)
    /// The folder exists with another mode and could not be given `mode` (a read-only file
    /// system, a folder of another user's).
    case cannotSetMode(path: String, mode: mode_t, reason: String)
    /// A command that only reads found no data folder (it never makes one).
    case missing(path: String)
    /// The folder exists and its owner may not write it (mode `mode`): tv leaves it so.
    case readOnlyFolder(path: String, mode: mode_t)
    /// `--data-dir ''`: an empty path (an unset variable in a script), never the default folder.
    case emptyDataDir
    /// `file` (the data folder's path itself, or a folder above it) is a file, not a folder.
    case fileInTheWay(path: String, file: String)
    /// The data folder (`place`) at `path` could be changed by another user (`TVHome.checkTrust`).
    case untrusted(path: String, place: DataFolderPlace, problem: FileTrustProblem)
    /// The data folder at `path` cannot be reached by `you`: `closedFolder` on the way may not
    /// be entered (its owner, when known).
    case unreachable(path: String, closedFolder: String, owner: FileOwner?, you: FileOwner)

    /// A command line that cannot run as typed (an empty --data-dir) is 2; the rest 1.
    public var exitCode: Int32 { self == .emptyDataDir ? 2 : 1 }

    public var message: String {
        switch self {
        case .noHome:
            return "No data folder could be chosen because HOME is not set; pass --data-dir DIR or set TV_HOME."
        case let .cannotCreate(path, reason):
            return "Could not create the folder \(path) (\(reason)); check that its parent is writable or pass --data-dir."
        case .fileWhereFolderGoes(let path):
            return "\(path) is a file where tv keeps a folder; move that file aside (tv makes the folder again) or pass --data-dir."
        case let .cannotSetMode(path, mode, reason):
            return "The folder \(path) exists but could not be made private (mode \(String(mode, radix: 8)), \(reason)); "
                + "make it writable by you, or pass --data-dir with another folder."
        case let .missing(path):
            return "There is no data folder at \(path) yet; `tv run`, `tv exec` or `tv setup` makes one."
        case let .readOnlyFolder(path, mode):
            return "The folder \(path) is read-only (mode \(FileTrust.octal(UInt32(mode)))) and tv does not change that; make it writable (`chmod u+w \(path)`) or pass --data-dir with another folder."
        case let .fileInTheWay(path, file):
            return file == path
                ? "The data folder \(path) is a file, not a folder; pass --data-dir with a folder (tv makes it when it is missing)."
                : "The data folder \(path) cannot be made: \(file) is a file, not a folder; pass --data-dir with a folder (tv makes it when it is missing)."
        case .emptyDataDir:
            return "--data-dir was given an empty path (an unset variable?); name a folder, or leave the option out for the default."
        case let .untrusted(path, place, problem):
            return TVHomeError.untrustedSentence(path: path, place: place, problem: problem)
        case let .unreachable(path, closedFolder, owner, you):
            let whose = owner.map { " (it belongs to \($0.name))" } ?? ""
            let runAs = owner.map { "run tv as \($0.name) (\($0.sudoHint)) to use it, or " } ?? ""
            return "The data folder \(path) cannot be reached by you (\(you.name)): the folder \(closedFolder) on the way is closed to you\(whose); \(runAs)pass --data-dir with a folder of your own."
        }
    }

    static func untrustedSentence(path: String, place: DataFolderPlace, problem: FileTrustProblem) -> String {
        let own = "pass --data-dir with a folder of your own"
        switch (place, problem) {
        case let (.dataFolder, .ownedBy(owner, you)):
            // "the user nobody could", not "nobody could" (a trial read the opposite).
            let why = you.id == 0 ? "so the user \(owner.name) could change what tv trusts in it (such as the CA)"
                                  : "and its sessions, flows and CA are \(owner.name)'s"
            return "The data folder \(path) belongs to \(owner.name), not to you (\(you.name)), \(why); run tv as \(owner.name) (\(owner.sudoHint)) to use it, or \(own)."
        case (.dataFolder, .writableByOthers):
            return "The data folder \(path) \(problem.clause), so they could change what tv trusts in it (such as the CA); check what is in it, then `chmod 700 \(path)`, or \(own)."
        case let (.caFolder, .ownedBy(owner, _)):
            return "The CA folder \(path) \(problem.caClause); move that folder aside (`tv ca create` then makes a new CA), or run tv as \(owner.name) (\(owner.sudoHint))."
        case (.caFolder, .writableByOthers):
            return "The CA folder \(path) \(problem.caClause); move that folder aside (`tv ca create` then makes a new CA), or, if you are sure the CA in it is yours, `chmod 700 \(path)`."
        case let (.above(dataFolder), .ownedBy(owner, _)):
            return "The folder \(path) above the data folder \(dataFolder) \(problem.clause), so the user \(owner.name) could put another data folder in its place; \(own) in a place only you and root control."
        case let (.above(dataFolder), .writableByOthers):
            return "The folder \(path) above the data folder \(dataFolder) \(problem.clause) and is not sticky, so they could put another data folder in its place; `chmod o-w \(path)`, or \(own) elsewhere."
        default:
            return "The data folder \(path) \(problem.clause); \(own)."
        }
    }
}
