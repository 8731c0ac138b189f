import Foundation
import Testing

/// Reads a .mobileconfig with Python's plistlib and reports what matters, as JSON.
let plistReport = #"""
import json, plistlib, sys
with open(sys.argv[1], "rb") as f:
    p = plistlib.load(f)
def scalar(v):
    return v.hex() if isinstance(v, bytes) else v
print(json.dumps({
    "keys": sorted(p.keys()),
    "top": {k: scalar(v) for k, v in p.items() if k != "PayloadContent"},
    "types": {k: type(v).__name__ for k, v in p.items()},
    "content": [{k: scalar(v) for k, v in c.items()} for c in p["PayloadContent"]],
    "contentTypes": [{k: type(v).__name__ for k, v in c.items()} for c in p["PayloadContent"]],
}))
"""#

/// `tv ca export` in each format, read back by the tools that consume it (issue 2).
@Suite("CLI: exports", .timeLimit(.minutes(5)))
struct ExportCLITests {
    /// The plistlib report of the profile at `path`.
    func readProfile(_ s: Sandbox, _ path: String) throws -> [String: Any] {
        let script = try s.write("plist.py", plistReport)
        let result = try s.tool("python3", [script, path])
        #expect(result.status == 0, "\(result)")
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
    }

    /// `tv ca export --der` as bytes.
    func der(_ s: Sandbox) throws -> Data {
        let result = try s.tv("ca", "export", "--der")
        #expect(result.status == 0, "\(result)")
        return result.stdout
    }

    @Test(".mobileconfig: plistlib reads the specified payload; the DER is the root; the notice says Unsigned")
    func mobileconfig() throws {
        try withSandbox { s in
            try s.createCA()
            let export = try s.tv("ca", "export", "--mobileconfig", "-o", "tv.mobileconfig")
            #expect(export.status == 0, "\(export)")
            #expect(export.out.isEmpty)
            // The notice comes first, before the file is written.
            let lines = export.err.split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines.first?.hasPrefix("iOS will show this profile as \"Unsigned\"") == true)
            #expect(lines.last?.hasPrefix("Wrote tv.mobileconfig (") == true)

            let report = try readProfile(s, s.work + "/tv.mobileconfig")
            #expect(report["keys"] as? [String] == ["PayloadContent", "PayloadDescription", "PayloadDisplayName", "PayloadIdentifier",
                                                     "PayloadOrganization", "PayloadRemovalDisallowed", "PayloadType", "PayloadUUID", "PayloadVersion"])
            let top = try #require(report["top"] as? [String: Any])
            let types = try #require(report["types"] as? [String: String])
            #expect(top["PayloadType"] as? String == "Configuration")
            #expect(top["PayloadVersion"] as? Int == 1)
            #expect(types["PayloadVersion"] == "int")
            #expect(top["PayloadDisplayName"] as? String == "TunnelVision certificate")
            #expect(top["PayloadRemovalDisallowed"] as? Bool == false)
            #expect(types["PayloadRemovalDisallowed"] == "bool")
            #expect((top["PayloadDescription"] as? String)?.isEmpty == false)
            #expect((top["PayloadIdentifier"] as? String)?.hasPrefix("org.tunnelvision.ca.") == true)
            #expect(UUID(uuidString: top["PayloadUUID"] as? String ?? "") != nil)
            let content = try #require(report["content"] as? [[String: Any]])
            let contentTypes = try #require(report["contentTypes"] as? [[String: String]])
            #expect(content.count == 1)
            let root = try #require(content.first)
            #expect(root["PayloadType"] as? String == "com.apple.security.root")
            #expect(root["PayloadVersion"] as? Int == 1)
            #expect(contentTypes.first?["PayloadContent"] == "bytes")  // <data>, not a string
            let rootDER = try der(s).map { String(format: "%02x", $0) }.joined()
            #expect(root["PayloadContent"] as? String == rootDER)
            #expect(root["PayloadIdentifier"] as? String == (top["PayloadIdentifier"] as? String).map { $0 + ".root" })
            #expect(UUID(uuidString: root["PayloadUUID"] as? String ?? "") != nil)
            // To standard output the profile is the same bytes, the notice still on stderr.
            let stdout = try s.tv("ca", "export", "--mobileconfig")
            #expect(stdout.stdout == s.read(s.work + "/tv.mobileconfig"))
            #expect(stdout.err.contains("Unsigned"))
        }
    }

    @Test(".mobileconfig identity survives deleting the three CA files and creating again")
    func mobileconfigAcrossRemake() throws {
        try withSandbox { s in
            try s.createCA()
            _ = try s.tv("ca", "export", "--mobileconfig", "-o", "first.mobileconfig")
            for file in ["root.pem", "root-key.pem", "leaf-key.pem"] {
                try FileManager.default.removeItem(atPath: s.caDir + "/" + file)
            }
            try s.createCA()
            _ = try s.tv("ca", "export", "--mobileconfig", "-o", "second.mobileconfig")
            let first = try readProfile(s, s.work + "/first.mobileconfig")
            let second = try readProfile(s, s.work + "/second.mobileconfig")
            let (top1, top2) = (first["top"] as? [String: Any], second["top"] as? [String: Any])
            let (in1, in2) = ((first["content"] as? [[String: Any]])?.first, (second["content"] as? [[String: Any]])?.first)
            #expect(top1?["PayloadIdentifier"] as? String == top2?["PayloadIdentifier"] as? String)
            #expect(top1?["PayloadUUID"] as? String == top2?["PayloadUUID"] as? String)
            #expect(in1?["PayloadIdentifier"] as? String == in2?["PayloadIdentifier"] as? String)
            #expect(in1?["PayloadUUID"] as? String != in2?["PayloadUUID"] as? String)
            let rootDER = try der(s).map { String(format: "%02x", $0) }.joined()
            #expect(in2?["PayloadContent"] as? String == rootDER)
            #expect(in1?["PayloadContent"] as? String != in2?["PayloadContent"] as? String)
        }
    }

    @Test("--pem and --der (stdout and -o) are the root certificate")
    func pemAndDER() throws {
        try withSandbox { s in
            try s.createCA()
            let pem = try s.tv("ca", "export", "--pem")
            #expect(pem.status == 0)
            #expect(pem.stdout == s.read(s.rootPEM))
            let converted = try s.tool("openssl", ["x509", "-in", s.rootPEM, "-outform", "DER", "-out", "root.der"])
            #expect(converted.status == 0)
            let derBytes = try der(s)
            #expect(derBytes == s.read(s.work + "/root.der"))
            let file = try s.tv("ca", "export", "--der", "-o", "root.cer")
            #expect(file.status == 0)
            #expect(s.read(s.work + "/root.cer") == s.read(s.work + "/root.der"))
            #expect(s.mode(s.work + "/root.cer") == 0o644)
        }
    }

    @Test(".p12 (certificate only) reads with openssl pkcs12 -passin pass: -nokeys, no -legacy needed")
    func p12CertificateOnly() throws {
        try withSandbox { s in
            try s.createCA()
            let export = try s.tv("ca", "export", "--p12", "-o", "root.p12")
            #expect(export.status == 0, "\(export)")
            let read = try s.tool("openssl", ["pkcs12", "-in", "root.p12", "-passin", "pass:", "-nokeys"])
            #expect(read.status == 0, "\(read)")
            let rootBody = s.text(s.rootPEM)
            #expect(read.out.contains(rootBody))
            #expect(!read.all.contains("PRIVATE KEY"))
            let info = try s.tool("openssl", ["pkcs12", "-in", "root.p12", "-passin", "pass:", "-nokeys", "-info"])
            #expect(info.status == 0, "\(info)")
            #expect(info.all.contains("MAC: sha256"))
            for legacy in ["RC2", "3DES", "pbeWithSHA1", "MAC: sha1"] {
                #expect(!info.all.contains(legacy), "\(legacy) in \(info.all)")
            }
        }
    }

    @Test("--p12-with-key is refused without --yes and without a passphrase, writing nothing")
    func p12WithKeyRefusals() throws {
        try withSandbox { s in
            try s.createCA()
            let pass = try s.write("pass.txt", "s3cret-and-more\n")
            let noYes = try s.tv("ca", "export", "--p12-with-key", "--passphrase-file", pass, "-o", "key.p12")
            #expect(noYes.status == 1)
            #expect(noYes.err.hasPrefix("tv: --p12-with-key writes the root's private key:"))
            #expect(noYes.err.hasSuffix("Add --yes to confirm.\n"))
            #expect(!FileManager.default.fileExists(atPath: s.work + "/key.p12"))
            let noPass = try s.tv("ca", "export", "--p12-with-key", "--yes", "-o", "key.p12")
            #expect(noPass.status == 1)
            #expect(noPass.err.contains("needs a passphrase"))
            #expect(!FileManager.default.fileExists(atPath: s.work + "/key.p12"))
            let emptyPass = try s.write("empty.txt", "\n")
            let empty = try s.tv("ca", "export", "--p12-with-key", "--yes", "--passphrase-file", emptyPass, "-o", "key.p12")
            #expect(empty.status == 1)
            #expect(empty.err == "tv: The first line of \(emptyPass) is empty; put the passphrase on it (the PKCS#12 file is protected with that line).\n", "\(empty)")
            #expect(!FileManager.default.fileExists(atPath: s.work + "/key.p12"))
            // A passphrase shorter than 8 characters is all that would protect the root key
            // (a trial's one-character passphrase was taken without a word).
            let shortPass = try s.write("short.txt", "a\n")
            let short = try s.tv("ca", "export", "--p12-with-key", "--yes", "--passphrase-file", shortPass, "-o", "key.p12")
            #expect(short.status == 1 && short.err == "tv: The passphrase in \(shortPass) is 1 character long, and it is all that protects the exported root key (whoever guesses it can make certificates every device that trusts the root accepts); use at least 8 characters.\n", "\(short)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: s.work).sorted() == ["empty.txt", "pass.txt", "short.txt"])
        }
    }

    @Test("--p12-with-key --yes with a passphrase: a 0600 file whose key matches the root")
    func p12WithKey() throws {
        try withSandbox { s in
            try s.createCA()
            let pass = try s.write("pass.txt", "s3cret-and-more\nsecond line ignored\n")
            #expect(chmod(pass, 0o600) == 0)
            let export = try s.tv("ca", "export", "--p12-with-key", "--yes", "--passphrase-file", pass, "-o", "key.p12")
            #expect(export.status == 0 && !export.all.contains("Warning"), "\(export)")
            #expect(s.mode(s.work + "/key.p12") == 0o600)
            #expect(!export.all.contains("PRIVATE KEY"))
            let keyOut = try s.tool("openssl", ["pkcs12", "-in", "key.p12", "-passin", "file:pass.txt", "-nocerts", "-nodes", "-out", "extracted.pem"])
            #expect(keyOut.status == 0, "\(keyOut)")
            let fromP12 = try s.tool("openssl", ["pkey", "-in", "extracted.pem", "-pubout"])
            let fromRoot = try s.tool("openssl", ["x509", "-in", s.rootPEM, "-noout", "-pubkey"])
            #expect(fromP12.status == 0 && !fromP12.out.isEmpty)
            #expect(fromP12.out == fromRoot.out)
            let wrong = try s.tool("openssl", ["pkcs12", "-in", "key.p12", "-passin", "pass:wrong", "-nocerts", "-nodes"])
            #expect(wrong.status != 0)
            let info = try s.tool("openssl", ["pkcs12", "-in", "key.p12", "-passin", "file:pass.txt", "-info", "-nokeys"])
            #expect(info.all.contains("AES-256-CBC"), "\(info)")
            // The key bag and the MAC at 600,000 iterations (OpenSSL's default 2,048 made the MAC
            // a cheap test of each guess).
            #expect(info.all.contains("MAC: sha256, Iteration 600000") && info.all.contains("PBKDF2, AES-256-CBC, Iteration 600000"), "\(info)")
            // A passphrase file written with CRLF line ends (a Windows editor): the passphrase is
            // the line without them (it used to keep "\r\n", and `pass:s3cret` could not open it).
            let crlf = try s.write("crlf.txt", "s3cret-and-more\r\nsecond\r\n")
            #expect(chmod(crlf, 0o644) == 0)
            let windows = try s.tv("ca", "export", "--p12-with-key", "--yes", "--passphrase-file", crlf, "-o", "crlf.p12")
            // A passphrase file others can read is said (a trial's 0644 file went unmentioned).
            #expect(windows.status == 0 && windows.err.contains("Warning: \(crlf) can be read by other users (mode 644), and its passphrase protects the exported root key; `chmod 600` it"), "\(windows)")
            let opened = try s.tool("openssl", ["pkcs12", "-in", "crlf.p12", "-passin", "pass:s3cret-and-more", "-nocerts", "-nodes"])
            #expect(opened.status == 0 && opened.out.contains("PRIVATE KEY"), "\(opened)")
        }
    }

    @Test("-o inside the data folder is refused before anything is written (an export replaced the CA's root key: a re-check)")
    func outputInsideDataFolderRefused() throws {
        try withSandbox { s in
            try s.createCA()
            let key = s.read(s.caDir + "/root-key.pem")
            let over = try s.tv("ca", "export", "--pem", "-o", s.caDir + "/root-key.pem")
            #expect(over.status != 0 && over.err == "tv: \(s.caDir)/root-key.pem is inside tv's data folder \(s.dataDir), among tv's own files; write it outside the data folder.\n", "\(over)")
            #expect(s.read(s.caDir + "/root-key.pem") == key)
            // Also through a path that reaches it another way, and a new file there.
            let dotted = try s.tv("ca", "export", "--pem", "-o", s.work + "/../data/settings-copy.pem")
            #expect(dotted.status != 0 && dotted.err.contains("is inside tv's data folder"), "\(dotted)")
            #expect(!FileManager.default.fileExists(atPath: s.dataDir + "/settings-copy.pem"))
            let connections = try s.tv("export", "connections", "-o", s.dataDir + "/c.json")
            #expect(connections.status != 0 && connections.err.contains("is inside tv's data folder"), "\(connections)")
            // The data folder itself, as the folder --android writes into.
            let android = try s.tv("ca", "export", "--android", "-o", s.dataDir)
            #expect(android.status != 0 && android.err.contains("is inside tv's data folder"), "\(android)")
            #expect(try s.tv("ca", "export", "--pem", "-o", s.work + "/root.pem").status == 0)
        }
    }

    @Test("-o with a one-character relative name writes it (Foundation's deletingLastPathComponent trapped: a trial)")
    func oneCharacterOutput() throws {
        try withSandbox { s in
            try s.createCA()
            let pem = try s.tv("ca", "export", "--pem", "-o", "z")
            #expect(pem.status == 0 && s.read(s.work + "/z") == s.read(s.rootPEM), "\(pem)")
            let connections = try s.tv("export", "connections", "-o", "q")
            #expect(connections.status == 0 && FileManager.default.fileExists(atPath: s.work + "/q"), "\(connections)")
            let empty = try s.tv("export", "connections", "-o", "")
            #expect(empty.status == 2 && empty.err == "tv: -o takes a file's path (or - for standard output), not an empty word.\n", "\(empty)")
        }
    }

    @Test("--android: the file name is openssl's subject_hash_old + .0, the content the PEM")
    func android() throws {
        try withSandbox { s in
            try s.createCA()
            let hash = try s.tool("openssl", ["x509", "-in", s.rootPEM, "-subject_hash_old", "-noout"]).out
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(hash.count == 8)
            let toFolder = try s.tv("ca", "export", "--android", "-o", s.work)
            #expect(toFolder.status == 0, "\(toFolder)")
            #expect(s.read(s.work + "/\(hash).0") == s.read(s.rootPEM))
            let toStdout = try s.tv("ca", "export", "--android")
            #expect(toStdout.stdout == s.read(s.rootPEM))
            #expect(toStdout.err == "Android expects this file to be named \(hash).0.\n")
        }
    }

    @Test("export needs exactly one format, and a CA")
    func exportRefusals() throws {
        try withSandbox { s in
            let noCA = try s.tv("ca", "export", "--pem")
            #expect(noCA.status == 1)
            #expect(noCA.err.contains("There is no CA"))
            try s.createCA()
            let none = try s.tv("ca", "export")
            #expect(none.status == 2)
            #expect(none.err == "tv: 'tv ca export' needs a format: --pem, --der, --p12, --p12-with-key, --android or --mobileconfig.\n")
            let two = try s.tv("ca", "export", "--pem", "--der")
            #expect(two.status == 2)
            #expect(two.err == "tv: 'tv ca export' takes one format at a time; you gave --pem and --der.\n")
        }
    }
}
