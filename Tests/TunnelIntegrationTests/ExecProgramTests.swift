import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 18, "The program behind a connection", under `tv exec`: the lookup asks the command's
/// own namespace, so the programs it runs (and their children) are named.
@Suite("tv exec: the program behind each flow (issue 18)", .serialized, .enabled(if: LabRequirements.met, "needs root, /dev/net/tun, nginx, dnsmasq"))
final class ExecProgramTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    @Test("tv exec -- sh -c 'python3 …': the TCP flow and the UDP flow name python3 (a child of the command) with its pid, executable and root; tv flows --program python3 lists both")
    func python3InTheNamespace() throws {
        let script = try lab.script("who.py", """
            import os, socket, time
            t = socket.create_connection(("10.203.0.2", 8080))
            t.sendall(b"GET /index.html HTTP/1.1\\r\\nHost: origin.test\\r\\nConnection: close\\r\\n\\r\\n")
            while t.recv(65536): pass
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(5)
            u.sendto(b"hello", ("10.203.0.2", 7007)); u.recvfrom(100)
            time.sleep(1)                        # a program that keeps its sockets a moment (a loaded machine may look late)
            print(os.getpid(), os.readlink("/proc/self/exe"))
            """)
        let r = lab.exec([], ["sh", "-c", "python3 \(script); true"])
        let printed = r.out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(String.init)
        try #require(printed.count == 2, "\(r)")
        let pid = try #require(Int(printed[0]), "\(r)")
        let executable = printed[1]
        let flows = try lab.flows().filter { $0["serverAddress"] as? String == "10.203.0.2" }
        #expect(flows.count == 2, "\(flows)")
        for f in flows {
            let program = try #require(f["program"] as? [String: Any], "\(f)")
            #expect(program["known"] as? Bool == true && program["pid"] as? Int == pid && program["command"] as? String == "python3"
                    && program["executable"] as? String == executable && program["uid"] as? Int == 0
                    && program["user"] as? String == "root", "\(f["transport"] ?? "") \(program)")
        }
        let list = lab.tv(["flows", "--program", "python3"]).out.split(separator: "\n")
        #expect(list.count == 3 && list.dropFirst().allSatisfy { $0.contains("  python3  ") }, "\(list)")
    }

    /// Found by a trial: a stub resolver closes its socket as soon as it reads the answer, and the
    /// lab's resolver answers within a millisecond, so the lookup of most queries' programs found
    /// no socket. The answer now waits for the lookup (`EngineDNSHold.swift`).
    @Test("twenty getaddrinfo() lookups, each on a socket closed at its answer: every DNS query's flow names python3 with its pid, and every lookup got its answer")
    func dnsQueriesNameTheirProgram() throws {
        let script = try lab.script("lookups.py", """
            import os, socket
            for i in range(20):
                assert socket.getaddrinfo("named.test", 80, socket.AF_INET, socket.SOCK_STREAM)[0][4][0] == "10.203.0.2"
            print(os.getpid(), flush=True)
            """)
        let r = lab.exec([], ["python3", script])
        let pid = try #require(Int(r.out.trimmingCharacters(in: .whitespacesAndNewlines)), "\(r)")
        let queries = try lab.flows().filter { $0["serverPort"] as? Int == 53 }
        // glibc asks once per lookup here (AF_INET alone); a resolver's retry is the same flow.
        #expect(queries.count == 20, "\(queries.count) \(r)")
        for q in queries {
            let program = q["program"] as? [String: Any]
            #expect(program?["known"] as? Bool == true && program?["pid"] as? Int == pid && program?["command"] as? String == "python3",
                    "\(q["host"] ?? "") \(program ?? [:])")
        }
    }

    /// Found by a tun trial: a resolver that answers ICMP port unreachable ended the program's
    /// lookup at once, but its query's flow read "no answer within 5 s" with no program.
    @Test("a DNS query a resolver refuses (ICMP port unreachable, IPv6: nothing listens on [fd03::2]:53): the program sees connection refused, and the query's flow fails with that reason and names python3")
    func dnsQueryRefused() throws {
        let script = try lab.script("refused.py", """
            import os, socket, struct
            query = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\\x05named\\x04test\\x00" + struct.pack(">HH", 1, 1)
            s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.settimeout(5)
            s.connect(("fd03::2", 53)); s.send(query)
            try:
                s.recv(512); print("answered")
            except ConnectionRefusedError:
                print("refused", os.getpid(), flush=True)
            """)
        let r = lab.exec([], ["python3", script])
        let printed = r.out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(String.init)
        try #require(printed.count == 2 && printed[0] == "refused", "\(r)")
        let pid = try #require(Int(printed[1]))
        let query = try #require(try lab.flows().first { $0["serverPort"] as? Int == 53 && $0["serverAddress"] as? String == "fd03::2" })
        #expect(query["status"] as? String == "failed" && query["host"] as? String == "named.test"
                && (query["failureReason"] as? String)?.hasPrefix("the server answered ICMP port unreachable") == true, "\(query)")
        let program = query["program"] as? [String: Any]
        #expect(program?["pid"] as? Int == pid && program?["command"] as? String == "python3", "\(query)")
    }

    /// Found by a trial: UDP tv could not send on (no route on the host, a firewall's prohibit)
    /// was dropped silently, and a fragmentable flow's port unreachable (no error queue) was
    /// never passed on: each program waited out its timeout. Now each gets an ICMP error its
    /// connected socket takes as a hard error, and the server's port unreachable reaches it.
    @Test("UDP tv cannot send (an unreachable and a prohibit route on the host, both families) fails the program's socket at once; a port unreachable to a datagram without DF reaches it too")
    func unsendableDatagrams() throws {
        try Sh.must(["ip", "-n", lab.host, "route", "add", "unreachable", "10.99.0.0/24"])
        try Sh.must(["ip", "-n", lab.host, "route", "add", "prohibit", "10.98.0.0/24"])
        try Sh.must(["ip", "-n", lab.host, "-6", "route", "add", "unreachable", "fd99::/64"])
        let script = try lab.script("unsendable.py", """
            import errno, socket, sys
            for target in sys.argv[1:]:
                family = socket.AF_INET6 if ":" in target else socket.AF_INET
                s = socket.socket(family, socket.SOCK_DGRAM); s.settimeout(4)
                if target == "10.203.0.2":
                    s.setsockopt(socket.IPPROTO_IP, 10, 0)   # IP_MTU_DISCOVER = IP_PMTUDISC_DONT: no DF
                s.connect((target, 9))
                for attempt in range(2 if target == "10.99.0.1" else 1):   # a retry: the same failed flow
                    s.send(b"x" * 20)
                    try:
                        s.recv(100); print(target, "answered")
                    except socket.timeout:
                        print(target, "timeout")
                    except OSError as e:
                        if attempt == 0: print(target, errno.errorcode.get(e.errno, e.errno))
            """)
        let r = lab.exec([], ["python3", script, "10.99.0.1", "10.98.0.1", "fd99::1", "10.203.0.2"])
        #expect(r.out == "10.99.0.1 ENETUNREACH\n10.98.0.1 EHOSTUNREACH\nfd99::1 EACCES\n10.203.0.2 ECONNREFUSED\n", "\(r)")
        let flows = try lab.flows()
        // Each datagram tv could not send is a failed flow of its own, as a TCP connect is; the
        // program's retry within seconds is that flow's (a trial's made a row per datagram).
        #expect(flows.filter { $0["serverAddress"] as? String == "10.99.0.1" }.count == 1, "\(flows)")
        for (address, cause, seen) in [("10.99.0.1", "no route to host", "network is unreachable"), ("10.98.0.1", "permission denied", "no route to host"),
                                       ("fd99::1", nil, "permission denied")] {
            let row = try #require(flows.first { $0["serverAddress"] as? String == address && $0["serverPort"] as? Int == 9 }, "\(address): \(flows)")
            let reason = row["failureReason"] as? String ?? ""
            #expect(row["status"] as? String == "failed" && row["transport"] as? String == "udp" && row["bytesUp"] as? Int == 20
                    && reason.hasPrefix("tv could not send to \(address.contains(":") ? "[\(address)]" : address):9 (")
                    && (cause.map { reason.contains("(\($0))") } ?? true)
                    && reason.hasSuffix("and answered the program ICMP destination unreachable, so its socket reported \(seen)"), "\(row)")
        }
        let refused = try #require(flows.first { $0["serverAddress"] as? String == "10.203.0.2" && $0["serverPort"] as? Int == 9 }, "\(flows)")
        #expect(refused["status"] as? String == "failed"
                && (refused["failureReason"] as? String)?.hasPrefix("the server answered ICMP port unreachable") == true, "\(refused)")
    }

    /// The same on a flow that already carried datagrams both ways: a prohibit route added while
    /// it is open makes tv's next send fail; the program's socket reports it at once and the
    /// flow keeps its bytes and says why.
    @Test("a UDP flow tv can no longer send on (a prohibit route added while it is open): the program's next recv fails at once, the flow says why")
    func unsendableMidFlow() throws {
        let gate = lab.dir + "/mid.gate", out = lab.dir + "/mid.out"
        let script = try lab.script("mid.py", """
            import errno, os, socket, sys, time
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(4)
            s.connect(("10.203.0.2", 7007)); s.send(b"first")
            print("echoed", s.recv(100).decode(), flush=True)
            while not os.path.exists(sys.argv[1]):
                time.sleep(0.05)
            s.send(b"second")
            try:
                s.recv(100); print("answered", flush=True)
            except socket.timeout:
                print("timeout", flush=True)
            except OSError as e:
                print(errno.errorcode.get(e.errno, e.errno), flush=True)
            """)
        let exec = try lab.execHeldOpen(until: gate, before: "{ python3 \(script) \(gate) > \(out) 2>&1 & }", after: "wait", log: "mid-exec.log")
        defer { exec.stop() }
        let read = { (try? String(contentsOfFile: out, encoding: .utf8)) ?? "" }
        for _ in 0..<200 where !read().contains("echoed") { usleep(50_000) }
        try #require(read() == "echoed first\n", "\(read()) \((try? String(contentsOfFile: lab.dir + "/mid-exec.log", encoding: .utf8)) ?? "")")
        try Sh.must(["ip", "-n", lab.host, "route", "add", "prohibit", "10.203.0.2/32"])
        defer { _ = Sh.run(["ip", "-n", lab.host, "route", "del", "prohibit", "10.203.0.2/32"]) }
        FileManager.default.createFile(atPath: gate, contents: nil)
        #expect(exec.wait(timeout: 15) == 0)
        #expect(read() == "echoed first\nEHOSTUNREACH\n", "\(read())")
        let flow = try #require(try lab.flows().first { $0["serverAddress"] as? String == "10.203.0.2" && $0["serverPort"] as? Int == 7007 })
        #expect(flow["bytesDown"] as? Int == 5 && flow["bytesUp"] as? Int == 5, "\(flow)")   // "second" was not sent
        #expect((flow["error"] as? String ?? flow["failureReason"] as? String ?? "").contains(
            "tv could not send to 10.203.0.2:7007 (permission denied) and answered the program ICMP destination unreachable, so its socket reported no route to host"), "\(flow)")
    }

    /// Found by a new-user trial: a connect tv could not complete was looked up only after tv's
    /// reset had closed the program's socket, so a program that had waited seconds read as "the
    /// socket was gone (a program that finished at once)". The flow is now reported while the
    /// connect runs, and the lookup finds the socket in SYN-SENT.
    @Test("a connect that fails after the program waited (no host answers ARP): the failed flow names the waiting program")
    func programOfAFailedSlowConnect() throws {
        let script = try lab.script("waits.py", """
            import errno, os, socket
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.settimeout(10)
            try:
                s.connect(("10.203.0.77", 8080)); print("connected")
            except OSError as e:
                print(os.getpid(), errno.errorcode.get(e.errno, type(e).__name__))
            """)
        let r = lab.exec([], ["python3", script])
        let printed = r.out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(String.init)
        // The error tv's connect got, as without tv (`FailedConnectAnswer`; it was ECONNREFUSED).
        try #require(printed.count == 2 && printed[1] == "EHOSTUNREACH", "\(r)")
        let f = try #require(try lab.flows().first { $0["serverAddress"] as? String == "10.203.0.77" }, "no flow")
        #expect(f["status"] as? String == "failed", "\(f)")
        let program = try #require(f["program"] as? [String: Any], "\(f)")
        #expect(program["known"] as? Bool == true && program["pid"] as? Int == Int(printed[0]) && program["command"] as? String == "python3", "\(program)")
        // One row, opened once: `tv flows` lists it once.
        #expect(try lab.flows().filter { $0["serverAddress"] as? String == "10.203.0.77" }.count == 1)
    }

    /// Found by a trial: a connect the origin refused at once was answered with tv's reset
    /// before the lookup asked for the program's socket, so every such flow read "not known"
    /// (20 of 20). The reset is now held while the lookup runs (`EngineLoop.failConnect`).
    @Test("ten connects refused at once (no listener on the origin's port): each failed flow names the program, and each connect is refused")
    func programOfConnectsRefusedAtOnce() throws {
        let script = try lab.script("refused.py", """
            import os, socket
            refused = 0
            for _ in range(10):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.settimeout(10)
                try:
                    s.connect(("10.203.0.2", 9))
                except ConnectionRefusedError:
                    refused += 1
                s.close()
            print(os.getpid(), refused)
            """)
        let r = lab.exec([], ["python3", script])
        let printed = r.out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(String.init)
        try #require(printed.count == 2 && printed[1] == "10", "\(r)")
        let flows = try lab.flows().filter { $0["serverAddress"] as? String == "10.203.0.2" && $0["serverPort"] as? Int == 9 }
        #expect(flows.count == 10, "\(flows)")
        for f in flows {
            #expect(f["status"] as? String == "failed", "\(f)")
            let program = f["program"] as? [String: Any] ?? [:]
            #expect(program["known"] as? Bool == true && program["pid"] as? Int == Int(printed[0]) && program["command"] as? String == "python3", "\(program)")
        }
    }

    /// The other side of reporting a slow connect's flow early: when the connect then succeeds,
    /// the proxy reports that flow updated, not opened again. The origin's listener has a full
    /// accept queue (a connection from outside tv waits in it), so the kernel drops tv's SYN and
    /// tv's connect succeeds only on a retransmission, seconds later, once the origin accepts.
    @Test("a connect that succeeds after seconds: one flow row, opened once, finished with its bytes and its program")
    func slowConnectThatSucceeds() throws {
        let server = try lab.script("backlog.py", """
            import socket, sys, time
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("10.203.0.2", 8099)); s.listen(0)
            print("ready", flush=True)
            time.sleep(2.5)                       # the accept queue stays full this long
            while True:
                c, _ = s.accept(); c.sendall(b"hello"); c.close()
            """)
        let origin = try Daemon(["ip", "netns", "exec", lab.origin, "python3", server], log: lab.dir + "/backlog.out")
        defer { origin.stop() }
        var ready = false
        for _ in 0..<100 where !ready { ready = origin.output.contains("ready"); if !ready { usleep(50_000) } }
        try #require(ready, "\(origin.output)")
        let filler = try lab.script("filler.py", """
            import socket, time
            f = socket.create_connection(("10.203.0.2", 8099)); time.sleep(8)
            """)
        let hold = try Daemon(["ip", "netns", "exec", lab.host, "python3", filler], log: lab.dir + "/filler.out")
        defer { hold.stop() }
        usleep(300_000)
        let client = try lab.script("slow.py", """
            import os, socket, time
            start = time.time()
            s = socket.create_connection(("10.203.0.2", 8099), timeout=20)
            data = s.recv(100)
            print(os.getpid(), data.decode(), round(time.time() - start))
            """)
        let r = lab.exec([], ["python3", client])
        let printed = r.out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(String.init)
        try #require(printed.count == 3 && printed[1] == "hello", "\(r)")
        #expect(Int(printed[2]).map { $0 >= 1 } == true, "the connect was not slow: \(r)")
        let rows = try lab.flows().filter { $0["serverPort"] as? Int == 8099 }
        #expect(rows.count == 1, "\(rows)")
        let f = try #require(rows.first)
        #expect(f["status"] as? String == "not_encrypted" && f["bytesDown"] as? Int == 5, "\(f)")
        let program = try #require(f["program"] as? [String: Any], "\(f)")
        #expect(program["known"] as? Bool == true && program["pid"] as? Int == Int(printed[0]), "\(program)")
    }
}
