import COpenSSL
import Foundation
import Testing
import TVHome
@testable import LocalCA

/// `tv ca import --cert FILE --key FILE`: the checks before a foreign CA is taken in (issue 2).
@Suite("CA import")
struct ImportTests {
    /// A self-signed certificate with the given extensions, for the cases our own root never is.
    static func selfSigned(key: PrivateKey, extensions: [(Int32, String)], notBefore: Int64, notAfter: Int64) throws -> Certificate {
        let builder = try CertificateBuilder(subjectKey: key, serial: try SerialNumber.random(), notBefore: notBefore, notAfter: notAfter)
        try builder.setSubject([("CN", "Lab Root"), ("O", "Lab")])
        try builder.setIssuer(nil)
        for (nid, value) in extensions { try builder.addExtension(nid, value, issuer: nil) }
        return try builder.sign(with: key)
    }

    /// Imports `cert` + `key` (written as files) into a fresh home; returns the result and the folder.
    func attempt(cert: [UInt8], key: [UInt8], in tmp: TemporaryFolder) throws -> (Result<CertificateAuthority, Error>, CAFolder, String, String) {
        let certPath = try tmp.write("lab.crt", cert)
        let keyPath = try tmp.write("lab.key", key)
        let folder = CAFolder(home: TVHome(path: tmp.path + "/home"))
        let result = Result { try folder.importCA(certificatePath: certPath, keyPath: keyPath, now: currentTime()) }
        return (result, folder, certPath, keyPath)
    }

    /// The refusal's (file, reason), after checking that nothing was written.
    func refusal(_ result: Result<CertificateAuthority, Error>, folder: CAFolder) -> (String, String)? {
        #expect(!FileManager.default.fileExists(atPath: folder.directory), "a refused import writes nothing")
        guard case .failure(CAError.importRefused(let file, let reason)) = result else {
            Issue.record("expected importRefused, got \(result)")
            return nil
        }
        return (file, reason)
    }

    @Test("a valid CA (PEM) is imported with a fresh leaf key and the usual modes")
    func importsPEM() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let key = try pooledKey(.rsa2048)
        let now = currentTime()
        let cert = try Self.selfSigned(key: key, extensions: [(NID_basic_constraints, "critical,CA:TRUE"),
                                                             (NID_key_usage, "critical,keyCertSign,cRLSign"),
                                                             (NID_subject_key_identifier, "hash")],
                                       notBefore: now - day, notAfter: now + 30 * day)
        let (result, folder, _, _) = try attempt(cert: cert.pem, key: try key.pkcs8PEM(), in: tmp)
        let ca = try result.get()
        #expect(ca.root.der == cert.der)
        #expect(!ca.root.matches(ca.leafKey))
        #expect(ca.leafKey.type == .ecdsaP256)
        #expect(FileModes.permissions(of: folder.directory) == 0o700)
        #expect(FileModes.permissions(of: folder.rootKeyPath) == 0o600)
        #expect(FileModes.permissions(of: folder.leafKeyPath) == 0o600)
        guard case .present(let loaded) = folder.load() else { Issue.record("not present"); return }
        #expect(loaded.root.der == cert.der)
        // Its leaves verify against it.
        let leaf = try loaded.mintLeaf(for: try LeafIdentity(names: ["lab.test"]), now: now)
        #expect(verify(leaf.certificate, root: cert, .host("lab.test"), at: now) == 0)
    }

    @Test("DER certificate input is accepted; a CA without keyUsage is refused (RFC 5280 §4.2.1.3: a CA MUST have it; strict verifiers refuse its leaves)")
    func importsDER() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let key = try pooledKey(.ecdsaP256)
        let now = currentTime()
        let cert = try Self.selfSigned(key: key, extensions: [(NID_basic_constraints, "critical,CA:TRUE"), (NID_subject_key_identifier, "hash"),
                                                              (NID_key_usage, "critical,keyCertSign,cRLSign")],
                                       notBefore: now - day, notAfter: now + day)
        let (result, _, _, _) = try attempt(cert: cert.der, key: try key.pkcs8PEM(), in: tmp)
        #expect(try result.get().root.der == cert.der)

        let bare = try Self.selfSigned(key: key, extensions: [(NID_basic_constraints, "critical,CA:TRUE"), (NID_subject_key_identifier, "hash")],
                                       notBefore: now - day, notAfter: now + day)
        let tmp2 = TemporaryFolder()
        defer { tmp2.remove() }
        let (refusedResult, folder, certPath, _) = try attempt(cert: bare.der, key: try key.pkcs8PEM(), in: tmp2)
        let refused = try #require(refusal(refusedResult, folder: folder))
        #expect(refused.0 == certPath)
        #expect(refused.1 == "it has no keyUsage extension, and strict verifiers (OpenSSL's -x509_strict, Python 3.13's default) refuse every certificate under such a CA (reissue it with keyUsage=critical,keyCertSign,cRLSign)")
    }

    @Test("a certificate that is not a CA is refused")
    func notACA() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let key = try pooledKey(.ecdsaP256)
        let now = currentTime()
        let cert = try Self.selfSigned(key: key, extensions: [(NID_basic_constraints, "critical,CA:FALSE")],
                                       notBefore: now - day, notAfter: now + day)
        let (result, folder, certPath, _) = try attempt(cert: cert.pem, key: try key.pkcs8PEM(), in: tmp)
        let refused = try #require(refusal(result, folder: folder))
        #expect(refused.0 == certPath)
        #expect(refused.1.contains("not a CA"))
        // And one with no basicConstraints at all.
        let bare = try Self.selfSigned(key: key, extensions: [], notBefore: now - day, notAfter: now + day)
        let tmp2 = TemporaryFolder()
        defer { tmp2.remove() }
        let (result2, folder2, _, _) = try attempt(cert: bare.pem, key: try key.pkcs8PEM(), in: tmp2)
        #expect(refusal(result2, folder: folder2)?.1.contains("not a CA") == true)
    }

    @Test("a key that does not match the certificate is refused, naming the key file")
    func keyMismatch() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let now = currentTime()
        let cert = try CertificateAuthority.makeRoot(key: try pooledKey(.ecdsaP256), now: now)
        let (result, folder, certPath, keyPath) = try attempt(cert: cert.pem, key: try pooledKey(.ecdsaP256, slot: 1).pkcs8PEM(), in: tmp)
        let refused = try #require(refusal(result, folder: folder))
        #expect(refused.0 == keyPath)
        #expect(refused.1 == "it is not the key of \(certPath)")
    }

    @Test("an expired CA, and one not yet valid, are refused")
    func validity() throws {
        let key = try pooledKey(.ecdsaP256)
        let now = currentTime()
        for (notBefore, notAfter) in [(now - 20 * day, now - day), (now + day, now + 20 * day)] {
            let tmp = TemporaryFolder()
            defer { tmp.remove() }
            let cert = try Self.selfSigned(key: key, extensions: [(NID_basic_constraints, "critical,CA:TRUE"),
                                                                 (NID_key_usage, "critical,keyCertSign")],
                                           notBefore: notBefore, notAfter: notAfter)
            let (result, folder, certPath, _) = try attempt(cert: cert.pem, key: try key.pkcs8PEM(), in: tmp)
            let refused = try #require(refusal(result, folder: folder))
            #expect(refused.0 == certPath)
            #expect(refused.1.hasPrefix("it is not valid now (valid \(Timestamp.utc(notBefore)) to \(Timestamp.utc(notAfter))"))
        }
    }

    @Test("a CA whose keyUsage lacks keyCertSign is refused")
    func keyUsageWithoutCertSign() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let key = try pooledKey(.ecdsaP256)
        let now = currentTime()
        let cert = try Self.selfSigned(key: key, extensions: [(NID_basic_constraints, "critical,CA:TRUE"),
                                                             (NID_key_usage, "critical,digitalSignature,cRLSign")],
                                       notBefore: now - day, notAfter: now + day)
        let (result, folder, certPath, _) = try attempt(cert: cert.pem, key: try key.pkcs8PEM(), in: tmp)
        let refused = try #require(refusal(result, folder: folder))
        #expect(refused.0 == certPath)
        #expect(refused.1.contains("keyCertSign"))
    }

    @Test("files that are not a certificate or not a key are refused, naming the file")
    func notParsable() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let key = try pooledKey(.ecdsaP256)
        let cert = try CertificateAuthority.makeRoot(key: key, now: currentTime())
        let (r1, f1, certPath, _) = try attempt(cert: Array("hello".utf8), key: try key.pkcs8PEM(), in: tmp)
        #expect(refusal(r1, folder: f1).map { $0.0 == certPath && $0.1.contains("not a PEM or DER certificate") } == true)
        let tmp2 = TemporaryFolder()
        defer { tmp2.remove() }
        let (r2, f2, _, keyPath) = try attempt(cert: cert.pem, key: cert.pem, in: tmp2)
        #expect(refusal(r2, folder: f2).map { $0.0 == keyPath && $0.1 == "it holds no readable PEM private key (cut short, or not a key)" } == true)
        // A key cut short is not told to be decrypted (a trial).
        let tmp4 = TemporaryFolder()
        defer { tmp4.remove() }
        let cutKey = Array(try key.pkcs8PEM().prefix(60))
        let (r4, f4, _, cutPath) = try attempt(cert: cert.pem, key: cutKey, in: tmp4)
        #expect(refusal(r4, folder: f4).map { $0.0 == cutPath && $0.1 == "it holds no readable PEM private key (cut short, or not a key)" } == true)
        // A file that does not exist.
        let folder = CAFolder(home: TVHome(path: tmp.path + "/home3"))
        #expect(throws: CAError.unreadableFile(path: tmp.path + "/nope.pem", reason: "no such file")) {
            try folder.importCA(certificatePath: tmp.path + "/nope.pem", keyPath: tmp.path + "/nope.key", now: currentTime())
        }
    }

    @Test("an encrypted key is refused without a passphrase prompt; an Ed25519 CA (made by openssl) is refused as a key tv does not sign with")
    func encryptedAndEd25519Keys() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        func openssl(_ arguments: [String]) -> Child.Finished {
            Child.run("/usr/bin/openssl", arguments, environment: ["PATH": "/usr/bin:/bin"], directory: tmp.path, stdin: Data(), timeout: 30)
        }
        let key = try pooledKey(.ecdsaP256)
        let cert = try CertificateAuthority.makeRoot(key: key, now: currentTime())
        let plain = try tmp.write("plain.key", try key.pkcs8PEM())
        // No terminal is needed to see it: PEM_read_bio_PrivateKey is given a callback with no passphrase.
        #expect(openssl(["pkey", "-in", plain, "-aes256", "-passout", "pass:secret", "-out", tmp.path + "/enc.key"]).status == 0)
        let encrypted = Array(FileManager.default.contents(atPath: tmp.path + "/enc.key") ?? Data())
        #expect(String(decoding: encrypted, as: UTF8.self).hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        let (r1, f1, _, keyPath) = try attempt(cert: cert.pem, key: encrypted, in: tmp)
        #expect(refusal(r1, folder: f1).map { $0.0 == keyPath && $0.1 == "it is an encrypted private key; decrypt it first (`openssl pkey -in KEY -out plain.key`)" } == true)

        let ed = TemporaryFolder()
        defer { ed.remove() }
        #expect(openssl(["genpkey", "-algorithm", "ed25519", "-out", tmp.path + "/ed.key"]).status == 0)
        let made = openssl(["req", "-x509", "-new", "-key", tmp.path + "/ed.key", "-subj", "/CN=Ed Root", "-days", "30",
                            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign", "-out", tmp.path + "/ed.pem"])
        #expect(made.status == 0, "\(made)")
        let (r2, f2, _, edKey) = try attempt(cert: Array(FileManager.default.contents(atPath: tmp.path + "/ed.pem") ?? Data()),
                                             key: Array(FileManager.default.contents(atPath: tmp.path + "/ed.key") ?? Data()), in: ed)
        #expect(refusal(r2, folder: f2).map { $0.0 == edKey && $0.1 == "its key is ED25519 256-bit, which tv does not sign certificates with; use an ECDSA (P-256, P-384) or RSA CA" } == true,
                "\(r2)")
    }

    @Test("an RSA-1024 CA (made by openssl) is refused as too weak for clients (curl and Python refused every leaf under one tv had taken: CA certificate key too weak); the trust check verifies at security level 2 and says it")
    func weakRSAKeyRefused() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        func openssl(_ arguments: [String]) -> Child.Finished {
            Child.run("/usr/bin/openssl", arguments, environment: ["PATH": "/usr/bin:/bin"], directory: tmp.path, stdin: Data(), timeout: 30)
        }
        let made = openssl(["req", "-x509", "-newkey", "rsa:1024", "-nodes", "-keyout", tmp.path + "/weak.key", "-out", tmp.path + "/weak.pem",
                            "-days", "30", "-subj", "/CN=RSA1024 CA", "-addext", "basicConstraints=critical,CA:TRUE",
                            "-addext", "keyUsage=critical,keyCertSign"])
        #expect(made.status == 0, "\(made)")
        let home = TemporaryFolder()
        defer { home.remove() }
        let (result, folder, _, keyPath) = try attempt(cert: Array(FileManager.default.contents(atPath: tmp.path + "/weak.pem") ?? Data()),
                                                       key: Array(FileManager.default.contents(atPath: tmp.path + "/weak.key") ?? Data()), in: home)
        #expect(refusal(result, folder: folder).map { $0.0 == keyPath && $0.1 == "its key is RSA 1024, too weak for today's clients (OpenSSL's default security level refuses every certificate under it: \"CA certificate key too weak\"); use a CA with an RSA key of at least 2048 bits or an ECDSA P-256 or P-384 key" } == true,
                "\(result)")
        #expect(try PrivateKey.fromPEM(Array(FileManager.default.contents(atPath: tmp.path + "/weak.key") ?? Data())).tooWeakForClients)
        #expect(try !pooledKey(.rsa2048).tooWeakForClients && !pooledKey(.ecdsaP256).tooWeakForClients)
    }

    @Test("import refuses when a CA already exists, writing nothing")
    func refusesExisting() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let folder = CAFolder(home: TVHome(path: tmp.path + "/home"))
        try folder.create(now: currentTime())
        let key = try pooledKey(.ecdsaP256)
        let certPath = try tmp.write("lab.crt", try CertificateAuthority.makeRoot(key: key, now: currentTime()).pem)
        let keyPath = try tmp.write("lab.key", try key.pkcs8PEM())
        let before = snapshot(tmp.path)
        #expect(throws: CAError.alreadyExistsForImport(directory: folder.directory)) {
            try folder.importCA(certificatePath: certPath, keyPath: keyPath, now: currentTime())
        }
        #expect(sameSnapshot(before, snapshot(tmp.path)))
        // The way out it names is removal (remaking imports nothing: a trial followed it).
        #expect(CAError.alreadyExistsForImport(directory: folder.directory).message
                == "A CA already exists in \(folder.directory); to import another, remove this one first (`tv ca remove`: every device that trusts its root stops trusting tv), then import again.")
    }
}
