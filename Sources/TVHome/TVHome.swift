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
    /// - Throws: `TVHomeError.noHome` when none of them names a folder.
    public static func resolve(dataDir: String?, environment: [String: String]) throws -> TVHome {
        if let dataDir, !dataDir.isEmpty { return TVHome(path: dataDir) }
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
    public func requireExisting() throws -> TVHome {
        guard exists else { throw TVHomeError.missing(path: path) }
        return self
    }

    /// Creates the data folder (and its parents) if missing and sets it to 0700.
    /// - Throws: `TVHomeError.cannotCreate` naming the path and the system's reason.
    public func ensureExists() throws {
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
    /// A command that only reads found no data folder (it never makes one).
    case missing(path: String)

    public var message: String {
        switch self {
        case .noHome:
            return "No data folder could be chosen because HOME is not set; pass --data-dir DIR or set TV_HOME."
        case let .cannotCreate(path, reason):
            return "Could not create the data folder \(path) (\(reason)); check that its parent is writable or pass --data-dir."
        case let .missing(path):
            return "There is no data folder at \(path) yet; `tv run` or `tv setup` makes one."
        }
    }
}
