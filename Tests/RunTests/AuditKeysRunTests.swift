import Foundation
import Testing

/// Issue 23's evidence bundle: `keys.log` holds the TLS secrets of both legs of every inspected
/// flow of the session (`AuditKeyLog`, written while `tv run --audit` inspects), and
/// `--no-keys` leaves them out.
@Suite("tv audit bundle: the key log of both legs, through a real tv run --audit (issue 23)", .serialized)
struct AuditKeysRunTests {
    @Test("tv run --audit --inspect with curl: keys.log has two client_randoms per flow (curl's client leg, as curl's own SSLKEYLOGFILE says, and tv's upstream leg), each with its five TLS 1.3 secrets; the key file is 0600; --no-keys leaves keys.log out")
    func bundleCarriesBothLegsSecrets() throws {
        let world = try RunWorld()
        let box = world.sandbox
        #expect(try box.tv("audit", "project", "new", "keys").status == 0)
        let tv = try world.run("--inspect", "--audit", "keys")
        let curlKeys = box.work + "/curl-keys.log"
        for query in ["one", "two"] {
            let got = try box.tool("env", ["SSLKEYLOGFILE=" + curlKeys, "curl", "-sS", "--http1.1", "-x", tv.proxyURL,
                                           "--cacert", world.tvRoot, world.url("/index.html?\(query)")])
            #expect(got.out == "hello from nginx\n", "\(got)")
        }
        _ = try box.closedFlows(2)
        _ = try tv.stop()

        let file = box.dataDir + "/audit-keys/session-1.log"
        let mode = (try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o600, "mode \(String(mode, radix: 8))")

        #expect(try box.tv("audit", "bundle", "1", "-o", "evidence.tar.gz", "--yes").status == 0)
        let out = box.work + "/x"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        #expect(try box.tool("tar", ["-xzf", box.work + "/evidence.tar.gz", "-C", out]).status == 0)
        let check = try box.tool("python3", ["-c", """
            import collections, sys
            def randoms(path):
                labels = collections.defaultdict(set)
                for line in open(path):
                    parts = line.split()
                    if len(parts) == 3:
                        labels[parts[1]].add(parts[0])
                return labels
            bundle = randoms(sys.argv[1])
            curl = randoms(sys.argv[2])
            five = {'CLIENT_HANDSHAKE_TRAFFIC_SECRET', 'SERVER_HANDSHAKE_TRAFFIC_SECRET',
                    'CLIENT_TRAFFIC_SECRET_0', 'SERVER_TRAFFIC_SECRET_0', 'EXPORTER_SECRET'}
            assert all(labels == five for labels in bundle.values()), bundle
            assert set(curl) <= set(bundle), (curl, bundle)
            print(len(bundle), len(curl), len(set(bundle) - set(curl)))
            """, out + "/keys.log", curlKeys])
        #expect(check.out == "4 2 2\n", "\(check)")

        #expect(try box.tv("audit", "bundle", "1", "-o", "bare.tar.gz", "--yes", "--no-keys").status == 0)
        let listed = try box.tool("tar", ["-tzf", box.work + "/bare.tar.gz"])
        #expect(listed.status == 0 && !listed.out.contains("keys.log"), "\(listed)")
    }
}
