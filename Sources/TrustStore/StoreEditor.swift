import COpenSSL
import Foundation
import LocalCA
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// Puts our root into, or takes it out of, the stores `tv` can edit itself: a PEM bundle, a
/// hashed folder, an NSS database. (System stores are changed by their own tools; SetupActions.)
public enum StoreEditor {
    /// Why an edit failed; the store is left as it was when the failure was before any write.
    public struct Failure: UserFacingError, Equatable {
        public let step: String
        public let reason: String
        public var message: String { "Could not \(step) (\(reason)); the store was not changed by this step — check the path and permissions, then try again." }
    }

    /// Rewrites the bundle at `path` (atomically, keeping its mode, 0644 when new) with every
    /// entry that is our root removed — plain or TRUSTED, whatever trust bits it had — and, when
    /// `add`, the plain root appended. Other entries are kept byte for byte.
    /// - Returns: how many entries for the root were removed.
    @discardableResult
    public static func rewriteBundle(_ path: String, root: Certificate, add: Bool) throws -> Int {
        var bytes: [UInt8] = []
        var mode: mode_t = 0o644
        var st = stat()
        if stat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFREG, let data = FileManager.default.contents(atPath: path) else {
                throw Failure(step: "read the bundle \(path)", reason: "it is not a readable file")
            }
            bytes = [UInt8](data)
            mode = st.st_mode & 0o777
            if add, PEMBundle.isNotABundle(bytes) {
                throw Failure(step: "read the bundle \(path)", reason: PEMBundle.notABundleReason)
            }
        } else if !add {
            return 0
        }
        let (kept, removed) = PEMBundle.removing(root, from: bytes)
        var out = kept
        if add {
            if let last = out.last, last != 0x0A { out.append(0x0A) }
            out += root.pem
        }
        if removed == 0 && !add { return 0 }
        do { try FileModes.writeAtomically(out, to: path, mode: mode) } catch let error as FileWriteError {
            throw Failure(step: "write the bundle \(path)", reason: error.reason)
        }
        return removed
    }

    /// Puts the plain root in the hashed folder `dir` as `fileName` and links `<hash>.<n>` to it
    /// (what openssl-rehash(1) would add); first removes any file there holding the root (plain
    /// or with trust settings) and the hash links that led to it.
    public static func installInFolder(_ dir: String, root: Certificate, fileName: String) throws {
        try removeFromFolder(dir, root: root)
        let path = dir + "/" + fileName
        do { try FileModes.writeAtomically(root.pem, to: path, mode: 0o644) } catch let error as FileWriteError {
            throw Failure(step: "write \(path)", reason: error.reason)
        }
        let hash = subjectHash(root)
        var n = 0
        while FileManager.default.fileExists(atPath: "\(dir)/\(hash).\(n)") || isSymlink("\(dir)/\(hash).\(n)") { n += 1 }
        if symlink(fileName, "\(dir)/\(hash).\(n)") != 0 {
            throw Failure(step: "link \(dir)/\(hash).\(n) to \(fileName)", reason: String(cString: strerror(errno)))
        }
    }

    /// Removes from `dir` every file holding the root and every link that led to one.
    /// - Returns: the names removed.
    @discardableResult
    public static func removeFromFolder(_ dir: String, root: Certificate) throws -> [String] {
        guard case .success(let names) = StoreFileReader.list(dir) else {
            throw Failure(step: "list the folder \(dir)", reason: "it is not a readable folder")
        }
        let rootDER = root.der
        var holding: Set<String> = []
        for name in names where !isSymlink(dir + "/" + name) {
            if case .read(let bytes) = StoreFileReader.read(dir + "/" + name),
               StoredCertificate.allFromPEM(bytes).contains(where: { $0.der == rootDER }) {
                holding.insert(name)
            }
        }
        var removed: [String] = []
        for name in names where isSymlink(dir + "/" + name) {
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/" + name)) ?? ""
            let resolvesToRoot: Bool
            if case .read(let bytes) = StoreFileReader.read(dir + "/" + name) {
                resolvesToRoot = StoredCertificate.allFromPEM(bytes).contains(where: { $0.der == rootDER })
            } else {
                resolvesToRoot = holding.contains(PathText.name(of: target))
            }
            if resolvesToRoot {
                if unlink(dir + "/" + name) != 0 { throw Failure(step: "remove \(dir)/\(name)", reason: String(cString: strerror(errno))) }
                removed.append(name)
            }
        }
        for name in holding.sorted() {
            if unlink(dir + "/" + name) != 0 { throw Failure(step: "remove \(dir)/\(name)", reason: String(cString: strerror(errno))) }
            removed.append(name)
        }
        return removed
    }

    /// Adds the root to the NSS database `dir` trusted for TLS servers (`C,,`), or, when it is
    /// already there under another nickname, sets that entry's trust to `C,,` (certutil(1) -A/-M).
    /// - Parameter rootPath: the root certificate's PEM file (certutil reads it with `-a -i`).
    public static func trustInNSS(_ dir: String, root: Certificate, rootPath: String, nickname: String,
                                  environment: [String: String]) throws {
        let facts = NSSTrustCheck(directory: dir, environment: environment).ask(root: root)
        var arguments: [String]
        switch facts.finding {
        case .unreadable(let why): throw Failure(step: "read the NSS database \(dir)", reason: why)
        case .nssTrusted: return
        case .nssNotTrustedForTLS(let existing, _): arguments = ["-M", "-d", "sql:" + dir, "-n", existing, "-t", "C,,"]
        default: arguments = ["-A", "-d", "sql:" + dir, "-n", nickname, "-t", "C,,", "-a", "-i", rootPath]
        }
        try runCertutil(arguments, step: "add the root to \(dir)", environment: environment)
    }

    /// Makes an empty NSS database in the folder `dir`, with no password (`certutil -N
    /// --empty-password`, as Chromium makes `~/.pki/nssdb`); a missing folder is made first,
    /// with its missing parents, 0700 (as Chromium makes it), once the user agreed to the step
    /// that names it (`TrustInstaller.Action.nssCreate`).
    public static func createNSSDatabase(_ dir: String, environment: [String: String]) throws {
        if NSSDatabase.state(dir) == .noFolder {
            do { try FileModes.makeDirectory(dir, mode: 0o700) } catch let error as UserFacingError {
                throw Failure(step: "make the folder \(dir)", reason: error.message)
            }
        }
        try runCertutil(["-N", "-d", "sql:" + dir, "--empty-password"], step: "create an NSS database in \(dir)", environment: environment)
    }

    /// Deletes every entry of the NSS database `dir` that is our root (`certutil -D`).
    /// - Returns: the nicknames deleted.
    @discardableResult
    public static func removeFromNSS(_ dir: String, root: Certificate, environment: [String: String]) throws -> [String] {
        var deleted: [String] = []
        for _ in 0..<16 {
            let facts = NSSTrustCheck(directory: dir, environment: environment).ask(root: root)
            let nickname: String
            switch facts.finding {
            case .unreadable(let why): throw Failure(step: "read the NSS database \(dir)", reason: why)
            case .nssTrusted(let n), .nssNotTrustedForTLS(let n, _): nickname = n
            default: return deleted
            }
            try runCertutil(["-D", "-d", "sql:" + dir, "-n", nickname], step: "delete '\(nickname)' from \(dir)", environment: environment)
            deleted.append(nickname)
        }
        return deleted
    }

    /// The OpenSSL subject-name hash of `root` as 8 hex digits (the `<hash>` of `<hash>.<n>`).
    public static func subjectHash(_ root: Certificate) -> String {
        String(format: "%08lx", X509_subject_name_hash(root.handle))
    }

    private static func runCertutil(_ arguments: [String], step: String, environment: [String: String]) throws {
        do {
            let result = try BoundedProcess.run("certutil", arguments, environment: environment, timeout: 20)
            guard result.status == 0 else { throw Failure(step: step, reason: "certutil: \(result.firstErrorLine)") }
        } catch let failure as BoundedProcess.Failure {
            throw Failure(step: step, reason: failure.reason)
        }
    }

    private static func isSymlink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
    }
}

/// A PEM bundle's text split into its blocks, to drop the ones that are a given certificate.
public enum PEMBundle {
    /// Whether `bytes` hold at least one PEM certificate (`CERTIFICATE` or `TRUSTED CERTIFICATE`)
    /// OpenSSL reads.
    public static func holdsCertificate(_ bytes: [UInt8]) -> Bool {
        !StoredCertificate.allFromPEM(bytes).isEmpty
    }

    /// Whether `bytes` cannot be a bundle: no certificate, and lines that are not comments. Adding
    /// a root to such a file would change some other file (a trust.store of file:/etc/shadow was
    /// taken: a trial).
    public static func isNotABundle(_ bytes: [UInt8]) -> Bool { !holdsCertificate(bytes) && !isBlankOrComments(bytes) }

    /// Why such a file is refused, inside a sentence.
    public static let notABundleReason = "it holds no PEM certificate, so it is not a certificate bundle; name a bundle, or a file that does not exist yet"

    /// Whether every line of `bytes` is blank or a `#` comment (a bundle with nothing in it yet).
    public static func isBlankOrComments(_ bytes: [UInt8]) -> Bool {
        bytes.split(separator: 0x0A).allSatisfy { line in
            let text = line.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
            return text.isEmpty || text.first == UInt8(ascii: "#")
        }
    }

    /// `bytes` without the PEM blocks (`CERTIFICATE` or `TRUSTED CERTIFICATE`) that are `root`;
    /// everything else, including comments between blocks, is kept byte for byte.
    /// - Returns: the kept bytes and how many blocks were removed.
    public static func removing(_ root: Certificate, from bytes: [UInt8]) -> ([UInt8], Int) {
        let rootDER = root.der
        let text = String(decoding: bytes, as: UTF8.self)
        var out = ""
        var removed = 0
        var rest = Substring(text)
        while let begin = rest.range(of: "-----BEGIN ") {
            guard let endMarker = rest.range(of: "-----END ", range: begin.upperBound..<rest.endIndex),
                  let close = rest.range(of: "-----", range: endMarker.upperBound..<rest.endIndex) else { break }
            var blockEnd = close.upperBound
            if blockEnd < rest.endIndex, rest[blockEnd] == "\n" { blockEnd = rest.index(after: blockEnd) }
            let block = rest[begin.lowerBound..<blockEnd]
            out += rest[rest.startIndex..<begin.lowerBound]
            if StoredCertificate.allFromPEM(Array(block.utf8)).contains(where: { $0.der == rootDER }) {
                removed += 1
            } else {
                out += block
            }
            rest = rest[blockEnd...]
        }
        out += rest
        return (Array(out.utf8), removed)
    }
}
