import Foundation
import Testing

/// Issue 22, "`tv ca trust --doctor`", through the real `tv` binary on this machine: the OpenSSL
/// system store (which does not hold a fresh sandbox's root), certifi in a venv from PyPI (before
/// and after the root is appended to it), and the JVM's trust store (cacerts, then the PKCS#12
/// store `tv exec --proxy` writes, named through JAVA_TOOL_OPTIONS), each asked now.
@Suite("tv ca trust --doctor on this machine (issue 22)", .serialized)
struct TrustDoctorRunTests {
    func doctor(_ box: Sandbox, _ extra: [String: String]) throws -> [JSON] {
        let r = try Run.process(try TVBinary.require(), ["--data-dir", box.dataDir, "ca", "trust", "--doctor", "--json"], in: box.work,
                                environment: box.environment.merging(extra) { $1 }, timeout: 120)
        try #require(r.status == 0, "\(r)")
        let object = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? JSON, "\(r)")
        return object["places"] as? [JSON] ?? []
    }

    @Test("system store, certifi in a venv and Java: not trusted with the exact fix; then certifi with the root appended, and the JVM given tv exec --proxy's trust store, trusted",
          .enabled(if: PyPIVenv.available && FileManager.default.isExecutableFile(atPath: "/usr/bin/java"), "needs PyPI (a venv with certifi) and java"))
    func systemCertifiJava() throws {
        let venv = try PyPIVenv.require()
        let world = try ProxyEnvWorld()
        let box = world.sandbox
        let path = venv + "/bin:" + (box.environment["PATH"] ?? "/usr/bin:/bin")
        let places = try doctor(box, ["PATH": path])

        let system = try #require(places.first { $0.string("kind") == "system" })
        #expect(system.string("trusted") == "no" && system.string("execProxy") == "covers", "\(system)")
        let tag = String(try box.fingerprint(box.rootPEM).prefix(8))
        #expect(system.string("fix") == "sudo cp \(box.rootPEM) /usr/local/share/ca-certificates/tunnelvision-\(tag).crt && sudo update-ca-certificates", "\(system)")

        let python = try #require(places.first { $0.string("kind") == "python" && ($0.string("program") ?? "").hasPrefix(venv) }, "\(places)")
        let certifi = try #require(python.string("store"))
        #expect(certifi.hasPrefix(venv + "/lib/") && certifi.hasSuffix("/site-packages/certifi/cacert.pem"), "\(python)")
        #expect(python.string("trusted") == "no" && python.string("fix") == "cat \(certifi) \(box.rootPEM) > \"$HOME/tv-python-roots.pem\" && export REQUESTS_CA_BUNDLE=\"$HOME/tv-python-roots.pem\"", "\(python)")

        let java = try #require(places.first { $0.string("kind") == "java" }, "\(places)")
        #expect(java.string("trusted") == "no" && java.string("store")?.hasSuffix("/lib/security/cacerts") == true, "\(java)")
        #expect(java.string("fix")?.contains("keytool -importcert -keystore ") == true && java.string("fix")?.contains(" -file \(box.rootPEM) -noprompt") == true, "\(java)")

        // Trust it there now: the root appended to the venv's certifi bundle, and the JVM pointed at
        // the PKCS#12 store tv exec --proxy writes (made by running it once).
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: certifi))
        handle.seekToEndOfFile()
        handle.write(box.read(box.rootPEM))
        try handle.close()
        let ran = try world.exec(["true"])
        try #require(ran.status == 0, "\(ran)")
        let store = box.dataDir + "/proxy-env/truststore.p12"
        let after = try doctor(box, ["PATH": path, "JAVA_TOOL_OPTIONS": "-Djavax.net.ssl.trustStore=\(store) -Djavax.net.ssl.trustStorePassword=tunnelvision -Djavax.net.ssl.trustStoreType=PKCS12"])
        let python2 = try #require(after.first { $0.string("kind") == "python" && ($0.string("program") ?? "").hasPrefix(venv) })
        #expect(python2.string("trusted") == "yes" && python2["fix"] is NSNull, "\(python2)")
        let java2 = try #require(after.first { $0.string("kind") == "java" })
        #expect(java2.string("trusted") == "yes" && java2.string("store") == store && java2["fix"] is NSNull, "\(java2)")
        let system2 = try #require(after.first { $0.string("kind") == "system" })
        #expect(system2.string("trusted") == "no")
        // keytool's own PKCS#12 store (certificates encrypted under its password), named without
        // trustStorePassword: Java reads no entry of it, and neither does the doctor now (it asked
        // with "changeit" and said trusted: a trial).
        let locked = box.work + "/locked.p12"
        let made = try box.tool("keytool", ["-importcert", "-keystore", locked, "-storetype", "PKCS12", "-alias", "tv", "-file", box.rootPEM,
                                             "-storepass", "changeit", "-noprompt"], timeout: 60)
        try #require(made.status == 0, "\(made)")
        let without = try doctor(box, ["PATH": path, "JAVA_TOOL_OPTIONS": "-Djavax.net.ssl.trustStore=\(locked)"])
        #expect(without.first { $0.string("kind") == "java" }?.string("trusted") == "no", "\(without)")
        let with = try doctor(box, ["PATH": path, "JAVA_TOOL_OPTIONS": "-Djavax.net.ssl.trustStore=\(locked) -Djavax.net.ssl.trustStorePassword=changeit"])
        #expect(with.first { $0.string("kind") == "java" }?.string("trusted") == "yes", "\(with)")
    }

    @Test("text output: the root, each place with its store, answer, fix and what tv exec --proxy does; a count at the end")
    func text() throws {
        let box = try Sandbox()
        defer { box.remove() }
        try box.createCA()
        let r = try box.tv("ca", "trust", "--doctor")
        #expect(r.status == 0, "\(r)")
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("Root: TunnelVision Root CA ") == true, "\(r.out)")
        #expect(lines.dropFirst().first == "OpenSSL system store", "\(r.out)")
        #expect(lines.dropFirst(2).first?.hasPrefix("  store    ") == true && lines.dropFirst(3).first?.hasPrefix("  trusted  no: ") == true, "\(r.out)")
        #expect(r.out.contains("\n  fix      sudo cp \(box.rootPEM) /usr/local/share/ca-certificates/tunnelvision-"), "\(r.out)")
        #expect(r.out.contains("\n  tv exec --proxy  avoids the need: SSL_CERT_FILE names a bundle with tv's root for OpenSSL programs (curl, Python's ssl, Go)\n"), "\(r.out)")
        #expect(lines.dropLast().last?.contains(" places found do not trust tv's root now; run a fix above, or run the program with `tv exec --proxy -- CMD`") == true, "\(r.out)")
        #expect(lines.last?.hasPrefix("Then `tv pinned forget --lacks-root`: ") == true, "\(r.out)")
        let refused = try box.tv("ca", "trust", "--doctor", "--apply")
        #expect(refused.status == 2 && refused.err.contains("--doctor asks every place it finds and changes nothing; it does not take --apply."), "\(refused)")
    }
}
