import TVHome

/// Why a CA operation was refused or failed; each case says what to do next.
public enum CAError: UserFacingError, Equatable {
    /// `tv ca create` found a working CA already.
    case alreadyExists(directory: String)
    /// `tv ca import` found a working CA already (remaking would not import anything: the way is
    /// to remove it first).
    case alreadyExistsForImport(directory: String)
    /// Another tv made a CA in the folder while this one was making its own: that one is complete
    /// and in use, and this one wrote nothing.
    case madeAtTheSameMoment(directory: String)
    /// The CA folder holds something that cannot be read or trusted: nothing is generated over it.
    case inDoubt(CADoubt)
    /// No CA exists yet.
    case absent(directory: String)
    case unknownKeyType(String)
    case invalidName(String, reason: String)
    case noNames
    /// Names (host names or addresses) the root's name constraints do not permit
    /// (RFC 5280 §4.2.1.10): clients refuse a certificate carrying any of them.
    case outsideNameConstraints([String])
    /// `tv ca import` was given a certificate that cannot be a root for us.
    case importRefused(file: String, reason: String)
    /// `tv run --ca FILE` refused the file (`reason`: a clause); nothing is kept of it.
    case sessionCARefused(file: String, reason: String)
    /// `tv ca import` was given a root OpenSSL will not take as its own trust anchor for TLS
    /// servers (`openssl verify -CAfile ROOT ROOT` fails), e.g. its authority key identifier is
    /// not its subject key identifier.
    case rootCannotAnchor(file: String, RootAnchorFailure)
    case unreadableFile(path: String, reason: String)
    case passphraseRequired
    /// `--passphrase-file` names a file whose first line is empty.
    case passphraseFileEmpty(path: String)
    /// The passphrase that would protect an exported root key is shorter than
    /// `CAExport.minimumKeyPassphrase` characters.
    case passphraseTooShort(path: String, characters: Int)
    case consentRequired(what: String)
    /// The root cannot sign now (`CertificateAuthority.rootProblem`).
    case rootNotValid(CARootProblem)
    /// `tv ca issue` would replace a file that is there (a key a server may be using).
    case wouldOverwrite(path: String)

    public var message: String {
        switch self {
        case .alreadyExists(let dir):
            return "A CA already exists in \(dir); remaking it is a separate action (`tv ca remake`), because every device that trusts the current root would stop trusting tv."
        case .alreadyExistsForImport(let dir):
            return "A CA already exists in \(dir); to import another, remove this one first (`tv ca remove`: every device that trusts its root stops trusting tv), then import again."
        case .madeAtTheSameMoment(let dir):
            return "Another tv made the CA in \(dir) at the same moment, and it is ready (`tv ca status` shows it); this command made none of its own."
        case .inDoubt(let doubt):
            return doubt.message
        case .absent(let dir):
            return "There is no CA in \(dir) yet; create one with `tv ca create` (or bring your own with `tv ca import`)."
        case .unknownKeyType(let text):
            return "'\(text)' is not a key type tv makes; use one of \(KeyType.allCases.map(\.name).joined(separator: ", "))."
        case let .invalidName(name, reason):
            return "'\(name)' cannot be a certificate name because \(reason)."
        case .noNames:
            return "A certificate needs at least one host name or IP address; name one."
        case .outsideNameConstraints(let names):
            let list = names.map { "'\($0)'" }.joined(separator: ", ")
            return "The root's name constraints do not permit \(list), so clients would refuse a certificate naming \(names.count == 1 ? "it" : "them"); issue it for names the root permits (its nameConstraints extension lists them), or with a root that has no name constraints."
        case let .importRefused(file, reason):
            return "\(file) cannot be imported as the CA: \(reason)."
        case let .sessionCARefused(file, reason):
            return "\(file) cannot be this session's CA (--ca): \(reason)."
        case let .rootCannotAnchor(file, failure):
            return "\(file) cannot be imported as the CA: OpenSSL does not accept it as its own trust anchor for TLS servers (error \(failure.code): \(failure.text)); reissue it \(failure.remedy), then import it again."
        case let .unreadableFile(path, reason):
            return "Could not read \(path) (\(reason)); check the path and its permissions."
        case .passphraseRequired:
            return "Exporting the root key needs a passphrase to protect it; give one with --passphrase-file FILE."
        case .passphraseFileEmpty(let path):
            return "The first line of \(path) is empty; put the passphrase on it (the PKCS#12 file is protected with that line)."
        case let .passphraseTooShort(path, characters):
            return "The passphrase in \(path) is \(characters) character\(characters == 1 ? "" : "s") long, and it is all that protects the exported root key (whoever guesses it can make certificates every device that trusts the root accepts); use at least \(CAExport.minimumKeyPassphrase) characters."
        case .consentRequired(let what):
            return "\(what) Add --yes to confirm."
        case .rootNotValid(let problem):
            return "The CA cannot sign: \(problem.clause); \(problem.remedy)."
        case .wouldOverwrite(let path):
            return "\(path) is already there (a server may be using it); remove it first, or issue into another folder with --out-dir."
        }
    }

    /// A key type typed wrong is a command line that cannot run as typed (2); the rest 1.
    public var exitCode: Int32 {
        switch self {
        case .unknownKeyType: return 2
        default: return 1
        }
    }
}

/// Why a root cannot sign at some moment: every client refuses a leaf outside its issuer's
/// validity (RFC 5280 §6.1.3 (a)(2)).
public enum CARootProblem: Sendable, Equatable {
    /// Its notAfter (seconds since 1970) has passed.
    case expired(notAfter: Int64)
    /// Its notBefore (seconds since 1970) has not come yet.
    case notYetValid(notBefore: Int64)

    /// The problem of a root valid from `notBefore` until `notAfter` at `now` (all seconds since
    /// 1970); nil inside that span.
    public static func at(_ now: Int64, notBefore: Int64, notAfter: Int64) -> CARootProblem? {
        if now >= notAfter { return .expired(notAfter: notAfter) }
        if now < notBefore { return .notYetValid(notBefore: notBefore) }
        return nil
    }

    /// What is wrong, as a clause ("its root expired on …").
    public var clause: String {
        switch self {
        case .expired(let end): return "its root expired on \(Timestamp.utc(end))"
        case .notYetValid(let start): return "its root is not valid until \(Timestamp.utc(start))"
        }
    }

    /// What to do, as a clause.
    public var remedy: String {
        switch self {
        case .expired: return "make a new one with `tv ca remake` (devices that trusted the old root must be given the new one)"
        case .notYetValid: return "check this machine's clock (`date`)"
        }
    }
}

/// A CA folder that exists but cannot be used: which file, and what is wrong with it.
///
/// "Doubt closes the door" (seed 002): an unreadable CA is not "no CA", because generating over
/// it would replace a root that devices may already trust.
public struct CADoubt: Sendable, Equatable {
    /// The file or folder at fault.
    public let path: String
    /// What is wrong, as a clause ("cannot be parsed as a PEM private key").
    public let problem: String
    /// Set when the file could not be opened for want of a file descriptor (EMFILE, ENFILE):
    /// nothing is wrong with the CA, and `message` says that instead of a doubt.
    public let shortage: TooManyOpenFiles?

    public init(path: String, problem: String, shortage: TooManyOpenFiles? = nil) {
        self.path = path
        self.problem = problem
        self.shortage = shortage
    }

    public var message: String {
        if let shortage { return shortage.message }
        return "The CA is in doubt: \(path) \(problem); tv will neither sign with it nor generate a new CA over it — repair or restore that file, or, to start over on purpose, \(CADoubt.startOver(doubtPath: path))."
    }

    /// The files a CA is made of, which starting over deletes; `profile-identity.json` is kept,
    /// so the next `.mobileconfig` replaces the installed iOS profile instead of adding one (CA/README.md).
    public static let replaceableFiles = ["root.pem", "root-key.pem", "leaf-key.pem"]

    /// How to start over past a doubt about `doubtPath`, as a clause (CA/README.md, "Doubt closes
    /// the door"): delete the three CA files from the ca folder and keep `profile-identity.json`;
    /// when the doubt is the folder itself (a file in its place, or unreadable), move it aside.
    public static func startOver(doubtPath: String) -> String {
        let known = replaceableFiles + ["profile-identity.json"]
        guard let slash = doubtPath.lastIndex(of: "/"), known.contains(String(doubtPath[doubtPath.index(after: slash)...])) else {
            return "move \(doubtPath) aside"
        }
        let directory = String(doubtPath[..<slash])
        // The leaf key carries no trust: never the root's files for it (`LeafKeyRemade`).
        if doubtPath[doubtPath.index(after: slash)...] == "leaf-key.pem" {
            return "move leaf-key.pem aside and keep root.pem and root-key.pem (tv makes a new leaf key; it carries no trust)"
        }
        return "delete root.pem, root-key.pem and leaf-key.pem from \(directory) and keep profile-identity.json"
    }
}
