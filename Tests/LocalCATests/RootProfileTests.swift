import COpenSSL
import Testing
@testable import LocalCA

/// The root's profile (issue 2 "tv ca create"; notes/specs.md §2.3), read back with OpenSSL.
@Suite("Root profile")
struct RootProfileTests {
    @Test("every field of the root, for each key type", arguments: KeyType.allCases)
    func profile(_ type: KeyType) throws {
        let now = currentTime()
        let key = try pooledKey(type)
        let root = try CertificateAuthority.makeRoot(key: key, now: now)

        #expect(x509Version(root) == 2)  // v3

        // Subject: CN=TunnelVision Root CA <first 4 bytes of the SKI as 8 hex>, O=TunnelVision.
        let ski = try #require(root.subjectKeyIdentifier)
        #expect(ski.count == 20)  // SHA-1 of the public key ("hash")
        let tag = Hex.encode(Array(ski.prefix(4)))
        #expect(tag.count == 8)
        let entries = subjectEntries(root)
        #expect(entries.map(\.0) == [NID_commonName, NID_organizationName])
        #expect(entries.map(\.1) == ["TunnelVision Root CA \(tag)", "TunnelVision"])
        #expect(root.subject == "CN=TunnelVision Root CA \(tag), O=TunnelVision")
        #expect(root.issuer == root.subject)
        #expect(root.isSigned(by: root))
        #expect(root.matches(key))

        // Serial: a positive INTEGER of exactly 16 content octets (first byte 0x01–0x7F).
        let serial = rawSerial(root)
        #expect(serial.type == V_ASN1_INTEGER)
        #expect(serial.octets.count == 16)
        #expect((0x01...0x7F).contains(serial.octets[0]))
        #expect(root.serialBytes == serial.octets)

        // Validity: exactly now − 2 days to now + 3650 days.
        #expect(root.notBefore == now - 2 * day)
        #expect(root.notAfter == now + 3650 * day)

        // Extensions: exactly basicConstraints, keyUsage, SKI; no EKU, no AKI, no duplicates.
        #expect(extensionNIDs(root) == [NID_basic_constraints, NID_key_usage, NID_subject_key_identifier])
        #expect(extensionReading(root, NID_basic_constraints) == ExtensionReading(critical: true, text: "CA:TRUE, pathlen:0"))
        #expect(root.isCA)
        #expect(root.pathLength == 0)
        #expect(extensionReading(root, NID_key_usage) == ExtensionReading(critical: true, text: "Certificate Sign, CRL Sign"))
        #expect(root.keyUsage == UInt32(KU_KEY_CERT_SIGN | KU_CRL_SIGN))
        #expect(extensionReading(root, NID_subject_key_identifier)?.critical == false)
        #expect(extensionReading(root, NID_ext_key_usage) == nil)
        #expect(root.extendedKeyUsage == nil)

        // Key and signature algorithm.
        #expect(root.publicKeyDescription == type.displayName)
        switch type {
        case .ecdsaP256: #expect(signatureNID(root) == NID_ecdsa_with_SHA256)
        case .ecdsaP384: #expect(signatureNID(root) == NID_ecdsa_with_SHA384)
        case .rsa2048, .rsa3072: #expect(signatureNID(root) == NID_sha256WithRSAEncryption)
        }
        #expect(key.type == type)
    }

    @Test("two roots made one after the other differ in subject and serial")
    func twoRootsDiffer() throws {
        let now = currentTime()
        let first = try CertificateAuthority.makeRoot(key: try PrivateKey.generate(.ecdsaP256), now: now)
        let second = try CertificateAuthority.makeRoot(key: try PrivateKey.generate(.ecdsaP256), now: now)
        #expect(first.subject != second.subject)
        #expect(first.serialBytes != second.serialBytes)
        #expect(first.der != second.der)
    }

    @Test("two CAs created in one folder after a removal differ in subject and serial")
    func recreatedCADiffers() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let folder = CAFolder(home: .init(path: tmp.path + "/home"))
        let first = try folder.create(now: currentTime())
        try folder.remove()
        let second = try folder.create(now: currentTime())
        #expect(first.root.subject != second.root.subject)
        #expect(first.root.serialBytes != second.root.serialBytes)
    }

    @Test("the root verifies alone as an anchor (\"installed\") but is no server certificate itself")
    func rootVerifiesAlone() throws {
        let now = currentTime()
        let root = try CertificateAuthority.makeRoot(key: try PrivateKey.generate(.ecdsaP256), now: now)
        #expect(verify(root, root: root, .none, at: now, purpose: nil) == 0)
        // keyUsage keyCertSign+cRLSign only: OpenSSL refuses it as a TLS server certificate.
        #expect(verify(root, root: root, .none, at: now) == X509_V_ERR_INVALID_PURPOSE)
    }
}
