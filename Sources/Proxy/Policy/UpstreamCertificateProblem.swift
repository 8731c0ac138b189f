import COpenSSL
import LocalCA

/// Why the real server's certificate did not verify: OpenSSL's verify error (`X509_V_ERR_*`,
/// openssl-verify(1) "Diagnostics"), the certificate of the chain it is about, and what was
/// checked. Its `kind` decides the words: what failed (`cause`) and the way on (`advice`), each
/// rendered here only, from the code and the certificate's fields, never from OpenSSL's text.
///
/// The host check follows RFC 6125 §6.4.4 as browsers apply it (Chromium since version 58, the
/// CA/Browser Forum Baseline Requirements §7.1.2.7.12): a name counts only in a subjectAltName,
/// never in the subject's CN (tv sets `X509_CHECK_FLAG_NEVER_CHECK_SUBJECT`); an address only in
/// an iPAddress SAN (OpenSSL's `X509_check_ip` never reads the CN). `nameOnlyInCommonName` says
/// that case apart, since a user reading "hostname mismatch" beside a CN that names the host
/// cannot tell what is wrong.
public struct UpstreamCertificateProblem: Hashable, Sendable {
    /// OpenSSL's verify error, `SSL_get_verify_result`.
    public var code: Int32
    /// Where in the chain: 0 is the server's own certificate, 1 its issuer, and so on.
    public var depth: Int
    /// The name or address the certificate was checked for (the SNI, else the destination).
    public var host: String
    /// The certificate the error is about (at `depth`).
    public var certificate: Traits
    /// When it was checked, seconds since 1970 (the clock the dates were compared with).
    public var checkedAt: Int64
    /// OpenSSL's security level on the upstream leg (`SSL_get_security_level`), which sets the
    /// smallest key and weakest signature a certificate may have (SSL_CTX_set_security_level(3)).
    public var securityLevel: Int

    /// What the error says of a certificate, read from it (`Traits(_:)`).
    public struct Traits: Hashable, Sendable {
        public var subject: String
        public var issuer: String
        public var commonName: String?
        /// Its subjectAltName's DNS names and addresses, in order.
        public var names: [SubjectAlternativeName]
        public var notBefore: Int64
        public var notAfter: Int64
        /// Its public key, as `Certificate.publicKeyDescription` writes it (`RSA 1024`).
        public var key: String
        /// The algorithm it is signed with (`sha1WithRSAEncryption`).
        public var signatureAlgorithm: String
        /// Its extendedKeyUsage's purposes by their RFC 5280 §4.2.1.12 names; nil when absent.
        public var extendedKeyUsage: [String]?

        public init(subject: String, issuer: String, commonName: String?, names: [SubjectAlternativeName],
                    notBefore: Int64, notAfter: Int64, key: String, signatureAlgorithm: String, extendedKeyUsage: [String]?) {
            self.subject = subject
            self.issuer = issuer
            self.commonName = commonName
            self.names = names
            self.notBefore = notBefore
            self.notAfter = notAfter
            self.key = key
            self.signatureAlgorithm = signatureAlgorithm
            self.extendedKeyUsage = extendedKeyUsage
        }
    }

    public init(code: Int32, depth: Int, host: String, certificate: Traits, checkedAt: Int64, securityLevel: Int) {
        self.code = code
        self.depth = depth
        self.host = host
        self.certificate = certificate
        self.checkedAt = checkedAt
        self.securityLevel = securityLevel
    }

    /// The kinds the advice differs by.
    public enum Kind: Hashable, Sendable {
        /// No CA tv trusts issued the chain (its issuer is unknown here): 2, 20, 21, 27.
        case untrustedIssuer
        /// The server's own certificate is self-signed (18).
        case selfSigned
        /// The chain ends in a self-signed root tv does not trust (19).
        case untrustedRoot
        /// The host appears in the subject's CN and in no subjectAltName (62, 64).
        case nameOnlyInCommonName
        /// The address appears as a DNS subjectAltName, never matched against an address (64).
        case addressAsDNSName
        /// The certificate names other hosts, or none (62, 64).
        case nameMismatch
        case expired
        case notYetValid
        /// A key below the security level's size (66, 67).
        case weakKey
        /// A signature digest below the security level (68: SHA-1, MD5).
        case weakSignature
        /// Not for TLS servers: extendedKeyUsage without serverAuth, keyUsage, a CA that is none (26).
        case wrongPurpose
        case other
    }

    public var kind: Kind {
        switch code {
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
             X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_CERT_UNTRUSTED:
            return .untrustedIssuer
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT: return .selfSigned
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN: return .untrustedRoot
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            if addressInDNSName { return .addressAsDNSName }
            return commonNameMatches ? .nameOnlyInCommonName : .nameMismatch
        case X509_V_ERR_CERT_HAS_EXPIRED: return .expired
        case X509_V_ERR_CERT_NOT_YET_VALID: return .notYetValid
        case X509_V_ERR_EE_KEY_TOO_SMALL, X509_V_ERR_CA_KEY_TOO_SMALL: return .weakKey
        case X509_V_ERR_CA_MD_TOO_WEAK: return .weakSignature
        case X509_V_ERR_INVALID_PURPOSE: return .wrongPurpose
        default: return .other
        }
    }

    /// What failed, one clause without "; " (the flow list shows a failure up to its first
    /// "; "): "hostname mismatch: it names a.test, not b.test".
    public var cause: String {
        let c = certificate
        let it = depth == 0 ? "it" : "\(c.subject) in its chain"
        func its(_ what: String) -> String { depth == 0 ? "its \(what)" : "the \(what) of \(c.subject) in its chain" }
        switch kind {
        case .untrustedIssuer:
            return "\(reason): \(its("issuer")), \(c.issuer), is not a CA tv trusts"
        case .selfSigned:
            return reason
        case .untrustedRoot:
            return "\(reason): its root \(c.subject) is not a CA tv trusts"
        case .nameOnlyInCommonName:
            return "it names \(host) only in its subject's CN, not in \(isAddress ? "an iPAddress" : "a") subjectAltName, which browsers refuse"
        case .addressAsDNSName:
            return "\(reason): it names \(host) as a DNS name, and an address is matched only against iPAddress subjectAltNames"
        case .nameMismatch:
            let listed = c.names.prefix(Self.namesShown).map(\.name).joined(separator: ", ")
                + (c.names.count > Self.namesShown ? " and \(c.names.count - Self.namesShown) more" : "")
            return c.names.isEmpty
                ? "\(reason): it names no \(isAddress ? "address" : "host") in a subjectAltName, so not \(host)"
                : "\(reason): it names \(listed), not \(host)"
        case .expired:
            return "\(reason): \(it) was valid until \(Timestamp.utc(c.notAfter)), and this machine's clock reads \(Timestamp.utc(checkedAt))"
        case .notYetValid:
            return "\(reason): \(it) is valid from \(Timestamp.utc(c.notBefore)), and this machine's clock reads \(Timestamp.utc(checkedAt))"
        case .weakKey:
            return "\(reason): \(its("key")), \(c.key), is below the \(Self.minimumKeys(securityLevel)) OpenSSL's security level \(securityLevel) requires"
        case .weakSignature:
            return "\(reason): \(it) is signed with \(c.signatureAlgorithm), which OpenSSL's security level \(securityLevel) refuses"
        case .wrongPurpose:
            if let usages = c.extendedKeyUsage, !usages.contains("serverAuth") {
                return "\(reason): \(its("extendedKeyUsage")) allows \(usages.isEmpty ? "nothing" : usages.joined(separator: ", ")), not serverAuth (TLS servers)"
            }
            return depth == 0 ? "\(reason): it is not marked for TLS servers (its keyUsage or basicConstraints)"
                : "\(reason): \(c.subject) in its chain is not a CA for TLS servers"
        case .other:
            return reason
        }
    }

    /// The way on for this kind: what would make the certificate verify, then the way past it.
    public var advice: String {
        let skip = "or skip the check with --upstream-insecure"
        switch kind {
        case .untrustedIssuer, .selfSigned, .untrustedRoot:
            return "trust the server's CA with --upstream-ca FILE, \(skip)"
        case .nameOnlyInCommonName, .addressAsDNSName:
            return "the server needs a certificate with \(isAddress ? "IP" : "DNS"):\(host) in its subjectAltName (RFC 6125 §6.4.4), \(skip)"
        case .nameMismatch:
            guard let held = certificate.names.first(where: { !$0.name.hasPrefix("*") }) ?? certificate.names.first else {
                return "the server needs a certificate naming \(host) in its subjectAltName, \(skip)"
            }
            return "reach the server by a name its certificate holds (\(held.name)), \(skip)"
        case .expired:
            return "if this machine's clock is right, the server must renew \(depth == 0 ? "its certificate" : "its chain"), \(skip)"
        case .notYetValid:
            return "check this machine's clock (date -u); if it is right, the certificate starts later and the server's operator must fix it, \(skip)"
        case .weakKey:
            return "the server needs a certificate with a stronger key, \(skip)"
        case .weakSignature:
            return "the server needs a certificate signed with SHA-256 or stronger, \(skip)"
        case .wrongPurpose:
            return "the server needs a certificate for TLS servers (extendedKeyUsage serverAuth), \(skip)"
        case .other:
            return "the server's operator must fix its certificate, \(skip)"
        }
    }

    /// The subjectAltNames a mismatch lists before "and N more".
    static let namesShown = 4

    /// OpenSSL's words for the code (`X509_verify_cert_error_string`), the head of `cause` so
    /// that a user can search for it.
    public var reason: String { String(cString: X509_verify_cert_error_string(Int(code))) }

    /// Whether `host` is an address (checked against iPAddress SANs) rather than a name.
    var isAddress: Bool { IPAddress(host) != nil }

    /// Whether `host` is an address that a DNS subjectAltName spells out (RFC 6125 §6.2.1:
    /// only an iPAddress SAN names an address).
    var addressInDNSName: Bool {
        guard depth == 0, let address = IPAddress(host) else { return false }
        return certificate.names.contains { if case .dns(let name) = $0 { return IPAddress(name) == address } else { return false } }
    }

    /// Whether the subject's CN names `host` (exactly, ignoring ASCII case and a final dot, or
    /// by a leading `*.` label as `X509_check_host` would have matched it before RFC 6125).
    var commonNameMatches: Bool {
        guard depth == 0, let cn = certificate.commonName else { return false }
        if isAddress { return IPAddress(cn) == IPAddress(host) }
        func plain(_ s: String) -> String { (s.hasSuffix(".") ? String(s.dropLast()) : s).lowercased() }
        let name = plain(cn), wanted = plain(host)
        if name == wanted { return true }
        guard name.hasPrefix("*."), let dot = wanted.firstIndex(of: ".") else { return false }
        return wanted[wanted.index(after: dot)...] == name.dropFirst(2) && wanted[..<dot].count > 0
    }

    /// The smallest keys a security level takes (SSL_CTX_set_security_level(3): 80, 112, 128,
    /// 192 and 256 bits of security).
    static func minimumKeys(_ level: Int) -> String {
        switch level {
        case ...0: return "any key size"
        case 1: return "1024-bit RSA or 160-bit EC keys"
        case 2: return "2048-bit RSA or 224-bit EC keys"
        case 3: return "3072-bit RSA or 256-bit EC keys"
        case 4: return "7680-bit RSA or 384-bit EC keys"
        default: return "15360-bit RSA or 512-bit EC keys"
        }
    }
}
