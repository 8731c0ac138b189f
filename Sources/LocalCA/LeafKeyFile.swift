import Foundation
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// Why `leaf-key.pem` cannot be used as it is (found by `CAFolder.load`).
///
/// The leaf key carries no trust: it is the key every leaf tv mints carries, and no device was
/// ever told about it. So, unlike the root's files, a leaf key that is missing or unusable never
/// puts the CA in doubt: tv makes a new one and says so once (`LeafKeyRemade`). A trial's missing
/// `leaf-key.pem` was told to delete the root that devices already trusted.
public enum LeafKeyProblem: Sendable, Equatable {
    /// There is no `leaf-key.pem`.
    case missing
    /// The entry is there and tv will not use it; `clause` says why ("cannot be parsed as a PEM
    /// private key").
    case unusable(String)

    /// The problem with a key file whose `lstat` facts are `facts`, as `FileTrust.secretFile`
    /// judges a key (a link, not a file, another user's, open to others); nil when it may be read.
    public static func of(_ facts: FileFacts, you: FileOwner) -> LeafKeyProblem? {
        guard let problem = FileTrust.secretFile(facts, you: you) else { return nil }
        switch problem {
        case .ownedBy(let owner, _):
            return .unusable("\(problem.clause), so the user \(owner.name) could know the key")
        default:
            return .unusable(problem.clause)
        }
    }

    /// The problem with `key` read from the file: one tv cannot mint leaves with (an Ed25519 key,
    /// an RSA key under 2048 bits, which clients refuse); nil for a usable one.
    public static func of(_ key: PrivateKey) -> LeafKeyProblem? {
        guard !key.canSignCertificates || key.tooWeakForClients else { return nil }
        return .unusable("holds a key tv cannot make leaves with (\(key.typeDescription))")
    }
}

/// A leaf key tv made in place of a missing or unusable `leaf-key.pem`, said once by the command
/// whose load made it (`CertificateAuthority.leafKeyRemade`).
public struct LeafKeyRemade: Sendable, Equatable {
    /// The leaf key's path (`CAFolder.leafKeyPath`).
    public let path: String
    /// What was wrong with it.
    public let problem: LeafKeyProblem
    /// Where the unusable file was moved (nil when it was missing, or could not be moved).
    public let setAside: String?
    /// The new key's type: the unusable key's own when tv makes keys of it, else ECDSA P-256.
    public let keyType: KeyType
    /// Why the new key could not be saved (a read-only folder; the unusable file could not be
    /// moved aside); nil when it was saved at `path`.
    public let notSaved: String?

    public init(path: String, problem: LeafKeyProblem, setAside: String?, keyType: KeyType, notSaved: String?) {
        self.path = path
        self.problem = problem
        self.setAside = setAside
        self.keyType = keyType
        self.notSaved = notSaved
    }

    /// What was done, in two sentences: "The leaf key P was missing; tv made a new one (ECDSA
    /// P-256). It is only the key tv's leaves carry: the root, and every device that trusts it,
    /// are unchanged." Never advice to delete the root.
    public var sentence: String {
        let what: String
        switch problem {
        case .missing: what = "The leaf key \(path) was missing"
        case .unusable(let clause): what = "The leaf key \(path) \(clause)"
        }
        let carry = "It is only the key tv's leaves carry: the root, and every device that trusts it, are unchanged"
        guard let notSaved else {
            let moved = setAside.map { "; tv moved it to \($0) and made a new one" } ?? "; tv made a new one"
            return "\(what)\(moved) (\(keyType.displayName)). \(carry)."
        }
        let folder = PathText.folder(of: path)
        switch problem {
        case .missing:
            return "\(what), and tv could not write a new one there (\(notSaved)), so this run uses a leaf key made in memory (\(keyType.displayName)). \(carry); once \(folder) can be written, tv saves one."
        case .unusable:
            return "\(what), and tv could not move it aside (\(notSaved)), so this run uses a leaf key made in memory (\(keyType.displayName)) and the file stays as it is. \(carry); move that file aside yourself, and tv saves a new one."
        }
    }

    /// Where an unusable leaf key at `path` is moved at `now` (seconds since 1970): beside it,
    /// `leaf-key.pem.unusable-20260130T120500Z`, with `-2`, `-3`, … when that name is `taken`.
    /// Never deleted: tv does not remove a file it could not read.
    public static func asidePath(for path: String, now: Int64, taken: (String) -> Bool) -> String {
        var t = time_t(now)
        var parts = tm()
        gmtime_r(&t, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        strftime(&buffer, buffer.count, "%Y%m%dT%H%M%SZ", &parts)
        let base = path + ".unusable-" + String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var candidate = base
        var n = 2
        while taken(candidate) {
            candidate = base + "-\(n)"
            n += 1
        }
        return candidate
    }
}

extension CAFolder {
    /// The leaf key to mint with: `leaf-key.pem` when it can be used; else a new key, saved there
    /// (an unusable file moved aside first, `LeafKeyRemade.asidePath`), or kept in memory for this
    /// process when it cannot be saved. With `remaking` false nothing is written: a key made in
    /// memory stands in, and nothing is said (`load(remakingLeafKey: false)`).
    /// - Returns: the key, and what was done when it is not the file's.
    func leafKeyOrRemade(remaking: Bool, you: FileOwner = .current) -> (PrivateKey, LeafKeyRemade?)? {
        var problem: LeafKeyProblem
        var keptType: KeyType?
        switch FileFacts.lstat(leafKeyPath) {
        case .missing:
            problem = .missing
        case .found(let facts):
            if let found = LeafKeyProblem.of(facts, you: you) {
                problem = found
            } else {
                switch readLeafKey() {
                case .key(let key):
                    guard let found = LeafKeyProblem.of(key) else { return (key, nil) }
                    problem = found
                    keptType = key.type
                case .problem(let found):
                    problem = found
                }
            }
            // A key refused for its file (a link, another user's, open to others) keeps its type.
            if keptType == nil, case .key(let key) = readLeafKey() { keptType = key.type }
        case .forbidden:
            problem = .unusable("cannot be read (\(String(cString: strerror(EACCES))))")
        case .failed(let code):
            problem = .unusable("cannot be read (\(String(cString: strerror(code))))")
        }
        let type = keptType ?? .ecdsaP256
        guard let key = try? PrivateKey.generate(type) else { return nil }
        guard remaking else { return (key, nil) }
        var setAside: String?
        if case .unusable = problem {
            let aside = LeafKeyRemade.asidePath(for: leafKeyPath, now: Int64(Date().timeIntervalSince1970)) { path in
                var st = stat()
                return lstat(path, &st) == 0
            }
            if rename(leafKeyPath, aside) != 0 {
                let reason = String(cString: strerror(errno))
                return (key, LeafKeyRemade(path: leafKeyPath, problem: problem, setAside: nil, keyType: type, notSaved: reason))
            }
            setAside = aside
        }
        do {
            try FileModes.writeAtomically(try key.pkcs8PEM(), to: leafKeyPath, mode: 0o600, exclusive: true)
        } catch let error as FileWriteError {
            // Another tv made one at the same moment: that one is the folder's, and it said so.
            if error.reason == FileWriteError.alreadyExists, case .key(let theirs) = readLeafKey(), LeafKeyProblem.of(theirs) == nil {
                return (theirs, nil)
            }
            return (key, LeafKeyRemade(path: leafKeyPath, problem: problem, setAside: setAside, keyType: type, notSaved: error.reason))
        } catch {
            return (key, LeafKeyRemade(path: leafKeyPath, problem: problem, setAside: setAside, keyType: type, notSaved: "\(error)"))
        }
        return (key, LeafKeyRemade(path: leafKeyPath, problem: problem, setAside: setAside, keyType: type, notSaved: nil))
    }

    /// What reading `leaf-key.pem` gave.
    private enum LeafKeyRead {
        case key(PrivateKey)
        case problem(LeafKeyProblem)
    }

    /// `leaf-key.pem` read and parsed, or why it cannot be.
    private func readLeafKey() -> LeafKeyRead {
        do {
            return .key(try readKey(leafKeyPath))
        } catch let doubt as DoubtThrow {
            return .problem(.unusable(doubt.doubt.problem))
        } catch {
            return .problem(.unusable("cannot be read"))
        }
    }
}
