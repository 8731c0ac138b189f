import Foundation
import LocalCA
import TrustStore
import TVHome

/// The files `tv exec --proxy` names in CMD's environment, written (0600, in a 0700 folder of the
/// data folder) each time it runs: the system's anchors plus tv's root as a PEM bundle, the same
/// as a PKCS#12 trust store for the JVM, and a wgetrc naming the bundle. The system's anchors are
/// kept so that hosts tv passes through (or a session that does not inspect) still verify.
public struct ProxyTrustFiles: Sendable, Equatable {
    /// `$TV_HOME/proxy-env`.
    public let folder: String
    public let bundlePath: String
    public let trustStorePath: String
    public let wgetrcPath: String
    /// How many certificates the bundle holds (the system's anchors, then tv's root).
    public let anchorCount: Int

    /// The trust store's integrity password (the store holds public certificates only).
    public static let trustStorePassword = "tunnelvision"
    /// The folder's name inside the data folder.
    public static let folderName = "proxy-env"

    /// Writes the three files for `root`.
    /// - Parameter environment: where the system's anchors are (`SSL_CERT_FILE`, `SSL_CERT_DIR`,
    ///   else OpenSSL's defaults) and the user's own wgetrc (`WGETRC`, else `$HOME/.wgetrc`).
    /// - Throws: `TVHomeError` (the folder), `FileWriteError`, `OpenSSLError` (the trust store).
    public static func write(home: TVHome, root: Certificate, environment: [String: String]) throws -> ProxyTrustFiles {
        let folder = home.path + "/" + folderName
        try FileModes.makeDirectory(folder, mode: 0o700)
        var seen = Set<[UInt8]>()
        var anchors: [Certificate] = []
        for certificate in systemAnchors(environment: environment) + [root] where seen.insert(certificate.der).inserted {
            anchors.append(certificate)
        }
        // tv's root last, once (a bundle from an earlier run named by SSL_CERT_FILE already holds it).
        anchors.removeAll { $0.der == root.der }
        anchors.append(root)

        let files = ProxyTrustFiles(folder: folder, bundlePath: folder + "/ca-bundle.pem", trustStorePath: folder + "/truststore.p12",
                                    wgetrcPath: folder + "/wgetrc", anchorCount: anchors.count)
        try FileModes.writeAtomically(anchors.flatMap(\.pem), to: files.bundlePath, mode: 0o600)
        let store = try PKCS12TrustStore.der(certificates: anchors, alias: { $0 == anchors.count - 1 ? "tunnelvision-root" : "anchor-\($0)" },
                                             password: trustStorePassword)
        try FileModes.writeAtomically(store, to: files.trustStorePath, mode: 0o600)
        try FileModes.writeAtomically(Array(wgetrc(bundle: files.bundlePath, environment: environment).utf8), to: files.wgetrcPath, mode: 0o600)
        return files
    }

    /// The user's wgetrc (read instead of it once WGETRC is set), then the bundle as `ca_certificate`
    /// (the later setting wins, wgetrc(5)).
    static func wgetrc(bundle: String, environment: [String: String]) -> String {
        let own = environment["WGETRC"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["HOME"].map { $0 + "/.wgetrc" }
        var text = own.flatMap { FileManager.default.contents(atPath: $0) }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        if !text.isEmpty && !text.hasSuffix("\n") { text += "\n" }
        return text + "# tv exec --proxy: trust tv's root (and the system's anchors)\nca_certificate = \(bundle)\n"
    }

    /// The system's anchors: OpenSSL's bundle file (SSL_CERT_FILE or the compiled-in default);
    /// when it holds none, every certificate file in its hashed folders.
    static func systemAnchors(environment: [String: String]) -> [Certificate] {
        let paths = TrustQuestions.systemPaths(environment: environment)
        if let bytes = FileManager.default.contents(atPath: paths.file) {
            let certificates = Certificate.allFromPEM(Array(bytes))
            if !certificates.isEmpty { return certificates }
        }
        var out: [Certificate] = []
        for dir in paths.dirs {
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted() {
                if let bytes = FileManager.default.contents(atPath: dir + "/" + name) { out += Certificate.allFromPEM(Array(bytes)) }
            }
        }
        return out
    }
}
