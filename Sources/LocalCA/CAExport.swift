import COpenSSL
import CTVShims

/// The forms the root leaves `tv` in, for installing trust elsewhere.
///
/// None carries the root key except `pkcs12(…includeKey: true)`, which the user asks for by name.
public enum CAExport {
    /// PEM ("BEGIN CERTIFICATE"): Linux stores, Firefox, curl `--cacert`.
    public static func pem(_ ca: CertificateAuthority) -> [UInt8] { ca.root.pem }

    /// DER (`.cer`): Android's and Windows' certificate installers.
    public static func der(_ ca: CertificateAuthority) -> [UInt8] { ca.root.der }

    /// PBKDF2 iterations for a PKCS#12 that carries the root key: OWASP's Password Storage
    /// Cheat Sheet (2023) figure for PBKDF2-HMAC-SHA256. `openssl pkcs12 -export -iter 600000`
    /// took 0.34 s here, reading it back 0.2 s (2026-12-05).
    public static let keyIterations: Int32 = 600_000

    /// The fewest characters a passphrase protecting an exported root key may have.
    public static let minimumKeyPassphrase = 8

    /// PKCS#12 (RFC 7292): the root certificate alone (for importing trust on Windows/macOS), or
    /// with the root key when `includeKey` (for moving the CA to another tool).
    /// - Parameter passphrase: protects the file (may be empty for certificate-only).
    /// - Throws: `CAError.passphraseRequired` for a key export without a passphrase; `OpenSSLError`.
    public static func pkcs12(_ ca: CertificateAuthority, passphrase: String, includeKey: Bool) throws -> [UInt8] {
        if includeKey && passphrase.isEmpty { throw CAError.passphraseRequired }
        let name = ca.root.commonName ?? "TunnelVision Root CA"
        let p12: OpaquePointer?
        if includeKey {
            // The key bag (PBES2, AES-256-CBC) and the MAC both at `keyIterations`: OpenSSL's
            // default of 2,048 made the MAC a cheap test of each guessed passphrase.
            p12 = PKCS12_create(passphrase, name, ca.rootKey.handle, ca.root.handle, nil, 0, 0,
                                keyIterations, keyIterations, 0)
        } else {
            // A certificate bag only; the certificate is public, so it is not encrypted
            // (nid_cert -1), which every importer (Windows, macOS Keychain) reads.
            p12 = PKCS12_create(passphrase, name, nil, ca.root.handle, nil, 0, -1, 0, 0, 0)
        }
        guard let p12 else { throw OpenSSLError("making the PKCS#12 file") }
        defer { PKCS12_free(p12) }
        var out: UnsafeMutablePointer<UInt8>?
        let count = i2d_PKCS12(p12, &out)
        guard count > 0, let out else { throw OpenSSLError("encoding the PKCS#12 file") }
        defer { tv_openssl_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(count)))
    }

    /// The file name Android's system store expects: `<subject_hash_old as 8 hex>.0`
    /// (AOSP system/ca-certificates/README.cacerts).
    public static func androidFileName(_ ca: CertificateAuthority) -> String {
        let hex = String(ca.root.subjectHashOld, radix: 16)
        return String(repeating: "0", count: max(0, 8 - hex.count)) + hex + ".0"
    }

    /// The Android system-store file: the PEM certificate.
    public static func android(_ ca: CertificateAuthority) -> [UInt8] { ca.root.pem }

    /// The `.mobileconfig` profile (unsigned XML plist) with this home's fixed identity.
    public static func mobileConfig(_ ca: CertificateAuthority, identity: ProfileIdentity) throws -> [UInt8] {
        try MobileConfig.xml(root: ca.root, identity: identity)
    }
}
