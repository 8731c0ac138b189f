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
        (Standard input is not a terminal: run `tv setup` in one to be guided, or add --yes.)

        """)
        #expect(!FileManager.default.fileExists(atPath: box.ca))
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
        #expect(box.settings == "{\n  \"inspection.enabled\": true,\n  \"trust.store\": \"nss:\(db)\"\n}\n")
        #expect(try box.sh("certutil", "-L", "-d", "sql:" + db).contains("C,,"))
    }

    @Test func yesWithTheSystemStoreStopsBeforeChangingIt() throws {
        let box = TVSandbox()
        let result = box.tv("setup", "--yes")
        #expect(result.status == 0)
        #expect(result.out.hasSuffix("Do the steps above (for the system store: `sudo tv ca trust --apply --yes`), then run `tv setup` again.\n"))
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
    let process = Process()
    let input = Pipe()
    let collected = Collected()

    init(box: TVSandbox, command: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        process.environment = box.environment
        let out = Pipe()
        process.standardInput = input
        process.standardOutput = out
        process.standardError = out
        let sink = collected
        out.fileHandleForReading.readabilityHandler = { handle in sink.append(handle.availableData) }
        try process.run()
    }

    var output: String { collected.text }

    func send(_ text: String) { input.fileHandleForWriting.write(Data(text.utf8)) }

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
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { stop(); return -9 }
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }
}
