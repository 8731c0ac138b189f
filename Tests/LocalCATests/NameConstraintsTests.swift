import COpenSSL
import Testing
@testable import LocalCA

/// Leaves under a name-constrained root (RFC 5280 §4.2.1.10) carry only the names it permits,
/// so clients accept them for those names; OpenSSL's own path validation is the judge.
@Suite("Name-constrained roots")
struct NameConstraintsTests {
    let day: Int64 = 86_400

    /// A root permitting `.internal.test` (less `bad.internal.test`) and, when `ipSubtree`, only
    /// 10.0.0.0/8 among IPv4 addresses.
    func constrainedAuthority(ipSubtree: Bool = false, now: Int64) throws -> CertificateAuthority {
        let key = try pooledKey(.ecdsaP256)
        let constraints = "critical,permitted;DNS:.internal.test" + (ipSubtree ? ",permitted;IP:10.0.0.0/255.0.0.0" : "")
            + ",excluded;DNS:bad.internal.test"
        let root = try ImportTests.selfSigned(key: key, extensions: [(NID_basic_constraints, "critical,CA:TRUE"),
                                                                    (NID_key_usage, "critical,keyCertSign,cRLSign"),
                                                                    (NID_subject_key_identifier, "hash"),
                                                                    (NID_name_constraints, constraints)],
                                              notBefore: now - day, notAfter: now + 30 * day)
        return CertificateAuthority(root: root, rootKey: key, leafKey: try pooledKey(.ecdsaP256, slot: 1))
    }

    func identity(_ names: [String], plus sans: [SubjectAlternativeName]) throws -> LeafIdentity {
        try LeafIdentity(names: names).adding(sans)
    }

    @Test("a server's names outside the permitted subtree, or inside an excluded one, are left out of the leaf, which then verifies (it failed with error 47 before)")
    func copiedNamesOutsideAreDropped() throws {
        let now = currentTime()
        let ca = try constrainedAuthority(now: now)
        let wanted = try identity(["api.internal.test"], plus: [.dns("example.com"), .dns("db.internal.test"), .dns("*.internal.test"),
                                                               .dns("x.bad.internal.test"), .dns("internal.test.evil"),
                                                               .ip(IPAddress("192.168.1.1")!)])
        let leaf = try ca.mintLeaf(for: wanted, now: now).certificate
        // No IP subtree: addresses are not constrained (RFC 5280 §4.2.1.10, "a name of a type
        // with no subtree is acceptable").
        #expect(leaf.subjectAlternativeNames == [.dns("api.internal.test"), .dns("db.internal.test"), .dns("*.internal.test"),
                                                 .ip(IPAddress("192.168.1.1")!)])
        #expect(verify(leaf, root: ca.root, .host("api.internal.test"), at: now) == 0)
        #expect(verify(leaf, root: ca.root, .host("db.internal.test"), at: now) == 0)
        // What the unfiltered names get from OpenSSL: the fault this guards against.
        let unfiltered = try ca.issueUnchecked(wanted, now: now)
        #expect(verify(unfiltered, root: ca.root, .host("api.internal.test"), at: now) == X509_V_ERR_PERMITTED_VIOLATION)
    }

    @Test("an IP subtree keeps the addresses inside it only")
    func addressSubtree() throws {
        let now = currentTime()
        let ca = try constrainedAuthority(ipSubtree: true, now: now)
        let wanted = try identity(["10.1.2.3"], plus: [.ip(IPAddress("192.168.1.1")!), .ip(IPAddress("10.9.9.9")!), .dns("a.internal.test")])
        let leaf = try ca.mintLeaf(for: wanted, now: now).certificate
        #expect(leaf.subjectAlternativeNames == [.dns("a.internal.test"), .ip(IPAddress("10.1.2.3")!), .ip(IPAddress("10.9.9.9")!)])
        #expect(verify(leaf, root: ca.root, .ip("10.1.2.3"), at: now) == 0)
        // An address alone: no CN (OpenSSL checks a CN like `10.1.2.3` against the DNS subtrees
        // when there is no DNS SAN: error 47 before), the SAN critical; under either root.
        for ca in [ca, try constrainedAuthority(now: now)] {
            let address = try ca.mintLeaf(for: try LeafIdentity(names: ["10.1.2.3"]), now: now).certificate
            #expect(subjectEntries(address).isEmpty && address.isCritical(NID_subject_alt_name) == true)
            #expect(verify(address, root: ca.root, .ip("10.1.2.3"), at: now) == 0)
            let issued = try ca.issue(for: try LeafIdentity(names: ["10.1.2.3"]), keyType: .ecdsaP256, now: now).certificate
            #expect(verify(issued, root: ca.root, .ip("10.1.2.3"), at: now) == 0)
        }
    }

    @Test("when the name the client asked for is itself outside, the leaf keeps every name (no leaf for it can verify; the client's refusal is the one import warned of)")
    func askedNameOutside() throws {
        let now = currentTime()
        let ca = try constrainedAuthority(now: now)
        let wanted = try identity(["example.com"], plus: [.dns("api.internal.test")])
        let leaf = try ca.mintLeaf(for: wanted, now: now).certificate
        #expect(leaf.subjectAlternativeNames == [.dns("example.com"), .dns("api.internal.test")])
        #expect(verify(leaf, root: ca.root, .host("example.com"), at: now) == X509_V_ERR_PERMITTED_VIOLATION)
    }

    @Test("an address asked for, the server also naming DNS hosts outside (which the SANs list first): the address is what counts, the outside names go, and the leaf verifies for it")
    func askedAddressWithCopiedNames() throws {
        let now = currentTime()
        let ca = try constrainedAuthority(now: now)
        let wanted = try identity(["10.1.2.3"], plus: [.dns("example.com"), .dns("db.internal.test")])
        #expect(wanted.asked == .ip(IPAddress("10.1.2.3")!) && wanted.subjectAlternativeNames.first == .dns("example.com"))
        let leaf = try ca.mintLeaf(for: wanted, now: now).certificate
        #expect(leaf.subjectAlternativeNames == [.dns("db.internal.test"), .ip(IPAddress("10.1.2.3")!)])
        #expect(verify(leaf, root: ca.root, .ip("10.1.2.3"), at: now) == 0)
    }

    @Test("a root without name constraints keeps every name")
    func unconstrained() throws {
        let now = currentTime()
        let ca = try makeAuthority(now: now)
        let wanted = try identity(["a.test"], plus: [.dns("b.example"), .ip(IPAddress("192.168.1.1")!)])
        #expect(try ca.mintLeaf(for: wanted, now: now).certificate.subjectAlternativeNames == wanted.subjectAlternativeNames)
    }

    @Test("tv ca issue refuses names the root does not permit, naming them")
    func issueRefuses() throws {
        let now = currentTime()
        let ca = try constrainedAuthority(now: now)
        #expect(throws: CAError.outsideNameConstraints(["example.com", "x.bad.internal.test"])) {
            try ca.issue(for: try LeafIdentity(names: ["api.internal.test", "example.com", "x.bad.internal.test"]), keyType: .ecdsaP256, now: now)
        }
        #expect(CAError.outsideNameConstraints(["example.com"]).message
                == "The root's name constraints do not permit 'example.com', so clients would refuse a certificate naming it; issue it for names the root permits (its nameConstraints extension lists them), or with a root that has no name constraints.")
        let issued = try ca.issue(for: try LeafIdentity(names: ["api.internal.test"]), keyType: .ecdsaP256, now: now)
        #expect(verify(issued.certificate, root: ca.root, .host("api.internal.test"), at: now) == 0)
    }
}

extension CertificateAuthority {
    /// A leaf with every name of `identity`, as minted before the filter (tests only).
    func issueUnchecked(_ identity: LeafIdentity, now: Int64) throws -> Certificate {
        let builder = try CertificateBuilder(subjectKey: leafKey, serial: try SerialNumber.random(), notBefore: now - 60, notAfter: now + 86_400)
        try builder.setSubject(identity.commonName.map { [("CN", $0)] } ?? [])
        try builder.setIssuer(root)
        try builder.addExtension(NID_authority_key_identifier, "keyid:always", issuer: root)
        try builder.addExtension(NID_subject_alt_name, identity.subjectAlternativeNames.map(\.description).joined(separator: ","), issuer: root)
        return try builder.sign(with: rootKey)
    }
}
