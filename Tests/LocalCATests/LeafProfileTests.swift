import COpenSSL
import Testing
@testable import LocalCA

/// The leaf's profile (issue 2 "Leaf minting"; notes/specs.md §2.3), read back with OpenSSL.
@Suite("Leaf profile")
struct LeafProfileTests {
    @Test("every field of a minted leaf (DNS, IPv4, IPv6)")
    func profile() throws {
        let now = currentTime()
        let ca = try makeAuthority(now: now)
        let identity = try LeafIdentity(names: ["a.test", "www.a.test", "127.0.0.1", "::1"])
        let leaf = try ca.mintLeaf(for: identity, now: now)
        let cert = leaf.certificate

        #expect(x509Version(cert) == 2)
        #expect(cert.issuer == ca.root.subject)
        #expect(cert.isSigned(by: ca.root))
        #expect(cert.matches(ca.leafKey))
        #expect(leaf.key === ca.leafKey)
        #expect(leaf.root === ca.root)
        #expect(signatureNID(cert) == NID_ecdsa_with_SHA256)

        // Subject: CN = the first name only.
        #expect(subjectEntries(cert).map(\.0) == [NID_commonName])
        #expect(cert.commonName == "a.test")

        // SAN: every name, DNS names first, IPs as iPAddress (4 and 16 octets), not critical with a CN.
        #expect(cert.subjectAlternativeNames == [
            .dns("a.test"), .dns("www.a.test"),
            .ip(IPAddress(bytes: [127, 0, 0, 1])!),
            .ip(IPAddress(bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])!),
        ])
        #expect(extensionReading(cert, NID_subject_alt_name) == ExtensionReading(
            critical: false, text: "DNS:a.test, DNS:www.a.test, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1"))

        // Exactly these five extensions, once each.
        #expect(extensionNIDs(cert) == [NID_basic_constraints, NID_key_usage, NID_ext_key_usage,
                                        NID_authority_key_identifier, NID_subject_alt_name])
        #expect(extensionReading(cert, NID_basic_constraints) == ExtensionReading(critical: true, text: "CA:FALSE"))
        #expect(!cert.isCA)
        #expect(extensionReading(cert, NID_key_usage) == ExtensionReading(critical: true, text: "Digital Signature"))
        #expect(cert.keyUsage == UInt32(KU_DIGITAL_SIGNATURE))
        #expect(extensionReading(cert, NID_ext_key_usage) == ExtensionReading(critical: false, text: "TLS Web Server Authentication"))
        #expect(cert.extendedKeyUsage == UInt32(XKU_SSL_SERVER))

        // AKI: the root's SKI, keyid only.
        let rootSKI = try #require(ca.root.subjectKeyIdentifier)
        #expect(cert.authorityKeyIdentifier == rootSKI)
        #expect(extensionReading(cert, NID_authority_key_identifier)?.text == Hex.encode(rootSKI, separator: ":", uppercase: true))

        // Serial: positive, 16 octets; validity from now − 2 days spanning 199 days in total.
        let serial = rawSerial(cert)
        #expect(serial.type == V_ASN1_INTEGER)
        #expect(serial.octets.count == 16)
        #expect((0x01...0x7F).contains(serial.octets[0]))
        #expect(cert.notBefore == now - 2 * day)
        #expect(cert.notAfter - cert.notBefore == 199 * day)
        #expect(cert.notAfter <= ca.root.notAfter)

        // The chain a server sends: the leaf (no intermediates), never the root.
        #expect(Certificate.allFromPEM(leaf.chainPEM).map(\.der) == [cert.der])
    }

    @Test("OpenSSL verifies the leaf for each of its names and refuses others")
    func verification() throws {
        let now = currentTime()
        let ca = try makeAuthority(now: now)
        let leaf = try ca.mintLeaf(for: try LeafIdentity(names: ["a.test", "*.w.test", "127.0.0.1", "::1"]), now: now).certificate
        #expect(verify(leaf, root: ca.root, .host("a.test"), at: now) == 0)
        #expect(verify(leaf, root: ca.root, .host("x.w.test"), at: now) == 0)
        #expect(verify(leaf, root: ca.root, .ip("127.0.0.1"), at: now) == 0)
        #expect(verify(leaf, root: ca.root, .ip("::1"), at: now) == 0)
        #expect(verify(leaf, root: ca.root, .host("b.test"), at: now) == X509_V_ERR_HOSTNAME_MISMATCH)
        #expect(verify(leaf, root: ca.root, .host("w.test"), at: now) == X509_V_ERR_HOSTNAME_MISMATCH)  // wildcard ≠ apex
        #expect(verify(leaf, root: ca.root, .host("a.x.w.test"), at: now) == X509_V_ERR_HOSTNAME_MISMATCH)  // one label only
        #expect(verify(leaf, root: ca.root, .ip("127.0.0.2"), at: now) == X509_V_ERR_IP_ADDRESS_MISMATCH)
        // Another root does not vouch for it.
        let other = try makeAuthority(now: now)
        #expect(verify(leaf, root: other.root, .host("a.test"), at: now) == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY)
    }

    @Test("leaves verify under every root and leaf key type", arguments: KeyType.allCases, KeyType.allCases)
    func keyTypes(rootType: KeyType, leafType: KeyType) throws {
        let now = currentTime()
        // Pooled keys keep the 16 combinations cheap; slot 1 keeps the leaf key apart from the root's.
        let rootKey = try pooledKey(rootType)
        let root = try CertificateAuthority.makeRoot(key: rootKey, now: now)
        let ca = CertificateAuthority(root: root, rootKey: rootKey, leafKey: try pooledKey(leafType, slot: 1))
        let cert = try ca.mintLeaf(for: try LeafIdentity(names: ["k.test"]), now: now).certificate
        #expect(verify(cert, root: root, .host("k.test"), at: now) == 0)
        #expect(cert.publicKeyDescription == leafType.displayName)
        // keyEncipherment only for an RSA leaf key; the root's key type does not matter.
        let rsaLeaf = leafType == .rsa2048 || leafType == .rsa3072
        #expect(extensionReading(cert, NID_key_usage) == ExtensionReading(
            critical: true, text: rsaLeaf ? "Digital Signature, Key Encipherment" : "Digital Signature"))
        #expect(cert.keyUsage == UInt32(rsaLeaf ? KU_DIGITAL_SIGNATURE | KU_KEY_ENCIPHERMENT : KU_DIGITAL_SIGNATURE))
        // Signed with the root's key: SHA-384 for a P-384 root, SHA-256 otherwise.
        let expected: Int32 = switch rootType {
        case .ecdsaP256: NID_ecdsa_with_SHA256
        case .ecdsaP384: NID_ecdsa_with_SHA384
        case .rsa2048, .rsa3072: NID_sha256WithRSAEncryption
        }
        #expect(signatureNID(cert) == expected)
    }

    @Test("issue(for:keyType:) gives each certificate its own key, with the same profile")
    func issuedCertificates() throws {
        let now = currentTime()
        let ca = try makeAuthority(now: now)
        let identity = try LeafIdentity(names: ["dev.test"])
        let a = try ca.issue(for: identity, keyType: .rsa2048, now: now)  // one fresh RSA-2048 key
        let b = try ca.issue(for: identity, keyType: .ecdsaP256, now: now)
        #expect(a.key !== ca.leafKey && b.key !== ca.leafKey)
        #expect(a.certificate.matches(a.key) && b.certificate.matches(b.key))
        #expect(!a.certificate.matches(ca.leafKey))
        #expect(a.certificate.keyUsage == UInt32(KU_DIGITAL_SIGNATURE | KU_KEY_ENCIPHERMENT))
        #expect(b.certificate.keyUsage == UInt32(KU_DIGITAL_SIGNATURE))
        #expect(a.certificate.serialBytes != b.certificate.serialBytes)
        #expect(verify(a.certificate, root: ca.root, .host("dev.test"), at: now) == 0)
        #expect(verify(b.certificate, root: ca.root, .host("dev.test"), at: now) == 0)
    }

    @Test("CN is kept at exactly 64 characters")
    func commonNameAt64() throws {
        let now = currentTime()
        let ca = try makeAuthority(now: now)
        let name = String(repeating: "a", count: 60) + ".tst"
        #expect(name.count == 64)
        let cert = try ca.mintLeaf(for: try LeafIdentity(names: [name]), now: now).certificate
        #expect(cert.commonName == name)
        #expect(extensionReading(cert, NID_subject_alt_name) == ExtensionReading(critical: false, text: "DNS:\(name)"))
    }

    @Test("a first name over 64 characters: empty subject, SAN critical, still verifies")
    func longName() throws {
        let now = currentTime()
        let ca = try makeAuthority(now: now)
        let long = String(repeating: "a", count: 63) + "." + String(repeating: "b", count: 10) + ".test"
        #expect(long.count == 79)
        let cert = try ca.mintLeaf(for: try LeafIdentity(names: [long, "short.test"]), now: now).certificate
        #expect(subjectEntries(cert).isEmpty)
        #expect(cert.commonName == nil)
        #expect(cert.subject == "")
        #expect(extensionReading(cert, NID_subject_alt_name) == ExtensionReading(critical: true, text: "DNS:\(long), DNS:short.test"))
        #expect(verify(cert, root: ca.root, .host(long), at: now) == 0)
        #expect(verify(cert, root: ca.root, .host("short.test"), at: now) == 0)
    }

    @Test("an IP-only identity gets the address as CN and an iPAddress SAN, never a DNS SAN")
    func ipOnly() throws {
        let now = currentTime()
        let ca = try makeAuthority(now: now)
        let cert = try ca.mintLeaf(for: try LeafIdentity(names: ["[2001:db8::1]"]), now: now).certificate
        #expect(cert.commonName == "2001:db8::1")
        #expect(cert.subjectAlternativeNames == [.ip(IPAddress("2001:db8::1")!)])
        #expect(extensionReading(cert, NID_subject_alt_name)?.text == "IP Address:2001:DB8:0:0:0:0:0:1")
        #expect(verify(cert, root: ca.root, .ip("2001:db8::1"), at: now) == 0)
    }

    @Test("a leaf never outlives its root")
    func cappedAtRootEnd() throws {
        let now = currentTime()
        // A root made 3,600 days ago ends in 50 days: shorter than a leaf's 197 days ahead.
        let rootKey = try PrivateKey.generate(.ecdsaP256)
        let root = try CertificateAuthority.makeRoot(key: rootKey, now: now - 3600 * day)
        #expect(root.notAfter == now + 50 * day)
        let ca = CertificateAuthority(root: root, rootKey: rootKey, leafKey: try PrivateKey.generate(.ecdsaP256))
        let cert = try ca.mintLeaf(for: try LeafIdentity(names: ["a.test"]), now: now).certificate
        #expect(cert.notBefore == now - 2 * day)
        #expect(cert.notAfter == root.notAfter)
        #expect(cert.notAfter - cert.notBefore < 199 * day)
        #expect(verify(cert, root: root, .host("a.test"), at: now) == 0)
    }

    @Test("a leaf never begins before its root: a root valid from this moment (imported the day it was made) gets leaves from this moment, not two days before")
    func neverBeforeRootStart() throws {
        let now = currentTime()
        let rootKey = try PrivateKey.generate(.ecdsaP256)
        // makeRoot backdates 2 days: made "2 days from now" it starts now.
        let root = try CertificateAuthority.makeRoot(key: rootKey, now: now + 2 * day)
        #expect(root.notBefore == now)
        let ca = CertificateAuthority(root: root, rootKey: rootKey, leafKey: try PrivateKey.generate(.ecdsaP256))
        let cert = try ca.mintLeaf(for: try LeafIdentity(names: ["a.test"]), now: now).certificate
        #expect(cert.notBefore == root.notBefore)
        #expect(cert.notAfter == now + 199 * day)
        #expect(verify(cert, root: root, .host("a.test"), at: now) == 0)
    }

    @Test("a root that has expired, or is not valid yet, signs nothing: the reason and the remedy (a trial's expired root minted leaves that ended before they began)")
    func rootOutsideItsValidity() throws {
        let now = currentTime()
        let rootKey = try PrivateKey.generate(.ecdsaP256)
        // Made 3,660 days ago: its ten years (backdated 2 days) have ended.
        let old = try CertificateAuthority.makeRoot(key: rootKey, now: now - 3_660 * day)
        let expired = CertificateAuthority(root: old, rootKey: rootKey, leafKey: try PrivateKey.generate(.ecdsaP256))
        #expect(old.notAfter < now)
        #expect(expired.rootProblem(now: now) == .expired(notAfter: old.notAfter))
        #expect(throws: CAError.rootNotValid(.expired(notAfter: old.notAfter))) {
            try expired.mintLeaf(for: try LeafIdentity(names: ["a.test"]), now: now)
        }
        #expect(throws: CAError.rootNotValid(.expired(notAfter: old.notAfter))) {
            try expired.issue(for: try LeafIdentity(names: ["a.test"]), keyType: .ecdsaP256, now: now)
        }
        #expect(CAError.rootNotValid(.expired(notAfter: 1_735_689_600)).message
                == "The CA cannot sign: its root expired on 2025-01-01 00:00:00 UTC; make a new one with `tv ca remake` (devices that trusted the old root must be given the new one).")
        // Made (backdated 2 days) 10 days from now: not valid yet.
        let early = try CertificateAuthority.makeRoot(key: rootKey, now: now + 12 * day)
        let future = CertificateAuthority(root: early, rootKey: rootKey, leafKey: try PrivateKey.generate(.ecdsaP256))
        #expect(future.rootProblem(now: now) == .notYetValid(notBefore: early.notBefore))
        #expect(throws: CAError.rootNotValid(.notYetValid(notBefore: early.notBefore))) {
            try future.mintLeaf(for: try LeafIdentity(names: ["a.test"]), now: now)
        }
        #expect(CAError.rootNotValid(.notYetValid(notBefore: 1_893_456_000)).message
                == "The CA cannot sign: its root is not valid until 2030-01-01 00:00:00 UTC; check this machine's clock (`date`).")
        // The last second of its validity still signs; its end does not.
        #expect(expired.rootProblem(now: old.notAfter - 1) == nil)
        #expect(expired.rootProblem(now: old.notAfter) == .expired(notAfter: old.notAfter))
    }

    @Test("serials of leaves minted in a row are all different")
    func serialsDiffer() throws {
        let now = currentTime()
        let ca = try makeAuthority(now: now)
        let identity = try LeafIdentity(names: ["a.test"])
        let serials = try (0..<200).map { _ in try ca.mintLeaf(for: identity, now: now).certificate.serialBytes }
        #expect(Set(serials).count == serials.count)
        #expect(serials.allSatisfy { $0.count == 16 && (0x01...0x7F).contains($0[0]) })
    }

    @Test("SANs copied from the real server are added, normalised, without duplicates; odd ones skipped")
    func addingServerSANs() throws {
        let base = try LeafIdentity(names: ["a.test"])
        let merged = base.adding([.dns("A.TEST."), .dns("b.test"), .dns("bad name"), .dns("bücher.test"),
                                  .ip(IPAddress("10.0.0.1")!), .ip(IPAddress("10.0.0.1")!)])
        #expect(merged.dnsNames == ["a.test", "b.test"])
        #expect(merged.ipAddresses == [IPAddress("10.0.0.1")!])
        let now = currentTime()
        let ca = try makeAuthority(now: now)
        let cert = try ca.mintLeaf(for: merged, now: now).certificate
        #expect(cert.subjectAlternativeNames == [.dns("a.test"), .dns("b.test"), .ip(IPAddress("10.0.0.1")!)])
    }
}
