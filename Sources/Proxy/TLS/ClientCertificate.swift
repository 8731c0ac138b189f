import COpenSSL
import Foundation
import LocalCA
import TVHome

/// One `--client-cert HOST_PATTERN=FILE` as written (or one entry of the
/// `tls.clientCerts` setting), before its file is read.
public struct ClientCertificateRule: Sendable, Equatable {
    /// The host pattern (a `HostPattern` regular expression) as the user wrote it.
    public var pattern: String
    /// The PEM file with the certificate, its chain and its unencrypted private key.
    public var file: String

    public init(pattern: String, file: String) {
        self.pattern = pattern
        self.file = file
    }

    /// Reads `HOST_PATTERN=FILE`, split at the last `=` (a regular expression may hold one, a
    /// file name rarely does).
    /// - Throws: `ProxyError.clientCertificateRuleUnreadable` when either side is empty.
    public init(parsing text: String) throws(ProxyError) {
        guard let equals = text.lastIndex(of: "=") else { throw .clientCertificateRuleUnreadable(text) }
        let pattern = String(text[..<equals]), file = String(text[text.index(after: equals)...])
        guard !pattern.isEmpty, !file.isEmpty else { throw .clientCertificateRuleUnreadable(text) }
        self.init(pattern: pattern, file: file)
    }

    /// `HOST_PATTERN=FILE`, as parsed.
    public var text: String { "\(pattern)=\(file)" }

    /// Reads and checks the file as the proxy will when it starts (`tv settings set` checks
    /// before saving), at `now` (seconds since 1970).
    /// - Throws: `ProxyError.invalidHostPattern`, `ProxyError.clientCertificateUnusable`.
    public func check(now: Int64) throws {
        _ = try ClientCertificate.load(self, now: now)
    }
}

/// Why a client certificate file cannot be used (checked once, when the proxy starts).
public enum ClientCertificateProblem: Sendable, Equatable {
    /// The file could not be read (missing, or the system's reason).
    case unreadable(String)
    /// The file holds a private key and fails `FileTrust.secretFile` (a link, another user's
    /// file, or one others may read or write).
    case untrusted(FileTrustProblem)
    case noCertificate
    case noKey
    /// The key is encrypted: tv cannot ask for a passphrase mid-connection.
    case encryptedKey
    case keyMismatch
    /// The first certificate is not valid now (expired, or not yet valid).
    case notValidNow
    /// The first certificate may not authenticate a TLS client: its extended key usage leaves
    /// out clientAuth (a `tv ca issue` server certificate, for one); servers refuse it (OpenSSL
    /// error 26, unsuitable certificate purpose).
    case notForClients
}

/// A client certificate tv presents on upstream legs whose server matches `pattern` and asks
/// for one: the leaf, the chain after it (as the file orders them) and the key.
struct ClientCertificate: Sendable {
    let pattern: HostPattern
    let file: String
    let certificate: Certificate
    let chain: [Certificate]
    let key: PrivateKey

    /// Reads and checks `rule`'s file: a secret file by `FileTrust.secretFile`, at least one PEM
    /// certificate (the first is the leaf), an unencrypted PEM private key that matches it, the
    /// leaf valid at `now` (seconds since 1970).
    /// - Throws: `ProxyError.invalidHostPattern`, `ProxyError.clientCertificateUnusable`.
    static func load(_ rule: ClientCertificateRule, now: Int64) throws -> ClientCertificate {
        let pattern: HostPattern
        do { pattern = try HostPattern(rule.pattern) } catch { throw ProxyError.invalidHostPattern(rule.pattern, use: .clientCertificate) }
        func refuse(_ problem: ClientCertificateProblem) -> ProxyError {
            .clientCertificateUnusable(file: rule.file, pattern: rule.pattern, problem)
        }
        let facts: FileFacts
        switch FileFacts.lstat(rule.file) {
        case .found(let found): facts = found
        case .missing: throw refuse(.unreadable("no such file"))
        case .forbidden: throw refuse(.unreadable("permission denied"))
        case .failed(let code): throw refuse(.unreadable(String(cString: strerror(code))))
        }
        // A link or a device is refused before reading; the secret-file rules apply once the file
        // is known to hold a key (a certificate alone is told it lacks one).
        if let problem = FileTrust.secretFile(facts, you: .current), !problem.isAboutPermissions {
            throw refuse(.untrusted(problem))
        }
        guard let data = FileManager.default.contents(atPath: rule.file) else { throw refuse(.unreadable("permission denied")) }
        let bytes = [UInt8](data)
        let certificates = Certificate.allFromPEM(bytes)
        guard let leaf = certificates.first else { throw refuse(.noCertificate) }
        let text = String(decoding: bytes, as: UTF8.self)
        if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED") {
            throw refuse(.encryptedKey)
        }
        guard let key = try? PrivateKey.fromPEM(bytes) else { throw refuse(.noKey) }
        if let problem = FileTrust.secretFile(facts, you: .current) { throw refuse(.untrusted(problem)) }
        guard leaf.matches(key) else { throw refuse(.keyMismatch) }
        guard leaf.notBefore <= now, now < leaf.notAfter else { throw refuse(.notValidNow) }
        guard X509_check_purpose(leaf.handle, X509_PURPOSE_SSL_CLIENT, 0) == 1 else { throw refuse(.notForClients) }
        return ClientCertificate(pattern: pattern, file: rule.file, certificate: leaf, chain: Array(certificates.dropFirst()), key: key)
    }
}

extension FileTrustProblem {
    /// Others may read or write the file (chmod fixes that): a problem only for a file that
    /// holds a key.
    var isAboutPermissions: Bool {
        switch self {
        case .openToOthers, .writableByOthers: return true
        default: return false
        }
    }

    /// The file is another user's (chmod cannot fix that).
    var isOwnership: Bool {
        if case .ownedBy = self { return true }
        return false
    }
}
