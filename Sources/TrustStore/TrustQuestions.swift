import COpenSSL
import Foundation
import LocalCA

/// Asks a trust store, now, the two questions about our root: installed? usable for TLS?
///
/// Nothing is cached: every call reads the store again, because trust is granted and withdrawn
/// outside `tv` (seed 002: "asked in the present tense, never cached").
public enum TrustQuestions {
    /// Asks `store` about `ca`'s root.
    /// - Parameters:
    ///   - now: seconds since 1970-01-01 UTC, for minting the test leaf.
    ///   - environment: `SSL_CERT_FILE`/`SSL_CERT_DIR` for `system`, `PATH` for `certutil`.
    /// - Returns: both answers; `.unknown(because:)` whenever the store cannot be read.
    public static func ask(_ store: TrustStoreSpec, about ca: CertificateAuthority, now: Int64,
                           environment: [String: String]) -> TrustFacts {
        switch store {
        case .nss(let dir):
            return NSSTrustCheck(directory: dir, environment: environment).ask(root: ca.root)
        case .system, .file, .dir:
            let check = opensslCheck(store, environment: environment)
            return check.ask(root: ca.root) {
                try ca.mintLeaf(for: try LeafIdentity(names: [OpenSSLTrustCheck.checkHost]), now: now).certificate
            }
        }
    }

    /// Only the first question: is `root` among `store`'s anchors now? Needs no CA to mint with
    /// (`tv ca remove` asks it of a root whose key is on its way out).
    public static func installed(_ store: TrustStoreSpec, root: Certificate, environment: [String: String]) -> TrustAnswer {
        switch store {
        case .nss(let dir):
            return NSSTrustCheck(directory: dir, environment: environment).ask(root: root).installed
        case .system, .file, .dir:
            return opensslCheck(store, environment: environment).ask(root: root) { throw InstalledOnly() }.installed
        }
    }

    /// The leaf `installed` never mints.
    private struct InstalledOnly: Error {}

    /// The bundle file and hashed folders OpenSSL reads for `system`: `SSL_CERT_FILE` else
    /// `X509_get_default_cert_file()`, and `SSL_CERT_DIR` (a colon-separated list) else
    /// `X509_get_default_cert_dir()`; the compiled-in defaults may be missing, the named ones not.
    public static func systemPaths(environment: [String: String]) -> (file: String, dirs: [String]) {
        let file = environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? String(cString: X509_get_default_cert_file())
        let dirList = environment["SSL_CERT_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? String(cString: X509_get_default_cert_dir())
        return (file, dirList.split(separator: ":").map(String.init))
    }

    static func opensslCheck(_ store: TrustStoreSpec, environment: [String: String]) -> OpenSSLTrustCheck {
        switch store {
        case .file(let path):
            // A missing bundle in an existing folder is an empty bundle: nothing trusted yet, and
            // `--apply` (or the setup step) creates it. A missing folder is a store that is not there.
            var isDir: ObjCBool = false
            let folderExists = store.bundleFolder.map { FileManager.default.fileExists(atPath: $0, isDirectory: &isDir) && isDir.boolValue } ?? true
            return OpenSSLTrustCheck(store: store, files: [.init(path: path, required: !folderExists)], dirs: [])
        case .dir(let path):
            return OpenSSLTrustCheck(store: store, files: [], dirs: [.init(path: path, required: true)])
        case .system, .nss:
            let paths = systemPaths(environment: environment)
            let fileNamed = !(environment["SSL_CERT_FILE"] ?? "").isEmpty
            let dirNamed = !(environment["SSL_CERT_DIR"] ?? "").isEmpty
            return OpenSSLTrustCheck(store: .system, files: [.init(path: paths.file, required: fileNamed)],
                                     dirs: paths.dirs.map { .init(path: $0, required: dirNamed) })
        }
    }
}
