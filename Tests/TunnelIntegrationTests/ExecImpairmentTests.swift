import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a network-impairment trial of `tv exec` found (session 42), each against the origin
/// namespace: a connect the program gave up while tv's went on, a resolver that answers every
/// query twice, hosts and networks tv cannot reach, and a router's "fragmentation needed" as the
/// capture keeps it. Ports 22300-22349; namespaces the lab makes (and a test's own) start with
/// the lab's prefix and are removed.
@Suite("tv exec on an impaired path: an abandoned connect, repeated DNS answers, unreachable hosts", .serialized,
       .enabled(if: LabRequirements.met, "needs root, /dev/net/tun, nginx, dnsmasq"))
final class ExecImpairmentTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    func json(_ arguments: [String]) throws -> [String: Any] {
        let r = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir] + arguments + ["--json"])
        guard r.status == 0, let object = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any] else {
            throw LabError("tv \(arguments.joined(separator: " ")) --json: \(r)")
        }
        return object
    }

    /// The packet rows of flow `id` as `tv packets ID --json` lists them.
    func packets(_ id: Int) throws -> [[String: Any]] {
        try json(["packets", String(id)])["packets"] as? [[String: Any]] ?? []
    }

    @Test("a connect the program gave up while tv's was still going (a Happy Eyeballs loser): once tv's completes, the program's reset ends it at once with a reset the server sees, and the flow says tv had connected (the server held tv's idle connection ~10 s, and the flow read 'while tv was connecting': a trial)")
    func abandonedConnect() throws {
        // The server's accept queue is full (backlog 0, one connection waiting) until the program
        // has closed its socket, so the server's kernel drops tv's SYN and tv's connect completes
        // only at a retransmission, after the program gave up. The server then reports how tv's
        // connection ended: "reset" (RST) or "eof" (FIN).
        let ready = lab.dir + "/abandon-ready", gate = lab.dir + "/abandon-closed", result = lab.dir + "/abandon-result"
        let server = try lab.script("abandon-server.py", """
            import os, socket, time
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("10.203.0.2", 22300)); s.listen(0)
            filler = socket.create_connection(("10.203.0.2", 22300))
            open("\(ready)", "w").close()
            while not os.path.exists("\(gate)"): time.sleep(0.05)
            first, _ = s.accept()
            s.settimeout(60)
            conn, _ = s.accept()
            conn.settimeout(60)
            try:
                data = conn.recv(100); word = "eof" if data == b"" else "data"
            except ConnectionResetError:
                word = "reset"
            except socket.timeout:
                word = "timeout"
            with open("\(result)", "w") as f: f.write(word)
            """)
        let daemon = try Daemon(["ip", "netns", "exec", lab.origin, "python3", server], log: lab.dir + "/abandon-server.log")
        defer { daemon.stop() }
        let client = try lab.script("abandon.py", """
            import os, socket, time
            while not os.path.exists("\(ready)"): time.sleep(0.05)
            s = socket.socket(); s.setblocking(False)
            try: s.connect(("10.203.0.2", 22300))
            except BlockingIOError: pass
            time.sleep(0.3); s.close()
            open("\(gate)", "w").close()
            for _ in range(1200):
                if os.path.exists("\(result)"): break
                time.sleep(0.05)
            print(open("\(result)").read() if os.path.exists("\(result)") else "no result")
            """)
        let r = lab.exec([], ["python3", client], timeout: 120)
        #expect(r.status == 0 && r.out == "reset\n", "\(r) \(daemon.output)")
        let flow = try #require(try lab.flows().first { $0["serverPort"] as? Int == 22300 })
        #expect(flow["status"] as? String == "failed", "\(flow)")
        #expect(flow["failureReason"] as? String
                == "the client reset the connection after tv had connected to the server, before anything was relayed (tv then reset its connection to the server)",
                "\(flow)")
    }

    @Test("a resolver answering every query twice, A and AAAA asked on one socket: each repeat is its own query's, in its packets and its counts (the AAAA flow listed and counted the A repeats: a trial); the summary says repeats, not answers to no question")
    func repeatedDNSAnswers() throws {
        try Sh.must(["ip", "-n", lab.origin, "addr", "add", "10.203.0.3/24", "dev", "o-\(lab.tag)"])
        // Answers only once both questions are in, each twice: A, A, AAAA, AAAA.
        let responder = try lab.script("twice.py", """
            import socket, struct
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("10.203.0.3", 53))
            open("\(lab.dir)/twice-ready", "w").close()
            while True:
                asked = []
                while len(asked) < 2: asked.append(s.recvfrom(512))
                asked.sort(key=lambda q: struct.unpack(">H", q[0][-4:-2])[0])
                for q, peer in asked:
                    qtype = struct.unpack(">H", q[-4:-2])[0]
                    rdata = socket.inet_aton("10.203.0.2") if qtype == 1 else socket.inet_pton(socket.AF_INET6, "fd03::2")
                    reply = q[:2] + b"\\x81\\x80\\x00\\x01\\x00\\x01\\x00\\x00\\x00\\x00" + q[12:] + b"\\xc0\\x0c" + struct.pack(">HHIH", qtype, 1, 60, len(rdata)) + rdata
                    s.sendto(reply, peer); s.sendto(reply, peer)
            """)
        let daemon = try Daemon(["ip", "netns", "exec", lab.origin, "python3", responder], log: lab.dir + "/twice.log")
        defer { daemon.stop() }
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: lab.dir + "/twice-ready") { usleep(50_000) }
        let client = try lab.script("both.py", """
            import socket, struct
            def query(qid, qtype):
                return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + b"\\x03dup\\x04test\\x00" + struct.pack(">HH", qtype, 1)
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3); s.connect(("10.203.0.3", 53))
            s.send(query(0x1111, 1)); s.send(query(0x2222, 28))
            got = []
            try:
                while len(got) < 4: got.append(s.recv(512))
            except socket.timeout:
                pass
            print(" ".join("%04x:%d" % (struct.unpack(">H", g[:2])[0], len(g)) for g in got))
            """)
        let r = lab.tv(["exec", "--yes", "--", "python3", client])
        #expect(r.status == 0 && r.out == "1111:42 1111:42 2222:54 2222:54\n", "\(r) \(daemon.output)")
        #expect(r.err.contains("2 answered, 2 answers repeated by the path or the resolver, each counted with its query")
                && !r.err.contains("answered no question asked"), "\(r.err)")
        let queries = try lab.flows().filter { $0["host"] as? String == "dup.test" }
        #expect(queries.count == 2, "\(queries)")
        for (type, size) in [("A", 42), ("AAAA", 54)] {
            let q = try #require(queries.first { $0["dnsQuestionType"] as? String == type }, "\(queries)")
            #expect(q["packetsDown"] as? Int == 2 && q["bytesDown"] as? Int == 2 * size && q["packetsUp"] as? Int == 1, "\(q)")
            let rows = try packets(q["id"] as? Int ?? 0)
            #expect(rows.map { $0["direction"] as? String ?? "?" } == ["client_to_server", "server_to_client", "server_to_client"], "\(rows)")
            #expect(rows.dropFirst().allSatisfy { $0["size"] as? Int == 28 + size }, "\(rows)")
            // Every row of `tv flows --json` has the capture's count, as `tv flow --json` has.
            #expect(q["packetsCaptured"] as? Int == 3, "\(q)")
        }
    }

    @Test("a host or network tv cannot reach: the program's connect fails with the error it gets without tv (EHOSTUNREACH, ENETUNREACH; both read ECONNREFUSED: a trial), over IPv4 and IPv6; a refusal stays ECONNREFUSED; each flow says what the program was told")
    func unreachableHosts() throws {
        // 10.203.0.99 / fd03::99: on the host's link, no neighbour answers (host unreachable);
        // 10.205.0.2 / fd05::2: no route from the host (network unreachable); 10.203.0.2:22301:
        // nothing listens (refused).
        let targets = [("10.203.0.99", 22302), ("fd03::99", 22302), ("10.205.0.2", 22302), ("fd05::2", 22302), ("10.203.0.2", 22301)]
        let client = try lab.script("unreachable-hosts.py", """
            import errno, socket
            out = []
            for addr, port in [\(targets.map { "(\"\($0.0)\", \($0.1))" }.joined(separator: ", "))]:
                s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET); s.settimeout(20)
                try:
                    s.connect((addr, port)); out.append("connected")
                except OSError as e:
                    out.append(errno.errorcode.get(e.errno, str(e.errno)))
            print(" ".join(out))
            """)
        let expected = "EHOSTUNREACH EHOSTUNREACH ENETUNREACH ENETUNREACH ECONNREFUSED\n"
        let direct = lab.inHost(["python3", client], timeout: 120)
        #expect(direct.out == expected, "without tv: \(direct)")
        let r = lab.exec([], ["python3", client], timeout: 120)
        #expect(r.status == 0 && r.out == expected, "\(r)")
        let flows = try lab.flows()
        func reason(_ address: String, _ port: Int) -> String? {
            flows.first { $0["serverAddress"] as? String == address && $0["serverPort"] as? Int == port }?["failureReason"] as? String
        }
        #expect(reason("10.203.0.99", 22302) == "tv could not connect to 10.203.0.99:22302 (no route to host) and answered the program's connection request with ICMP destination unreachable, so its connect failed with no route to host (EHOSTUNREACH)")
        #expect(reason("fd03::99", 22302) == "tv could not connect to [fd03::99]:22302 (no route to host) and answered the program's connection request with ICMP destination unreachable, so its connect failed with no route to host (EHOSTUNREACH)")
        #expect(reason("10.205.0.2", 22302) == "tv could not connect to 10.205.0.2:22302 (network is unreachable) and answered the program's connection request with ICMP destination unreachable, so its connect failed with network is unreachable (ENETUNREACH)")
        #expect(reason("10.203.0.2", 22301) == "tv could not connect to 10.203.0.2:22301 (connection refused) and answered the program with a reset, so the program saw connection refused (ECONNREFUSED)")
        // The program's SYN (retransmitted while tv's ARP went unanswered), then tv's ICMP, titled
        // as a cut-off connection; a SYN its kernel resent after it (the ICMP taken as a soft
        // error while the socket was busy: a run's packet list) gets the same ICMP, never a reset
        // (which would read ECONNREFUSED).
        let id = try #require(flows.first { $0["serverAddress"] as? String == "10.203.0.99" }?["id"] as? Int)
        let rows = try packets(id)
        let meanings = rows.map { $0["meaning"] as? String ?? "?" }
        let firstAnswer = try #require(meanings.firstIndex(of: "cut_off"), "\(meanings)")
        let afterIt = Array(meanings[(firstAnswer + 1)...])
        #expect(firstAnswer > 0 && Set(meanings[..<firstAnswer]) == ["opened"]
                && afterIt.count % 2 == 0 && afterIt.enumerated().allSatisfy { $0.element == ($0.offset % 2 == 0 ? "opened" : "cut_off") },
                "\(meanings)")
        #expect(rows.filter { $0["meaning"] as? String == "cut_off" }.allSatisfy { $0["tcpFlags"] is NSNull }, "\(rows)")
    }

    /// A run's packet list: a program's kernel resent its SYN after tv's host unreachable (taken
    /// as a soft error while its socket was busy, Linux `tcp_v4_err`), and tv answered the
    /// retransmission with a reset, which reads ECONNREFUSED. Here the same SYN is sent twice
    /// from a raw socket, so the second is a retransmission every time.
    @Test("a SYN resent after tv answered it with ICMP network unreachable gets the same ICMP again, never a reset, as part of the one failed flow")
    func resentSYNAfterUnreachable() throws {
        let client = try lab.script("resent-syn.py", """
            import socket, struct, time
            dst, sport, dport = "10.205.0.2", 40123, 22303
            probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); probe.connect((dst, 9)); src = probe.getsockname()[0]
            def checksum(data):
                if len(data) % 2: data += b"\\0"
                total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
                while total >> 16: total = (total & 0xffff) + (total >> 16)
                return ~total & 0xffff
            tcp = struct.pack("!HHIIBBHHH", sport, dport, 123456, 0, 5 << 4, 0x02, 64240, 0, 0)
            pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 6, len(tcp))
            tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
            icmp = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); icmp.settimeout(0.2)
            raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
            answers = []
            for _ in range(2):
                raw.sendto(tcp, (dst, 0))
                deadline = time.time() + 1.5
                while time.time() < deadline:
                    try:
                        packet = icmp.recv(2048)
                    except socket.timeout:
                        continue
                    ihl = (packet[0] & 15) * 4
                    quoted = packet[ihl + 8:]
                    qihl = (quoted[0] & 15) * 4
                    if socket.inet_ntoa(quoted[16:20]) == dst and struct.unpack("!H", quoted[qihl + 2:qihl + 4])[0] == dport:
                        answers.append("%d/%d" % (packet[ihl], packet[ihl + 1]))
            print(" ".join(answers))
            """)
        let r = lab.exec([], ["python3", client], timeout: 60)
        #expect(r.status == 0 && r.out == "3/0 3/0\n", "\(r)")
        let flows = try lab.flows().filter { $0["serverAddress"] as? String == "10.205.0.2" && $0["serverPort"] as? Int == 22303 }
        #expect(flows.count == 1, "\(flows)")
        let id = try #require(flows.first?["id"] as? Int)
        let rows = try packets(id)
        #expect(rows.map { $0["meaning"] as? String ?? "?" } == ["opened", "cut_off", "opened", "cut_off"], "\(rows)")
        #expect(rows.filter { $0["meaning"] as? String == "cut_off" }.allSatisfy { $0["tcpFlags"] is NSNull }, "\(rows)")
    }
}
