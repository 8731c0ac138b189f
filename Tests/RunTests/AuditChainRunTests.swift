import Foundation
import Testing

/// Issue 23's evidence bundle: each flow of `flows.json` carries the server certificate chain
/// the upstream leg saw (`serverChain`, leaf first, SHA-256 and PEM), stored once per
/// certificate (`certificates`) and per flow as fingerprints (`flows.chain`).
@Suite("tv audit bundle: the server certificate chain seen, through a real tv run (issue 23)", .serialized)
struct AuditChainRunTests {
    @Test("flows.json's serverChain is the chain openssl s_client -showcerts sees from nginx (leaf and CA): the same SHA-256s, PEM that openssl x509 reads; stored once for two flows")
    func bundleCarriesTheServerChain() throws {
        let world = try RunWorld()
        let box = world.sandbox
        // nginx sending two certificates: the leaf, then the CA that issued it.
        let chainFile = box.work + "/chain.pem"
        try (box.text(world.pki.serverCert) + box.text(world.pki.upstreamCA)).write(toFile: chainFile, atomically: true, encoding: .utf8)
        let nginx = try TestNginx(certificate: (chain: chainFile, key: world.pki.serverKey))
        defer { nginx.stop() }
        #expect(try box.tv("audit", "project", "new", "chain").status == 0)
        let tv = try world.run("--inspect", "--audit", "chain")
        for query in ["one", "two"] {
            let got = try world.curlThrough(tv, ["--http1.1", "https://localhost:\(nginx.tlsPort)/index.html?\(query)"])
            #expect(got.out == "hello from nginx\n", "\(got)")
        }
        _ = try box.closedFlows(2)
        _ = try tv.stop()
        // The session's settings as `tv audit start` beside a session records them, inspection
        // included (a new-user trial found `tv run --inspect --audit` recording only mode, listen, pid).
        let sessions = try box.tv("audit", "sessions", "--json")
        let settings = (try JSONSerialization.jsonObject(with: sessions.stdout) as? [JSON])?.first?.object("settings")
        #expect(settings?.string("inspection") == "on" && settings?.string("mode") == "regular"
                && settings?.string("modeLabel") != nil && settings?.string("pid") != nil, "\(sessions)")

        // Two flows of one chain: two certificates stored, each flow lists both fingerprints.
        let stored = try box.tool("python3", ["-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            print(db.execute("SELECT (SELECT count(*) FROM certificates), (SELECT count(DISTINCT chain) FROM flows), "
                             "(SELECT length(chain) FROM flows LIMIT 1)").fetchone())
            """, box.dataDir + "/tunnelvision.sqlite3"])
        #expect(stored.out == "(2, 1, 129)\n", "\(stored)")

        let bundle = try box.tv("audit", "bundle", "1", "-o", "evidence.tar.gz", "--yes")
        #expect(bundle.status == 0, "\(bundle)")
        let out = box.work + "/x"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        #expect(try box.tool("tar", ["-xzf", box.work + "/evidence.tar.gz", "-C", out]).status == 0)
        let check = try box.tool("python3", ["-c", """
            import json, re, subprocess, sys
            shown = subprocess.run(['openssl', 's_client', '-connect', '127.0.0.1:' + sys.argv[2], '-servername', 'localhost', '-showcerts'],
                                   input=b'', capture_output=True).stdout.decode()
            pems = re.findall(r'-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----', shown, re.S)
            def fingerprint(pem):
                text = subprocess.run(['openssl', 'x509', '-noout', '-fingerprint', '-sha256'], input=pem.encode(),
                                      capture_output=True, check=True).stdout.decode()
                return text.strip().split('=', 1)[1].replace(':', '').lower()
            def subject(pem):
                return subprocess.run(['openssl', 'x509', '-noout', '-subject', '-nameopt', 'compat'], input=pem.encode(),
                                      capture_output=True, check=True).stdout.decode().strip()
            want = [fingerprint(p) for p in pems]
            flows = json.load(open(sys.argv[1]))['flows']
            for f in flows:
                chain = f['serverChain']
                assert [c['sha256'] for c in chain] == want, (chain, want)
                assert [fingerprint(c['pem']) for c in chain] == want
                assert chain[0]['sha256'] == f['certificate']['sha256']
                assert chain[0]['issuer'] == chain[1]['subject'], chain
            print(len(flows), len(want))
            """, out + "/flows.json", "\(nginx.tlsPort)"])
        #expect(check.out == "2 2\n", "\(check)")
    }
}
