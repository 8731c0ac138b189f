import COpenSSL
import Synchronization

/// A loaded, usable CA: the root certificate, its key, and the one key every minted leaf uses.
///
/// Immutable after loading; minting only reads it, so one instance serves every proxy thread.
public final class CertificateAuthority: Sendable {
    /// The root certificate (public; safe to show and export).
    public let root: Certificate
    /// The root's private key. Never printed; leaves `$TV_HOME/ca` only in a PKCS#12 the user asks for.
    let rootKey: PrivateKey
    /// The key of every minted leaf (one key reused, as mitmproxy does: a leaf costs one signature).
    public let leafKey: PrivateKey
    /// `leafKey`'s type (`--leaf-key`; ECDSA P-256 by default).
    public let leafKeyType: KeyType
    /// Leaf keys of other types (the other algorithm, for clients that cannot use `leafKey`),
    /// made in memory the first time one is asked for and kept for the process's life.
    private let otherLeafKeys = Mutex<[KeyType: PrivateKey]>([:])
    /// What the load that read this CA did to `leaf-key.pem` (made a new one in place of one
    /// missing or unusable), for the command that loaded it to say once; nil when nothing.
    public let leafKeyRemade: LeafKeyRemade?

    init(root: Certificate, rootKey: PrivateKey, leafKey: PrivateKey, leafKeyRemade: LeafKeyRemade? = nil) {
        self.root = root
        self.rootKey = rootKey
        self.leafKey = leafKey
        self.leafKeyRemade = leafKeyRemade
        leafKeyType = leafKey.type ?? (leafKey.isRSA ? .rsa2048 : .ecdsaP256)
    }

    /// The shared key of leaves of `type`: `leafKey` for `leafKeyType`; any other type's key is
    /// generated on first use (RSA 2048: one key generation, tens of milliseconds, once).
    /// - Throws: `OpenSSLError` when the key cannot be generated.
    public func leafKey(_ type: KeyType) throws -> PrivateKey {
        if type == leafKeyType { return leafKey }
        return try otherLeafKeys.withLock { keys in
            if let key = keys[type] { return key }
            let key = try PrivateKey.generate(type)
            keys[type] = key
            return key
        }
    }

    /// Seconds in a day.
    static let day: Int64 = 86_400
    /// Leaves are backdated 2 days (clock skew) and span at most 199 days including that, under
    /// Chromium's ERR_CERT_VALIDITY_TOO_LONG limit and Apple's 825 days (notes/specs.md §2.1).
    public static let leafBackdate: Int64 = 2 * day
    public static let leafSpan: Int64 = 199 * day
    /// Roots are backdated 2 days and valid 10 years from creation.
    public static let rootBackdate: Int64 = 2 * day
    public static let rootLifetime: Int64 = 3650 * day

    /// Makes a self-signed root for `key` (profile: CA/README.md "The root").
    ///
    /// Subject `CN=TunnelVision Root CA <first 8 hex of the SKI>, O=TunnelVision`: unique per key,
    /// so a regenerated CA never repeats an issuer name + serial pair (Firefox
    /// SEC_ERROR_REUSED_ISSUER_AND_SERIAL). basicConstraints critical CA:TRUE pathlen:0; keyUsage
    /// critical keyCertSign, cRLSign; SKI; no EKU (OpenSSL applies EKU to anchors too).
    /// - Parameter now: seconds since 1970-01-01 UTC.
    /// - Throws: `OpenSSLError`.
    public static func makeRoot(key: PrivateKey, now: Int64) throws -> Certificate {
        // The SKI is a hash of the public key; make a throwaway certificate to let OpenSSL compute it.
        let probe = try CertificateBuilder(subjectKey: key, serial: [1], notBefore: now, notAfter: now + day)
        try probe.setIssuer(nil)
        try probe.addExtension(NID_subject_key_identifier, "hash", issuer: nil)
        let skid = try probe.sign(with: key).subjectKeyIdentifier ?? []
        let tag = Hex.encode(Array(skid.prefix(4)))

        let builder = try CertificateBuilder(subjectKey: key, serial: try SerialNumber.random(),
                                             notBefore: now - rootBackdate, notAfter: now + rootLifetime)
        try builder.setSubject([("CN", "TunnelVision Root CA \(tag)"), ("O", "TunnelVision")])
        try builder.setIssuer(nil)
        try builder.addExtension(NID_basic_constraints, "critical,CA:TRUE,pathlen:0", issuer: nil)
        try builder.addExtension(NID_key_usage, "critical,keyCertSign,cRLSign", issuer: nil)
        try builder.addExtension(NID_subject_key_identifier, "hash", issuer: nil)
        return try builder.sign(with: key)
    }

    /// Mints a leaf for `identity`, signed by the root, carrying the shared leaf key of `keyType`
    /// (nil: `leafKeyType`; another type's key is made on first use, `leafKey(_:)`). Under a
    /// name-constrained root the names it does not permit are left out (`permittedNames`): one
    /// such name makes clients refuse the whole leaf.
    ///
    /// Profile: SAN with every name (critical when there is no CN); CN = first name when ≤ 64
    /// characters; EKU serverAuth; keyUsage critical digitalSignature (+ keyEncipherment for an
    /// RSA leaf key); AKI = the root's SKI; basicConstraints critical CA:FALSE; a random 16-byte
    /// serial; notBefore = now − 2 days, never before the root's start; notAfter = notBefore + 199
    /// days, never past the root's end.
    /// - Parameter now: seconds since 1970-01-01 UTC.
    /// - Throws: `CAError.rootNotValid` outside the root's validity; `OpenSSLError`. Cost: one signature (~0.05 ms P-256).
    public func mintLeaf(for identity: LeafIdentity, keyType: KeyType? = nil, now: Int64) throws -> Leaf {
        let key = try leafKey(keyType ?? leafKeyType)
        let certificate = try sign(identity: permittedNames(identity), key: key, now: now)
        return Leaf(certificate: certificate, key: key, root: root)
    }

    /// Issues a certificate for a local development server with its own fresh key (what mkcert
    /// does): the same profile as a minted leaf.
    /// - Throws: `CAError.outsideNameConstraints` when a name is one the root's name constraints
    ///   do not permit (clients would refuse the certificate); `CAError.rootNotValid` outside the
    ///   root's validity; `OpenSSLError`.
    public func issue(for identity: LeafIdentity, keyType: KeyType, now: Int64) throws -> Leaf {
        let outside = namesOutsideConstraints(identity)
        guard outside.isEmpty else { throw CAError.outsideNameConstraints(outside.map(\.name)) }
        let key = try PrivateKey.generate(keyType)
        let certificate = try sign(identity: identity, key: key, now: now)
        return Leaf(certificate: certificate, key: key, root: root)
    }

    /// Why the root cannot sign at `now` (seconds since 1970): it expired, or is not valid yet;
    /// nil when it can. A leaf is never valid outside its root's validity (its end is capped at
    /// the root's), so a trial's expired root minted leaves that ended before they began.
    public func rootProblem(now: Int64) -> CARootProblem? {
        CARootProblem.at(now, notBefore: root.notBefore, notAfter: root.notAfter)
    }

    private func sign(identity: LeafIdentity, key: PrivateKey, now: Int64) throws -> Certificate {
        if let problem = rootProblem(now: now) { throw CAError.rootNotValid(problem) }
        // Never before the root's own start: a root imported the day it was made (not
        // backdated) got leaves that began two days before it (a trial); nested validity is what
        // strict path builders expect.
        let notBefore = max(now - CertificateAuthority.leafBackdate, root.notBefore)
        let notAfter = min(notBefore + CertificateAuthority.leafSpan, root.notAfter)
        let builder = try CertificateBuilder(subjectKey: key, serial: try SerialNumber.random(),
                                             notBefore: notBefore, notAfter: notAfter)
        // Under a name-constrained root an address is no CN: OpenSSL checks a CN that looks like
        // a host name against the DNS subtrees when no DNS SAN is there (`NAME_CONSTRAINTS_check_CN`),
        // and refused `CN=127.0.0.1` under `permitted;DNS:.internal.test` (error 47: a re-check).
        let cn = identity.dnsNames.isEmpty && root.hasNameConstraints ? nil : identity.commonName
        try builder.setSubject(cn.map { [("CN", $0)] } ?? [])
        try builder.setIssuer(root)
        try builder.addExtension(NID_basic_constraints, "critical,CA:FALSE", issuer: root)
        try builder.addExtension(NID_key_usage, key.isRSA ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature", issuer: root)
        try builder.addExtension(NID_ext_key_usage, "serverAuth", issuer: root)
        try builder.addExtension(NID_authority_key_identifier, "keyid:always", issuer: root)
        let san = identity.subjectAlternativeNames.map(\.description).joined(separator: ",")
        try builder.addExtension(NID_subject_alt_name, (cn == nil ? "critical," : "") + san, issuer: root)
        return try builder.sign(with: rootKey)
    }
}

/// A minted leaf: the certificate, its key, and the root that signed it (the chain to send).
public struct Leaf: Sendable {
    public let certificate: Certificate
    public let key: PrivateKey
    public let root: Certificate

    /// The chain a server sends, PEM: the leaf, then its intermediates (none: the root signs
    /// leaves directly), without the root, which a client must already hold to trust it
    /// (RFC 8446 §4.4.2, RFC 5246 §7.4.2).
    public var chainPEM: [UInt8] { certificate.pem }
}
