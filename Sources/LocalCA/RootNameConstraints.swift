import COpenSSL

/// Which of a leaf's names the root's name constraints permit (RFC 5280 §4.2.1.10).
///
/// A client that finds one SAN outside a root's permitted subtrees (or inside its excluded ones)
/// refuses the whole leaf, whichever name it asked for (OpenSSL: error 47, "permitted subtree
/// violation"; browsers alike). A minted leaf copies the real server's SANs
/// (`LeafIdentity.adding`), so under a root constrained to `.internal.test` a server whose
/// certificate also names `example.com` got a leaf no client accepted, even for
/// `api.internal.test` (a new-user trial). Each name is asked of OpenSSL's own matcher
/// (`NAME_CONSTRAINTS_check`) on a throwaway certificate holding that one SAN: the
/// matching rules (label boundaries, address masks, name types without a subtree being free)
/// are OpenSSL's, never ours.
struct RootNameConstraints {
    /// The parsed extension; freed when `with` returns.
    private let constraints: UnsafeMutablePointer<NAME_CONSTRAINTS>
    /// The key the throwaway certificates carry and are signed with (any key: they are never sent).
    private let probeKey: PrivateKey

    /// Runs `body` with the root's constraints, or returns nil when the root has none.
    static func with<T>(root: Certificate, probeKey: PrivateKey, _ body: (RootNameConstraints) throws -> T) rethrows -> T? {
        guard root.hasNameConstraints, let raw = X509_get_ext_d2i(root.handle, NID_name_constraints, nil, nil) else { return nil }
        let parsed = raw.assumingMemoryBound(to: NAME_CONSTRAINTS.self)
        defer { NAME_CONSTRAINTS_free(parsed) }
        return try body(RootNameConstraints(constraints: parsed, probeKey: probeKey))
    }

    /// Whether a certificate naming only `name` would be inside the constraints; a name OpenSSL
    /// cannot put in a certificate is not.
    func permits(_ name: SubjectAlternativeName) -> Bool {
        defer { ERR_clear_error() }
        // Signed, though never sent: OpenSSL fills the SAN cache the check reads only for a
        // certificate it can encode whole (`X509_check_purpose(…, -1, …)` fills it, checks
        // nothing); an unsigned one left it empty, and every name passed. One P-256 signature
        // (~0.05 ms) a name, under a constrained root only, once a leaf (the cache keeps it).
        guard let builder = try? CertificateBuilder(subjectKey: probeKey, serial: [1], notBefore: 0, notAfter: 1),
              (try? builder.addExtension(NID_subject_alt_name, name.description, issuer: nil)) != nil,
              let probe = try? builder.sign(with: probeKey),
              X509_check_purpose(probe.handle, -1, 0) == 1 else { return false }
        return NAME_CONSTRAINTS_check(probe.handle, constraints) == X509_V_OK
    }
}

extension CertificateAuthority {
    /// The names of `identity` the root permits, in order; `identity` itself when the root has
    /// no name constraints, or when the name asked for (`LeafIdentity.asked`, else the first) is
    /// outside them: no leaf for that name can be accepted then, and the leaf the client refuses
    /// is the one `tv ca import`'s note described.
    func permittedNames(_ identity: LeafIdentity) -> LeafIdentity {
        RootNameConstraints.with(root: root, probeKey: leafKey) { constraints in
            let names = identity.subjectAlternativeNames
            guard let asked = identity.asked ?? names.first, constraints.permits(asked) else { return identity }
            return identity.keeping(names.filter { $0 == asked || constraints.permits($0) })
        } ?? identity
    }

    /// The names of `identity` the root does not permit (empty without name constraints).
    func namesOutsideConstraints(_ identity: LeafIdentity) -> [SubjectAlternativeName] {
        RootNameConstraints.with(root: root, probeKey: leafKey) { constraints in
            identity.subjectAlternativeNames.filter { !constraints.permits($0) }
        } ?? []
    }
}
