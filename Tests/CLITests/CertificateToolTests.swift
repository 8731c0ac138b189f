import Foundation
import Testing

/// `tv ca create` / `tv ca issue` output, cross-checked with the `openssl` command-line tool.
@Suite("CLI: certificates through openssl", .timeLimit(.minutes(5)))
struct CertificateToolTests {
    /// `openssl verify -CAfile root -purpose sslserver [-x509_strict] <check> leaf`.
    func verify(_ s: Sandbox, leaf: String, _ check: [String], strict: Bool = false) throws -> ProcessOutput {
        try s.tool("openssl", ["verify", "-CAfile", s.rootPEM, "-purpose", "sslserver"] + (strict ? ["-x509_strict"] : []) + check + [leaf])
    }

    /// The `notBefore`/`notAfter` of a certificate file as seconds since 1970 (via openssl).
    func dates(_ s: Sandbox, _ cert: String) throws -> (Int64, Int64) {
        let out = try s.tool("openssl", ["x509", "-in", cert, "-noout", "-startdate", "-enddate", "-dateopt", "iso_8601"]).out
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss'Z'"
        var found: [String: Int64] = [:]
        for line in out.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2, let date = formatter.date(from: parts[1]) { found[parts[0]] = Int64(date.timeIntervalSince1970) }
        }
        return (found["notBefore"] ?? 0, found["notAfter"] ?? 0)
    }

    @Test("openssl x509 -text shows the root's extensions, and only those", arguments: ["ecdsa-p256", "ecdsa-p384", "rsa-2048", "rsa-3072"])
    func rootText(keyType: String) throws {
        try withSandbox { s in
            let before = Int64(Date().timeIntervalSince1970)
            try s.createCA("--key", keyType)
            let after = Int64(Date().timeIntervalSince1970)
            let text = normalizedLines(try s.tool("openssl", ["x509", "-in", s.rootPEM, "-noout", "-text"]).out)
            #expect(text.contains("X509v3 Basic Constraints: critical\nCA:TRUE, pathlen:0"))
            #expect(text.contains("X509v3 Key Usage: critical\nCertificate Sign, CRL Sign\n"))
            #expect(text.contains("X509v3 Subject Key Identifier:\n"))
            #expect(!text.contains("Extended Key Usage"))
            #expect(!text.contains("Authority Key Identifier"))
            #expect(text.components(separatedBy: "X509v3 ").count - 1 == 4)  // "X509v3 extensions:" + three
            let ski = text.components(separatedBy: "X509v3 Subject Key Identifier:\n")[1].prefix { $0 != "\n" }
            let tag = ski.replacingOccurrences(of: ":", with: "").prefix(8).lowercased()
            #expect(text.contains("Subject: CN = TunnelVision Root CA \(tag), O = TunnelVision\n"))
            #expect(text.contains("Issuer: CN = TunnelVision Root CA \(tag), O = TunnelVision\n"))
            // Serial: 16 octets, positive.
            let serial = text.components(separatedBy: "Serial Number:\n")[1].prefix { $0 != "\n" }
            #expect(serial.split(separator: ":").count == 16, "\(serial)")
            #expect(!text.contains("(Negative)"))
            switch keyType {
            case "ecdsa-p256": #expect(text.contains("NIST CURVE: P-256") && text.contains("Signature Algorithm: ecdsa-with-SHA256"))
            case "ecdsa-p384": #expect(text.contains("NIST CURVE: P-384") && text.contains("Signature Algorithm: ecdsa-with-SHA384"))
            case "rsa-2048": #expect(text.contains("Public-Key: (2048 bit)") && text.contains("Signature Algorithm: sha256WithRSAEncryption"))
            default: #expect(text.contains("Public-Key: (3072 bit)") && text.contains("Signature Algorithm: sha256WithRSAEncryption"))
            }
            // Validity: now − 2 days to now + 3650 days, "now" being when tv ran.
            let (notBefore, notAfter) = try dates(s, s.rootPEM)
            #expect((before - 2 * 86_400...after - 2 * 86_400).contains(notBefore))
            #expect(notAfter - notBefore == 3652 * 86_400)
            // The root alone verifies as an anchor (what "installed" means).
            let alone = try s.tool("openssl", ["verify", "-x509_strict", "-CAfile", s.rootPEM, s.rootPEM])
            #expect(alone.status == 0, "\(alone)")
        }
    }

    @Test("openssl x509 -text shows the leaf's extensions")
    func leafText() throws {
        try withSandbox { s in
            try s.createCA()
            let before = Int64(Date().timeIntervalSince1970)
            let leaf = try s.issue(["a.test", "127.0.0.1", "::1"])
            let text = normalizedLines(try s.tool("openssl", ["x509", "-in", leaf.cert, "-noout", "-text"]).out)
            let rootText = normalizedLines(try s.tool("openssl", ["x509", "-in", s.rootPEM, "-noout", "-text"]).out)
            let rootSKI = String(rootText.components(separatedBy: "X509v3 Subject Key Identifier:\n")[1].prefix { $0 != "\n" })
            #expect(text.contains("Subject: CN = a.test\n"))
            #expect(text.contains("X509v3 Basic Constraints: critical\nCA:FALSE\n"))
            #expect(text.contains("X509v3 Key Usage: critical\nDigital Signature\n"))
            #expect(text.contains("X509v3 Extended Key Usage:\nTLS Web Server Authentication\n"))
            #expect(text.contains("X509v3 Authority Key Identifier:\n\(rootSKI)\n"))
            #expect(text.contains("X509v3 Subject Alternative Name:\nDNS:a.test, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1\n"))
            #expect(!text.contains("Subject Key Identifier"))
            let serial = text.components(separatedBy: "Serial Number:\n")[1].prefix { $0 != "\n" }
            #expect(serial.split(separator: ":").count == 16, "\(serial)")
            let (notBefore, notAfter) = try dates(s, leaf.cert)
            #expect(notBefore >= before - 2 * 86_400 && notBefore <= Int64(Date().timeIntervalSince1970) - 2 * 86_400)
            #expect(notAfter - notBefore == 199 * 86_400)
        }
    }

    @Test("an RSA leaf key adds keyEncipherment")
    func rsaLeafText() throws {
        try withSandbox { s in
            try s.createCA()
            let leaf = try s.issue(["rsa.test"], key: "rsa-2048")
            let text = normalizedLines(try s.tool("openssl", ["x509", "-in", leaf.cert, "-noout", "-text"]).out)
            #expect(text.contains("X509v3 Key Usage: critical\nDigital Signature, Key Encipherment\n"))
            #expect(text.contains("Public-Key: (2048 bit)"))
            #expect(try verify(s, leaf: leaf.cert, ["-verify_hostname", "rsa.test"], strict: true).status == 0)
        }
    }

    @Test("openssl verify passes for every DNS, IPv4 and IPv6 SAN, with and without -x509_strict")
    func verifyPasses() throws {
        try withSandbox { s in
            try s.createCA()
            let leaf = try s.issue(["a.test", "www.a.test", "*.w.test", "127.0.0.1", "::1", "[2001:db8::5]"])
            let checks: [[String]] = [["-verify_hostname", "a.test"], ["-verify_hostname", "www.a.test"],
                                      ["-verify_hostname", "x.w.test"], ["-verify_ip", "127.0.0.1"],
                                      ["-verify_ip", "::1"], ["-verify_ip", "2001:db8::5"]]
            for check in checks {
                for strict in [false, true] {
                    let result = try verify(s, leaf: leaf.cert, check, strict: strict)
                    #expect(result.status == 0, "\(check) strict=\(strict): \(result)")
                    #expect(result.out == "\(leaf.cert): OK\n")
                }
            }
            // The chain file a server sends verifies too (its first certificate is the leaf).
            #expect(try verify(s, leaf: leaf.chain, ["-verify_hostname", "a.test"], strict: true).status == 0)
        }
    }

    @Test("openssl verify fails with error 62 for a name not in the SAN (and 64 for an address)")
    func verifyFails() throws {
        try withSandbox { s in
            try s.createCA()
            let leaf = try s.issue(["a.test", "*.w.test", "127.0.0.1", "::1"])
            for name in ["b.test", "w.test", "a.b.w.test", "a.test.evil"] {
                let result = try verify(s, leaf: leaf.cert, ["-verify_hostname", name])
                #expect(result.status == 2, "\(name): \(result)")
                #expect(result.all.contains("error 62 at 0 depth lookup: hostname mismatch"), "\(name): \(result)")
            }
            for ip in ["127.0.0.2", "::2"] {
                let result = try verify(s, leaf: leaf.cert, ["-verify_ip", ip])
                #expect(result.status == 2, "\(ip): \(result)")
                #expect(result.all.contains("error 64 at 0 depth lookup: IP address mismatch"), "\(ip): \(result)")
            }
            // And against a different root it does not chain at all.
            try withSandbox { other in
                try other.createCA()
                let result = try verify(other, leaf: leaf.cert, ["-verify_hostname", "a.test"])
                #expect(result.status == 2)
                #expect(result.all.contains("error 20"), "\(result)")
            }
        }
    }

    @Test("a name over 64 characters: no CN, SAN critical, verifies")
    func longName() throws {
        try withSandbox { s in
            try s.createCA()
            let long = String(repeating: "l", count: 63) + ".long.test"
            let leaf = try s.issue([long])
            let text = normalizedLines(try s.tool("openssl", ["x509", "-in", leaf.cert, "-noout", "-text"]).out)
            #expect(text.contains("\nSubject:\nSubject Public Key Info:\n"))  // an empty subject
            #expect(try s.tool("openssl", ["x509", "-in", leaf.cert, "-noout", "-subject"]).out == "subject=\n")
            #expect(text.contains("X509v3 Subject Alternative Name: critical\nDNS:\(long)\n"))
            #expect(try verify(s, leaf: leaf.cert, ["-verify_hostname", long], strict: true).status == 0)
        }
    }

    @Test("tv ca issue writes certificate, chain (no root), a 0600 key and the root, and leaves an existing folder's mode alone")
    func issueFiles() throws {
        try withSandbox { s in
            try s.createCA()
            // An existing output folder with its own mode (and the sticky bit, as /tmp has).
            let out = s.work + "/shared"
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
            chmod(out, 0o1777)
            let leaf = try s.issue(["Dev.Test.", "127.0.0.1"], outDir: out)
            #expect(s.mode(out) == 0o1777, "tv ca issue must not change the mode of a folder it did not make")
            #expect(leaf.cert == out + "/dev.test.pem")
            #expect(s.mode(leaf.key) == 0o600)
            #expect(s.mode(leaf.cert) == 0o644)
            #expect(s.mode(leaf.chain) == 0o644)
            #expect(s.mode(leaf.root) == 0o644)
            // The chain a server sends is the leaf and its intermediates (none): never the root.
            #expect(s.text(leaf.chain) == s.text(leaf.cert))
            #expect(!s.text(leaf.chain).contains(s.text(s.rootPEM)))
            #expect(s.text(leaf.root) == s.text(s.rootPEM))
            #expect(leaf.root == out + "/dev.test-root.pem")
            // openssl verifies it as a client does: the root trusted, the chain as sent, the leaf.
            let verified = try s.tool("openssl", ["verify", "-CAfile", leaf.root, "-untrusted", leaf.chain, "-purpose", "sslserver", "-x509_strict", leaf.cert])
            #expect(verified.status == 0, "\(verified)")
            #expect(verified.out == "\(leaf.cert): OK\n")
            // Without the root trusted, the chain alone does not verify (the root is not in it).
            let untrusted = try s.tool("openssl", ["verify", "-no-CAfile", "-no-CApath", "-no-CAstore", "-untrusted", leaf.chain, leaf.cert])
            #expect(untrusted.status == 2, "\(untrusted)")
            #expect(untrusted.all.contains("error 20 at 0 depth lookup: unable to get local issuer certificate"), "\(untrusted)")
            #expect(s.text(leaf.key).hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
            // The key is the certificate's own, not the shared leaf key.
            let certKey = try s.tool("openssl", ["x509", "-in", leaf.cert, "-noout", "-pubkey"]).out
            let ownKey = try s.tool("openssl", ["pkey", "-in", leaf.key, "-pubout"]).out
            let sharedKey = try s.tool("openssl", ["pkey", "-in", s.caDir + "/leaf-key.pem", "-pubout"]).out
            #expect(certKey == ownKey)
            #expect(certKey != sharedKey)
            // Without --out-dir: the current folder, whose mode stays as it was.
            chmod(s.work, 0o750)
            let here = try s.tv("ca", "issue", "here.test")
            #expect(here.status == 0, "\(here)")
            #expect(FileManager.default.fileExists(atPath: s.work + "/here.test.pem"))
            #expect(s.mode(s.work) == 0o750)
            let lines = here.out.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.first?.hasPrefix("Issued a certificate for DNS:here.test, valid until ") == true, "\(here.out)")
            // Again into the same folder: refused, the key a server may be using left as it was.
            let key = s.text(s.work + "/here.test-key.pem")
            let again = try s.tv("ca", "issue", "here.test")
            #expect(again.status == 1, "\(again)")
            #expect(again.err == "tv: \(s.work)/here.test-key.pem is already there (a server may be using it); remove it first, or issue into another folder with --out-dir.\n")
            #expect(s.text(s.work + "/here.test-key.pem") == key)
            #expect(lines.dropFirst().map(String.init) == [
                "  certificate  \(s.work)/here.test.pem",
                "  chain        \(s.work)/here.test-chain.pem (what a server sends: the certificate and its intermediates, none here; not the root)",
                "  key          \(s.work)/here.test-key.pem (0600)",
                "  root         \(s.work)/here.test-root.pem (this CA's root: what clients trust, e.g. curl --cacert; a server does not send it)",
                "Clients trust it once they trust this root (`tv ca trust` shows how).",
                "",
            ])
            // A missing --out-dir is made, its last folder only (a missing parent is refused).
            let fresh = try s.issue(["new.test"], outDir: s.work + "/a")
            #expect(FileManager.default.fileExists(atPath: fresh.cert))
        }
    }

    @Test("tv ca issue refuses bad names and a missing CA with exit 1 and one sentence")
    func issueRefusals() throws {
        try withSandbox { s in
            let noCA = try s.tv("ca", "issue", "a.test")
            #expect(noCA.status == 1)
            #expect(noCA.err.hasPrefix("tv: There is no CA in \(s.caDir) yet;"))
            try s.createCA()
            for bad in ["bücher-.test", "a..test", "*.test", String(repeating: "x", count: 64) + ".test", "1.2.3", "999.1.1.1", "a.b.123"] {
                let result = try s.tv("ca", "issue", bad)
                #expect(result.status == 1, "\(bad): \(result)")
                #expect(result.err.hasPrefix("tv: '\(bad)' cannot be a certificate name because"), "\(result)")
                #expect(result.err.split(separator: "\n").count == 1)
            }
            // An international name is converted (libidn2), not refused (a trial was told to
            // convert it by hand); its A-label form is taken as it is.
            let international = try s.tv("ca", "issue", "bücher.test", "--out-dir", s.work + "/idn")
            #expect(international.status == 0 && international.out.contains("DNS:xn--bcher-kva.test (bücher.test as A-labels)"), "\(international)")
            #expect(try s.tv("ca", "issue", "xn--bcher-kva.test").status == 0)
        }
    }

    @Test("a name-constrained root (RFC 5280 §4.2.1.10) is imported, said, and its leaves verify for the names it permits only")
    func importNameConstrainedCA() throws {
        try withSandbox { s in
            let made = try s.tool("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                              "-keyout", "nc.key", "-out", "nc.pem", "-days", "30", "-subj", "/CN=Constrained CA",
                                              "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
                                              "-addext", "nameConstraints=critical,permitted;DNS:.internal.test"])
            #expect(made.status == 0, "\(made)")
            let imported = try s.tv("ca", "import", "--cert", "nc.pem", "--key", "nc.key")
            #expect(imported.status == 0 && imported.err.contains("this root carries name constraints"), "\(imported)")
            let inside = try s.issue(["api.internal.test"])
            #expect(try verify(s, leaf: inside.cert, ["-verify_hostname", "api.internal.test"]).status == 0)
            // A name the root does not permit is refused (clients would refuse the certificate).
            let outside = try s.tv("ca", "issue", "api.internal.test", "example.com")
            #expect(outside.status == 1)
            #expect(outside.err == "tv: The root's name constraints do not permit 'example.com', so clients would refuse a certificate naming it; "
                    + "issue it for names the root permits (its nameConstraints extension lists them), or with a root that has no name constraints.\n")
        }
    }

    @Test("tv ca import takes a CA made by openssl, and its leaves verify")
    func importOpenSSLCA() throws {
        try withSandbox { s in
            let made = try s.tool("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                              "-keyout", "lab.key", "-out", "lab.pem", "-days", "30", "-subj", "/CN=Lab CA",
                                              "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"])
            #expect(made.status == 0, "\(made)")
            // A source key others can read is said (tv keeps its own 0600 copy); the import goes on.
            chmod(s.work + "/lab.key", 0o644)
            let imported = try s.tv("ca", "import", "--cert", "lab.pem", "--key", "lab.key")
            #expect(imported.status == 0, "\(imported)")
            #expect(imported.out.hasPrefix("Imported the CA CN=Lab CA."))
            #expect(imported.err.contains("Warning: lab.key can be read by other users (mode 644), and it holds the root's private key"), "\(imported)")
            #expect(s.text(s.rootPEM) == s.text(s.work + "/lab.pem"))
            #expect(s.mode(s.caDir + "/root-key.pem") == 0o600)
            let leaf = try s.issue(["lab.test"])
            #expect(try verify(s, leaf: leaf.cert, ["-verify_hostname", "lab.test"]).status == 0)
            // A second import (or create) is refused: a CA exists.
            let again = try s.tv("ca", "import", "--cert", "lab.pem", "--key", "lab.key")
            #expect(again.status == 1)
            #expect(again.err.contains("A CA already exists"))
        }
    }

    @Test("tv ca import refuses an openssl-made root whose AKI is not its SKI (openssl verify fails on it), and one without an SKI; roots with (importOpenSSLCA) and without an AKI are taken")
    func importAnchor() throws {
        try withSandbox { s in
            let base = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "30",
                        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"]
            // The AKI is made before the SKI is set, so it holds the key's hash, not 01:02:…:14.
            let bad = try s.tool("openssl", base + ["-keyout", "b.key", "-out", "b.pem", "-subj", "/CN=Bad AKI",
                                                    "-addext", "authorityKeyIdentifier=keyid:always",
                                                    "-addext", "subjectKeyIdentifier=01:02:03:04:05:06:07:08:09:0a:0b:0c:0d:0e:0f:10:11:12:13:14"])
            #expect(bad.status == 0, "\(bad)")
            #expect(try s.tool("openssl", ["verify", "-CAfile", "b.pem", "b.pem"]).status != 0, "the input is what the issue names")
            let refused = try s.tv("ca", "import", "--cert", "b.pem", "--key", "b.key")
            #expect(refused.status == 1)
            #expect(refused.err == "tv: b.pem cannot be imported as the CA: OpenSSL does not accept it as its own trust anchor for TLS servers "
                    + "(error 30: authority and subject key identifier mismatch); reissue it with an authorityKeyIdentifier equal to its "
                    + "subjectKeyIdentifier, or with none, then import it again.\n")
            #expect(!FileManager.default.fileExists(atPath: s.caDir + "/root.pem"))

            // Without an SKI, no leaf could name its issuer's key: refused, saying so.
            let noSKI = try s.tool("openssl", base + ["-keyout", "k.key", "-out", "k.pem", "-subj", "/CN=No SKI",
                                                      "-addext", "subjectKeyIdentifier=none", "-addext", "authorityKeyIdentifier=none"])
            #expect(noSKI.status == 0, "\(noSKI)")
            let noSKIRefused = try s.tv("ca", "import", "--cert", "k.pem", "--key", "k.key")
            #expect(noSKIRefused.err == "tv: k.pem cannot be imported as the CA: it has no subjectKeyIdentifier, which every leaf tv makes names "
                    + "as its authorityKeyIdentifier (reissue it with subjectKeyIdentifier=hash).\n")

            // Without an AKI (the SKI kept): taken, and its leaves verify.
            let bare = try s.tool("openssl", base + ["-keyout", "n.key", "-out", "n.pem", "-subj", "/CN=No AKI",
                                                     "-addext", "authorityKeyIdentifier=none"])
            #expect(bare.status == 0, "\(bare)")
            #expect(try s.tool("openssl", ["x509", "-in", "n.pem", "-noout", "-ext", "authorityKeyIdentifier"]).out.contains("Authority Key Identifier") == false)
            let taken = try s.tv("ca", "import", "--cert", "n.pem", "--key", "n.key")
            #expect(taken.status == 0, "\(taken)")
            let leaf = try s.issue(["lab.test"])
            #expect(try verify(s, leaf: leaf.cert, ["-verify_hostname", "lab.test"]).status == 0)
        }
    }

    @Test("tv ca status with such a root already in the CA folder says it cannot anchor itself, not that a hash link is missing")
    func statusOfUnanchoredRoot() throws {
        try withSandbox { s in
            try FileManager.default.createDirectory(atPath: s.caDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let made = try s.tool("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "30",
                                              "-keyout", s.caDir + "/root-key.pem", "-out", s.rootPEM, "-subj", "/CN=Bad AKI",
                                              "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
                                              "-addext", "authorityKeyIdentifier=keyid:always",
                                              "-addext", "subjectKeyIdentifier=01:02:03:04:05:06:07:08:09:0a:0b:0c:0d:0e:0f:10:11:12:13:14"])
            #expect(made.status == 0, "\(made)")
            _ = try s.tool("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", s.caDir + "/leaf-key.pem"])
            chmod(s.caDir + "/root-key.pem", 0o600)
            chmod(s.caDir + "/leaf-key.pem", 0o600)
            try FileManager.default.createDirectory(atPath: s.work + "/certs", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: s.rootPEM, toPath: s.work + "/certs/bad.pem")
            _ = try s.tool("openssl", ["rehash", s.work + "/certs"])
            let status = try s.tv("ca", "status", "--trust-store", "dir:" + s.work + "/certs")
            #expect(status.out.contains("usable for TLS  no (OpenSSL error 30: the root cannot be its own anchor (authority and subject key identifier mismatch))"), "\(status)")
            #expect(status.out.contains("Next: OpenSSL cannot use tv's root as its own anchor (authority and subject key identifier mismatch), so no trust store or hash link will make it trusted."), "\(status)")
            #expect(!status.out.contains("rehash"), "\(status)")
        }
    }

    @Test("tv ca import refuses a non-CA and a mismatched key, writing nothing")
    func importRefusals() throws {
        try withSandbox { s in
            _ = try s.tool("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                       "-keyout", "leaf.key", "-out", "leaf.pem", "-days", "30", "-subj", "/CN=leaf",
                                       "-addext", "basicConstraints=critical,CA:FALSE"])
            _ = try s.tool("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "other.key"])
            let notCA = try s.tv("ca", "import", "--cert", "leaf.pem", "--key", "leaf.key")
            #expect(notCA.status == 1)
            #expect(notCA.err == "tv: leaf.pem cannot be imported as the CA: it is not a CA (basicConstraints CA:TRUE is missing).\n")
            _ = try s.tool("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                       "-keyout", "ca.key", "-out", "ca.pem", "-days", "30", "-subj", "/CN=CA",
                                       "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"])
            let mismatch = try s.tv("ca", "import", "--cert", "ca.pem", "--key", "other.key")
            #expect(mismatch.status == 1)
            #expect(mismatch.err == "tv: other.key cannot be imported as the CA: it is not the key of ca.pem.\n")
            #expect(!FileManager.default.fileExists(atPath: s.caDir + "/root.pem"))
            let missing = try s.tv("ca", "import", "--cert", "ca.pem")
            #expect(missing.status == 2)
        }
    }
}
