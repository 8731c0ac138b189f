/// The key types `tv` makes for a root, a leaf key or an issued certificate.
///
/// ECDSA P-256 is the default: every verifier we target accepts it (Apple, Chromium, NSS, Go,
/// Java, GnuTLS) and a signature costs a fraction of RSA's (../shared/notes/specs.md §2.3).
public enum KeyType: String, Sendable, CaseIterable, Equatable {
    case ecdsaP256 = "ecdsa-p256"
    case ecdsaP384 = "ecdsa-p384"
    case rsa2048 = "rsa-2048"
    case rsa3072 = "rsa-3072"

    /// The command-line spelling (`ecdsa-p256`).
    public var name: String { rawValue }

    /// The human spelling (`ECDSA P-256`).
    public var displayName: String {
        switch self {
        case .ecdsaP256: return "ECDSA P-256"
        case .ecdsaP384: return "ECDSA P-384"
        case .rsa2048: return "RSA 2048"
        case .rsa3072: return "RSA 3072"
        }
    }

    /// Whether the key is RSA (else ECDSA): OpenSSL holds one certificate of each per connection.
    public var isRSA: Bool { self == .rsa2048 || self == .rsa3072 }

    /// Parses the command-line spelling.
    /// - Throws: `CAError.unknownKeyType` listing the accepted spellings.
    public static func parse(_ text: String) throws -> KeyType {
        guard let type = KeyType(rawValue: text.lowercased()) else { throw CAError.unknownKeyType(text) }
        return type
    }
}
