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

    /// The bundle of session `id` unpacked into `work/NAME`; the folder.
    func unpack(_ box: Sandbox, session id: Int, name: String, extra: [String] = []) throws -> String {
        let bundle = try box.tvArgs(["audit", "bundle", String(id), "-o", name + ".tar.gz", "--yes"] + extra)
        #expect(bundle.status == 0, "\(bundle)")
        let out = box.work + "/" + name
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        #expect(try box.tool("tar", ["-xzf", box.work + "/" + name + ".tar.gz", "-C", out]).status == 0)
        return out
    }

    /// Python that prints, for a bundle's keys.log and curl key logs of flows inside and outside
    /// the session: the client_randoms in the bundle, those of curl's inside flows, the rest
    /// (tv's upstream legs); it fails when an inside flow's random is missing, an outside one's is
    /// there, or a random lacks one of TLS 1.3's five secrets.
    static let randomsCheck = """
        import collections, os, sys
        def randoms(path):
            labels = collections.defaultdict(set)
            if os.path.exists(path):
                for line in open(path):
                    parts = line.split()
                    if len(parts) == 3:
                        labels[parts[1]].add(parts[0])
            return labels
        bundle = randoms(sys.argv[1])
        inside = [randoms(p) for p in sys.argv[2].split(',') if p]
        outside = [randoms(p) for p in sys.argv[3].split(',') if p]
        five = {'CLIENT_HANDSHAKE_TRAFFIC_SECRET', 'SERVER_HANDSHAKE_TRAFFIC_SECRET',
                'CLIENT_TRAFFIC_SECRET_0', 'SERVER_TRAFFIC_SECRET_0', 'EXPORTER_SECRET'}
        assert all(labels == five for labels in bundle.values()), bundle
        during = set().union(*[set(r) for r in inside]) if inside else set()
        other = set().union(*[set(r) for r in outside]) if outside else set()
        assert during <= set(bundle), (during, bundle)
        assert not (other & set(bundle)), (other, bundle)
        print(len(bundle), len(during), len(set(bundle) - during))
        """

    func curlWithKeys(_ world: RunWorld, _ tv: TVSession, _ query: String) throws {
        let box = world.sandbox
        let got = try box.tool("env", ["SSLKEYLOGFILE=" + box.work + "/\(query).log", "curl", "-sS", "--http1.1", "-x", tv.proxyURL,
                                       "--cacert", world.tvRoot, world.url("/index.html?\(query)")])
        #expect(got.out == "hello from nginx\n", "\(got)")
    }

    @Test("tv audit start beside a running tv run --inspect: the session is told and says so; keys.log holds both legs' client_randoms of the flow made while it recorded (curl's among them), none of a flow before the start or after tv audit stop")
    func keysOfASessionStartedBesideARun() throws {
        let world = try RunWorld()
        let box = world.sandbox
        #expect(try box.tv("audit", "project", "new", "keys").status == 0)
        let tv = try world.run("--inspect")
        try curlWithKeys(world, tv, "before")
        _ = try box.closedFlows(1)
        let start = try box.tv("audit", "start", "keys")
        #expect(start.status == 0 && start.out.contains("the running session's new flows belong to it from now, with both legs' TLS secrets in its key log."),
                "\(start)")
        try curlWithKeys(world, tv, "during")
        _ = try box.closedFlows(2)
        let stop = try box.tv("audit", "stop")
        #expect(stop.status == 0 && stop.out.contains(": 1 flow, 0 markers.") && !stop.out.contains("could not be told"), "\(stop)")
        try curlWithKeys(world, tv, "after")
        _ = try box.closedFlows(3)
        _ = try tv.stop()

        let out = try unpack(box, session: 1, name: "x")
        let check = try box.tool("python3", ["-c", Self.randomsCheck, out + "/keys.log", box.work + "/during.log",
                                             box.work + "/before.log," + box.work + "/after.log"])
        #expect(check.out == "2 1 1\n", "\(check)")
        // The session's key log holds TLS secrets: owner-only, as every key file.
        let mode = (try FileManager.default.attributesOfItem(atPath: box.dataDir + "/audit-keys/session-1.log")[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o600, "mode \(String(mode, radix: 8))")
    }

    @Test("tv audit start with no tv running says so; a tv run --inspect started afterwards follows the live session from its start, and stops following at tv audit stop")
    func runStartedAfterTheSessionFollowsIt() throws {
        let world = try RunWorld()
        let box = world.sandbox
        #expect(try box.tv("audit", "project", "new", "keys").status == 0)
        let start = try box.tv("audit", "start", "keys")
        #expect(start.status == 0 && start.out.contains("flows any tv session writes from now belong to it (with both legs' TLS secrets while it inspects); start `tv run` or `tv exec` to record."),
                "\(start)")
        let tv = try world.run("--inspect")
        try curlWithKeys(world, tv, "one")
        try curlWithKeys(world, tv, "two")
        _ = try box.closedFlows(2)
        let stop = try box.tv("audit", "stop")
        #expect(stop.status == 0 && stop.out.contains(": 2 flows, 0 markers.") && !stop.out.contains("could not be told"), "\(stop)")
        try curlWithKeys(world, tv, "three")
        _ = try box.closedFlows(3)
        _ = try tv.stop()
        let out = try unpack(box, session: 1, name: "x")
        let check = try box.tool("python3", ["-c", Self.randomsCheck, out + "/keys.log", box.work + "/one.log," + box.work + "/two.log",
                                             box.work + "/three.log"])
        #expect(check.out == "4 2 2\n", "\(check)")
    }

    @Test("tv audit start beside a tv run that does not inspect: said (no TLS secrets until inspection is on); its pass-through flow belongs to the session and keys.log holds nothing")
    func runWithoutInspection() throws {
        let world = try RunWorld()
        let box = world.sandbox
        #expect(try box.tv("audit", "project", "new", "keys").status == 0)
        let tv = try world.run()
        let start = try box.tv("audit", "start", "keys")
        #expect(start.status == 0 && start.out.contains("the running session's new flows belong to it from now. It does not inspect TLS now, so it records no TLS secrets until inspection is on."),
                "\(start)")
        let got = try box.tool("curl", ["-sS", "--http1.1", "-x", tv.proxyURL, "--cacert", world.pki.upstreamCA, world.url("/index.html?plain")])
        #expect(got.out == "hello from nginx\n", "\(got)")
        _ = try box.closedFlows(1)
        let stop = try box.tv("audit", "stop")
        #expect(stop.status == 0 && stop.out.contains(": 1 flow, 0 markers.") && !stop.out.contains("could not be told"), "\(stop)")
        _ = try tv.stop()
        let out = try unpack(box, session: 1, name: "x")
        let check = try box.tool("python3", ["-c", Self.randomsCheck, out + "/keys.log", "", ""])
        #expect(check.out == "0 0 0\n", "\(check)")
        let flows = try box.json("flows", "--audit", "1")
        #expect((flows["flows"] as? [JSON])?.map { $0.string("status") } == ["encrypted"], "\(flows)")
    }

    @Test("tv audit start beside a running tv run --inspect: tshark reads the HTTP of both legs (client to tv inside the CONNECT tunnel, tv to nginx) from a loopback capture with the bundle's keys.log alone, and none without it",
          .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/dumpcap"), "needs root and dumpcap (tshark)"))
    func bothLegsDecryptWithTheBundlesKeys() throws {
        let world = try RunWorld()
        let box = world.sandbox
        #expect(try box.tv("audit", "project", "new", "keys").status == 0)
        let tv = try world.run("--inspect")
        #expect(try box.tv("audit", "start", "keys").status == 0)
        let pcap = box.work + "/lo.pcapng"
        // It stops by itself after 6 s.
        let dumpcap = try Child("/usr/bin/dumpcap", ["-q", "-a", "duration:6", "-i", "lo", "-w", pcap, "-f", "tcp port \(tv.port) or tcp port \(world.nginx.tlsPort)"],
                                environment: box.environment)
        defer { dumpcap.stop() }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, ((try? FileManager.default.attributesOfItem(atPath: pcap)[.size] as? Int) ?? 0) == 0 { usleep(50_000) }
        usleep(500_000)
        try curlWithKeys(world, tv, "during")
        _ = try box.closedFlows(1)
        #expect(dumpcap.wait(seconds: 20), "dumpcap -a duration:6 did not stop by itself")
        #expect(try box.tv("audit", "stop").status == 0)
        _ = try tv.stop()
        let out = try unpack(box, session: 1, name: "x")
        let read = ["-r", pcap, "-d", "tcp.port==\(tv.port),http", "-d", "tcp.port==\(world.nginx.tlsPort),tls",
                    "-Y", "http.request", "-T", "fields", "-e", "tcp.dstport", "-e", "http.request.method", "-e", "http.request.uri"]
        let shown = try box.tool("tshark", ["-o", "tls.keylog_file:" + out + "/keys.log"] + read)
        let lines = Set(shown.out.split(separator: "\n").map(String.init))
        #expect(lines.contains("\(tv.port)\tGET\t/index.html?during") && lines.contains("\(world.nginx.tlsPort)\tGET\t/index.html?during"),
                "\(shown)")
        let hidden = try box.tool("tshark", read)
        #expect(!hidden.out.contains("GET"), "\(hidden)")
    }
}
