import LocalCA
import Wire

/// Which leaf key types the client leg presents, decided from the client's ClientHello.
///
/// OpenSSL holds one certificate of each key type per connection and picks by the client's
/// cipher suites (TLS 1.2) and signature_algorithms (both versions). The CA's own leaf key type
/// (`primary`) is always presented; the leaf of the other algorithm (`other`: RSA next to an ECDSA
/// key, ECDSA next to an RSA key) is added only when the client cannot use `primary` and can use
/// `other`, so a client that accepts `primary` never costs a second mint (mitmproxy#5941).
///
/// The rules, per the version the handshake will run:
/// - TLS 1.3 (the client offers 1.3 in supported_versions and a TLS 1.3 suite, RFC 8446 §4.1.1):
///   only signature_algorithms counts (§4.2.3, §4.4.3): ECDSA P-256 needs
///   ecdsa_secp256r1_sha256 (0x0403), P-384 ecdsa_secp384r1_sha384 (0x0503), RSA one of
///   rsa_pss_rsae_sha256/384/512 (0x0804–0x0806; PKCS #1 v1.5 is not for TLS 1.3 handshakes).
/// - TLS 1.2: an offered suite the server enables must authenticate with the key's algorithm
///   (`CipherSuiteKeys`, read from OpenSSL's own suite table), and when signature_algorithms is
///   present it must hold a scheme of that algorithm (RFC 5246 §7.4.1.4.1: hash byte 1–6 with
///   signature byte 1 for RSA or 3 for ECDSA; rsa_pss_rsae_* also sign with an RSA key, RFC 8446
///   §4.2.3). Absent, the defaults of §7.4.1.4.1 accept either. An ECDSA key's curve must also
///   be in supported_groups when the client sends it (RFC 8422 §5.1.1: secp256r1 23, secp384r1 24).
/// - A client that can use neither (or a ClientHello that says too little) gets `primary` alone,
///   and the handshake fails as OpenSSL says, as before.
///
/// A class, immutable: every connection's machine holds the one plan of its server by reference
/// (8 bytes, not the tables).
public final class LeafKeyPlan: Sendable {
    /// The TLS 1.2 suites the server context enables, by the key type their authentication needs.
    public struct CipherSuiteKeys: Sendable, Equatable {
        /// Suites authenticated by an ECDSA certificate (ECDHE-ECDSA-…).
        public var ecdsa: Set<UInt16>
        /// Suites authenticated by an RSA certificate (ECDHE-RSA-…, DHE-RSA-…, RSA key exchange).
        public var rsa: Set<UInt16>

        /// Suite code points (IANA "TLS Cipher Suites"), by the key type they need.
        public init(ecdsa: Set<UInt16> = [], rsa: Set<UInt16> = []) {
            self.ecdsa = ecdsa
            self.rsa = rsa
        }
    }

    /// The CA's leaf key type: presented to every client.
    public let primary: KeyType
    /// The key type minted for a client that cannot use `primary`.
    public let other: KeyType
    /// The TLS 1.2 suites the server enables, by key type (`TLSContexts.serverSuiteKeys`).
    public let suites: CipherSuiteKeys
    /// The two answers, made once (handing one out allocates nothing per connection).
    private let primaryOnly: [KeyType]
    private let both: [KeyType]

    /// - Parameter primary: the CA's leaf key type; `other` is RSA 2048 beside an ECDSA key and
    ///   ECDSA P-256 beside an RSA key.
    public init(primary: KeyType, suites: CipherSuiteKeys) {
        self.primary = primary
        self.other = primary.isRSA ? .ecdsaP256 : .rsa2048
        self.suites = suites
        primaryOnly = [primary]
        both = [primary, other]
    }

    /// The key types to present to the client that sent `hello`, `primary` first.
    public func keyTypes(for hello: ClientHello) -> [KeyType] {
        if accepts(primary, hello) || !accepts(other, hello) { return primaryOnly }
        return both
    }

    /// Whether the client that sent `hello` can be served by a leaf with a key of `type`.
    public func accepts(_ type: KeyType, _ hello: ClientHello) -> Bool {
        let schemes = hello.signatureAlgorithms
        if Self.negotiatesTLS13(hello) {
            guard let schemes else { return false }
            return schemes.contains { Self.tls13Scheme($0, signsWith: type) }
        }
        let usable = type.isRSA ? suites.rsa : suites.ecdsa
        guard hello.cipherSuites.contains(where: usable.contains) else { return false }
        if let curve = Self.curve(type), let groups = hello.supportedGroups, !groups.contains(curve) { return false }
        guard let schemes else { return true }
        return schemes.contains { Self.tls12Scheme($0, signsWith: type) }
    }

    /// The client offers TLS 1.3 and a TLS 1.3 suite (0x1301–0x1305): tv's server leg, whose
    /// highest version is 1.3, will negotiate it.
    static func negotiatesTLS13(_ hello: ClientHello) -> Bool {
        hello.offersTLS13 && hello.cipherSuites.contains { $0 >= 0x1301 && $0 <= 0x1305 }
    }

    /// RFC 8446 §4.2.3: a TLS 1.3 ECDSA scheme names its curve; RSA keys sign with RSASSA-PSS.
    static func tls13Scheme(_ scheme: UInt16, signsWith type: KeyType) -> Bool {
        switch type {
        case .ecdsaP256: return scheme == 0x0403
        case .ecdsaP384: return scheme == 0x0503
        case .rsa2048, .rsa3072: return (0x0804...0x0806).contains(scheme)
        }
    }

    /// The named group of an ECDSA key's curve (RFC 8422 §5.1.1); nil for RSA.
    static func curve(_ type: KeyType) -> UInt16? {
        switch type {
        case .ecdsaP256: return 0x0017
        case .ecdsaP384: return 0x0018
        case .rsa2048, .rsa3072: return nil
        }
    }

    /// RFC 5246 §7.4.1.4.1 (hash 1–6, signature 1 RSA / 3 ECDSA, any curve) and the
    /// rsa_pss_rsae_* schemes of RFC 8446 §4.2.3, which TLS 1.2 also uses.
    static func tls12Scheme(_ scheme: UInt16, signsWith type: KeyType) -> Bool {
        let hash = scheme >> 8, signature = scheme & 0xFF
        if type.isRSA && (0x0804...0x0806).contains(scheme) { return true }
        return (1...6).contains(hash) && signature == (type.isRSA ? 1 : 3)
    }
}
