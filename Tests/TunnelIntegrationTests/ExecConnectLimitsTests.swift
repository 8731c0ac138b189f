import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a limits trial of `tv exec` found (session 43): a server that never answers read
/// ECONNREFUSED after tv's 10 s (curl `--connect-timeout 2` and a Python socket's timeout both
/// time out without tv), a server answering after 10 s was not reached, and at tv's connection
/// cap tv connected upstream, completed the program's handshake and then reset it (the server saw
/// 20 SYNs, 15 resets, 5 requests). Against the origin namespace; ports 46001-46009 there.
@Suite("tv exec when the server does not answer, answers late, or tv is at its connection cap", .serialized,
       .enabled(if: LabRequirements.met && Sh.run(["which", "nft"]).status == 0, "needs root, /dev/net/tun, nginx, dnsmasq, nft"))
final class ExecConnectLimitsTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    /// Drops TCP to `port` at the origin's input (a blackholed server), counting what it drops.
    func blackhole(_ port: Int, table: String) throws {
        try Sh.must(["ip", "netns", "exec", lab.origin, "nft", "add", "table", "inet", table])
        try Sh.must(["ip", "netns", "exec", lab.origin, "nft", "add", "chain", "inet", table, "in", "{ type filter hook input priority 0 ; }"])
        try Sh.must(["ip", "netns", "exec", lab.origin, "nft", "add", "rule", "inet", table, "in", "tcp", "dport", String(port), "counter", "drop"])
    }

    /// The packets counted by the rules of `table` at the origin, in rule order.
    func counted(_ table: String) -> [Int] {
        let listing = Sh.run(["ip", "netns", "exec", lab.origin, "nft", "list", "table", "inet", table]).out
        return listing.components(separatedBy: "counter packets ").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
    }

    func packets(_ id: Int) throws -> [[String: Any]] {
        let r = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir, "packets", String(id), "--json"])
        guard r.status == 0, let object = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any] else {
            throw LabError("tv packets \(id) --json: \(r)")
        }
        return object["packets"] as? [[String: Any]] ?? []
    }

    static let connectScript = """
        import errno, socket, sys
        s = socket.socket(); s.settimeout(float(sys.argv[1]))
        try:
            s.connect(("10.203.0.2", int(sys.argv[2]))); print("connected")
        except socket.timeout:
            print("timeout")
        except OSError as e:
            print(errno.errorcode.get(e.errno, str(e.errno)))
        """

    @Test("a server that never answers, tv's own connect giving up first (its kernel's ETIMEDOUT): the program's connect times out as it does without tv, not ECONNREFUSED; its later SYNs go unanswered within the one flow, which says what tv did")
    func unansweredConnect() throws {
        try blackhole(46001, table: "tvbh")
        let client = try lab.script("connect.py", Self.connectScript)
        let direct = lab.inHost(["python3", client, "6", "46001"], timeout: 30)
        #expect(direct.out == "timeout\n", "without tv: \(direct)")
        // tv's upstream sockets live in the host stand-in: one SYN retry there (ETIMEDOUT at ~3 s,
        // measured), while the program's own namespace keeps the kernel's defaults (~133 s).
        try Sh.must(["ip", "netns", "exec", lab.host, "sysctl", "-qw", "net.ipv4.tcp_syn_retries=1"])
        let r = lab.exec([], ["python3", client, "6", "46001"], timeout: 60)
        #expect(r.status == 0 && r.out == "timeout\n", "\(r)")
        let flows = try lab.flows().filter { $0["serverPort"] as? Int == 46001 }
        #expect(flows.count == 1, "\(flows)")
        let flow = try #require(flows.first)
        #expect(flow["status"] as? String == "failed", "\(flow)")
        #expect(flow["failureReason"] as? String
                == "tv's connect to 10.203.0.2:46001 got no answer (connection timed out); tv answered the program nothing, as the network did",
                "\(flow)")
        // The program's SYN and its retransmissions, all on the one flow, and nothing back.
        let rows = try packets(flow["id"] as? Int ?? 0)
        #expect(rows.count > 1 && rows.allSatisfy { $0["direction"] as? String == "client_to_server" }, "\(rows)")
    }

    @Test("a program that gives up its connect (curl --connect-timeout 2) while tv's goes on: tv gives its own up once the program's SYNs stop, and the flow says so")
    func programGaveUp() throws {
        try blackhole(46002, table: "tvgone")
        let r = lab.exec([], ["sh", "-c", "curl -s --connect-timeout 2 http://10.203.0.2:46002/; echo rc=$?; sleep 8"], timeout: 60)
        #expect(r.status == 0 && r.out == "rc=28\n", "\(r)")
        let flow = try #require(try lab.flows().first { $0["serverPort"] as? Int == 46002 })
        #expect(flow["failureReason"] as? String
                == "the program stopped resending its SYN while tv was connecting to the server (a connect given up sends nothing), so tv gave up its own connect too",
                "\(flow); tv's SYNs the server's path dropped: \(counted("tvgone"))")
    }

    @Test("a server first reachable after 10 s (tv's old connect timeout): reached through tv as without it, at the kernels' next SYN retry")
    func lateServer() throws {
        try blackhole(8080, table: "tvlate")
        // The path opens 9 s after the program starts: after tv's SYN at 7 s, before the one at 11 s.
        let started = lab.dir + "/late-started"
        let opener = try Daemon(["sh", "-c", "while [ ! -e \(started) ]; do sleep 0.05; done; sleep 9; ip netns exec \(lab.origin) nft delete table inet tvlate"],
                                log: lab.dir + "/late-opener.log")
        defer { opener.stop() }
        let r = lab.exec([], ["sh", "-c", "touch \(started); curl -s -m 40 -w ' rc=%{exitcode}' http://10.203.0.2:8080/"], timeout: 90)
        #expect(r.status == 0 && r.out == OriginLab.indexBody + " rc=0", "\(r) \(opener.output)")
    }

    @Test("at tv's connection cap: no SYN of a connection past it reaches the server, the programs' SYNs are dropped (not reset) until room comes, every request then succeeds, and tv says it held them back at its cap")
    func connectionCap() throws {
        // The server holds every connection until the gate opens; nft counts SYNs and resets.
        let gate = lab.dir + "/cap-gate", accepted = lab.dir + "/cap-accepted"
        let server = try lab.script("cap-server.py", """
            import os, socket, threading, time
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("10.203.0.2", 46004)); s.listen(128)
            lock = threading.Lock(); count = [0]
            def serve(c):
                data = b""
                while b"\\r\\n\\r\\n" not in data:
                    chunk = c.recv(4096)
                    if not chunk: c.close(); return
                    data += chunk
                while not os.path.exists("\(gate)"): time.sleep(0.05)
                c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\nok"); c.close()
            while True:
                c, _ = s.accept()
                with lock:
                    count[0] += 1
                    with open("\(accepted)", "w") as f: f.write(str(count[0]))
                threading.Thread(target=serve, args=(c,), daemon=True).start()
            """)
        try Sh.must(["ip", "netns", "exec", lab.origin, "nft", "add", "table", "inet", "tvcap"])
        try Sh.must(["ip", "netns", "exec", lab.origin, "nft", "add", "chain", "inet", "tvcap", "in", "{ type filter hook input priority 0 ; }"])
        try Sh.must(["ip", "netns", "exec", lab.origin, "nft", "add", "rule", "inet", "tvcap", "in", "tcp", "dport", "46004",
                     "tcp", "flags", "&", "(syn|ack)", "==", "syn", "counter"])
        try Sh.must(["ip", "netns", "exec", lab.origin, "nft", "add", "rule", "inet", "tvcap", "in", "tcp", "dport", "46004",
                     "tcp", "flags", "&", "rst", "==", "rst", "counter"])
        let daemon = try Daemon(["ip", "netns", "exec", lab.origin, "python3", server], log: lab.dir + "/cap-server.log")
        defer { daemon.stop() }
        // A descriptor limit of 64 gives a cap of a few connections (5 in the trial); 12 at once.
        let curls = "for i in $(seq 12); do curl -s -m 40 -o /dev/null -w '%{http_code}\\n' http://10.203.0.2:46004/ & done; wait"
        let exec = try Daemon(["ip", "netns", "exec", lab.host, "sh", "-c", "ulimit -n 64 && exec \"$@\"", "sh",
                               TVBinary.path!, "--data-dir", lab.dataDir, "exec", "--yes", "--", "sh", "-c", "(\(curls)) | sort | uniq -c"],
                              log: lab.dir + "/cap-exec.log")
        defer { exec.stop() }
        // tv says the cap when it first holds a SYN back: "…: N are open or being connected, …".
        var cap: Int?
        for _ in 0..<400 where cap == nil {
            if let said = exec.output.components(separatedBy: "\n").first(where: { $0.contains("held back") }),
               let range = said.range(of: "): ") {
                cap = Int(said[range.upperBound...].prefix { $0.isNumber })
            }
            if cap == nil { usleep(50_000) }
        }
        let held = try #require(cap, "tv never held a SYN back: \(exec.output)")
        #expect(held < 12, "\(exec.output)")
        for _ in 0..<200 where ((try? String(contentsOfFile: accepted, encoding: .utf8)).flatMap { Int($0) } ?? 0) < held { usleep(50_000) }
        // While the cap is full, the programs' SYNs are dropped at tv: only the held connections'
        // SYNs reached the server, and nothing was reset.
        #expect(counted("tvcap") == [held, 0], "\(exec.output)")
        FileManager.default.createFile(atPath: gate, contents: nil)
        let status = exec.wait(timeout: 60)
        #expect(status == 0 && exec.output.contains("     12 200\n"), "\(String(describing: status)) \(exec.output)")
        #expect(counted("tvcap") == [12, 0], "\(exec.output)")
        #expect(exec.output.contains(" SYNs at tv's connection cap (nothing connected; dropped as a full listen queue drops them, so the programs' kernels sent them again)")
                && !exec.output.contains("not accepted"), "\(exec.output)")
        let flows = try lab.flows().filter { $0["serverPort"] as? Int == 46004 }
        #expect(flows.count == 12 && flows.allSatisfy { $0["status"] as? String != "failed" }, "\(flows)")
    }
}
