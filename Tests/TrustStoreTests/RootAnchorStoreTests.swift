import Foundation
import LocalCA
import Testing
import TrustStore

/// A root already in the CA folder that OpenSSL cannot anchor (AKI ≠ SKI, made by the openssl
/// command) is said as such, not blamed on hash links (issue 14 §7).
struct RootAnchorStoreTests {
    /// The openssl-made root whose AKI is not its SKI, placed as the CA (load() does not judge it).
    static func badCA(_ f: StoreFixture) throws -> (CertificateAuthority, String) {
        let dir = f.path + "/bad-ca"
        f.mkdir("bad-ca")
        try f.run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "30",
                              "-keyout", dir + "/root-key.pem", "-out", dir + "/root.pem", "-subj", "/CN=Bad AKI",
                              "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
                              "-addext", "authorityKeyIdentifier=keyid:always",
                              "-addext", "subjectKeyIdentifier=01:02:03:04:05:06:07:08:09:0a:0b:0c:0d:0e:0f:10:11:12:13:14"])
        try f.run("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", dir + "/leaf-key.pem"])
        chmod(dir, 0o700)
        chmod(dir + "/root-key.pem", 0o600)
        chmod(dir + "/leaf-key.pem", 0o600)
        guard case .present(let ca) = CAFolder(directory: dir).load() else { throw CAError.absent(directory: dir) }
        return (ca, f.read("bad-ca/root.pem"))
    }

    @Test func aRootThatCannotAnchorItselfIsSaidSoInABundleAndInAHashedFolder() throws {
        let f = try StoreFixture()
        let (ca, pem) = try Self.badCA(f)
        f.write("bundle.pem", pem)
        f.mkdir("certs")
        f.write("certs/bad.pem", pem)
        try f.run("openssl", ["rehash", f.path + "/certs"])
        for store in [TrustStoreSpec.file(f.path + "/bundle.pem"), .dir(f.path + "/certs")] {
            let facts = TrustQuestions.ask(store, about: ca, now: f.now, environment: f.environment)
            #expect(facts == TrustFacts(store: store, installed: .yes, usable: .no,
                                        finding: .rootCannotAnchor(code: 30, text: "authority and subject key identifier mismatch")))
        }
    }
}
