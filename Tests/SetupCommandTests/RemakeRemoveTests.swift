import Foundation
import Testing

/// `tv ca remake` and `tv ca remove`: inspection off first, the CA untouched when that cannot be
/// saved, the profile identity and everything else in $TV_HOME kept.
struct RemakeRemoveTests {
    static let caFiles = ["root.pem", "root-key.pem", "leaf-key.pem", "profile-identity.json"]

    /// A sandbox with a CA trusted through SSL_CERT_FILE and inspection on.
    static func inspecting() throws -> TVSandbox {
        let box = TVSandbox()
        try #require(box.tv("ca", "create").status == 0)
        box.write(box.bundle, box.rootPEM)
        try #require(box.tv("inspect", "on").status == 0)
        return box
    }

    @Test func remakeTurnsInspectionOffFirstAndKeepsTheProfileIdentity() throws {
        let box = try Self.inspecting()
        let identity = box.bytes(box.ca + "/profile-identity.json")
        let oldSubject = try box.sh("openssl", "x509", "-noout", "-subject", "-in", box.ca + "/root.pem")
        let oldSerial = try box.sh("openssl", "x509", "-noout", "-serial", "-in", box.ca + "/root.pem")
        let oldKey = box.bytes(box.ca + "/root-key.pem")
        box.write(box.ca + "/notes.txt", "kept")

        let result = box.tv("ca", "remake", "--yes")
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.hasPrefix("Inspection is now off.\nRemade the CA.\n"))
        #expect(!box.inspectionOn)
        #expect(try box.sh("openssl", "x509", "-noout", "-subject", "-in", box.ca + "/root.pem") != oldSubject)
        #expect(try box.sh("openssl", "x509", "-noout", "-serial", "-in", box.ca + "/root.pem") != oldSerial)
        #expect(box.bytes(box.ca + "/root-key.pem") != oldKey)
        #expect(box.bytes(box.ca + "/profile-identity.json") == identity)
        #expect(box.read(box.ca + "/notes.txt") == "kept")
        // Nothing of the old CA is left behind in $TV_HOME.
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.home).sorted() == ["ca", "settings.json"])
        // The old root is still in the bundle, so the new one is not trusted yet.
        #expect(try box.statusJSON()[path: "stage", "step"] as? String == "installAndTrust")
    }

    @Test func remakeWithoutConfirmationChangesNothing() throws {
        let box = try Self.inspecting()
        let before = Self.caFiles.map { box.bytes(box.ca + "/" + $0) }
        let result = box.tv("ca", "remake")
        #expect(result.status == 1)
        #expect(result.err.hasPrefix("Remaking the CA makes a new root and a new key; the current root stops signing anything.\n"))
        #expect(result.err.hasSuffix("tv: Remaking the CA was not confirmed; nothing changed. Add --yes to confirm.\n"))
        #expect(Self.caFiles.map { box.bytes(box.ca + "/" + $0) } == before)
        #expect(box.inspectionOn)
    }

    @Test func remakeRefusesWhenInspectionOffCannotBeSavedAndLeavesTheCAByteForByte() throws {
        let box = try Self.inspecting()
        let before = Self.caFiles.map { box.bytes(box.ca + "/" + $0) }
        let listing = try FileManager.default.contentsOfDirectory(atPath: box.ca).sorted()
        // A folder where settings.json should be: it can be neither read nor replaced.
        try FileManager.default.removeItem(atPath: box.home + "/settings.json")
        try FileManager.default.createDirectory(atPath: box.home + "/settings.json", withIntermediateDirectories: false)

        let result = box.tv("ca", "remake", "--yes")
        #expect(result.status == 1)
        #expect(result.err == "tv: The CA was not remade, because inspection must be turned off first and that could not be saved (Could not save inspection.enabled to \(box.home)/settings.json (a folder stands where the file should be); nothing changed — the old value is still in force. Check the folder and try again.) The CA is exactly as it was.\n")
        #expect(Self.caFiles.map { box.bytes(box.ca + "/" + $0) } == before)
        #expect(before.allSatisfy { $0 != nil })
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.ca).sorted() == listing)
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.home).sorted() == ["ca", "settings.json"])
    }

    @Test func remakeRefusesOverDoubt() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        box.write(box.ca + "/root-key.pem", "not a key")
        let result = box.tv("ca", "remake", "--yes")
        #expect(result.status == 1)
        #expect(result.err.hasPrefix("tv: The CA is in doubt: \(box.ca)/root-key.pem cannot be parsed as a PEM private key;"))
        #expect(box.read(box.ca + "/root-key.pem") == "not a key")
    }

    @Test func removeDeletesTheKeysAndCertificateAndLeavesEverythingElse() throws {
        let box = try Self.inspecting()
        let others: [String: String] = [
            "tunnelvision.sqlite3": "flows", "captures/0001.pcap": "pcap", "content/segment-1": "bytes",
        ]
        for (name, text) in others {
            try FileManager.default.createDirectory(atPath: ((box.home + "/" + name) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            box.write(box.home + "/" + name, text)
        }
        let identity = box.bytes(box.ca + "/profile-identity.json")

        let result = box.tv("ca", "remove", "--yes")
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.hasPrefix("Inspection is now off.\nDeleted the root key, the root certificate and the leaf key from \(box.ca).\nYour history and captures stay; only the certificate and its keys are deleted.\n"))
        #expect(result.out.contains("sudo update-ca-certificates --fresh"))
        #expect(result.out.contains("Settings → General → VPN & Device Management → the TunnelVision profile → Remove Profile."))
        #expect(!box.inspectionOn)
        for name in ["root.pem", "root-key.pem", "leaf-key.pem"] { #expect(!FileManager.default.fileExists(atPath: box.ca + "/" + name)) }
        #expect(box.bytes(box.ca + "/profile-identity.json") == identity)
        for (name, text) in others { #expect(box.read(box.home + "/" + name) == text) }
        // Back to the explanation.
        #expect(try box.statusJSON()[path: "stage", "step"] as? String == "explain")
    }

    @Test func removeWithApplyTakesTheRootOutOfTheStoreFirst() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        box.write(box.path + "/b.pem", "# mine\n" + box.rootPEM)
        let result = box.tv("ca", "remove", "--yes", "--apply", "--trust-store", "file:" + box.path + "/b.pem")
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("→ rewrite \(box.path)/b.pem without the root\n"))
        #expect(box.read(box.path + "/b.pem") == "# mine\n")
        #expect(!FileManager.default.fileExists(atPath: box.ca + "/root-key.pem"))
    }

    @Test func removeWithAFailingApplyKeepsTheCAForARetry() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        // A file where the NSS folder should be: the store cannot be read (a folder with no
        // database, or none at all, holds no root, and removing from it succeeds).
        box.write(box.path + "/no-db", "not a folder")
        let result = box.tv("ca", "remove", "--yes", "--apply", "--trust-store", "nss:" + box.path + "/no-db")
        #expect(result.status == 1)
        #expect(result.err.contains("could not read the NSS database \(box.path)/no-db"))
        #expect(FileManager.default.fileExists(atPath: box.ca + "/root-key.pem"))
    }

    /// A remade root's predecessor, which tv had put in a store, comes out of it at the next
    /// `tv ca trust --apply` there, and at `tv ca remove --apply` (a trial's stayed trusted in the
    /// system store and NSS after remake, trust and remove --apply).
    @Test func rootsARemakeReplacedComeOutOfTheStoresTvPutThemIn() throws {
        let box = TVSandbox()
        let bundle = box.path + "/b.pem"
        #expect(box.tv("ca", "create").status == 0)
        box.write(bundle, "# mine\n")
        #expect(box.tv("ca", "trust", "--trust-store", "file:" + bundle, "--apply", "--yes").status == 0)
        let first = box.rootPEM
        #expect(box.read(bundle) == "# mine\n" + first)
        let remade = box.tv("ca", "remake", "--yes")
        #expect(remade.status == 0 && remade.out.contains("Next: install and trust the new root (`tv ca trust --apply`): in the bundle \(bundle), where tv had put the old root, it also takes the old one out"), "\(remade.out)")
        #expect(FileManager.default.fileExists(atPath: box.home + "/replaced-roots"))
        let second = box.rootPEM
        let trusted = box.tv("ca", "trust", "--trust-store", "file:" + bundle, "--apply", "--yes")
        #expect(trusted.status == 0 && trusted.out.contains("take the replaced root TunnelVision Root CA ") && trusted.out.contains("Took the replaced root TunnelVision Root CA "), "\(trusted.out)")
        #expect(box.read(bundle) == "# mine\n" + second, "the old root out, the new one in")
        #expect(!FileManager.default.fileExists(atPath: box.home + "/replaced-roots"))
        // Remade again, then removed with --apply: both the current root and the replaced one go.
        #expect(box.tv("ca", "remake", "--yes").status == 0)
        let removed = box.tv("ca", "remove", "--yes", "--apply", "--trust-store", "file:" + bundle)
        #expect(removed.status == 0 && removed.out.contains("Took the replaced root TunnelVision Root CA "), "\(removed.out)\(removed.err)")
        #expect(box.read(bundle) == "# mine\n")
        #expect(!FileManager.default.fileExists(atPath: box.home + "/replaced-roots"))
        #expect(!FileManager.default.fileExists(atPath: box.home + "/trust-installs.json"))
    }

    /// A file that is not a bundle is refused before the plan is shown, and left as it was (a
    /// trust.store of file:/etc/shadow was taken; a re-check saw the plan first).
    @Test func aFileThatIsNoBundleIsRefusedBeforeThePlan() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        let passwd = box.path + "/passwd"
        box.write(passwd, "root:x:0:0:root:/root:/bin/bash\n")
        let r = box.tv("ca", "trust", "--trust-store", "file:" + passwd, "--apply", "--yes")
        #expect(r.status == 1 && !r.out.contains("This will:") && r.err == "tv: Nothing was changed: \(passwd) is refused (it holds no PEM certificate, so it is not a certificate bundle; name a bundle, or a file that does not exist yet).\n", "\(r)")
        #expect(box.read(passwd) == "root:x:0:0:root:/root:/bin/bash\n")
    }
}
