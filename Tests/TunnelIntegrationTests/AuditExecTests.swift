import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 23 through the real `tv exec`: an audit session's bundle holds the packets the TUN
/// captured, with the TLS secrets of its inspected flow, so tshark reads the HTTP inside the TLS;
/// its flows.json is `tv flows --json --audit`'s, and `tv audit verify` passes.
@Suite("tv audit bundle of a tv exec session (packets with their secrets, tshark)", .serialized,
       .enabled(if: LabRequirements.met && FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark"), "needs root, /dev/net/tun, nginx, dnsmasq, tshark"))
final class AuditExecTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    @Test("an inspected HTTPS request in a session: tshark decrypts packets.pcapng with the bundle's own secrets and shows the request")
    func packetsWithSecrets() throws {
        #expect(lab.tv(["audit", "project", "new", "app"]).status == 0)
        let start = lab.tv(["audit", "start", "app"])
        #expect(start.status == 0, "\(start)")
        let r = lab.exec(["--inspect", "--upstream-ca", lab.upstreamCA],
                         ["curl", "-sS", "--http1.1", "--cacert", lab.tvRoot, "https://origin.test/index.html"])
        #expect(r.status == 0 && r.out == OriginLab.indexBody, "\(r)")
        let stop = lab.tv(["audit", "stop"])
        #expect(stop.status == 0, "\(stop)")
        let file = lab.dir + "/evidence.tar.gz"
        let bundle = lab.tv(["audit", "bundle", "1", "-o", file, "--yes"])
        #expect(bundle.status == 0, "\(bundle)")
        let out = lab.dir + "/bundle"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let untar = Sh.run(["tar", "-xzf", file, "-C", out])
        #expect(untar.status == 0, "\(untar)")
        let keys = String(decoding: FileManager.default.contents(atPath: out + "/keys.log") ?? Data(), as: UTF8.self)
        #expect(keys.contains("CLIENT_HANDSHAKE_TRAFFIC_SECRET") || keys.contains("CLIENT_RANDOM"), "\(keys)")
        let http = Sh.run(["tshark", "-r", out + "/packets.pcapng", "-Y", "http.request", "-T", "fields", "-e", "http.request.uri"])
        #expect(http.out.split(separator: "\n").contains("/index.html"), "\(http)")
        // Without the secrets the same packets show no HTTP.
        let bare = lab.dir + "/bare.tar.gz"
        #expect(lab.tv(["audit", "bundle", "1", "-o", bare, "--yes", "--no-keys"]).status == 0)
        let bareOut = lab.dir + "/bare"
        try FileManager.default.createDirectory(atPath: bareOut, withIntermediateDirectories: false)
        #expect(Sh.run(["tar", "-xzf", bare, "-C", bareOut]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: bareOut + "/keys.log"))
        let hidden = Sh.run(["tshark", "-r", bareOut + "/packets.pcapng", "-Y", "http.request", "-T", "fields", "-e", "http.request.uri"])
        #expect(hidden.out.isEmpty, "\(hidden)")

        let listed = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir, "flows", "--json", "--audit", "1", "--limit", "10000"])
        try listed.out.write(toFile: lab.dir + "/listed.json", atomically: true, encoding: .utf8)
        let compare = Sh.run(["python3", "-c", """
            import json, sys
            bundle = json.load(open(sys.argv[1]))['flows']
            chains = [f.pop('serverChain') for f in bundle]
            assert all(c[0]['sha256'] == f['certificate']['sha256'] for c, f in zip(chains, bundle) if f['serverPort'] == 443), chains
            listed = json.load(open(sys.argv[2]))['flows']
            assert bundle == listed and len(bundle) >= 1, (bundle, listed)
            print(sorted(set(f['status'] for f in bundle if f['serverPort'] == 443)))
            """, out + "/flows.json", lab.dir + "/listed.json"])
        #expect(compare.out == "['inspected']\n", "\(compare)")
        let verify = lab.tv(["audit", "verify", file])
        #expect(verify.status == 0 && verify.out.contains("is intact"), "\(verify)")
    }
}
