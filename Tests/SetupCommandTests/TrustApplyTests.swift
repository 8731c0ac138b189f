import Foundation
import Testing

/// `tv ca trust`: the steps per store, and `--apply --yes` on stores in temporary folders.
/// The machine's own store is never changed: TV_NO_SYSTEM_TRUST_CHANGES=1 in every sandbox.
struct TrustApplyTests {
    @Test func applyToABundleAFolderAndAnNSSDatabaseEndsReady() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        let db = box.path + "/nssdb"
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
        try box.sh("certutil", "-N", "--empty-password", "-d", "sql:" + db)
        try FileManager.default.createDirectory(atPath: box.path + "/folder", withIntermediateDirectories: true)
        box.write(box.path + "/b.pem", try box.rejectedRoot())
        for store in ["file:" + box.path + "/b.pem", "dir:" + box.path + "/folder", "nss:" + db] {
            let result = box.tv("ca", "trust", "--trust-store", store, "--apply", "--yes")
            #expect(result.status == 0, "\(store): \(result.err)")
            #expect(result.out.contains("\nThis will:\n  1. "))
            #expect(result.out.contains("\nStep 4 of 4 — Ready to inspect (succeeded)\n"), "\(store): \(result.out)")
            let json = try box.statusJSON("--trust-store", store)
            #expect(json[path: "stage", "step"] as? String == "ready")
        }
        // The bundle's TRUSTED entry was replaced by the plain certificate.
        #expect(box.read(box.path + "/b.pem") == box.rootPEM)
    }

    @Test func applyWithoutYesChangesNothing() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        let result = box.tv("ca", "trust", "--trust-store", "file:" + box.path + "/b.pem", "--apply")
        #expect(result.status == 1)
        #expect(result.err == "tv: Nothing was changed; add --yes to do these steps.\n")
        #expect(!FileManager.default.fileExists(atPath: box.path + "/b.pem"))
    }

    @Test func theSystemStoreIsNeverChangedUnderTheGuard() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        let result = box.tv("ca", "trust", "--apply", "--yes", "--platform", "debian")
        #expect(result.status == 1)
        #expect(result.err == "tv: TV_NO_SYSTEM_TRUST_CHANGES=1 forbids changing this machine's trust store; unset it to apply, or choose a store with --trust-store.\n")
        #expect(!result.out.contains("→ "))
    }

    @Test func stepsArePrintedForEveryPlatform() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        let tag = try box.sh("openssl", "x509", "-noout", "-fingerprint", "-sha256", "-in", box.ca + "/root.pem")
            .split(separator: "=")[1].replacingOccurrences(of: ":", with: "").prefix(8).lowercased()
        let debian = box.tv("ca", "trust", "--platform", "debian")
        #expect(debian.out.contains("  1. sudo cp \(box.ca)/root.pem /usr/local/share/ca-certificates/tunnelvision-\(tag).crt\n  2. sudo update-ca-certificates\n"))
        for platform in ["fedora", "arch", "nss", "macos", "ios", "android", "windows"] {
            let result = box.tv("ca", "trust", "--platform", platform)
            #expect(result.status == 0, "\(platform): \(result.err)")
            #expect(result.out.contains("  1. "))
        }
        #expect(box.tv("ca", "trust", "--platform", "plan9").status == 2)
        #expect(box.tv("ca", "trust", "--apply", "--yes", "--platform", "ios").err == "tv cannot do the steps for iOS / iPadOS on this machine; follow them by hand (`tv ca trust` without --apply prints them).\n")
    }
}
