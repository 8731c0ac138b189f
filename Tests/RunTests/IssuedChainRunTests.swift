import Foundation
import Testing

/// `tv ca issue`'s files on a real server: nginx configured with `NAME-chain.pem` and
/// `NAME-key.pem` sends the leaf without the root, and clients given `NAME-root.pem` verify it,
/// directly and through `tv run --inspect`.
@Suite("run: tv ca issue's chain on nginx", .timeLimit(.minutes(5)))
struct IssuedChainRunTests {
    @Test("nginx serving NAME-chain.pem sends one certificate, the leaf; openssl s_client and curl given NAME-root.pem verify it, and tv inspects it")
    func nginxServesIssuedChain() throws {
        let box = try Sandbox()
        defer { box.remove() }
        try box.createCA()
        let issued = try box.issue(["localhost", "127.0.0.1"])
        let nginx = try TestNginx(certificate: (chain: issued.chain, key: issued.key))
        defer { nginx.stop() }

        // What the server sends: the leaf alone, verified against the root file tv wrote beside it.
        let shown = try box.tool("openssl", ["s_client", "-connect", "127.0.0.1:\(nginx.tlsPort)", "-servername", "localhost",
                                             "-showcerts", "-CAfile", issued.root, "-verify_return_error", "-verify_hostname", "localhost"],
                                 stdin: Data())
        #expect(shown.status == 0, "\(shown)")
        let sent = shown.out.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1
        #expect(sent == 1, "the server sent \(sent) certificates: \(shown.out)")
        let leafPEM = box.text(issued.cert).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(shown.out.contains(leafPEM))
        #expect(!shown.out.contains(box.text(issued.root).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(shown.out.contains("Verify return code: 0 (ok)"), "\(shown.out)")

        let direct = try box.curl(["--cacert", issued.root, "https://localhost:\(nginx.tlsPort)/"])
        #expect(direct.status == 0, "\(direct)")
        #expect(direct.out == "hello from nginx\n")

        // Through tv: verified upstream by tv's own root (no --upstream-ca), and the client's
        // NAME-root.pem is that same root, so it trusts tv's leaf too.
        let tv = try TVSession(box, ["--inspect"])
        let through = try box.curl(["-x", tv.proxyURL, "--cacert", issued.root, "https://localhost:\(nginx.tlsPort)/"])
        #expect(through.status == 0, "\(through)")
        #expect(through.out == "hello from nginx\n")
        let rows = try box.closedFlows(1)
        #expect(rows.map { $0.string("status") } == ["inspected"], "\(rows)")
        try tv.stop()
    }
}
