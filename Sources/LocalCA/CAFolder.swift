import Foundation
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// What is in `$TV_HOME/ca`, read now: a usable CA, nothing, or something in doubt.
public enum CAState: Sendable {
    case absent
    case present(CertificateAuthority)
    case doubt(CADoubt)
}

/// The CA's files in `$TV_HOME/ca` (folder 0700) and the rules for reading and writing them.
///
/// - `root.pem`: the root certificate (public, 0644).
/// - `root-key.pem`: the root's private key, PKCS#8 PEM, 0600.
/// - `leaf-key.pem`: the key every minted leaf of its type carries, PKCS#8 PEM, 0600. It carries
///   no trust, so one missing or unusable is made again (`LeafKeyRemade`), never a doubt. A client
///   that cannot use its type gets a leaf with a key of the other algorithm (RSA 2048 beside an
///   ECDSA key, ECDSA P-256 beside an RSA key: `LeafKeyPlan`), made in memory per process and
///   never written (`CertificateAuthority.leafKey(_:)`).
/// - `profile-identity.json`: the `.mobileconfig` identity, kept across remakes (0644).
///
/// Every file must be the user's (`FileTrust.owner`: the effective user's, so root's for
/// `sudo tv`), as the folder must (`TVHome.checkTrust`).
public struct CAFolder: Sendable {
    public let directory: String

    public init(home: TVHome) { directory = home.caDirectory }
    public init(directory: String) { self.directory = directory }

    public var rootPath: String { directory + "/root.pem" }
    public var rootKeyPath: String { directory + "/root-key.pem" }
    public var leafKeyPath: String { directory + "/leaf-key.pem" }
    public var identityPath: String { directory + "/profile-identity.json" }

    /// Reads the folder. Never answers "absent" for something it cannot read: a folder where a
    /// file should be, a root file that cannot be read, parsed or trusted (another user's, a key
    /// others can read), a key that does not match its certificate, or some CA files without the
    /// others are all `.doubt`. The leaf key is the exception: one missing or unusable is made
    /// again when `remakingLeafKey` (saved, and said once through `CertificateAuthority.leafKeyRemade`);
    /// without it a key made in memory stands in, and nothing is written or said (for a command
    /// that only needs the root, or is about to replace the CA).
    ///
    /// The folder itself is tightened to 0700 when group or others may read or enter it
    /// (`FileModes.tightenFolder`), as the data folder is; one they may write into is refused
    /// before this (`TVHome.checkTrust`).
    public func load(remakingLeafKey: Bool = true) -> CAState {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDir) else { return .absent }
        guard isDir.boolValue else { return .doubt(CADoubt(path: directory, problem: "is a file, not the CA folder")) }
        guard access(directory, R_OK | X_OK) == 0 else {
            return .doubt(CADoubt(path: directory, problem: "cannot be read (\(String(cString: strerror(errno))))"))
        }
        FileModes.tightenFolder(directory, to: 0o700)
        let files = [rootPath, rootKeyPath, leafKeyPath]
        let present = files.filter { entryExists($0) }
        if present.isEmpty { return .absent }
        if let missing = [rootPath, rootKeyPath].first(where: { !entryExists($0) }) {
            // Named, links with where they lead: a dangling link planted at a key path read only
            // "root.pem is missing while other CA files are there" (a trial).
            let there = present.map { path -> String in
                let name = PathText.name(of: path)
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) else { return name }
                return "\(name) (a symbolic link to \(target)\(FileManager.default.fileExists(atPath: path) ? "" : ", which does not exist"))"
            }
            return .doubt(CADoubt(path: missing, problem: "is missing while \(there.joined(separator: " and ")) \(there.count == 1 ? "is" : "are") there"))
        }
        do {
            let root = try Certificate.fromPEM(try readFile(rootPath))
            let rootKey = try readKey(rootKeyPath)
            guard root.matches(rootKey) else {
                return .doubt(CADoubt(path: rootKeyPath, problem: "is not the key of \(rootPath)"))
            }
            guard root.isCA else {
                return .doubt(CADoubt(path: rootPath, problem: "is not a CA certificate (basicConstraints CA:TRUE is missing)"))
            }
            // Another user's root file could have been replaced by them (a trial's root key given
            // to nobody was used, while a ca/ folder of nobody's was refused); a key others could
            // read may have been copied: whoever holds the root's key makes certificates every
            // device that trusts the root accepts (a trial's 0644 key was used without a word).
            if case .found(let facts) = FileFacts.stat(rootPath), let problem = FileTrust.owner(facts, you: .current) {
                return .doubt(CADoubt(path: rootPath, problem: problem.caClause))
            }
            if case .found(let facts) = FileFacts.lstat(rootKeyPath), let problem = Self.exposure(rootKeyPath, facts) {
                return .doubt(CADoubt(path: rootKeyPath, problem: problem))
            }
            guard let leaf = leafKeyOrRemade(remaking: remakingLeafKey) else {
                return .doubt(CADoubt(path: leafKeyPath, problem: "is missing or unusable, and OpenSSL could not make a new leaf key"))
            }
            return .present(CertificateAuthority(root: root, rootKey: rootKey, leafKey: leaf.0, leafKeyRemade: leaf.1))
        } catch let doubt as DoubtThrow {
            return .doubt(doubt.doubt)
        } catch {
            return .doubt(CADoubt(path: rootPath, problem: "cannot be parsed as a PEM certificate"))
        }
    }

    /// Makes a new CA: root key + root certificate + leaf key, written exclusively (nothing existing
    /// is ever overwritten), keys 0600, folder 0700; keeps an existing profile identity.
    /// - Parameters:
    ///   - rootKeyType: the root's key type (default ECDSA P-256).
    ///   - leafKeyType: the shared leaf key's type (default ECDSA P-256).
    ///   - now: seconds since 1970-01-01 UTC.
    /// - Throws: `CAError.alreadyExists`, `CAError.inDoubt`, `CAError.madeAtTheSameMoment` (another
    ///   tv made one while this one did), `TVHomeError`, `FileWriteError`, `OpenSSLError`.
    @discardableResult
    public func create(rootKeyType: KeyType = .ecdsaP256, leafKeyType: KeyType = .ecdsaP256, now: Int64) throws -> CertificateAuthority {
        try refuseUnlessAbsent()
        let rootKey = try PrivateKey.generate(rootKeyType)
        let root = try CertificateAuthority.makeRoot(key: rootKey, now: now)
        let leafKey = try PrivateKey.generate(leafKeyType)
        try write(root: root, rootKey: rootKey, leafKey: leafKey)
        return CertificateAuthority(root: root, rootKey: rootKey, leafKey: leafKey)
    }

    /// Brings in an existing CA (a lab or corporate root, or another tool's): checks that the
    /// certificate is a CA (basicConstraints CA:TRUE; keyCertSign when keyUsage is present), that
    /// the key matches, that it is valid at `now`, that it has a subjectKeyIdentifier (leaves
    /// name it), and that OpenSSL takes it as its own trust
    /// anchor for TLS servers (`CertificateAuthority.anchorFailure`); makes a fresh leaf key.
    /// - Throws: `CAError.alreadyExistsForImport`; `CAError.importRefused` naming the file and the reason;
    ///   `CAError.rootCannotAnchor` with OpenSSL's verify error; as `create` otherwise.
    @discardableResult
    public func importCA(certificatePath: String, keyPath: String, leafKeyType: KeyType = .ecdsaP256, now: Int64) throws -> CertificateAuthority {
        try refuseUnlessAbsent(importing: true)
        let certBytes = try readUserFile(certificatePath)
        let keyBytes = try readUserFile(keyPath)
        let root: Certificate
        if let pem = try? Certificate.fromPEM(certBytes) { root = pem }
        else if let der = try? Certificate.fromDER(certBytes) { root = der }
        else { throw CAError.importRefused(file: certificatePath, reason: "it is not a PEM or DER certificate") }
        guard let rootKey = try? PrivateKey.fromPEM(keyBytes) else {
            // An encrypted key and an unreadable one are two different fixes (a cut key was told to
            // be decrypted: a trial).
            let encrypted = String(decoding: keyBytes.prefix(4096), as: UTF8.self).contains("ENCRYPTED")
            throw CAError.importRefused(file: keyPath, reason: encrypted
                ? "it is an encrypted private key; decrypt it first (`openssl pkey -in KEY -out plain.key`)"
                : "it holds no readable PEM private key (cut short, or not a key)")
        }
        guard root.isCA else {
            throw CAError.importRefused(file: certificatePath, reason: "it is not a CA (basicConstraints CA:TRUE is missing)")
        }
        guard let ku = root.keyUsage else {
            // OpenSSL's strict verification (X509_V_FLAG_X509_STRICT, Python 3.13's default) refuses
            // every leaf under a CA without keyUsage (error 92, "CA cert does not include key usage
            // extension"): a trial's imported lab root was taken, and its leaves then failed there.
            throw CAError.importRefused(file: certificatePath, reason: "it has no keyUsage extension, and strict verifiers (OpenSSL's -x509_strict, Python 3.13's default) refuse every certificate under such a CA (reissue it with keyUsage=critical,keyCertSign,cRLSign)")
        }
        if ku & UInt32(0x0004) == 0 {  // KU_KEY_CERT_SIGN
            throw CAError.importRefused(file: certificatePath, reason: "its keyUsage does not allow keyCertSign")
        }
        guard root.matches(rootKey) else {
            throw CAError.importRefused(file: keyPath, reason: "it is not the key of \(certificatePath)")
        }
        guard rootKey.canSignCertificates else {
            throw CAError.importRefused(file: keyPath, reason: Self.unsignableKey(rootKey))
        }
        guard !rootKey.tooWeakForClients else {
            throw CAError.importRefused(file: keyPath, reason: Self.weakKey(rootKey))
        }
        guard root.notBefore <= now, now < root.notAfter else {
            throw CAError.importRefused(file: certificatePath, reason: "it is not valid now (valid \(Timestamp.utc(root.notBefore)) to \(Timestamp.utc(root.notAfter)))")
        }
        guard root.subjectKeyIdentifier != nil else {
            // Every leaf names the root's SKI as its authorityKeyIdentifier; without one no leaf can be made.
            throw CAError.importRefused(file: certificatePath, reason: "it has no subjectKeyIdentifier, which every leaf tv makes names as its authorityKeyIdentifier (reissue it with subjectKeyIdentifier=hash)")
        }
        let leafKey = try PrivateKey.generate(leafKeyType)
        let authority = CertificateAuthority(root: root, rootKey: rootKey, leafKey: leafKey)
        if let failure = try authority.anchorFailure(now: now) {
            throw CAError.rootCannotAnchor(file: certificatePath, failure)
        }
        try write(root: root, rootKey: rootKey, leafKey: leafKey)
        return authority
    }

    /// Deletes the root certificate and both keys (the profile identity stays, so a later CA's
    /// `.mobileconfig` replaces the removed one on devices).
    /// - Throws: `FileWriteError` when a file cannot be removed.
    public func remove() throws {
        for path in [rootKeyPath, leafKeyPath, rootPath] where entryExists(path) {
            if unlink(path) != 0 {
                throw FileWriteError(path: path, reason: String(cString: strerror(errno)))
            }
        }
    }

    /// Why a CA key tv cannot sign with is refused, as a clause (a trial's Ed25519 CA failed
    /// later as "OpenSSL failed while signing … invalid digest").
    static func unsignableKey(_ key: PrivateKey) -> String {
        "its key is \(key.typeDescription), which tv does not sign certificates with; use an ECDSA (P-256, P-384) or RSA CA"
    }

    /// Why a root key too weak for clients (`PrivateKey.tooWeakForClients`) is refused.
    static func weakKey(_ key: PrivateKey) -> String {
        "its key is \(key.typeDescription), too weak for today's clients (OpenSSL's default security level refuses every certificate under it: \"CA certificate key too weak\"); use a CA with an RSA key of at least 2048 bits or an ECDSA P-256 or P-384 key"
    }

    /// Why the root key file with `facts` at `path` cannot be trusted (`FileTrust.secretFile`:
    /// a link, not a file, another user's, or one others may read or write), as a clause with the
    /// repair; nil when it is `you`'s alone.
    static func exposure(_ path: String, _ facts: FileFacts, you: FileOwner = .current) -> String? {
        guard let problem = FileTrust.secretFile(facts, you: you) else { return nil }
        switch problem {
        case .symbolicLink:
            // A link's own mode is 0777 and chmod changes its target's: the repair is the file
            // itself in place of the link (a trial's chmod changed nothing).
            return "is a symbolic link, and tv keeps its keys as files of its own (0600); put the key file itself there (`cp --remove-destination \"$(readlink -f \(path))\" \(path)`, then `chmod 600 \(path)`)"
        case .openToOthers(let mode), .writableByOthers(let mode):
            return "can be read or written by other users (mode \(FileTrust.octal(mode))); if nobody else could have copied it, `chmod 600 \(path)`"
        case .ownedBy, .notRegularFile:
            return problem.caClause
        }
    }

    func entryExists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    struct DoubtThrow: Error { let doubt: CADoubt }

    private func readFile(_ path: String) throws -> [UInt8] {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
            throw DoubtThrow(doubt: CADoubt(path: path, problem: "is a folder where a file should be"))
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let err = errno
            throw DoubtThrow(doubt: CADoubt(path: path, problem: "cannot be read (\(String(cString: strerror(err))))",
                                            shortage: TooManyOpenFiles(errno: err, opening: "the CA file \(path)")))
        }
        defer { close(fd) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw DoubtThrow(doubt: CADoubt(path: path, problem: "cannot be read (\(String(cString: strerror(errno))))"))
            }
            if n == 0 { break }
            out += buffer[0..<n]
        }
        return out
    }

    func readKey(_ path: String) throws -> PrivateKey {
        let bytes = try readFile(path)
        do { return try PrivateKey.fromPEM(bytes) } catch {
            throw DoubtThrow(doubt: CADoubt(path: path, problem: "cannot be parsed as a PEM private key"))
        }
    }
}

/// Reads a file the user named on the command line.
/// - Throws: `CAError.unreadableFile`; `TooManyOpenFiles` when no descriptor was left to open it.
public func readUserFile(_ path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        // FileManager says nothing of why: open it to learn whether a descriptor was lacking.
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd >= 0 { close(fd) } else if let shortage = TooManyOpenFiles(errno: errno, opening: "the file \(path)") { throw shortage }
        let reason = FileManager.default.fileExists(atPath: path) ? "permission denied or not a file" : "no such file"
        throw CAError.unreadableFile(path: path, reason: reason)
    }
    return [UInt8](data)
}

/// UTC time text for people: `2026-11-30 03:05:00 UTC`.
public enum Timestamp {
    public static func utc(_ seconds: Int64) -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        var buf = [CChar](repeating: 0, count: 64)
        strftime(&buf, buf.count, "%Y-%m-%d %H:%M:%S UTC", &parts)
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// RFC 3339 / ISO 8601 UTC: `2026-11-30T03:05:00Z`.
    public static func iso8601(_ seconds: Int64) -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        var buf = [CChar](repeating: 0, count: 64)
        strftime(&buf, buf.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
