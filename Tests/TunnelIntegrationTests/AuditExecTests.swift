import Foundation
import Synchronization
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
        // Both legs: curl's client_random and tv's upstream one, each with TLS 1.3's five secrets.
        let legs = Sh.run(["python3", "-c", Self.randoms, out + "/keys.log"])
        #expect(legs.out == "2\n", "\(legs)")
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

    /// Python: the number of client_randoms in a key log, each required to carry TLS 1.3's five secrets.
    static let randoms = """
        import collections, sys
        labels = collections.defaultdict(set)
        for line in open(sys.argv[1]):
            parts = line.split()
            if len(parts) == 3:
                labels[parts[1]].add(parts[0])
        five = {'CLIENT_HANDSHAKE_TRAFFIC_SECRET', 'SERVER_HANDSHAKE_TRAFFIC_SECRET',
                'CLIENT_TRAFFIC_SECRET_0', 'SERVER_TRAFFIC_SECRET_0', 'EXPORTER_SECRET'}
        assert all(l == five for l in labels.values()), labels
        print(len(labels))
        """

    @Test("tv audit start and stop while tv exec runs: the exec is told on its own socket; keys.log holds both legs of the flow made while the session recorded (curl's client_random among them) and none of those before or after; tshark decrypts the session's packets with that keys.log alone")
    func sessionStartedDuringExec() throws {
        #expect(lab.tv(["audit", "project", "new", "app"]).status == 0)
        let d = lab.dir
        func curl(_ q: String) -> String {
            "SSLKEYLOGFILE=\(d)/\(q).log curl -sS --http1.1 --cacert \(lab.tvRoot) 'https://origin.test/index.html?\(q)' > \(d)/\(q).out"
        }
        func waitScript(_ f: String) -> String { "i=0; while [ ! -e \(d)/\(f) ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done" }
        let script = try lab.script("steps.sh", """
            \(curl("before")); touch \(d)/ready1; \(waitScript("go1"))
            \(curl("during")); touch \(d)/ready2; \(waitScript("go2"))
            \(curl("after"))
            """)
        let done = DispatchSemaphore(value: 0)
        let ran = Mutex<Output?>(nil)
        Thread.detachNewThread { [lab] in
            let output = lab.exec(["--inspect", "--upstream-ca", lab.upstreamCA], ["sh", script])
            ran.withLock { $0 = output }
            done.signal()
        }
        func waitFor(_ f: String) -> Bool {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline { if FileManager.default.fileExists(atPath: d + "/" + f) { return true }; usleep(20_000) }
            return false
        }
        #expect(waitFor("ready1"))
        let start = lab.tv(["audit", "start", "app"])
        #expect(start.status == 0 && start.out.contains("the running session's new flows belong to it from now, with both legs' TLS secrets in its key log."), "\(start)")
        #expect(FileManager.default.createFile(atPath: d + "/go1", contents: Data()))
        #expect(waitFor("ready2"))
        let stop = lab.tv(["audit", "stop"])
        #expect(stop.status == 0 && !stop.out.contains("could not be told"), "\(stop)")
        #expect(FileManager.default.createFile(atPath: d + "/go2", contents: Data()))
        #expect(done.wait(timeout: .now() + 60) == .success)
        let exec = ran.withLock { $0 }
        #expect(exec?.status == 0, "\(String(describing: exec))")
        for q in ["before", "during", "after"] {
            #expect((try? String(contentsOfFile: d + "/\(q).out", encoding: .utf8)) == OriginLab.indexBody, "\(q)")
        }
        // The exec's own socket is gone with it.
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: lab.dataDir + "/run")) ?? []).allSatisfy { !$0.hasSuffix(".sock") })

        let out = d + "/bundle"
        let bare = d + "/bare"
        for (folder, extra) in [(out, [String]()), (bare, ["--no-keys"])] {
            let bundle = lab.tv(["audit", "bundle", "1", "-o", folder + ".tar.gz", "--yes"] + extra)
            #expect(bundle.status == 0, "\(bundle)")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            #expect(Sh.run(["tar", "-xzf", folder + ".tar.gz", "-C", folder]).status == 0)
        }
        let check = Sh.run(["python3", "-c", """
            import sys
            def randoms(path):
                return {line.split()[1] for line in open(path) if len(line.split()) == 3}
            bundle = randoms(sys.argv[1])
            before, during, after = (randoms(p) for p in sys.argv[2:5])
            assert during <= bundle, (during, bundle)
            assert not (before | after) & bundle, (before, after, bundle)
            print(len(bundle), len(during))
            """, out + "/keys.log", d + "/before.log", d + "/during.log", d + "/after.log"])
        #expect(check.out == "2 1\n", "\(check)")
        // The --no-keys bundle's packets carry no secrets; the other bundle's keys.log decrypts them.
        let hidden = Sh.run(["tshark", "-r", bare + "/packets.pcapng", "-Y", "http.request", "-T", "fields", "-e", "http.request.uri"])
        #expect(hidden.status == 0 && hidden.out.isEmpty, "\(hidden)")
        let shown = Sh.run(["tshark", "-r", bare + "/packets.pcapng", "-o", "tls.keylog_file:" + out + "/keys.log",
                            "-Y", "http.request", "-T", "fields", "-e", "http.request.uri"])
        #expect(shown.out.split(separator: "\n") == ["/index.html?during"], "\(shown)")
    }
}
