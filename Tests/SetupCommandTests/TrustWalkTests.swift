import Foundation
import Testing

/// create → install → trust → ready → inspect on → withdraw trust → inspection turned off on the
/// next command, against real stores, through the built `tv`.
struct TrustWalkTests {
    @Test func walkThroughAPEMBundleViaSSLCertFile() throws {
        let box = TVSandbox()
        var json = try box.statusJSON()
        #expect(json[path: "stage", "step"] as? String == "explain")
        #expect(json[path: "stage", "canGenerate"] as? Bool == true)
        let refused = box.tv("inspect", "on")
        #expect(refused.status == 1)
        #expect(refused.err.hasPrefix("tv: Inspection stays off. There is no certificate yet."))
        #expect(box.tv("ca", "create").status == 0)

        json = try box.statusJSON()
        #expect(json[path: "stage", "step"] as? String == "installAndTrust")
        #expect(json[path: "stage", "state", "word"] as? String == "not started")
        #expect(json[path: "stage", "canGenerate"] as? Bool == false)
        let store = try #require((json["stores"] as? [[String: Any]])?.first)
        #expect(store["store"] as? String == "system")
        #expect(store["installed"] as? String == "no")
        #expect(store["usable"] as? String == "no")

        // Installed, not trusted for TLS: the root as a TRUSTED CERTIFICATE rejecting serverAuth.
        box.write(box.bundle, try box.rejectedRoot())
        json = try box.statusJSON()
        #expect(json[path: "stage", "state", "word"] as? String == "partially done")
        #expect(json[path: "stage", "nextStep"] as? String == "The system store holds the root as a TRUSTED CERTIFICATE entry whose trust settings reject TLS servers (serverAuth). Replace it with the plain certificate: the system store's trust steps do it (`tv ca trust` prints them; run as root with --apply --yes, tv does them).")
        let partial = try #require((json["stores"] as? [[String: Any]])?.first)
        #expect(partial["installed"] as? String == "yes")
        #expect(partial["usable"] as? String == "no")
        #expect(partial["finding"] as? String == "rejectedForTLS")
        #expect(box.tv("inspect", "on").status == 1)
        #expect(!box.inspectionOn)

        // Trusted: the plain certificate.
        box.write(box.bundle, box.rootPEM)
        json = try box.statusJSON()
        #expect(json[path: "stage", "step"] as? String == "ready")
        #expect(json[path: "stage", "canTurnInspectionOn"] as? Bool == true)
        let on = box.tv("inspect", "on")
        #expect(on.status == 0)
        #expect(on.out.hasPrefix("Inspection is on: the system trust store accepts leaves from the root for TLS."))
        #expect(box.inspectionOn)
        #expect(box.tv("inspect", "status").out.hasPrefix("Inspection: on\n"))

        // Trust withdrawn outside tv: the next command that reports inspection turns it off.
        box.write(box.bundle, "")
        let status = box.tv("inspect", "status")
        #expect(status.status == 0)
        #expect(status.err == "Inspection was on, but the system trust store no longer accepts leaves from the root for TLS, so connections would fail; it is now off. `tv setup` shows how to trust it again.\n")
        #expect(status.out.hasPrefix("Inspection: off\n"))
        #expect(!box.inspectionOn)
        #expect(box.settings == "{\n  \"inspection.enabled\": false,\n  \"trust.store\": \"system\"\n}\n")
    }

    @Test func walkThroughAHashedFolderViaSSLCertDir() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        box.write(box.certs + "/tv.pem", box.rootPEM)
        var json = try box.statusJSON()
        #expect(json[path: "stage", "state", "word"] as? String == "partially done")
        let hash = try box.sh("openssl", "x509", "-noout", "-subject_hash", "-in", box.ca + "/root.pem").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(json[path: "stage", "nextStep"] as? String == "The root's file is in the system certificate folder, but no hash link (\(hash).0) leads to it. Rebuild the links: `sudo update-ca-certificates` (Debian/Ubuntu) or `sudo update-ca-trust` (Fedora, Arch).")
        try box.sh("openssl", "rehash", box.certs)
        json = try box.statusJSON()
        #expect(json[path: "stage", "step"] as? String == "ready")
        #expect(box.tv("inspect", "on").status == 0)

        try FileManager.default.removeItem(atPath: box.certs + "/\(hash).0")
        let status = box.tv("ca", "status")
        #expect(status.err.hasPrefix("Inspection was on, but the system trust store no longer accepts leaves from the root for TLS"))
        #expect(status.out.contains("\nInspection: off\n"))
        #expect(!box.inspectionOn)
    }

    @Test func walkThroughAnNSSDatabase() throws {
        let box = TVSandbox()
        let db = box.path + "/nssdb"
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
        try box.sh("certutil", "-N", "--empty-password", "-d", "sql:" + db)
        #expect(box.tv("ca", "create").status == 0)
        let nick = try #require(box.rootPEM.isEmpty ? nil : "TunnelVision test root")

        var json = try box.statusJSON("--trust-store", "nss:" + db)
        #expect(json[path: "stage", "state", "word"] as? String == "not started")

        try box.sh("certutil", "-A", "-d", "sql:" + db, "-n", nick, "-t", ",,", "-a", "-i", box.ca + "/root.pem")
        json = try box.statusJSON("--trust-store", "nss:" + db)
        #expect(json[path: "stage", "state", "word"] as? String == "partially done")
        let missing = "It is stored as 'TunnelVision test root' with trust flags ',,' — known, but not trusted to identify websites. Give it the C flag: `certutil -M -d sql:\(db) -n 'TunnelVision test root' -t C,,` (in Firefox: Settings → Privacy & Security → View Certificates → Authorities → Edit Trust → \"This certificate can identify websites\")."
        #expect(json[path: "stage", "nextStep"] as? String == missing)
        let refused = box.tv("inspect", "on", "--trust-store", "nss:" + db)
        #expect(refused.status == 1)
        #expect(refused.err.contains(missing))
        #expect(!box.inspectionOn)

        try box.sh("certutil", "-M", "-d", "sql:" + db, "-n", nick, "-t", "C,,")
        json = try box.statusJSON("--trust-store", "nss:" + db)
        #expect(json[path: "stage", "step"] as? String == "ready")
        #expect(box.tv("inspect", "on", "--trust-store", "nss:" + db).status == 0)
        #expect(box.settings == "{\n  \"inspection.enabled\": true,\n  \"trust.store\": \"nss:\(db)\"\n}\n")

        // Trust withdrawn in the database: `tv ca status` (the saved store) turns inspection off.
        try box.sh("certutil", "-M", "-d", "sql:" + db, "-n", nick, "-t", ",,")
        let status = box.tv("ca", "status")
        #expect(status.err.hasPrefix("Inspection was on, but the NSS database \(db) no longer accepts leaves from the root for TLS, so connections would fail; it is now off."))
        #expect(!box.inspectionOn)
    }

    @Test func statusAsksSeveralStoresAtOnce() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        box.write(box.path + "/other.pem", box.rootPEM)
        let json = try box.statusJSON("--trust-store", "system", "--trust-store", "file:" + box.path + "/other.pem")
        let stores = try #require(json["stores"] as? [[String: Any]])
        #expect(stores.map { $0["store"] as? String } == ["system", "file:" + box.path + "/other.pem"])
        #expect(stores.map { $0["usable"] as? String } == ["no", "yes"])
        // The stage is the first store's.
        #expect(json[path: "stage", "step"] as? String == "installAndTrust")
    }

    @Test func anUnreadableStoreKeepsInspectionOnWithAWarning() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        box.write(box.bundle, box.rootPEM)
        #expect(box.tv("inspect", "on").status == 0)
        try FileManager.default.removeItem(atPath: box.bundle)
        try FileManager.default.createDirectory(atPath: box.bundle, withIntermediateDirectories: false)
        let status = box.tv("inspect", "status")
        #expect(status.err == "Inspection stays on, but the system trust store cannot be read (\(box.bundle) is a folder, not a file), so it is not known whether the root is still trusted; `tv inspect off` turns it off.\n")
        #expect(box.inspectionOn)
        #expect(status.out.contains("Something is in doubt (failed)"))
    }
}
