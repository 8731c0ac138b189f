import COpenSSL
import CTVShims
import Foundation
import LocalCA

/// Asks an OpenSSL store (bundle files plus hashed folders) the two questions.
///
/// Installed: every certificate in every file is compared by DER with our root (a hashed folder
/// is read file by file, not through its hash links, so a root that is there but not hashed is
/// still found). Usable: a fresh leaf is verified with `X509_verify_cert` under
/// `X509_PURPOSE_SSL_SERVER` / `X509_TRUST_SSL_SERVER` and a host check
/// (`X509_VERIFY_PARAM_set1_host`), as a TLS client would (openssl-verification-options(1)).
struct OpenSSLTrustCheck {
    /// A bundle file to read and whether it must exist (an explicit store) or may be missing
    /// (OpenSSL's compiled-in default).
    struct Source {
        let path: String
        let required: Bool
    }

    let store: TrustStoreSpec
    let files: [Source]
    let dirs: [Source]

    /// The host name the test leaf is minted for and checked against.
    static let checkHost = "trust-check.tunnelvision.invalid"

    func ask(root: Certificate, mint: () throws -> Certificate) -> TrustFacts {
        let rootDER = root.der
        var anchors: [StoredCertificate] = []
        var problems: [String] = []
        var foundIn: [String] = []

        for file in files {
            switch StoreFileReader.read(file.path) {
            case .missing:
                if file.required { return unknown("\(file.path) does not exist") }
            case .unreadable(let why):
                return unknown(why)
            case .read(let bytes):
                let certs = StoredCertificate.allFromPEM(bytes)
                if certs.isEmpty && bytes.contains(where: { !Set<UInt8>([0x20, 0x09, 0x0A, 0x0D]).contains($0) }) {
                    return unknown("\(file.path) holds no PEM certificate")
                }
                if certs.contains(where: { $0.der == rootDER }) { foundIn.append(file.path) }
                anchors += certs
            }
        }
        var dirsToLoad: [String] = []
        for dir in dirs {
            var isDir: ObjCBool = false
            if !dir.required && !FileManager.default.fileExists(atPath: dir.path, isDirectory: &isDir) { continue }
            switch StoreFileReader.list(dir.path) {
            case .failure(let problem): return unknown(problem.sentence)
            case .success(let names):
                dirsToLoad.append(dir.path)
                for name in names {
                    let path = dir.path + "/" + name
                    var st = stat()
                    if stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { continue }
                    switch StoreFileReader.read(path) {
                    case .missing: continue  // a dangling link: not an anchor
                    case .unreadable(let why): problems.append(why)
                    case .read(let bytes):
                        if StoredCertificate.allFromPEM(bytes).contains(where: { $0.der == rootDER }) {
                            foundIn.append(path)
                        }
                    }
                }
            }
        }

        let installed: TrustAnswer
        if !foundIn.isEmpty { installed = .yes }
        else if let first = problems.first { installed = .unknown(because: "\(first) (and \(problems.count - 1) more), so it is not known whether the root is there") }
        else { installed = .no }

        let leaf: Certificate
        do { leaf = try mint() } catch CAError.rootNotValid(let problem) {
            // What OpenSSL says of any leaf under a root outside its validity (the root fails
            // first): the store may hold the root, but it is not usable for TLS now.
            let code: Int32
            switch problem {
            case .expired: code = X509_V_ERR_CERT_HAS_EXPIRED
            case .notYetValid: code = X509_V_ERR_CERT_NOT_YET_VALID
            }
            return TrustFacts(store: store, installed: installed, usable: .no,
                              finding: .verifyFailed(code: code, text: String(cString: X509_verify_cert_error_string(Int(code)))))
        } catch {
            return TrustFacts(store: store, installed: installed,
                              usable: .unknown(because: "a test leaf could not be made (\((error as? OpenSSLError)?.message ?? "\(error)"))"),
                              finding: .unreadable("no test leaf"))
        }
        let (code, text) = verify(leaf: leaf, anchors: anchors, dirs: dirsToLoad)
        if code == X509_V_OK {
            return TrustFacts(store: store, installed: installed, usable: .yes, finding: .verified)
        }
        if code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY || code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT {
            if let failure = root.selfIssueFailure {
                // Not a missing link or a missing file: the root itself cannot be an anchor.
                return TrustFacts(store: store, installed: installed, usable: .no,
                                  finding: .rootCannotAnchor(code: failure.code, text: failure.text))
            }
            if let first = problems.first {
                return TrustFacts(store: store, installed: installed,
                                  usable: .unknown(because: "\(first), and the leaf found no anchor among the files that could be read"),
                                  finding: .unreadable(first))
            }
            if installed == .yes {
                // A bundle anchor would have been found; so the root sits in a folder file that no
                // `<hash>.<n>` entry leads to (openssl-rehash(1) was not run).
                let hash = String(format: "%08lx", X509_subject_name_hash(root.handle))
                return TrustFacts(store: store, installed: installed, usable: .no, finding: .notHashed(hash: hash))
            }
            return TrustFacts(store: store, installed: installed, usable: .no, finding: .issuerNotFound)
        }
        let finding: TrustFinding
        switch code {
        case X509_V_ERR_CERT_REJECTED: finding = .rejectedForTLS
        case X509_V_ERR_CERT_UNTRUSTED: finding = .untrustedForTLS
        default: finding = .verifyFailed(code: code, text: text)
        }
        return TrustFacts(store: store, installed: installed, usable: .no, finding: finding)
    }

    private func unknown(_ sentence: String) -> TrustFacts {
        TrustFacts(store: store, installed: .unknown(because: sentence), usable: .unknown(because: sentence),
                   finding: .unreadable(sentence))
    }

    /// Verifies `leaf` against a store made of `anchors` and the hashed folders `dirs`;
    /// returns OpenSSL's verify error code (0 = X509_V_OK) and its text.
    private func verify(leaf: Certificate, anchors: [StoredCertificate], dirs: [String]) -> (Int32, String) {
        guard let x509Store = X509_STORE_new() else { return (-1, "out of memory") }
        defer { X509_STORE_free(x509Store) }
        for anchor in anchors { X509_STORE_add_cert(x509Store, anchor.handle) }
        for dir in dirs { X509_STORE_load_path(x509Store, dir) }
        ERR_clear_error()
        guard let ctx = X509_STORE_CTX_new() else { return (-1, "out of memory") }
        defer { X509_STORE_CTX_free(ctx) }
        guard X509_STORE_CTX_init(ctx, x509Store, leaf.handle, nil) == 1 else { return (-1, "could not start verification") }
        X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER)
        X509_STORE_CTX_set_trust(ctx, X509_TRUST_SSL_SERVER)
        X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), OpenSSLTrustCheck.checkHost, 0)
        // As a TLS client at Debian's default security level 2 (112 bits: RSA ≥ 2048, EC ≥ 224)
        // checks the chain: without it a root curl and Python refuse ("CA certificate key too
        // weak") read as usable (a trial's imported RSA-1024 root).
        X509_VERIFY_PARAM_set_auth_level(X509_STORE_CTX_get0_param(ctx), 2)
        let ok = X509_verify_cert(ctx)
        let code = X509_STORE_CTX_get_error(ctx)
        ERR_clear_error()
        if ok == 1 { return (X509_V_OK, "ok") }
        return (code, String(cString: X509_verify_cert_error_string(Int(code))))
    }
}
