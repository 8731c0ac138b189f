import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// Where upstream legs find the system's trusted roots, decided as OpenSSL's
/// `SSL_CTX_set_default_verify_paths` would, with one difference for memory at rest (issue 21):
/// when the roots' directory holds OpenSSL's hash links (`<8 hex digits>.<n>`, made by
/// `update-ca-certificates` / `openssl rehash`), the bundle file is not also read whole at start
/// (the ~146 Debian roots cost 828 KiB of heap); the directory is looked up when a chain needs
/// an issuer, and the roots found stay in the store. Without hash links (Fedora's and Arch's
/// bundle-only layouts) the bundle is read at start as before. `SSL_CERT_FILE` is always read;
/// `SSL_CERT_DIR` replaces the default directory (colon-separated, as OpenSSL reads it).
public struct SystemRootPlan: Equatable, Sendable {
    /// A PEM bundle read whole at start, or nil.
    public let file: String?
    /// Directories of hash links (colon-separated) looked up on demand.
    public let directory: String

    public init(file: String?, directory: String) {
        self.file = file
        self.directory = directory
    }

    /// The plan for `environment` (only `SSL_CERT_FILE` and `SSL_CERT_DIR` are read), OpenSSL's
    /// built-in defaults, and whether any of the chosen directories holds a hash link.
    public static func plan(environment: [String: String], defaultFile: String, defaultDirectory: String,
                            hasHashLinks: (String) -> Bool) -> SystemRootPlan {
        let directory = environment["SSL_CERT_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultDirectory
        if let file = environment["SSL_CERT_FILE"], !file.isEmpty {
            return SystemRootPlan(file: file, directory: directory)
        }
        let linked = directory.split(separator: ":").contains { hasHashLinks(String($0)) }
        return SystemRootPlan(file: linked ? nil : defaultFile, directory: directory)
    }

    /// True when `name` is an OpenSSL hash link's name: 8 lowercase hex digits, a dot, a decimal
    /// number (`4042bcee.0`; CRLs' `.r0` are not certificates).
    public static func isHashLinkName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count >= 10, bytes[8] == UInt8(ascii: ".") else { return false }
        let hex = bytes[..<8].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        let number = bytes[9...].allSatisfy { (0x30...0x39).contains($0) }
        return hex && number
    }

    /// True when the directory at `path` lists at least one hash link (false when unreadable).
    public static func directoryHasHashLinks(_ path: String) -> Bool {
        guard let dir = opendir(path) else { return false }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if isHashLinkName(name) { return true }
        }
        return false
    }

    /// The plan for this process: `SSL_CERT_FILE` / `SSL_CERT_DIR` and OpenSSL's compiled-in
    /// defaults (`X509_get_default_cert_file`, `X509_get_default_cert_dir`).
    public static func current() -> SystemRootPlan {
        var environment: [String: String] = [:]
        for name in ["SSL_CERT_FILE", "SSL_CERT_DIR"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return plan(environment: environment, defaultFile: String(cString: X509_get_default_cert_file()),
                    defaultDirectory: String(cString: X509_get_default_cert_dir()), hasHashLinks: directoryHasHashLinks)
    }

    /// Adds the plan's bundle and directory to `ctx`'s store. Like
    /// `SSL_CTX_set_default_verify_paths`, a missing file or directory is not an error (the
    /// upstream check then says the chain is not trusted) and leaves nothing on OpenSSL's error queue.
    func load(into ctx: OpaquePointer) {
        if let file { _ = SSL_CTX_load_verify_file(ctx, file) }
        _ = SSL_CTX_load_verify_dir(ctx, directory)
        ERR_clear_error()
    }
}
