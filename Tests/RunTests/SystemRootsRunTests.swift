import Foundation
import Testing

/// Upstream legs find the system's roots through the directory's hash links on demand, without
/// reading the bundle whole at start when the links are there (issue 21, `SystemRootPlan`):
/// nginx's certificate from a CA only in SSL_CERT_DIR is trusted when `openssl rehash` linked it,
/// and refused when the directory holds the CA's file without the link.
@Suite("run: upstream roots from the hash links of SSL_CERT_DIR (issue 21)", .timeLimit(.minutes(5)))
struct SystemRootsRunTests {
    @Test("the upstream CA in SSL_CERT_DIR: hash-linked by openssl rehash, inspected; not linked, the upstream is refused",
          arguments: [true, false])
    func hashLinkedDirectory(linked: Bool) throws {
        let box = try Sandbox()
        defer { box.remove() }
        try box.createCA()
        let pki = TestPKI.shared
        let nginx = try TestNginx(certificate: (chain: pki.serverCert, key: pki.serverKey))
        defer { nginx.stop() }
        let roots = box.root + "/roots"
        try FileManager.default.createDirectory(atPath: roots, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: pki.upstreamCA, toPath: roots + "/up-ca.pem")
        if linked {
            let rehash = try box.tool("openssl", ["rehash", roots])
            try #require(rehash.status == 0, "\(rehash)")
        }

        let tv = try TVSession(box, ["--inspect"], environment: ["SSL_CERT_DIR": roots, "SSL_CERT_FILE": ""])
        let through = try box.curl(["-x", tv.proxyURL, "--cacert", box.rootPEM, "https://localhost:\(nginx.tlsPort)/"])
        let rows = try box.closedFlows(1)
        if linked {
            #expect(through.status == 0 && through.out == "hello from nginx\n", "\(through)")
            #expect(rows.map { $0.string("status") } == ["inspected"], "\(rows)")
        } else {
            #expect(through.out != "hello from nginx\n", "\(through)")
            #expect(rows.map { $0.string("status") } == ["failed"], "\(rows)")
        }
        try tv.stop()
    }
}
