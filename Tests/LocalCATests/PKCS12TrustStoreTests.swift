import COpenSSL
import CTVShims
import Foundation
import Testing
@testable import LocalCA

/// `PKCS12TrustStore`, read back by the JDK's keytool (the JVM's own PKCS12 keystore) and by
/// OpenSSL's `pkcs12` command: every certificate is a `trustedCertEntry` under its alias, and the
/// MAC verifies under the password (and not under another).
@Suite("PKCS#12 trust store for the JVM")
struct PKCS12TrustStoreTests {
    @Test("two roots: keytool lists both as trustedCertEntry with their aliases and certificates; openssl verifies the MAC",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/keytool"), "needs keytool (default-jdk-headless)"))
    func readByKeytoolAndOpenSSL() throws {
        let now = currentTime()
        let first = try makeAuthority(now: now)
        let second = try makeAuthority(now: now)
        let der = try PKCS12TrustStore.der(certificates: [first.root, second.root], alias: { ["first-root", "tunnelvision-root"][$0] }, password: "s3cret")
        let dir = NSTemporaryDirectory() + "tv-p12-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/trust.p12"
        try Data(der).write(to: URL(fileURLWithPath: path))

        let list = run("/usr/bin/keytool", ["-J-Duser.language=en", "-list", "-rfc", "-keystore", path, "-storetype", "PKCS12", "-storepass", "s3cret"])
        #expect(list.status == 0, "\(list.text)")
        #expect(list.text.contains("Your keystore contains 2 entries"), "\(list.text)")
        let entries = list.text.components(separatedBy: "Alias name: ").dropFirst()
        #expect(entries.map { $0.prefix { $0 != "\n" } } == ["first-root", "tunnelvision-root"], "\(list.text)")
        #expect(entries.allSatisfy { $0.contains("Entry type: trustedCertEntry") }, "\(list.text)")
        let pems = entries.map { Certificate.allFromPEM(Array($0.utf8)).map(\.der) }
        #expect(pems == [[first.root.der], [second.root.der]])

        let wrong = run("/usr/bin/keytool", ["-list", "-keystore", path, "-storetype", "PKCS12", "-storepass", "other"])
        #expect(wrong.status != 0)
        let info = run("/usr/bin/openssl", ["pkcs12", "-in", path, "-nokeys", "-passin", "pass:s3cret", "-info"])
        #expect(info.status == 0 && info.text.contains("MAC: sha256") && info.text.contains("friendlyName: tunnelvision-root"), "\(info.text)")
    }

    private func run(_ program: String, _ arguments: [String]) -> (status: Int32, text: String) {
        let finished = Child.run(program, arguments, environment: ProcessInfo.processInfo.environment, timeout: 60)
        if let failure = finished.startFailure { return (-1, "could not start \(program): \(failure)") }
        return (finished.status, String(decoding: finished.stdout + finished.stderr, as: UTF8.self))
    }
}
