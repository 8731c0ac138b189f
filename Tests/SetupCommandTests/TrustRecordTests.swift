import Foundation
import Testing

/// Issue 15: `tv ca trust --apply` into a folder with no NSS database makes one (said first) and
/// then says the stage's own next step; `tv ca remove --apply` takes the root out of every store
/// tv installed it into, says what it did, and lists only what is left.
struct TrustRecordTests {
    static var hasCertutil: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/certutil") }
    /// The last step of every install guide (`TrustGuides.forgetLacksRootStep`).
    static let forgetStep = "Then `tv pinned forget --lacks-root`: a program that connected through tv before it trusted the root was remembered as lacking it, and its connections pass through untouched until then."

    @Test("an NSS folder without a database gets one, said before; with inspection on, the next step is not to turn it on")
    func nssFolderWithoutADatabase() throws {
        try #require(Self.hasCertutil, "certutil is missing (Scripts/test installs libnss3-tools)")
        let box = TVSandbox()
        let bundle = box.path + "/b.pem"
        let setup = box.tv("setup", "--trust-store", "file:" + bundle, "--yes")
        #expect(setup.status == 0, "\(setup.err)")
        #expect(box.inspectionOn)
        let db = box.path + "/empty"
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
        let result = box.tv("ca", "trust", "--trust-store", "nss:" + db, "--apply", "--yes")
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err == "", "\(result.err)")
        #expect(result.out.contains("This will:\n  1. create an empty NSS database in \(db), which has none (certutil -N --empty-password)\n  2. add the root to the NSS database \(db) as "), "\(result.out)")
        #expect(result.out.contains("→ create an empty NSS database in \(db), which has none (certutil -N --empty-password)\n"))
        #expect(!result.out.contains("SEC_ERROR_BAD_DATABASE"))
        #expect(result.out.hasSuffix("Step 4 of 4 — Inspection on (succeeded)\n  The NSS database \(db) accepts leaves from the root for TLS, and inspection is on.\n  Next: Nothing to do. Turn inspection off any time. (`tv inspect off`)\n"), "\(result.out)")
        #expect(!result.out.contains("Turn inspection on"))
        #expect(FileManager.default.fileExists(atPath: db + "/cert9.db"))
        // Where tv installed the root is remembered, privately.
        var st = stat()
        #expect(stat(box.home + "/trust-installs.json", &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(box.read(box.home + "/trust-installs.json").contains("\"store\" : \"nss:\(db)\""))
        #expect(box.read(box.home + "/trust-installs.json").contains("\"store\" : \"file:\(bundle)\""))
    }

    @Test("ca remove --apply takes the root out of the store named and every store tv installed it into, and lists only what is left")
    func removeTakesTheRootOutOfEveryRememberedStore() throws {
        try #require(Self.hasCertutil, "certutil is missing (Scripts/test installs libnss3-tools)")
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        let bundle = box.path + "/b.pem"
        let db = box.path + "/nssdb"
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
        #expect(box.tv("ca", "trust", "--trust-store", "file:" + bundle, "--apply", "--yes").status == 0)
        #expect(box.tv("ca", "trust", "--trust-store", "nss:" + db, "--apply", "--yes").status == 0)
        #expect(try box.sh("certutil", "-L", "-d", "sql:" + db).contains("TunnelVision"))

        let result = box.tv("ca", "remove", "--apply", "--yes", "--trust-store", "file:" + bundle)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("Taking the root out of PEM bundle \(bundle):\n→ rewrite \(bundle) without the root\nTaking the root out of NSS database \(db):\n→ delete the root from the NSS database \(db)\n"), "\(result.out)")
        #expect(result.out.contains("\nTook the root out of the bundle \(bundle) and the NSS database \(db).\n\nIf you trusted the removed root ("), "\(result.out)")
        #expect(!result.out.contains("Left to do"))
        #expect(!result.out.contains("certutil -D -d sql:\(db)"))
        #expect(!result.out.contains("from \(bundle)."))
        #expect(box.read(bundle) == "")
        #expect(!(try box.sh("certutil", "-L", "-d", "sql:" + db)).contains("TunnelVision"))
        #expect(!FileManager.default.fileExists(atPath: box.home + "/trust-installs.json"))
    }

    @Test("ca remove --apply on a store that never held the root says so instead of taking it out")
    func removeFromAStoreThatNeverHeldTheRoot() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        let bundle = box.path + "/other.pem"
        _ = try box.sh("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                       "-keyout", box.path + "/other.key", "-out", bundle, "-subj", "/CN=Another root", "-days", "2")
        let before = box.read(bundle)
        #expect(before.contains("BEGIN CERTIFICATE"))
        let result = box.tv("ca", "remove", "--apply", "--yes", "--trust-store", "file:" + bundle)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("Taking the root out of PEM bundle \(bundle):\n→ rewrite \(bundle) without the root\n"), "\(result.out)")
        #expect(result.out.contains("\nThe root was not in the bundle \(bundle) when the steps began; nothing was there to take out.\n\nIf you trusted the removed root ("), "\(result.out)")
        #expect(!result.out.contains("Took the root out"), "\(result.out)")
        #expect(!result.out.contains("Left to do"), "\(result.out)")
        #expect(box.read(bundle) == before)
    }

    @Test("ca remove without --apply lists the stores tv installed into first, as left to do")
    func removeWithoutApplyListsTheRememberedStores() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        let bundle = box.path + "/b.pem"
        #expect(box.tv("ca", "trust", "--trust-store", "file:" + bundle, "--apply", "--yes").status == 0)
        let result = box.tv("ca", "remove", "--yes")
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains(" out of the stores tv knows still hold it:\nPEM bundle \(bundle):\n  1. Delete the block for "), "\(result.out)")
        #expect(result.out.contains("sudo update-ca-certificates --fresh"))
        #expect(!result.out.contains("Took the root out"))
    }

    @Test("tv ca trust --platform node|python|java prints the one variable or command with the real root path")
    func runtimePlatforms() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        let root = box.ca + "/root.pem"
        let node = box.tv("ca", "trust", "--platform", "node")
        #expect(node.out.hasSuffix("Node.js:\n  1. export NODE_EXTRA_CA_CERTS=\(root)   (read when node starts; it adds to Node's own list)\n  2. \(Self.forgetStep)\nStart the program again: it reads its list when it starts.\n"), "\(node.out)")
        let python = box.tv("ca", "trust", "--platform", "python")
        #expect(python.out.contains("Python requests (certifi):\n  1. cat \"$(python3 -m certifi)\" \(root) > \"$HOME/tv-python-roots.pem\" && export REQUESTS_CA_BUNDLE=\"$HOME/tv-python-roots.pem\"   (in the shell that runs the program)\n"), "\(python.out)")
        let java = box.tv("ca", "trust", "--platform", "java")
        #expect(java.out.contains("  1. keytool -importcert -cacerts -alias tunnelvision -file \(root) -storepass changeit -noprompt   (changes the JDK's cacerts: sudo for a system JDK)\n"), "\(java.out)")
        // tv setup names them too, with the same lines.
        let setup = box.tv("setup", "--trust-store", "file:" + box.path + "/b.pem", "--yes")
        #expect(setup.out.contains("Programs that keep their own list of roots (trusting the store does not reach them):\n  Python requests (certifi) reads certifi's own bundle: cat \"$(python3 -m certifi)\" \(root) > \"$HOME/tv-python-roots.pem\" && export REQUESTS_CA_BUNDLE=\"$HOME/tv-python-roots.pem\"\n  Node.js reads the list built into node: export NODE_EXTRA_CA_CERTS=\(root)\n  Java reads the JDK's cacerts keystore: keytool -importcert -cacerts -alias tunnelvision -file \(root) -storepass changeit -noprompt\n"), "\(setup.out)")
        #expect(!setup.out.contains("requests, responses and their headers"))
        #expect(setup.out.contains("Content keeping is off: headers, bodies and query strings are not kept, only each request's method, URL path without its query"))
    }
}
