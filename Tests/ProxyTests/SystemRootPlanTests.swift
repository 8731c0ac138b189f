import Foundation
import Testing
@testable import Proxy

/// Where upstream legs find the system's roots (issue 21: the bundle is not read whole when the
/// directory's hash links find the same roots on demand).
@Suite("SystemRootPlan")
struct SystemRootPlanTests {
    let file = "/usr/lib/ssl/cert.pem", dir = "/usr/lib/ssl/certs"

    @Test("Debian's layout (hash links in the directory): the directory alone, no bundle read at start")
    func hashLinked() {
        let plan = SystemRootPlan.plan(environment: [:], defaultFile: file, defaultDirectory: dir) { $0 == "/usr/lib/ssl/certs" }
        #expect(plan == SystemRootPlan(file: nil, directory: "/usr/lib/ssl/certs"))
    }

    @Test("a bundle-only layout (no hash links): the bundle is read at start, as OpenSSL's defaults do")
    func bundleOnly() {
        let plan = SystemRootPlan.plan(environment: [:], defaultFile: file, defaultDirectory: dir) { _ in false }
        #expect(plan == SystemRootPlan(file: "/usr/lib/ssl/cert.pem", directory: "/usr/lib/ssl/certs"))
    }

    @Test("SSL_CERT_FILE is always read; SSL_CERT_DIR replaces the directory, each of its colon-separated parts checked")
    func environment() {
        var asked: [String] = []
        let withFile = SystemRootPlan.plan(environment: ["SSL_CERT_FILE": "/etc/my.pem"], defaultFile: file, defaultDirectory: dir) { _ in true }
        #expect(withFile == SystemRootPlan(file: "/etc/my.pem", directory: "/usr/lib/ssl/certs"))
        let withDir = SystemRootPlan.plan(environment: ["SSL_CERT_DIR": "/a:/b", "SSL_CERT_FILE": ""], defaultFile: file, defaultDirectory: dir) {
            asked.append($0); return $0 == "/b"
        }
        #expect(withDir == SystemRootPlan(file: nil, directory: "/a:/b"))
        #expect(asked == ["/a", "/b"])
    }

    @Test("hash link names: 8 lowercase hex digits, a dot, a number")
    func names() {
        #expect(SystemRootPlan.isHashLinkName("4042bcee.0"))
        #expect(SystemRootPlan.isHashLinkName("9d04f354.12"))
        #expect(!SystemRootPlan.isHashLinkName("4042bcee.r0"))
        #expect(!SystemRootPlan.isHashLinkName("4042BCEE.0"))
        #expect(!SystemRootPlan.isHashLinkName("ISRG_Root_X1.pem"))
        #expect(!SystemRootPlan.isHashLinkName("4042bcee."))
        #expect(!SystemRootPlan.isHashLinkName("ca-certificates.crt"))
    }

    @Test("a directory holds hash links when one entry is named as one; an unreadable directory holds none")
    func directories() throws {
        let root = "/tmp/tv-roots-\(getpid())"
        defer { _ = try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/plain", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/linked", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: root + "/plain/root.pem", contents: nil))
        #expect(FileManager.default.createFile(atPath: root + "/linked/root.pem", contents: nil))
        try FileManager.default.createSymbolicLink(atPath: root + "/linked/4042bcee.0", withDestinationPath: "root.pem")
        #expect(!SystemRootPlan.directoryHasHashLinks(root + "/plain"))
        #expect(SystemRootPlan.directoryHasHashLinks(root + "/linked"))
        #expect(!SystemRootPlan.directoryHasHashLinks(root + "/missing"))
    }
}
