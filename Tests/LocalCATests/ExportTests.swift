import COpenSSL
import CTVShims
import Foundation
import Testing
import TVHome
@testable import LocalCA

/// The forms the root leaves in: PEM, DER, PKCS#12, Android's name, `.mobileconfig` (issue 2).
@Suite("CA exports")
struct ExportTests {
    /// What a PKCS#12 file holds, read with OpenSSL's own parser: the certificate matching the key
    /// (`cert`), the key, and the other certificates (`others`; a certificate-only file puts the
    /// root here, as `PKCS12_parse` files certificates without a key).
    func parsePKCS12(_ bytes: [UInt8], passphrase: String) -> (cert: Certificate?, key: PrivateKey?, others: [Certificate], ok: Bool) {
        bytes.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            guard let p12 = d2i_PKCS12(nil, &p, buf.count) else { return (nil, nil, [], false) }
            defer { PKCS12_free(p12) }
            var pkey: OpaquePointer?
            var x509: OpaquePointer?
            var stack: OpaquePointer?
            let ok = PKCS12_parse(p12, passphrase, &pkey, &x509, &stack) == 1
            ERR_clear_error()
            var others: [Certificate] = []
            if let stack {
                for i in 0..<tv_x509_stack_count(stack) {
                    let cert = tv_x509_stack_value(stack, i)!
                    X509_up_ref(cert)
                    others.append(Certificate(owning: cert))
                }
                tv_x509_stack_free_all(stack)
            }
            return (x509.map { Certificate(owning: $0) }, pkey.map { PrivateKey(owning: $0) }, others, ok)
        }
    }

    @Test("PEM and DER are the root certificate")
    func pemAndDER() throws {
        let ca = try makeAuthority(now: currentTime())
        #expect(try Certificate.fromPEM(CAExport.pem(ca)).der == ca.root.der)
        #expect(CAExport.der(ca) == ca.root.der)
        #expect(String(decoding: CAExport.pem(ca), as: UTF8.self).hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        #expect(!String(decoding: CAExport.pem(ca), as: UTF8.self).contains("PRIVATE KEY"))
    }

    @Test("PKCS#12 without the key: the root certificate only, readable with an empty passphrase")
    func pkcs12CertificateOnly() throws {
        let ca = try makeAuthority(now: currentTime())
        let p12 = try CAExport.pkcs12(ca, passphrase: "", includeKey: false)
        let parsed = parsePKCS12(p12, passphrase: "")
        #expect(parsed.ok)
        #expect(parsed.key == nil)
        #expect(parsed.cert == nil)
        #expect(parsed.others.map(\.der) == [ca.root.der])
    }

    @Test("PKCS#12 with the key needs a passphrase, and carries the root key under it")
    func pkcs12WithKey() throws {
        let ca = try makeAuthority(now: currentTime())
        #expect(throws: CAError.passphraseRequired) { try CAExport.pkcs12(ca, passphrase: "", includeKey: true) }
        let p12 = try CAExport.pkcs12(ca, passphrase: "correct horse", includeKey: true)
        let parsed = parsePKCS12(p12, passphrase: "correct horse")
        #expect(parsed.ok)
        #expect(parsed.cert?.der == ca.root.der)
        #expect(parsed.others.isEmpty)
        let key = try #require(parsed.key)
        #expect(ca.root.matches(key))
        #expect(!parsePKCS12(p12, passphrase: "wrong").ok)
    }

    @Test("Android's name is subject_hash_old as 8 lowercase hex + .0; the file is the PEM")
    func android() throws {
        let ca = try makeAuthority(now: currentTime())
        let name = CAExport.androidFileName(ca)
        let expected = String(format: "%08lx.0", X509_subject_name_hash_old(ca.root.handle))
        #expect(name == expected)
        #expect(name.count == 10)
        #expect(name.allSatisfy { "0123456789abcdef.".contains($0) })
        #expect(CAExport.android(ca) == ca.root.pem)
    }

    /// The profile of the CA in `folder`, exported as `tv ca export --mobileconfig` does, parsed back.
    func exportProfile(_ folder: CAFolder) throws -> (dict: [String: Any], bytes: [UInt8]) {
        guard case .present(let ca) = folder.load() else { throw CAError.absent(directory: folder.directory) }
        let identity = try ProfileIdentity.loadOrCreate(path: folder.identityPath)
        let bytes = try CAExport.mobileConfig(ca, identity: identity)
        let plist = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
        return (try #require(plist as? [String: Any]), bytes)
    }

    @Test("the .mobileconfig has the specified keys and carries the root as DER")
    func mobileConfigShape() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let folder = CAFolder(home: TVHome(path: tmp.path))
        let ca = try folder.create(now: currentTime())
        let (top, bytes) = try exportProfile(folder)
        #expect(String(decoding: bytes.prefix(38), as: UTF8.self) == "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        #expect(Set(top.keys) == ["PayloadType", "PayloadVersion", "PayloadIdentifier", "PayloadUUID", "PayloadDisplayName",
                                  "PayloadDescription", "PayloadOrganization", "PayloadRemovalDisallowed", "PayloadContent"])
        #expect(top["PayloadType"] as? String == "Configuration")
        #expect(top["PayloadVersion"] as? Int == 1)
        #expect(top["PayloadDisplayName"] as? String == "TunnelVision certificate")
        #expect(top["PayloadRemovalDisallowed"] as? Bool == false)
        #expect((top["PayloadDescription"] as? String)?.contains("Certificate Trust Settings") == true)
        let identifier = try #require(top["PayloadIdentifier"] as? String)
        #expect(identifier.hasPrefix("org.tunnelvision.ca."))
        #expect(UUID(uuidString: try #require(top["PayloadUUID"] as? String)) != nil)
        let content = try #require(top["PayloadContent"] as? [[String: Any]])
        #expect(content.count == 1)
        let root = content[0]
        #expect(root["PayloadType"] as? String == "com.apple.security.root")
        #expect(root["PayloadVersion"] as? Int == 1)
        #expect(root["PayloadIdentifier"] as? String == identifier + ".root")
        #expect(UUID(uuidString: try #require(root["PayloadUUID"] as? String)) != nil)
        #expect((root["PayloadContent"] as? Data).map { [UInt8]($0) } == ca.root.der)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("PRIVATE KEY"))
        // Re-exporting the same CA is byte-stable.
        #expect(try exportProfile(folder).bytes == bytes)
    }

    @Test("a remake-like regeneration keeps the profile identity; only the inner UUID changes")
    func mobileConfigIdentityAcrossRemake() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let folder = CAFolder(home: TVHome(path: tmp.path))
        try folder.create(now: currentTime())
        let (before, _) = try exportProfile(folder)
        // Delete the three CA files by hand (not through remove()), then create again.
        for path in [folder.rootPath, folder.rootKeyPath, folder.leafKeyPath] {
            try FileManager.default.removeItem(atPath: path)
        }
        let second = try folder.create(now: currentTime())
        let (after, _) = try exportProfile(folder)
        let innerBefore = try #require((before["PayloadContent"] as? [[String: Any]])?.first)
        let innerAfter = try #require((after["PayloadContent"] as? [[String: Any]])?.first)
        #expect(after["PayloadIdentifier"] as? String == before["PayloadIdentifier"] as? String)
        #expect(after["PayloadUUID"] as? String == before["PayloadUUID"] as? String)
        #expect(innerAfter["PayloadIdentifier"] as? String == innerBefore["PayloadIdentifier"] as? String)
        #expect(innerAfter["PayloadUUID"] as? String != innerBefore["PayloadUUID"] as? String)
        #expect((innerAfter["PayloadContent"] as? Data).map { [UInt8]($0) } == second.root.der)
        #expect((innerAfter["PayloadContent"] as? Data) != (innerBefore["PayloadContent"] as? Data))
    }

    @Test("two homes have different profile identities")
    func identityPerHome() throws {
        let a = TemporaryFolder(), b = TemporaryFolder()
        defer { a.remove(); b.remove() }
        let ia = try ProfileIdentity.loadOrCreate(path: a.path + "/profile-identity.json")
        let ib = try ProfileIdentity.loadOrCreate(path: b.path + "/profile-identity.json")
        #expect(ia.profileIdentifier != ib.profileIdentifier)
        #expect(ia.profileUUID != ib.profileUUID)
        #expect(try ProfileIdentity.loadOrCreate(path: a.path + "/profile-identity.json") == ia)
        #expect(FileModes.permissions(of: a.path + "/profile-identity.json") == 0o644)
    }

    @Test("a damaged identity file is refused, not silently replaced")
    func damagedIdentity() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let path = try tmp.write("profile-identity.json", Array("{not json".utf8))
        #expect(throws: (any Error).self) { try ProfileIdentity.loadOrCreate(path: path) }
        #expect(FileManager.default.contents(atPath: path) == Data("{not json".utf8))
    }

    @Test("the inner UUID is an RFC 4122 text derived from the root's SHA-256")
    func innerUUID() {
        let hash = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        // Bytes 00 07 0E … 69; byte 6 (0x2A) gets version 5 → 0x5A, byte 8 (0x38) variant 10 → 0xB8.
        let text = MobileConfig.uuid(from: hash)
        #expect(text == "00070E15-1C23-5A31-B83F-464D545B6269")
        #expect(UUID(uuidString: text) != nil)
    }
}
