import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `tv exec` end to end: real clients inside the command's namespace, a real origin in another,
/// the built `tv` binary in a stand-in host namespace. Traffic only to addresses of the lab.
@Suite("tv exec through a TUN, against an origin namespace", .serialized, .enabled(if: LabRequirements.met, "needs root, /dev/net/tun, nginx, dnsmasq"))
final class ExecTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    func flow(_ predicate: ([String: Any]) -> Bool) throws -> [String: Any]? {
        try lab.flows().first(where: predicate)
    }

    @Test("HTTPS with inspection: curl trusts tv's root, the body is intact, the flow is inspected with the original destination")
    func inspected() throws {
        let r = lab.exec(["--inspect", "--upstream-ca", lab.upstreamCA],
                         ["curl", "-sS", "--cacert", lab.tvRoot, "https://origin.test/index.html"])
        #expect(r.status == 0, "\(r)")
        #expect(r.out == OriginLab.indexBody)
        let f = try #require(try flow { $0["serverPort"] as? Int == 443 })
        #expect(f["status"] as? String == "inspected")
        #expect(f["serverAddress"] as? String == "10.203.0.2")
        #expect(f["host"] as? String == "origin.test" && f["hostOrigin"] as? String == "sni")
        #expect(f["clientAddress"] as? String == "10.77.0.1")
        // HTTP/2 and 1 MiB, byte for byte.
        let big = lab.exec(["--inspect", "--upstream-ca", lab.upstreamCA],
                           ["sh", "-c", "curl -sS --http2 --cacert \(lab.tvRoot) -w '%{http_version}' -o \(lab.dir)/got.bin https://origin.test/1m.bin"])
        #expect(big.status == 0 && big.out == "2", "\(big)")
        #expect(FileManager.default.contents(atPath: lab.dir + "/got.bin") == FileManager.default.contents(atPath: lab.dir + "/www/1m.bin"))
        #expect(try flow { $0["serverPort"] as? Int == 443 }?["alpn"] as? String == "h2")
    }

    @Test("HTTPS with inspection, the origin's certificate not trusted (no --upstream-ca): curl gets a 502 that says why and names --upstream-ca; the flow fails with that reason")
    func untrustedOrigin() throws {
        let r = lab.exec(["--inspect"], ["curl", "-sS", "--cacert", lab.tvRoot, "-w", "\n%{http_code}", "https://origin.test/index.html"])
        #expect(r.status == 0, "\(r)")
        let f = try #require(try flow { $0["serverPort"] as? Int == 443 })
        #expect(f["status"] as? String == "failed")
        let reason = try #require(f["failureReason"] as? String)
        #expect(reason.hasPrefix("the server's certificate does not verify ("), "\(reason)")
        #expect(reason.contains("--upstream-ca FILE"), "\(reason)")
        #expect(r.out == "tv: \(reason)\n\n502", "\(r)")
    }

    @Test("SSLKEYLOGFILE is tv's key log under tv exec: the command does not get it (it wrote into tv's file too); another file named by --keylog leaves the command's own variable alone")
    func keyLogVariableIsTvs() throws {
        let log = lab.dir + "/keys.log"
        let shown = lab.inHost(["env", "SSLKEYLOGFILE=" + log, TVBinary.path!, "--data-dir", lab.dataDir, "exec", "--yes", "--quiet", "--",
                                "sh", "-c", "echo \"${SSLKEYLOGFILE-unset}\""])
        #expect(shown.status == 0 && shown.out == "unset\n", "\(shown)")
        let other = lab.dir + "/other.log"
        let kept = lab.inHost(["env", "SSLKEYLOGFILE=" + other, TVBinary.path!, "--data-dir", lab.dataDir, "exec", "--yes", "--quiet",
                               "--keylog", log, "--", "sh", "-c", "echo \"${SSLKEYLOGFILE-unset}\""])
        #expect(kept.status == 0 && kept.out == other + "\n", "\(kept)")
    }

    @Test("inspection off: passed through untouched (the origin's own certificate), status encrypted; plain HTTP is not encrypted")
    func passThroughAndPlain() throws {
        let r = lab.exec([], ["curl", "-sS", "--cacert", lab.upstreamCA, "https://origin.test/index.html"])
        #expect(r.status == 0 && r.out == OriginLab.indexBody, "\(r)")
        #expect(try flow { $0["serverPort"] as? Int == 443 }?["status"] as? String == "encrypted")
        let plain = lab.exec([], ["curl", "-sS", "http://origin.test:8080/index.html"])
        #expect(plain.status == 0 && plain.out == OriginLab.indexBody, "\(plain)")
        let f = try #require(try flow { $0["serverPort"] as? Int == 8080 })
        #expect(f["status"] as? String == "not_encrypted" && f["serverAddress"] as? String == "10.203.0.2")
        // IPv6 too.
        let v6 = lab.exec([], ["curl", "-sS", "-g", "http://[fd03::2]:8080/index.html"])
        #expect(v6.status == 0 && v6.out == OriginLab.indexBody, "\(v6)")
        #expect(try flow { $0["serverAddress"] as? String == "fd03::2" }?["clientAddress"] as? String == "fd77::1")
    }

    @Test("with the TUN's MTU at 1500 the kernel hands tv 64 KB GSO super-packets (TSO on the TUN): 1 MiB plain over IPv4 and IPv6 and inspected HTTPS arrive byte for byte")
    func gsoDownloads() throws {
        let want = FileManager.default.contents(atPath: lab.dir + "/www/1m.bin")
        for (name, url) in [("v4", "http://10.203.0.2:8080/1m.bin"), ("v6", "http://[fd03::2]:8080/1m.bin")] {
            let r = lab.exec(["--mtu", "1500"], ["curl", "-sS", "-g", "-o", "\(lab.dir)/gso-\(name).bin", url])
            #expect(r.status == 0, "\(name): \(r)")
            #expect(FileManager.default.contents(atPath: "\(lab.dir)/gso-\(name).bin") == want, "\(name)")
        }
        let tls = lab.exec(["--mtu", "1500", "--inspect", "--upstream-ca", lab.upstreamCA],
                           ["curl", "-sS", "--http1.1", "--cacert", lab.tvRoot, "-o", "\(lab.dir)/gso-tls.bin", "https://origin.test/1m.bin"])
        #expect(tls.status == 0, "\(tls)")
        #expect(FileManager.default.contents(atPath: "\(lab.dir)/gso-tls.bin") == want)
    }

    @Test("UDP round trips over IPv4 and IPv6 up to 65,000 bytes; with MTU 1500 the 3,000-byte datagram arrives in fragments; with MTU 65535 the first datagram above the path's 1,500 is refused with EMSGSIZE once, then goes in fragments")
    func udp() throws {
        // Like any UDP app behind a path with a smaller MTU, the client sends again after EMSGSIZE
        // (its kernel learnt the path MTU from tv's ICMP and now fragments the datagram itself).
        let client = try lab.script("udp.py", """
            import errno, socket
            refused = []
            for fam, addr in ((socket.AF_INET, "10.203.0.2"), (socket.AF_INET6, "fd03::2")):
                s = socket.socket(fam, socket.SOCK_DGRAM); s.settimeout(5); s.connect((addr, 7007))
                for n in (1, 100, 1400, 3000, 9000, 65000):
                    data = bytes((i * 7 + 3) & 255 for i in range(n))
                    s.send(data)
                    try:
                        got = s.recv(70000)
                    except OSError as e:
                        if e.errno != errno.EMSGSIZE: raise
                        refused.append(n)
                        s.send(data)
                        got = s.recv(70000)
                    assert got == data, (fam, n)
            print("ok", refused)
            """)
        for (mtu, refused) in [("1500", "[]"), ("65535", "[3000, 3000]")] {
            let r = lab.exec(["--mtu", mtu], ["python3", client])
            #expect(r.status == 0 && r.out == "ok \(refused)\n", "MTU \(mtu): \(r)")
        }
        let f = try #require(try flow { $0["transport"] as? String == "udp" && $0["serverAddress"] as? String == "10.203.0.2" && $0["serverPort"] as? Int == 7007 })
        #expect(f["bytesUp"] as? Int == 78_501 && f["bytesDown"] as? Int == 78_501)
        #expect(f["packetsUp"] as? Int == 6 && f["packetsDown"] as? Int == 6)
        #expect(f["status"] as? String == "not_encrypted")
        // An association ends with its last datagram, not when the session or the idle timer
        // found it (a 1 ms exchange read 60 s: a trial).
        #expect((f["duration"] as? Int).map { $0 == (f["lastActivityTime"] as? Int ?? -1) - (f["startTime"] as? Int ?? 0) } == true, "\(f)")
        // UDP to 443 is QUIC as far as tv knows: encrypted (nothing listens there; the flow is
        // still one), or failed with the reason when the origin's port unreachable came back
        // before the command ended.
        let quic = lab.exec([], ["python3", "-c", "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'\\xc0' + bytes(1199), ('10.203.0.2', 443))"])
        #expect(quic.status == 0, "\(quic)")
        let q = try #require(try flow { $0["transport"] as? String == "udp" && $0["serverPort"] as? Int == 443 })
        #expect(q["bytesUp"] as? Int == 1200, "\(q)")
        #expect(q["status"] as? String == "encrypted"
                || (q["status"] as? String == "failed" && (q["failureReason"] as? String)?.hasPrefix("the server answered ICMP port unreachable") == true), "\(q)")
    }

    @Test("UDP path MTU: with the host's link at MTU 1280, a DF datagram of 1,400 bytes gets ICMP fragmentation needed / packet too big: the app sees EMSGSIZE and learns 1280")
    func udpPathMTU() throws {
        let client = try lab.script("pmtu.py", """
            import errno, socket
            out = []
            for fam, addr, level, discover, mtu in ((socket.AF_INET, "10.203.0.2", socket.IPPROTO_IP, 10, 14),
                                                    (socket.AF_INET6, "fd03::2", socket.IPPROTO_IPV6, 23, 24)):
                s = socket.socket(fam, socket.SOCK_DGRAM); s.settimeout(5)
                s.setsockopt(level, discover, 2)          # IP(V6)_MTU_DISCOVER = PMTUDISC_DO: never fragment
                s.connect((addr, 7007))
                s.send(b"x" * 1400)                       # fits the TUN (1500), not the path (1280)
                try:
                    s.recv(70000); out.append("answered")
                except OSError as e:
                    out.append(errno.errorcode.get(e.errno, str(e.errno)))
                out.append(str(s.getsockopt(level, mtu)))   # IP_MTU / IPV6_MTU: the path MTU it learnt
                try:
                    s.send(b"x" * 1400); out.append("sent")
                except OSError as e:
                    out.append(errno.errorcode.get(e.errno, str(e.errno)))
                s.send(b"y" * 1200); out.append(str(len(s.recv(70000))))
            print(" ".join(out))
            """)
        let link = "h-\(lab.tag)"
        try Sh.must(["ip", "-n", lab.host, "link", "set", link, "mtu", "1280"])
        defer { _ = Sh.run(["ip", "-n", lab.host, "link", "set", link, "mtu", "1500"]) }
        let r = lab.tv(["exec", "--yes", "--", "python3", client])
        #expect(r.status == 0 && r.out == "EMSGSIZE 1280 EMSGSIZE 1200 EMSGSIZE 1280 EMSGSIZE 1200\n", "\(r)")
        // The counters block tv exec prints when CMD exits: two path-MTU signals (the kernel's own
        // EMSGSIZE entries in the error queue are drained without a second signal or a count).
        #expect(r.err.contains("2 path-MTU signals") && !r.err.contains("not passed on"), "\(r.err)")
    }

    @Test("UDP path MTU beyond the first hop: a router two hops out with a 1,280 link answers a DF datagram of 1,400 bytes; the app learns 1280 at once, without sending a second one; the capture keeps tv's copy of the router's error, from the router, quoting the datagram with its lengths, titled too big for the path, with a comment")
    func udpPathMTUFurtherOut() throws {
        // host (tv) —1500— origin namespace, forwarding (the router) —1280— far namespace (UDP echo).
        let far = "\(lab.prefix)p-\(lab.tag)", near = "tvp\(lab.tag)r", farLink = "tvp\(lab.tag)f"
        try Sh.must(["ip", "netns", "add", far])
        defer { _ = Sh.run(["ip", "netns", "del", far]) }
        try Sh.must(["ip", "link", "add", near, "netns", lab.origin, "mtu", "1280", "type", "veth", "peer", "name", farLink, "netns", far, "mtu", "1280"])
        try Sh.must(["ip", "-n", lab.origin, "addr", "add", "10.213.0.1/24", "dev", near])
        try Sh.must(["ip", "-n", lab.origin, "addr", "add", "fd13::1/64", "dev", near, "nodad"])
        try Sh.must(["ip", "-n", far, "addr", "add", "10.213.0.2/24", "dev", farLink])
        try Sh.must(["ip", "-n", far, "addr", "add", "fd13::2/64", "dev", farLink, "nodad"])
        for (ns, dev) in [(lab.origin, near), (far, farLink), (far, "lo")] { try Sh.must(["ip", "-n", ns, "link", "set", dev, "up"]) }
        try Sh.must(["ip", "netns", "exec", lab.origin, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"])
        try Sh.must(["ip", "-n", lab.host, "route", "add", "10.213.0.0/24", "via", "10.203.0.2"])
        try Sh.must(["ip", "-n", lab.host, "route", "add", "fd13::/64", "via", "fd03::2"])
        try Sh.must(["ip", "-n", far, "route", "add", "default", "via", "10.213.0.1"])
        try Sh.must(["ip", "-n", far, "route", "add", "default", "via", "fd13::1"])
        let echo = try lab.script("far-echo.py", """
            import socket, threading
            def serve(fam, addr):
                s = socket.socket(fam, socket.SOCK_DGRAM); s.bind((addr, 7007))
                while True:
                    d, peer = s.recvfrom(65535); s.sendto(d, peer)
            threading.Thread(target=serve, args=(socket.AF_INET6, "fd13::2"), daemon=True).start()
            serve(socket.AF_INET, "10.213.0.2")
            """)
        let server = try Daemon(["ip", "netns", "exec", far, "python3", echo], log: lab.dir + "/far-echo.log")
        defer { server.stop() }
        // Routed and echoing, from the host stand-in, before tv starts (small datagrams fit every hop).
        let ready = try lab.script("far-ready.py", """
            import socket, time
            for fam, addr in ((socket.AF_INET, "10.213.0.2"), (socket.AF_INET6, "fd13::2")):
                for _ in range(50):
                    s = socket.socket(fam, socket.SOCK_DGRAM); s.settimeout(0.2); s.connect((addr, 7007))
                    try:
                        s.send(b"ping"); s.recv(100); break
                    except OSError:
                        time.sleep(0.1)
                else:
                    raise SystemExit("no echo from " + addr)
            """)
        let up = Sh.run(["ip", "netns", "exec", lab.host, "python3", ready])
        try #require(up.status == 0, "\(up) \(server.output)")
        // One 1,400-byte datagram with DF; then the app only waits and asks its kernel. It never
        // sends a second large one: what it knows afterwards came from the ICMP tv wrote back.
        let client = try lab.script("pmtu-far.py", """
            import errno, socket
            out = []
            for fam, addr, level, discover, mtu in ((socket.AF_INET, "10.213.0.2", socket.IPPROTO_IP, 10, 14),
                                                    (socket.AF_INET6, "fd13::2", socket.IPPROTO_IPV6, 23, 24)):
                s = socket.socket(fam, socket.SOCK_DGRAM); s.settimeout(3)
                s.setsockopt(level, discover, 2)          # IP(V6)_MTU_DISCOVER = PMTUDISC_DO: never fragment
                s.connect((addr, 7007))
                out.append(str(s.getsockopt(level, mtu)))   # the TUN's 1500 (no route out here: EgressMTU.fallback)
                s.send(b"x" * 1400)                       # fits the TUN and the first hop, not the router's next link
                try:
                    s.recv(70000); out.append("answered")
                except socket.timeout:
                    out.append("timeout")
                except OSError as e:
                    out.append(errno.errorcode.get(e.errno, str(e.errno)))
                out.append(str(s.getsockopt(level, mtu)))   # IP_MTU / IPV6_MTU: the path MTU it learnt
                s.send(b"y" * 1200); out.append(str(len(s.recv(70000))))
            print(" ".join(out))
            """)
        let r = lab.tv(["exec", "--yes", "--", "python3", client])
        #expect(r.status == 0 && r.out == "1500 EMSGSIZE 1280 1200 1500 EMSGSIZE 1280 1200\n", "\(r)")
        // The counters block tv exec prints when CMD exits: both signals came from the error queue
        // (tv's own sends never failed: the first hop carries 1,400 bytes).
        #expect(r.err.contains("2 path-MTU signals") && !r.err.contains("send failed") && !r.err.contains("not passed on"), "\(r.err)")
        // What the capture keeps of each: tv's copy of the router's error, from the router (the
        // origin namespace, 10.203.0.2 / fd03::2), not the far server; quoting the program's
        // datagram with its real lengths (they counted the quoted bytes: a trial's tshark read
        // "MTU 1280" beside a 548-byte packet); titled too big for the path (it read "cut off" and
        // "data"); and a comment saying whose error it is.
        for (server, router, length, quoted) in [("10.213.0.2", "10.203.0.2", "1,428", "548"), ("fd13::2", "fd03::2", "1,448", "1,232")] {
            let flow = try #require(try lab.flows().first { $0["serverAddress"] as? String == server && $0["transport"] as? String == "udp" })
            let id = String(flow["id"] as? Int ?? 0)
            let list = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir, "packets", id, "--json"])
            let rows = ((try? JSONSerialization.jsonObject(with: Data(list.out.utf8))) as? [String: Any])?["packets"] as? [[String: Any]] ?? []
            let n = try #require(rows.first { $0["meaning"] as? String == "too_big_for_path" }?["n"] as? Int, "\(list)")
            let one = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir, "packet", id, String(n), "--json"])
            let headers = ((try? JSONSerialization.jsonObject(with: Data(one.out.utf8))) as? [String: Any])?["headers"] as? [String: [String: String]] ?? [:]
            let v6 = server.contains(":")
            #expect(headers[v6 ? "IPv6" : "IPv4"]?["from"] == router, "\(one)")
            #expect(headers[v6 ? "ICMPv6" : "ICMP"]?[v6 ? "MTU" : "next-hop MTU"] == "1280 bytes", "\(one)")
            #expect(headers["Quoted packet"] == ["from": flow["clientAddress"] as? String ?? "?", "to": server, "protocol": "UDP",
                                                 "length": "\(length) bytes (\(quoted) quoted)", "ports": "\(flow["clientPort"] as? Int ?? 0) → 7007",
                                                 "UDP length": "1,408 bytes"], "\(one)")
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark"),
               let file = ((try? JSONSerialization.jsonObject(with: Data(one.out.utf8))) as? [String: Any])?["captureFile"] as? String {
                let comment = Sh.run(["tshark", "-r", lab.dataDir + "/captures/" + file, "-Y", v6 ? "icmpv6.type == 2" : "icmp.type == 3",
                                      "-T", "fields", "-e", "frame.comment"]).out
                #expect(comment.contains("tv's copy for the program of the \(v6 ? "ICMPv6 packet too big (MTU 1280)" : "ICMP fragmentation needed (next-hop MTU 1280)") \(router) sent about tv's datagram")
                        && comment.contains("its headers as the program sent them"), "\(comment)")
            }
        }
    }

    @Test("UDP to a closed port: the origin's ICMP port unreachable reaches the app, whose connected socket reports ECONNREFUSED, as without tv; held for the program lookup, each flow names python3 though its socket closes at once")
    func udpPortUnreachable() throws {
        let client = try lab.script("refused.py", """
            import errno, socket
            out = []
            for fam, addr in ((socket.AF_INET, "10.203.0.2"), (socket.AF_INET6, "fd03::2")):
                s = socket.socket(fam, socket.SOCK_DGRAM); s.settimeout(3); s.connect((addr, 7009))
                s.send(b"anyone?")
                try:
                    s.recv(100); out.append("answered")
                except socket.timeout:
                    out.append("timeout")
                except OSError as e:
                    out.append(errno.errorcode.get(e.errno, str(e.errno)))
                s.close()
            print(" ".join(out))
            """)
        let r = lab.tv(["exec", "--yes", "--", "python3", client])
        #expect(r.status == 0 && r.out == "ECONNREFUSED ECONNREFUSED\n", "\(r)")
        #expect(r.err.contains("2 port-unreachable signals"), "\(r.err)")
        // Each flow says why (it read ↓ 0 B and no error), and its ICMP is titled cut off, not data.
        let flows = try lab.flows().filter { $0["serverPort"] as? Int == 7009 }
        #expect(flows.count == 2, "\(flows)")
        for flow in flows {
            #expect(flow["status"] as? String == "failed"
                    && flow["failureReason"] as? String == "the server answered ICMP port unreachable (nothing listens on that port); tv passed it on, so the program saw connection refused (ECONNREFUSED)", "\(flow)")
            let packets = lab.tv(["packets", String(flow["id"] as? Int ?? 0), "--json"])
            let rows = ((try? JSONSerialization.jsonObject(with: Data(packets.out.utf8))) as? [String: Any])?["packets"] as? [[String: Any]] ?? []
            #expect(rows.map { $0["meaning"] as? String ?? "?" } == ["data", "cut_off"], "\(packets)")
            // Passed on at once, the socket closed before the lookup asked (1 of 3 "not known" in a trial).
            let program = flow["program"] as? [String: Any]
            #expect(program?["known"] as? Bool == true && program?["command"] as? String == "python3", "\(flow)")
        }
    }

    @Test("a loopback stub resolver on the host (like systemd-resolved's 127.0.0.53) still answers: tv asks it from outside the namespace")
    func loopbackStub() throws {
        let stub = try Daemon(["ip", "netns", "exec", lab.host, "dnsmasq", "--no-daemon", "--no-resolv", "--no-hosts", "--bind-interfaces",
                               "--listen-address=127.0.0.53", "--host-record=stub.test,10.203.0.2", "--pid-file=", "--user=root"],
                              log: lab.dir + "/stub.log")
        defer { stub.stop() }
        usleep(300_000)
        try "nameserver 127.0.0.53\n".write(toFile: lab.dir + "/resolv.conf", atomically: true, encoding: .utf8)
        let r = lab.exec([], ["getent", "ahostsv4", "stub.test"])
        #expect(r.status == 0 && r.out.contains("10.203.0.2"), "\(r) \(stub.output)")
        #expect(try flow { $0["serverPort"] as? Int == 53 }?["serverAddress"] as? String == "127.0.0.53")
    }

    @Test("a resolver tv cannot reach: each query gets tv's SERVFAIL at once, in its own failed flow, the query before the answer in the capture; the summary says why no names came")
    func unreachableResolver() throws {
        // TEST-NET-2, no route to it in the host stand-in: the connect fails (ENETUNREACH).
        try "nameserver 198.51.100.7\n".write(toFile: lab.dir + "/resolv.conf", atomically: true, encoding: .utf8)
        let r = lab.tv(["exec", "--yes", "--", "sh", "-c", "getent ahostsv4 nosuch.test; echo $?"])
        #expect(r.out == "2\n", "\(r)")
        #expect(r.err.contains("not sent: no resolver could be reached, tv answered SERVFAIL")
                && r.err.contains("could not be sent to a resolver (tv answered SERVFAIL), so connections are named only when they announce a host"), "\(r.err)")
        let queries = try lab.flows().filter { $0["serverPort"] as? Int == 53 }
        #expect(!queries.isEmpty, "each query its own flow (a trial's had none)")
        for q in queries {
            #expect(q["host"] as? String == "nosuch.test" && q["status"] as? String == "failed"
                    && (q["failureReason"] as? String)?.hasPrefix("tv could not send the query to 198.51.100.7:53 (") == true
                    && (q["failureReason"] as? String)?.hasSuffix(") and answered the program SERVFAIL, so its lookup failed at once") == true
                    && q["packetsUp"] as? Int == 1 && q["packetsDown"] as? Int == 1, "\(q)")
        }
        // In the capture each query comes before tv's answer to it (the answer came first: a trial).
        let folder = lab.dataDir + "/captures"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("capture-") }.sorted()
        let order = files.flatMap { file in
            Sh.run(["tshark", "-r", folder + "/" + file, "-Y", "dns", "-T", "fields", "-e", "dns.id", "-e", "dns.flags.response"]).out
                .split(separator: "\n").map(String.init)
        }
        #expect(!order.isEmpty, "\(files)")
        var asked: Set<String> = []
        for line in order {
            let fields = line.split(separator: "\t").map(String.init)
            guard fields.count == 2 else { continue }
            if fields[1] == "0" || fields[1] == "False" { asked.insert(fields[0]) } else { #expect(asked.contains(fields[0]), "answer before its query: \(order)") }
        }
    }

    @Test("a name resolved through the tunnel's DNS address: resolv.conf inside names it, each query is a flow, the answer is kept")
    func dns() throws {
        let r = lab.exec([], ["sh", "-c", "cat /etc/resolv.conf; getent ahostsv4 named.test"])
        #expect(r.status == 0, "\(r)")
        #expect(r.out.contains("nameserver 10.77.0.53") && r.out.contains("10.203.0.2      STREAM named.test"), "\(r)")
        let f = try #require(try flow { $0["transport"] as? String == "udp" && $0["serverPort"] as? Int == 53 })
        #expect(f["host"] as? String == "named.test" && f["hostOrigin"] as? String == "dns_question")
        #expect(f["serverAddress"] as? String == "10.203.0.2")   // the host's resolver, asked from outside
        #expect(f["packetsUp"] as? Int == 1 && f["packetsDown"] as? Int == 1)
        let names = Sh.run(["python3", "-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"select name, address, ttl from host_names where name='named.test'\").fetchall())",
                            lab.dataDir + "/tunnelvision.sqlite3"])
        #expect(names.out.contains("('named.test', '10.203.0.2', 120)"), "\(names)")
    }

    @Test("DNS over TCP to the tunnel's DNS address reaches the host's resolver too (RFC 7766 §5: how a truncated answer is asked again)")
    func dnsOverTCP() throws {
        let client = try lab.script("dnstcp.py", """
            import socket, struct
            q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\\x05named\\x04test\\x00" + struct.pack(">HH", 1, 1)
            s = socket.create_connection(("10.77.0.53", 53), timeout=10)
            s.sendall(struct.pack(">H", len(q)) + q)
            n = struct.unpack(">H", s.recv(2))[0]
            a = b""
            while len(a) < n: a += s.recv(n - len(a))
            print("rcode", a[3] & 15, "answers", struct.unpack(">H", a[6:8])[0])
            """)
        let r = lab.exec([], ["python3", client])
        #expect(r.status == 0 && r.out == "rcode 0 answers 1\n", "\(r)")
        let f = try #require(try flow { $0["transport"] as? String == "tcp" && $0["serverPort"] as? Int == 53 })
        #expect(f["status"] as? String == "not_encrypted")
    }

    @Test("200 parallel and 1,000 sequential connections, 0 errors")
    func manyConnections() throws {
        let client = try lab.script("conns.py", """
            import socket, sys, threading
            errors = []
            def one():
                try:
                    s = socket.create_connection(("10.203.0.2", 8080), timeout=20)
                    s.sendall(b"GET /index.html HTTP/1.1\\r\\nHost: origin.test\\r\\nConnection: close\\r\\n\\r\\n")
                    data = b""
                    while True:
                        chunk = s.recv(65536)
                        if not chunk: break
                        data += chunk
                    s.close()
                    if not data.endswith(b"hello from the origin\\n"): errors.append("body")
                except Exception as e:
                    errors.append(repr(e))
            threads = [threading.Thread(target=one) for _ in range(200)]
            for t in threads: t.start()
            for t in threads: t.join()
            for _ in range(1000): one()
            print("errors", len(errors), errors[:3])
            """)
        let r = lab.exec([], ["python3", client], timeout: 180)
        #expect(r.status == 0 && r.out == "errors 0 []\n", "\(r)")
        #expect(try lab.flows(limit: 1300).filter { $0["serverPort"] as? Int == 8080 && $0["status"] as? String == "not_encrypted" }.count >= 1200)
    }

    @Test("a refused port: curl says \"Couldn't connect\" (connect-first), a failed flow is recorded")
    func refused() throws {
        let r = lab.exec([], ["curl", "-sS", "http://10.203.0.2:81/"])
        #expect(r.status == 7, "\(r)")
        #expect(r.err.contains("Couldn't connect"), "\(r)")
        let f = try #require(try flow { $0["serverPort"] as? Int == 81 })
        #expect(f["status"] as? String == "failed")
        #expect(f["failureReason"] as? String == "tv could not connect to 10.203.0.2:81 (connection refused) and answered the program with a reset, so the program saw connection refused (ECONNREFUSED)")
    }

    @Test("an upstream tv cannot reach (no route from the host: network is unreachable): the program's connect fails with ENETUNREACH, as without tv (it read ECONNREFUSED: a trial), and the flow says both")
    func unreachableUpstream() throws {
        let client = try lab.script("unreachable.py", """
            import errno, socket
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.settimeout(10)
            try:
                s.connect(("10.205.0.2", 443)); print("connected")
            except OSError as e:
                print(errno.errorcode.get(e.errno, str(e.errno)))
            """)
        // Without tv, from the host stand-in, the same connect is "network is unreachable".
        let direct = lab.inHost(["python3", client])
        #expect(direct.out == "ENETUNREACH\n", "\(direct)")
        let r = lab.exec([], ["python3", client])
        #expect(r.status == 0 && r.out == "ENETUNREACH\n", "\(r)")
        let f = try #require(try flow { $0["serverAddress"] as? String == "10.205.0.2" && $0["serverPort"] as? Int == 443 })
        #expect(f["status"] as? String == "failed")
        #expect(f["failureReason"] as? String == "tv could not connect to 10.205.0.2:443 (network is unreachable) and answered the program's connection request with ICMP destination unreachable, so its connect failed with network is unreachable (ENETUNREACH)")
    }

    @Test("CMD's exit code is tv's, a signal death is 128 + the signal, a missing command is 127")
    func exitCodes() {
        #expect(lab.exec([], ["sh", "-c", "exit 42"]).status == 42)
        #expect(lab.exec([], ["sh", "-c", "kill -TERM $$"]).status == 128 + 15)
        let missing = lab.exec([], ["no-such-command-tv"])
        #expect(missing.status == 127 && missing.err.contains("could not start no-such-command-tv"), "\(missing)")
    }

    @Test("nothing is left behind: the namespace, its TUN, the processes CMD left, the resolv.conf; the host's links are unchanged")
    func teardown() throws {
        let linksBefore = Sh.run(["ip", "-n", lab.host, "-o", "link"]).out
        let r = lab.exec([], ["sh", "-c", "sleep 300 & readlink /proc/self/ns/net; ip -o link show tv0 | cut -d' ' -f2"])
        #expect(r.status == 0, "\(r)")
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.last == "tv0:")
        // The leftover is named as what it is, not as CMD (a trial's `sleep` was said as `sh`).
        #expect(r.err.contains("tv: 1 process (sleep) left running inside the namespace was stopped"), "\(r.err)")
        let namespace = try #require(lines.first)
        #expect(namespace.hasPrefix("net:["))
        // No process is in that namespace any more, no fd holds it, no TUN is left in the host.
        var holders: [String] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(entry) != nil {
            if (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/ns/net")) == namespace { holders.append(entry) }
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(entry)/fd")) ?? [] {
                if (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/fd/\(fd)")) == namespace { holders.append("\(entry)/fd/\(fd)") }
            }
        }
        #expect(holders.isEmpty, "still held by \(holders)")
        #expect(Sh.run(["ip", "-n", lab.host, "-o", "link"]).out == linksBefore)
        #expect(Sh.run(["ip", "-n", lab.host, "rule"]).out == Sh.run(["ip", "-n", lab.host, "rule"]).out)
        let run = (try? FileManager.default.contentsOfDirectory(atPath: lab.dataDir + "/run")) ?? []
        #expect(!run.contains { $0.hasPrefix("exec-") }, "\(run)")
    }

    @Test("refusals: without a terminal and without --yes it says why and changes nothing; without root it says so")
    func refusals() {
        let noYes = lab.tv(["exec", "--", "true"])
        #expect(noYes.status == 2 && noYes.err.contains("pass --yes"), "\(noYes)")
        let notRoot = Sh.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--inh-caps=-all",
                              TVBinary.path!, "--data-dir", lab.dir + "/nobody", "exec", "--yes", "--", "true"])
        #expect(notRoot.status == 1 && notRoot.err.contains("needs root"), "\(notRoot)")
    }

    @Test("Ctrl-C on the terminal reaches CMD once (tv stays to tear down); a SIGTERM sent to tv is passed on to CMD")
    func signals() throws {
        // CMD says when its trap is set (a file in the lab folder): a signal sent before that
        // would find tv still building the namespace, which is not what is tested here.
        let ready = lab.dir + "/cmd-ready"
        let trap = "trap 'echo got-$0; exit 9' INT TERM; touch \(ready); sleep 30 & wait"
        func waitReady() -> Bool {
            for _ in 0..<200 where access(ready, F_OK) != 0 { usleep(100_000) }
            return access(ready, F_OK) == 0
        }
        // A pseudo-terminal: ^C makes the tty driver signal the foreground process group (tv and CMD).
        let driver = try lab.script("ctrl_c.py", """
            import os, pty, sys, time
            ready = sys.argv[1]
            pid, fd = pty.fork()
            if pid == 0:
                os.execvp(sys.argv[2], sys.argv[2:])
            out = b""
            for _ in range(200):
                if os.path.exists(ready): break
                time.sleep(0.1)
            os.write(fd, b"\\x03")
            while True:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk: break
                out += chunk
            _, status = os.waitpid(pid, 0)
            print(out.decode(errors="replace").replace("\\r", ""))
            print("exit", os.waitstatus_to_exitcode(status))
            """)
        let r = lab.inHost(["python3", driver, ready, TVBinary.path!, "--data-dir", lab.dataDir, "exec", "--yes", "--quiet", "--", "sh", "-c", trap.replacingOccurrences(of: "$0", with: "INT")])
        #expect(r.out.contains("got-INT") && r.out.hasSuffix("exit 9\n"), "\(r)")
        #expect(r.out.components(separatedBy: "got-INT").count == 2, "CMD saw Ctrl-C once: \(r)")

        unlink(ready)
        let script = "mount --bind \"$1\" /etc/resolv.conf && shift && exec \"$@\""
        let tv = try Daemon(["ip", "netns", "exec", lab.host, "unshare", "-m", "sh", "-c", script, "sh", lab.dir + "/resolv.conf",
                             TVBinary.path!, "--data-dir", lab.dataDir, "exec", "--yes", "--quiet", "--", "sh", "-c", trap.replacingOccurrences(of: "$0", with: "TERM")],
                            log: lab.dir + "/term.log")
        #expect(waitReady(), "CMD never started: \(tv.output)")
        // The tv process is the namespace child of `unshare … exec`: the daemon's own pid.
        kill(tv.pid, SIGTERM)
        #expect(tv.wait(timeout: 20) == 9, "\(tv.output)")
        #expect(tv.output.contains("got-TERM"), "\(tv.output)")
    }

    @Test("tv killed with SIGKILL (nothing of tv left to tear down): CMD gets SIGTERM at once instead of running on in the dead namespace, and what CMD started is stopped too")
    func killedTV() throws {
        let ready = lab.dir + "/cmd-ready-kill"
        let said = lab.dir + "/cmd-term-kill"
        // A grandchild in its own session (out of CMD's process group): only the namespace's
        // guard can find it (a trial's `curl` under `sh` ran on, reparented to init).
        let trap = "setsid sleep 3317 & trap 'echo got-TERM > \(said); exit 9' TERM; touch \(ready); while :; do sleep 0.1; done"
        let script = "mount --bind \"$1\" /etc/resolv.conf && shift && exec \"$@\""
        let tv = try Daemon(["ip", "netns", "exec", lab.host, "unshare", "-m", "sh", "-c", script, "sh", lab.dir + "/resolv.conf",
                             TVBinary.path!, "--data-dir", lab.dataDir, "exec", "--yes", "--quiet", "--", "sh", "-c", trap],
                            log: lab.dir + "/kill.log")
        for _ in 0..<200 where access(ready, F_OK) != 0 { usleep(100_000) }
        #expect(access(ready, F_OK) == 0, "CMD never started: \(tv.output)")
        kill(tv.pid, SIGKILL)
        _ = tv.wait(timeout: 20)
        for _ in 0..<50 where access(said, F_OK) != 0 { usleep(100_000) }
        #expect((try? String(contentsOfFile: said, encoding: .utf8)) == "got-TERM\n", "\(tv.output)")
        var left = ""
        for _ in 0..<50 {
            left = Sh.run(["pgrep", "-f", "sleep 3317"]).out
            if left.isEmpty { break }
            usleep(100_000)
        }
        #expect(left.isEmpty, "still running: \(left)")
    }

    @Test("next to a live `tv run`: exec's flows land in the same database under a range of ids past the session's, neither overwrites the other")
    func liveSession() throws {
        let run = try Daemon(["ip", "netns", "exec", lab.host, TVBinary.path!, "--data-dir", lab.dataDir, "run", "--quiet"], log: lab.dir + "/run.log")
        defer { run.stop(signal: SIGTERM) }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && Sh.run(["ip", "netns", "exec", lab.host, "ss", "-tln", "sport", "= :8080"]).out.components(separatedBy: "\n").count < 3 { usleep(50_000) }
        let proxied = Sh.run(["ip", "netns", "exec", lab.host, "curl", "-sS", "-x", "http://127.0.0.1:8080", "http://10.203.0.2:8080/index.html"])
        #expect(proxied.out == OriginLab.indexBody, "\(proxied) \(run.output)")
        let r = lab.exec([], ["curl", "-sS", "http://10.203.0.2:8080/index.html"])
        #expect(r.out == OriginLab.indexBody, "\(r)")
        let again = Sh.run(["ip", "netns", "exec", lab.host, "curl", "-sS", "-x", "http://127.0.0.1:8080", "http://10.203.0.2:8080/1m.bin", "-o", "/dev/null"])
        #expect(again.status == 0)
        run.stop(signal: SIGTERM)
        let flows = try lab.flows().filter { $0["serverPort"] as? Int == 8080 }
        #expect(flows.count == 3, "\(flows)")
        let ids = flows.compactMap { $0["id"] as? Int }
        #expect(Set(ids).count == 3)
        // Oldest first: the session's flow, exec's (from the range past the session's, taken
        // when exec's writer registered), the session's next one (its own range goes on).
        let byTime = flows.sorted { ($0["startTime"] as? Int ?? 0) < ($1["startTime"] as? Int ?? 0) }
        #expect(byTime[1]["clientAddress"] as? String == "10.77.0.1")
        let (first, exec, later) = (byTime[0]["id"] as? Int ?? 0, byTime[1]["id"] as? Int ?? 0, byTime[2]["id"] as? Int ?? 0)
        #expect(exec == first + (1 << 32) && later == first + 1, "\(ids)")
    }

    @Test("tv captures rotate with a proxy-mode `tv run` (which captures nothing) beside a `tv exec`: the exec's file rotates, said once, exit 0 (it printed 'nothing to rotate' too and exited 1)")
    func rotateBesideAProxySession() throws {
        let run = try Daemon(["ip", "netns", "exec", lab.host, TVBinary.path!, "--data-dir", lab.dataDir, "run", "--quiet"], log: lab.dir + "/run.log")
        defer { run.stop(signal: SIGTERM) }
        let gate = lab.dir + "/rotated"
        let exec = try lab.execHeldOpen(until: gate, before: "curl -sS -o /dev/null http://10.203.0.2:8080/index.html", log: "exec.log")
        defer { exec.stop() }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, (try? lab.flows().count) ?? 0 < 1 { usleep(50_000) }
        while Date() < deadline && Sh.run(["ip", "netns", "exec", lab.host, "ss", "-tln", "sport", "= :8080"]).out.components(separatedBy: "\n").count < 3 { usleep(50_000) }
        let rotated = lab.tv(["captures", "rotate"])
        FileManager.default.createFile(atPath: gate, contents: Data())
        #expect(rotated.status == 0, "\(rotated)")
        #expect(rotated.out.hasPrefix("Closed capture ") && rotated.out.hasSuffix(" is being recorded now.\n") && !rotated.out.contains("nothing to rotate")
                && rotated.out.split(separator: "\n").count == 1, "\(rotated)")
        #expect(exec.wait(timeout: 30) == 0, "\(exec.output)")
    }

    @Test("tv flows --follow beside a tv exec alone: it follows the exec's flows and ends when the exec does (it said no session ran: a trial)")
    func followAnExec() throws {
        let gate = lab.dir + "/followed"
        let exec = try lab.execHeldOpen(until: gate, before: "true", after: "curl -sS -o /dev/null http://10.203.0.2:8080/index.html",
                                        log: "follow-exec.log")
        defer { exec.stop() }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, lab.tv(["status", "--json"]).status != 0 { usleep(100_000) }
        let follow = try Daemon([TVBinary.path!, "--data-dir", lab.dataDir, "flows", "--follow", "--json"], log: lab.dir + "/follow.log")
        defer { follow.stop() }
        usleep(1_000_000)
        FileManager.default.createFile(atPath: gate, contents: Data())
        #expect(exec.wait(timeout: 30) == 0, "\(exec.output)")
        #expect(follow.wait(timeout: 10) == 0, "\(follow.output)")
        let lines = follow.output.split(separator: "\n").filter { $0.hasPrefix("{") }
        #expect(lines.count == 2 && lines.allSatisfy { $0.contains("\"serverPort\":8080") }, "\(follow.output)")
        #expect(follow.output.contains("The session stopped, so following ends."), "\(follow.output)")
    }

    @Test("tv ca remake while a tv exec inspects: the exec mints from the new root at once, and tv ca remake says so (it went on with the deleted root, and its clients were then remembered as lacking tv's root: a re-check)")
    func remakeReachesARunningExec() throws {
        let gate = lab.dir + "/remade", codes = lab.dir + "/codes"
        let curl = "curl -sS -o /dev/null -w '%{http_code} ' --cacert \(lab.tvRoot) https://origin.test/index.html >> \(codes)"
        let exec = try lab.execHeldOpen(until: gate, before: curl, after: curl, options: ["--inspect", "--upstream-ca", lab.upstreamCA], log: "remake-exec.log")
        defer { exec.stop() }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, (try? String(contentsOfFile: codes, encoding: .utf8)) != "200 " { usleep(50_000) }
        let remade = lab.tv(["ca", "remake", "--yes"])
        FileManager.default.createFile(atPath: gate, contents: Data())
        #expect(remade.status == 0 && remade.out.contains("The running session applied it."), "\(remade)")
        #expect(exec.wait(timeout: 30) == 0, "\(exec.output)")
        // The second curl trusts only the new root (the same file, rewritten).
        #expect((try? String(contentsOfFile: codes, encoding: .utf8)) == "200 200 ", "\(exec.output)")
        #expect(lab.tv(["pinned"]).out.hasPrefix("Nothing is passed through"))
    }

    @Test("two `tv exec`s at once on one data folder: every connection its own flow, no id shared (a trial's six connections were kept as three flows, each mixing two)")
    func twoExecsAtOnce() throws {
        // The first exec's command waits until the second's curl is done, so both live at once.
        let gate = lab.dir + "/second-done"
        let first = try lab.execHeldOpen(until: gate, before: "curl -sS -o /dev/null http://10.203.0.2:8080/index.html",
                                         after: "curl -sS -o /dev/null http://10.203.0.2:8080/index.html", log: "first-exec.log")
        defer { first.stop() }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, (try? lab.flows().count) ?? 0 < 1 { usleep(50_000) }
        let second = lab.exec([], ["sh", "-c", "curl -sS -o /dev/null http://10.203.0.2:8080/index.html && curl -sS -o /dev/null http://10.203.0.2:8080/index.html"])
        #expect(second.status == 0, "\(second)")
        FileManager.default.createFile(atPath: gate, contents: Data())
        #expect(first.wait(timeout: 30) == 0, "\(first.output)")
        let flows = try lab.flows().filter { $0["serverPort"] as? Int == 8080 }
        let ids = flows.compactMap { $0["id"] as? Int }
        #expect(flows.count == 4 && Set(ids).count == 4, "\(flows)")
        // Each flow carries one request.
        let requests = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir, "requests", "--json", "--limit", "100"])
        let rows = ((try? JSONSerialization.jsonObject(with: Data(requests.out.utf8))) as? [String: Any])?["requests"] as? [[String: Any]] ?? []
        let perFlow = Dictionary(grouping: rows.compactMap { $0["flow"] as? Int }, by: { $0 }).mapValues(\.count)
        #expect(rows.count == 4 && perFlow.values.allSatisfy { $0 == 1 }, "\(requests)")
    }
}
