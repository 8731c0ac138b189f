import COpenSSL
import Foundation
import Testing
import TVHome
@testable import LocalCA

/// `tv ca import` refuses a root OpenSSL cannot take as its own anchor for TLS servers (issue 14 §7).
@Suite("CA import: the root must anchor itself")
struct RootAnchorTests {
    /// An AKI extension in raw DER (`AuthorityKeyIdentifier ::= SEQUENCE { [0] keyIdentifier }`)
    /// holding `keyID` (20 bytes), for a root whose AKI is not its SKI.
    static func authorityKeyID(_ keyID: [UInt8]) -> String {
        "DER:" + ([0x30, 0x16, 0x80, 0x14] + keyID).map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    static let caExtensions: [(Int32, String)] = [(NID_basic_constraints, "critical,CA:TRUE"),
                                                  (NID_key_usage, "critical,keyCertSign,cRLSign"),
                                                  (NID_subject_key_identifier, "hash")]

    @Test("a root whose authority key identifier is not its subject key identifier is refused with OpenSSL's error 30, nothing written")
    func akiMismatch() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let key = try pooledKey(.ecdsaP256)
        let now = currentTime()
        let cert = try ImportTests.selfSigned(key: key, extensions: Self.caExtensions + [(NID_authority_key_identifier, Self.authorityKeyID(Array(1 ... 20)))],
                                              notBefore: now - day, notAfter: now + 30 * day)
        #expect(cert.authorityKeyIdentifier == Array(1 ... 20))
        #expect(cert.selfIssueFailure == RootAnchorFailure(code: 30))
        let (result, folder, certPath, _) = try ImportTests().attempt(cert: cert.pem, key: try key.pkcs8PEM(), in: tmp)
        #expect(!FileManager.default.fileExists(atPath: folder.directory), "a refused import writes nothing")
        guard case .failure(let error) = result else { Issue.record("imported"); return }
        #expect(error as? CAError == .rootCannotAnchor(file: certPath, RootAnchorFailure(code: 30)))
        #expect((error as? CAError)?.message == "\(certPath) cannot be imported as the CA: OpenSSL does not accept it as its own trust anchor for TLS servers (error 30: authority and subject key identifier mismatch); reissue it with an authorityKeyIdentifier equal to its subjectKeyIdentifier, or with none, then import it again.")
    }

    @Test("roots with a matching AKI, with none, and tv's own, anchor themselves")
    func goodRoots() throws {
        let key = try pooledKey(.ecdsaP256)
        let now = currentTime()
        let skid = try ImportTests.selfSigned(key: key, extensions: Self.caExtensions, notBefore: now - day, notAfter: now + day).subjectKeyIdentifier!
        for extra in [[], [(NID_authority_key_identifier, Self.authorityKeyID(skid))]] as [[(Int32, String)]] {
            let cert = try ImportTests.selfSigned(key: key, extensions: Self.caExtensions + extra, notBefore: now - day, notAfter: now + day)
            #expect(cert.selfIssueFailure == nil)
            let ca = CertificateAuthority(root: cert, rootKey: key, leafKey: try pooledKey(.ecdsaP256, slot: 1))
            #expect(try ca.anchorFailure(now: now) == nil)
        }
        let own = CertificateAuthority(root: try CertificateAuthority.makeRoot(key: key, now: now), rootKey: key, leafKey: key)
        #expect(try own.anchorFailure(now: now) == nil)
    }

    @Test("a root whose extendedKeyUsage leaves out serverAuth cannot anchor TLS server chains: error 26")
    func emailOnlyRoot() throws {
        let key = try pooledKey(.ecdsaP256)
        let now = currentTime()
        let cert = try ImportTests.selfSigned(key: key, extensions: Self.caExtensions + [(NID_ext_key_usage, "emailProtection")],
                                              notBefore: now - day, notAfter: now + day)
        #expect(cert.selfIssueFailure == nil)
        let ca = CertificateAuthority(root: cert, rootKey: key, leafKey: try pooledKey(.ecdsaP256, slot: 1))
        let failure = try #require(try ca.anchorFailure(now: now))
        #expect(failure.code == X509_V_ERR_INVALID_PURPOSE)
        #expect(failure.remedy == "with serverAuth in its extendedKeyUsage, or with none")
    }
}
