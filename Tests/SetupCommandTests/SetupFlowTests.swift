import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `tv setup`: without a terminal, with --yes, and guided at a terminal (a pseudo-terminal made by
/// script(1)), re-deriving the stage each time Enter is pressed.
struct SetupFlowTests {
    @Test func withoutATerminalItPrintsWhereYouAreAndExits() throws {
        let box = TVSandbox()
        let result = box.tv("setup")
        #expect(result.status == 0)
        #expect(result.out == """
        Step 0 of 4 — What inspection means (not started)
          There is no certificate yet. Inspection needs a certificate authority made here and trusted by this machine; read what that means before anything is made.
          Next: Read the explanation, then agree to create the certificate. (`tv setup`)
        (Standard input is not a terminal: run `tv setup` in one to be guided, or add --yes; nothing was saved.)

        """)
        #expect(!FileManager.default.fileExists(atPath: box.ca))
        // A store named there is not saved either (it was, while the help said it only prints).
        let named = box.tv("setup", "--trust-store", "file:" + box.path + "/bundle.pem")
        #expect(named.status == 0 && !named.out.contains("(saved)"), "\(named.out)")
        #expect(!box.settings.contains("trust.store"), "\(box.settings)")
    }

    @Test func yesWithAnNSSDatabaseEndsWithInspectionOn() throws {
        let box = TVSandbox()
        let db = box.path + "/nssdb"
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
        try box.sh("certutil", "-N", "--empty-password", "-d", "sql:" + db)
        let result = box.tv("setup", "--yes", "--trust-store", "nss:" + db)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("Inspection lets tv read your own encrypted (TLS/HTTPS) traffic"))
        #expect(result.out.contains("Programs that pin their certificates will refuse tv's"))
        #expect(result.out.contains("→ add the root to the NSS database \(db) as 'TunnelVision Root CA "))
        #expect(result.out.hasSuffix("Setup is complete. `tv inspect off` turns inspection off at any time.\n"))
        #expect(box.settings == "{\n  \"inspection.enabled\": true,\n  \"intro.seen\": true,\n  \"trust.store\": \"nss:\(db)\"\n}\n")
        #expect(try box.sh("certutil", "-L", "-d", "sql:" + db).contains("C,,"))
    }

    /// A trial's `tv setup --yes --trust-store nss:DIR` on an empty DIR said "Something is in doubt
    /// (failed) … SEC_ERROR_BAD_DATABASE", exit 1, while `tv ca trust --apply` made the database.
    @Test("an empty NSS folder: status says not installed (exit 0); setup --yes makes the database and ends with inspection on")
    func yesWithAnEmptyNSSFolderEndsWithInspectionOn() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        let db = box.path + "/empty"
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
        let status = box.tv("ca", "status", "--trust-store", "nss:" + db)
        #expect(status.status == 0, "\(status.out)")
        #expect(status.out.contains("  installed       no\n  usable for TLS  no (there is no NSS database in the folder yet; `tv ca trust --apply` makes one)\n"), "\(status.out)")
        #expect(status.out.contains("Step 2+3 of 4 — Install and trust the root (not started)\n"), "\(status.out)")
        #expect(!status.out.contains("in doubt") && !status.out.contains("SEC_ERROR"), "\(status.out)")
        #expect(!FileManager.default.fileExists(atPath: db + "/cert9.db"), "asking makes nothing")
        let result = box.tv("setup", "--yes", "--trust-store", "nss:" + db)
        #expect(result.status == 0, "\(result.out)\n\(result.err)")
        #expect(result.out.contains("→ create an empty NSS database in \(db), which has none (certutil -N --empty-password)\n→ add the root to the NSS database \(db) as 'TunnelVision Root CA "), "\(result.out)")
        #expect(result.out.hasSuffix("Setup is complete. `tv inspect off` turns inspection off at any time.\n"), "\(result.out)")
        #expect(box.inspectionOn)
        #expect(try box.sh("certutil", "-L", "-d", "sql:" + db).contains("C,,"))
    }

    @Test("an NSS folder that does not exist yet (Chromium's ~/.pki/nssdb before its first start): not installed; setup --yes makes it 0700 with its database")
    func yesWithAMissingNSSFolderMakesIt() throws {
        let box = TVSandbox()
        let db = box.path + "/.pki/nssdb"
        let status = box.tv("ca", "create")
        #expect(status.status == 0)
        let asked = box.tv("ca", "status", "--trust-store", "nss:" + db)
        #expect(asked.status == 0, "\(asked.out)")
        #expect(asked.out.contains("  usable for TLS  no (the folder does not exist yet; `tv ca trust --apply` makes it and an NSS database in it)\n"), "\(asked.out)")
        #expect(!FileManager.default.fileExists(atPath: box.path + "/.pki"))
        let result = box.tv("setup", "--yes", "--trust-store", "nss:" + db)
        #expect(result.status == 0, "\(result.out)\n\(result.err)")
        #expect(result.out.contains("→ make the folder \(db) (0700, as Chromium would on its first start) and an empty NSS database in it (certutil -N --empty-password)\n"), "\(result.out)")
        var st = stat()
        for folder in [box.path + "/.pki", db] { #expect(stat(folder, &st) == 0 && st.st_mode & 0o777 == 0o700, "\(folder)") }
        #expect(box.inspectionOn)
    }

    @Test func yesWithTheSystemStoreStopsBeforeChangingIt() throws {
        let box = TVSandbox()
        let result = box.tv("setup", "--yes")
        // Not complete (inspection stays off): not 0, so a script does not go on as if it were.
        #expect(result.status == 1)
        // As root here: no sudo; as a user it is `sudo tv --data-dir DIR …` (`SudoCommand`).
        #expect(result.out.hasSuffix("Do the steps above (for the system store: `tv ca trust --apply --yes`), then run `tv setup` again.\n"))
        // Setup's own option for NSS, not `tv ca trust`'s --platform.
        #expect(result.out.contains("  Note: OpenSSL, curl, wget, Python's ssl module (urllib), Go programs and the distribution's own Java (its cacerts is made from this store) then trust it; Python requests (certifi), Node.js and a JDK installed by hand keep their own lists (`tv ca trust --platform python`, `node` or `java` prints what each needs); Firefox and Chromium use their own NSS database (`--trust-store nss:DIR`).\n"))
        #expect(!result.out.contains("Standard input is not a terminal"))
        // It explained what tv does: the first `tv run` does not show the introduction again.
        #expect(box.settings.contains("\"intro.seen\": true"))
        let trust = box.tv("ca", "trust")
        #expect(trust.out.contains("  Note: OpenSSL, curl, wget, Python's ssl module (urllib), Go programs and the distribution's own Java (its cacerts is made from this store) then trust it; Python requests (certifi), Node.js and a JDK installed by hand keep their own lists (`tv ca trust --platform python`, `node` or `java` prints what each needs); Firefox and Chromium use their own NSS database (`--platform nss`).\n"), "\(trust.out)")
        #expect(FileManager.default.fileExists(atPath: box.ca + "/root.pem"))
        #expect(box.read(box.bundle) == "")
        #expect(!box.inspectionOn)
    }

    static let scriptAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/script")

    @Test(.enabled(if: scriptAvailable, "needs script(1) for a terminal"))
    func guidedAtATerminalReasksOnEnter() throws {
        let box = TVSandbox()
        let session = try Terminal(box: box, command: "\(TVSandbox.binary) setup")
        defer { session.stop() }
        try session.waitFor("[q] not now ")
        session.send("y\n")
        try session.waitFor("Do the steps, then press [Enter] to check again · [a] do it for me · [q] not now ")
        // Done outside tv, then Enter: the stage is derived again.
        box.write(box.bundle, box.rootPEM)
        session.send("\n")
        try session.waitFor("Turn inspection on now? [y] yes · [Enter] check again · [q] not now ")
        session.send("y\n")
        try session.waitFor("Setup is complete.")
        #expect(session.wait() == 0)
        #expect(box.inspectionOn)
        #expect(session.output.contains("Step 4 of 4 — Ready to inspect (succeeded)"))
    }

    @Test("a bundle not there yet, in a folder that is, is created by setup --yes; inspection ends on")
    func yesWithAMissingBundleCreatesIt() throws {
        let box = TVSandbox()
        let bundle = box.path + "/fresh.pem"
        let result = box.tv("setup", "--yes", "--trust-store", "file:" + bundle)
        #expect(result.status == 0, "\(result.out) \(result.err)")
        #expect(result.err.isEmpty, "\(result.err)")
        #expect(result.out.hasSuffix("Setup is complete. `tv inspect off` turns inspection off at any time.\n"))
        #expect(!result.out.contains("Standard input is not a terminal"))
        #expect(box.read(bundle) == box.rootPEM)
        #expect(box.inspectionOn)
        #expect(box.settings.contains("\"intro.seen\": true"))
    }

    @Test("a bundle in a folder that does not exist is refused before anything is made or saved")
    func bundleInAMissingFolderIsRefusedFirst() throws {
        let box = TVSandbox()
        let bundle = box.path + "/nope/bundle.pem"
        let result = box.tv("setup", "--yes", "--trust-store", "file:" + bundle)
        #expect(result.status == 1)
        #expect(result.err == "tv: The folder \(box.path)/nope of file:\(bundle) does not exist, so nothing was made or saved; create the folder (a missing bundle in it is fine: tv creates it) or name another store with --trust-store.\n")
        #expect(result.out.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: box.ca))
        #expect(box.settings.isEmpty)
        #expect(box.tv("ca", "create").status == 0)
        let apply = box.tv("ca", "trust", "--apply", "--yes", "--trust-store", "file:" + bundle)
        #expect(apply.status == 1)
        #expect(apply.out.isEmpty)
        #expect(apply.err.hasPrefix("tv: The folder \(box.path)/nope of file:\(bundle) does not exist"))
        // ca trust --apply creates a bundle that is not there yet in an existing folder.
        let fresh = box.path + "/fresh.pem"
        let applied = box.tv("ca", "trust", "--apply", "--yes", "--trust-store", "file:" + fresh)
        #expect(applied.status == 0, "\(applied.out) \(applied.err)")
        #expect(box.read(fresh) == box.rootPEM)
    }

    @Test(.enabled(if: scriptAvailable, "needs script(1) for a terminal"))
    func noIsNotNowAndUnknownAnswersAreSaidPlainly() throws {
        let box = TVSandbox()
        let session = try Terminal(box: box, command: "\(TVSandbox.binary) setup")
        defer { session.stop() }
        try session.waitFor("Create the certificate now? [y] yes · [Enter] check again · [q] not now ")
        session.send("maybe\n")
        try session.waitFor("Type y, q, or press Enter.")
        session.send("n\n")
        try session.waitFor("Not now.")
        #expect(session.wait() == 0)
        #expect(!FileManager.default.fileExists(atPath: box.ca + "/root.pem"))
        #expect(!box.settings.contains("intro.seen"))
    }

    @Test(.enabled(if: scriptAvailable, "needs script(1) for a terminal"))
    func notNowLeavesWithNothingMade() throws {
        let box = TVSandbox()
        let session = try Terminal(box: box, command: "\(TVSandbox.binary) setup")
        defer { session.stop() }
        try session.waitFor("[q] not now ")
        session.send("q\n")
        try session.waitFor("Not now.")
        #expect(session.wait() == 0)
        #expect(!FileManager.default.fileExists(atPath: box.ca + "/root.pem"))
    }
}

/// A command run at a pseudo-terminal through `script -qec CMD /dev/null`, fed line by line.
final class Terminal {
    let process: Child
    let input: FileHandle
    let received: FileHandle
    let collected = Collected()

    init(box: TVSandbox, command: String) throws {
        let toChild = try Child.pipe(), fromChild = try Child.pipe()
        defer { close(toChild.read); close(fromChild.write) }
        input = FileHandle(fileDescriptor: toChild.write, closeOnDealloc: true)
        received = FileHandle(fileDescriptor: fromChild.read, closeOnDealloc: true)
        let sink = collected
        received.readabilityHandler = { handle in sink.append(handle.availableData) }
        process = try Child("/usr/bin/script", ["-qec", command, "/dev/null"], environment: box.environment,
                            stdin: toChild.read, stdout: fromChild.write, stderr: fromChild.write)
    }

    var output: String { collected.text }

    func send(_ text: String) { input.write(Data(text.utf8)) }

    /// Waits (at most 30 s) until the output contains `text`.
    func waitFor(_ text: String, timeout: Double = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !output.contains(text) {
            if Date() > deadline || !process.isRunning && !output.contains(text) {
                try #require(Bool(false), "did not see \"\(text)\" in:\n\(output)")
            }
            usleep(20_000)
        }
    }

    /// Waits (at most 30 s) for the exit status.
    func wait() -> Int32 {
        guard process.wait(seconds: 30) else { stop(); return -9 }
        return process.status ?? -1
    }

    func stop() { process.stop() }

    deinit { received.readabilityHandler = nil }
}
