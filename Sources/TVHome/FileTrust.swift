import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A user account: its id and its name (`getpwuid_r(3)`), or "uid N" when the id has no name.
public struct FileOwner: Sendable, Equatable {
    /// The numeric user id.
    public let id: UInt32
    /// The account's name, e.g. "root"; "uid 1234" when the password database has none.
    public let name: String

    /// A user as given (`FileOwner.named` looks one up).
    public init(id: UInt32, name: String) {
        self.id = id
        self.name = name
    }

    /// The effective user this process runs as (`geteuid(2)`).
    public static var current: FileOwner { named(geteuid()) }

    /// The user with id `id`, named from the password database.
    public static func named(_ id: uid_t) -> FileOwner {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        if getpwuid_r(id, &entry, &buffer, buffer.count, &result) == 0, let found = result, let name = found.pointee.pw_name {
            return FileOwner(id: id, name: String(cString: name))
        }
        return FileOwner(id: id, name: "uid \(id)")
    }

    /// How to run tv as this user, for a sentence: "sudo tv …" for root, "sudo -u NAME tv …" otherwise.
    public var sudoHint: String { id == 0 ? "sudo tv …" : "sudo -u \(name) tv …" }
}

/// What `lstat(2)`/`fstat(2)` says about one path, as far as trusting it goes.
public struct FileFacts: Sendable, Equatable {
    /// The type of the entry.
    public enum Kind: Sendable, Equatable {
        case regular, directory, symbolicLink, socket, other
    }

    /// What the entry is (a symbolic link only from `lstat`).
    public let kind: Kind
    /// Its owner (`st_uid`), named.
    public let owner: FileOwner
    /// The permission bits (`st_mode & 0o7777`, e.g. 0o600; 0o1000 is the sticky bit).
    public let mode: UInt32

    /// Facts as given (tests, and rules judged without a file).
    public init(kind: Kind, owner: FileOwner, mode: UInt32) {
        self.kind = kind
        self.owner = owner
        self.mode = mode
    }

    /// The facts of a `stat` structure.
    public init(_ st: stat) {
        let type = st.st_mode & S_IFMT
        kind = type == S_IFREG ? .regular : type == S_IFDIR ? .directory : type == S_IFLNK ? .symbolicLink
            : type == S_IFSOCK ? .socket : .other
        owner = FileOwner.named(st.st_uid)
        mode = UInt32(st.st_mode & 0o7777)
    }

    /// `path` itself, not followed when it is a symbolic link (`lstat(2)`).
    public static func lstat(_ path: String) -> PathLookup { lookUp(path, following: false) }

    /// `path`, following symbolic links (`stat(2)`).
    public static func stat(_ path: String) -> PathLookup { lookUp(path, following: true) }

    private static func lookUp(_ path: String, following: Bool) -> PathLookup {
        var st = Glibc.stat()
        let rc = following ? statFollowing(path, &st) : statNotFollowing(path, &st)
        guard rc == 0 else { return PathLookup(errno: errno) }
        return .found(FileFacts(st))
    }

    /// The open file `fd`; nil when `fstat(2)` fails.
    public static func fstat(_ fd: Int32) -> FileFacts? {
        var st = Glibc.stat()
        guard statOpenFile(fd, &st) == 0 else { return nil }
        return FileFacts(st)
    }
}

// Outside `FileFacts`, whose methods share the system calls' names.
private func statFollowing(_ path: String, _ st: inout stat) -> Int32 { stat(path, &st) }
private func statNotFollowing(_ path: String, _ st: inout stat) -> Int32 { lstat(path, &st) }
private func statOpenFile(_ fd: Int32, _ st: inout stat) -> Int32 { fstat(fd, &st) }

/// What looking up one path found.
public enum PathLookup: Sendable, Equatable {
    /// Something is there: its facts.
    case found(FileFacts)
    /// Nothing there (ENOENT, or ENOTDIR: a file where a folder on the way should be).
    case missing
    /// Not allowed to look (EACCES: a folder on the way cannot be entered).
    case forbidden
    /// Another failure, with its errno.
    case failed(code: Int32)

    init(errno code: Int32) {
        switch code {
        case ENOENT, ENOTDIR: self = .missing
        case EACCES: self = .forbidden
        default: self = .failed(code: code)
        }
    }
}

/// Why a file or folder cannot be trusted with what tv keeps in it (TLS secrets, the CA).
public enum FileTrustProblem: Sendable, Equatable {
    /// The path is a symbolic link, which tv does not follow for a secret file.
    case symbolicLink
    /// Not a regular file (a folder, FIFO, socket or device) where a file is expected.
    case notRegularFile
    /// Another user owns it.
    case ownedBy(FileOwner, you: FileOwner)
    /// A file that users other than its owner may read or write (`mode`: its permission bits).
    case openToOthers(mode: UInt32)
    /// A folder that users other than its owner may write into, i.e. add, replace or remove its
    /// entries (`mode`: its permission bits).
    case writableByOthers(mode: UInt32)

    /// The problem as a clause after the path: "belongs to alice, not to you (root)".
    public var clause: String {
        switch self {
        case .symbolicLink: return "is a symbolic link"
        case .notRegularFile: return "is not a regular file"
        case let .ownedBy(owner, you): return "belongs to \(owner.name), not to you (\(you.name))"
        case .openToOthers(let mode):
            let what = mode & 0o044 != 0 ? (mode & 0o022 != 0 ? "read and written" : "read") : "written"
            return "can be \(what) by other users (mode \(FileTrust.octal(mode)))"
        case .writableByOthers(let mode): return "can be written by other users (mode \(FileTrust.octal(mode)))"
        }
    }

    /// The problem with a CA file or folder, with what follows from it: "belongs to nobody, not
    /// to you (root), so the user nobody could have replaced the CA". One sentence for the CA
    /// folder (`TVHomeError.untrusted`), its files (`CAFolder.load`) and `tv run --ca FILE`
    /// (a trial's root key given to nobody was used without a word, while such a folder was refused).
    public var caClause: String {
        switch self {
        case .ownedBy(let owner, _): return "\(clause), so the user \(owner.name) could have replaced the CA"
        case .writableByOthers, .openToOthers: return "\(clause), so they could have replaced the CA"
        case .symbolicLink, .notRegularFile: return clause
        }
    }
}

/// The rules for trusting a path with secrets (pure: facts in, a problem or nil out).
///
/// - The owner rule, under each of the others (`owner`): the path belongs to you, the effective
///   user (`FileOwner.current`, `geteuid(2)`); so `sudo tv` expects root's files, as it expects
///   root's data folder.
/// - A CA file (`root.pem`; its keys are secret files): the owner rule alone.
/// - A secret file (a TLS key log): a regular file, not a symbolic link, owned by you, and
///   neither readable nor writable by group or others (mode & 0o077 == 0).
/// - A folder of yours (the data folder, its `ca/`): owned by you, not writable by group or others.
/// - A folder above the data folder: owned by you or root, and not writable by others unless
///   sticky (as /tmp is: others may add entries there, not rename or remove yours). Group write
///   is not counted above: with user private groups and umask 002 (Fedora, Ubuntu before 21.04)
///   `~/.local/share` is 0775 for a group of one.
public enum FileTrust {
    /// The problem with `facts` as a file to keep secrets in, or nil when it may be used.
    public static func secretFile(_ facts: FileFacts, you: FileOwner) -> FileTrustProblem? {
        switch facts.kind {
        case .symbolicLink: return .symbolicLink
        case .regular: break
        default: return .notRegularFile
        }
        if let problem = owner(facts, you: you) { return problem }
        if facts.mode & 0o077 != 0 { return .openToOthers(mode: facts.mode) }
        return nil
    }

    /// The problem with `facts` as a folder of yours (the data folder or its `ca/`), or nil.
    /// A non-folder is no trust problem here (the caller says "a file stands where the folder should be").
    public static func ownFolder(_ facts: FileFacts, you: FileOwner) -> FileTrustProblem? {
        guard facts.kind == .directory else { return nil }
        if let problem = owner(facts, you: you) { return problem }
        if facts.mode & 0o022 != 0 { return .writableByOthers(mode: facts.mode) }
        return nil
    }

    /// The owner rule: `.ownedBy` when `facts` belong to another user than `you`, else nil.
    public static func owner(_ facts: FileFacts, you: FileOwner) -> FileTrustProblem? {
        facts.owner.id == you.id ? nil : .ownedBy(facts.owner, you: you)
    }

    /// The problem with `facts` as a folder on the way to the data folder, or nil.
    public static func folderAbove(_ facts: FileFacts, you: FileOwner) -> FileTrustProblem? {
        guard facts.kind == .directory else { return nil }
        if facts.owner.id != you.id && facts.owner.id != 0 { return .ownedBy(facts.owner, you: you) }
        if facts.mode & 0o002 != 0 && facts.mode & 0o1000 == 0 { return .writableByOthers(mode: facts.mode) }
        return nil
    }

    /// Permission bits as octal text with a leading zero: 0o644 → "0644", 0o1777 → "1777".
    public static func octal(_ mode: UInt32) -> String {
        let text = String(mode, radix: 8)
        return text.count >= 4 ? text : String(repeating: "0", count: 4 - text.count) + text
    }
}
