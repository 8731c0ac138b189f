import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 18 end to end through `tv exec`: a plain TCP connection and a UDP flow to an address
/// the program looked up through the tunnel's DNS are named after the lookup ("Inferred from
/// DNS"), keep the address's other live name, and are found by either name and by the address;
/// a real QUIC client (ngtcp2's gtlsclient) against a real QUIC server (gtlsserver) in the
/// origin namespace is named from its Initial packets.
@Suite("tv exec: names from DNS answers and from QUIC Initials", .serialized,
       .enabled(if: LabRequirements.met, "needs root, /dev/net/tun, nginx, dnsmasq"))
final class ExecNamesTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    private func tvJSON(_ arguments: [String]) throws -> Any {
        let r = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir] + arguments + ["--json"])
        guard r.status == 0, let data = r.out.data(using: .utf8) else { throw LabError("tv \(arguments): \(r)") }
        return try JSONSerialization.jsonObject(with: data)
    }

    private func ids(host: String) throws -> [Int] {
        let page = try #require(try tvJSON(["flows", "--host", host]) as? [String: Any])
        return (page["flows"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
    }

    @Test("plain TCP and UDP to a looked-up address: named from DNS with the other name kept; --host finds them by either name and the address")
    func inferredFromDNS() throws {
        // other.test first, named.test last: both are 10.203.0.2; the later lookup heads.
        let client = try lab.script("named.py", """
            import socket
            def v4(name, port, kind):
                return socket.getaddrinfo(name, port, socket.AF_INET, kind)[0][4]
            v4("other.test", 8080, socket.SOCK_STREAM)
            address = v4("named.test", 8080, socket.SOCK_STREAM)
            s = socket.create_connection(address, timeout=10)
            s.sendall(b"GET /index.html HTTP/1.0\\r\\n\\r\\n")
            reply = b""
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                reply += chunk
            print(reply.split(b"\\r\\n")[0].decode())
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.settimeout(5)
            u.connect((address[0], 7007))
            u.send(b"ping")
            print(u.recv(100).decode())
            """)
        let r = lab.tv(["exec", "--yes", "--", "python3", client])  // not --quiet: the summary is checked
        #expect(r.status == 0 && r.out == "HTTP/1.1 200 OK\nping\n", "\(r)")
        let flows = try lab.flows()
        let tcp = try #require(flows.first { $0["serverPort"] as? Int == 8080 })
        #expect(tcp["host"] as? String == "named.test" && tcp["hostOrigin"] as? String == "dns", "\(tcp)")
        #expect(tcp["otherHosts"] as? [String] == ["other.test"] && tcp["serverAddress"] as? String == "10.203.0.2")
        let udp = try #require(flows.first { $0["serverPort"] as? Int == 7007 })
        #expect(udp["host"] as? String == "named.test" && udp["hostOrigin"] as? String == "dns" && udp["otherHosts"] as? [String] == ["other.test"])
        let queries = flows.filter { $0["serverPort"] as? Int == 53 }
        #expect(queries.count == 2 && queries.allSatisfy { $0["hostOrigin"] as? String == "dns_question" }, "\(queries)")

        let named = try #require(tcp["id"] as? Int), datagrams = try #require(udp["id"] as? Int)
        let otherQuery = try #require(queries.first { $0["host"] as? String == "other.test" }?["id"] as? Int)
        #expect(try ids(host: "other.test") == [datagrams, named, otherQuery])
        #expect(Set(try ids(host: "named.test")).isSuperset(of: [named, datagrams]))
        #expect(Set(try ids(host: "10.203.0.2")).isSuperset(of: [named, datagrams]))

        // tv flow says how the name is known, and that the connection could belong to either name.
        let detail = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir, "flow", String(named)])
        #expect(detail.status == 0, "\(detail)")
        #expect(detail.out.contains("  name         named.test (inferred from DNS: a lookup gave this name for 10.203.0.2; the connection announced none)"), "\(detail.out)")
        #expect(detail.out.contains("  other names  10.203.0.2 also had the live name other.test: the connection could belong to any of them"), "\(detail.out)")
        let row = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir, "flows", "--host", "other.test"])
        #expect(row.out.contains("tcp :8080 · 10.203.0.2"), "\(row.out)")
        // The summary says where names came from.
        #expect(r.err.contains("tv: names from lookups: 2 answers gave 2 names; 2 closed connections took their name from them"), "\(r.err)")
    }

    @Test("a resolver's answers name only what they answer: one with the query's ID and another question, and a record outside the question's CNAME chain, name nothing; the query says so")
    func spoofedAnswersNameNothing() throws {
        // A resolver of its own on 10.203.0.3:53 in the origin namespace: for spoof.test it
        // answers another question (bank.example) with the query's ID, then nothing; for
        // chain.test a CNAME chain to real.test plus a record for bank.example outside it.
        try Sh.must(["ip", "-n", lab.origin, "addr", "add", "10.203.0.3/24", "dev", "o-\(lab.tag)"])
        let server = try lab.script("spoof-dns.py", """
            import socket, struct
            def name(n):
                return b"".join(bytes([len(p)]) + p.encode() for p in n.split(".")) + b"\\0"
            def rr(owner, rtype, data):
                return name(owner) + struct.pack(">HHIH", rtype, 1, 60, len(data)) + data
            a = socket.inet_aton("10.203.0.2")
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("10.203.0.3", 53))
            while True:
                q, peer = s.recvfrom(512)
                qid, qname = q[:2], []
                i = 12
                while q[i]:
                    qname.append(q[i + 1:i + 1 + q[i]].decode()); i += 1 + q[i]
                qname = ".".join(qname)
                if qname == "spoof.test":
                    count = 1
                    body = name("bank.example") + struct.pack(">HH", 1, 1) + rr("bank.example", 1, a)
                elif qname == "chain.test":
                    count = 3
                    body = (name("chain.test") + struct.pack(">HH", 1, 1) + rr("chain.test", 5, name("real.test"))
                            + rr("real.test", 1, a) + rr("bank.example", 1, a))
                elif qname == "wrongid.test":
                    # A reply with another ID first (a spoofing attempt), then the real one.
                    count = 1
                    body = name("wrongid.test") + struct.pack(">HH", 1, 1) + rr("wrongid.test", 1, socket.inet_aton("10.203.0.9"))
                    bad = bytes([qid[0] ^ 0x55, qid[1] ^ 0x55])
                    s.sendto(bad + struct.pack(">HHHHH", 0x8180, 1, count, 0, 0) + body, peer)
                else:
                    continue
                s.sendto(qid + struct.pack(">HHHHH", 0x8180, 1, count, 0, 0) + body, peer)
            """)
        let resolver = try Daemon(["ip", "netns", "exec", lab.origin, "python3", server], log: lab.dir + "/spoof-dns.log")
        defer { resolver.stop() }
        let client = try lab.script("spoof-client.py", """
            import socket, struct, time
            def query(qid, qname):
                q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
                q += b"".join(bytes([len(p)]) + p.encode() for p in qname.split(".")) + b"\\0" + struct.pack(">HH", 1, 1)
                u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                u.settimeout(2)
                u.sendto(q, ("10.203.0.3", 53))
                try:
                    while True:
                        got = u.recv(512)
                        if got[:2] == q[:2]:
                            return got
                except socket.timeout:
                    return b""
            print(len(query(0x1234, "spoof.test")) > 0)
            print(len(query(0x4321, "chain.test")) > 0)
            print(len(query(0x5678, "wrongid.test")) > 0)
            s = socket.create_connection(("10.203.0.2", 8080), timeout=10)
            s.sendall(b"GET /index.html HTTP/1.0\\r\\n\\r\\n")
            while s.recv(65536): pass
            time.sleep(6)  # spoof.test's query times out in tv (5 s)
            """)
        let r = lab.exec([], ["python3", client], timeout: 60)
        #expect(r.status == 0 && r.out == "True\nTrue\nTrue\n", "\(r)")
        let flows = try lab.flows()
        let tcp = try #require(flows.first { $0["serverPort"] as? Int == 8080 })
        // The name looked up heads; its chain's other name is kept; bank.example is neither.
        #expect(tcp["host"] as? String == "chain.test" && tcp["hostOrigin"] as? String == "dns", "\(tcp)")
        #expect(tcp["otherHosts"] as? [String] == ["real.test"], "\(tcp)")
        let spoofed = try #require(flows.first { $0["host"] as? String == "spoof.test" })
        #expect(spoofed["error"] as? String == "no answer within 5 s; 1 datagram with its ID answered another question (a spoofed or misdirected answer, which the program's resolver drops)", "\(spoofed)")
        #expect(spoofed["bytesDown"] as? Int ?? 0 > 0, "the datagram passed on is counted on the query: \(spoofed)")
        #expect(try ids(host: "bank.example").isEmpty)
        // A reply with another ID reached the program (it read past it) and is counted on the one
        // query waiting: two datagrams down (it was counted on none: a trial).
        let wrongID = try #require(flows.first { $0["host"] as? String == "wrongid.test" })
        #expect(wrongID["packetsDown"] as? Int == 2 && (wrongID["error"] == nil || wrongID["error"] is NSNull), "\(wrongID)")
    }

    @Test("a real QUIC client (ngtcp2 gtlsclient) to a QUIC server in the origin namespace: the flow is named from its Initial packets, origin QUIC",
          .enabled(if: Sh.run(["which", "gtlsclient"]).status == 0 && Sh.run(["which", "gtlsserver"]).status == 0, "needs ngtcp2-client and ngtcp2-server"))
    func quic() throws {
        let server = try Daemon(["ip", "netns", "exec", lab.origin, "gtlsserver", "-q", "-d", lab.dir + "/www", "10.203.0.2", "4433",
                                 lab.dir + "/origin.key", lab.dir + "/origin.pem"], log: lab.dir + "/quic.log")
        defer { server.stop() }
        usleep(300_000)
        // origin.test is in the lab's /etc/hosts: no DNS lookup, so only the Initials can name it.
        let r = lab.tv(["exec", "--yes", "--", "timeout", "20", "gtlsclient", "-q", "--exit-on-all-streams-close", "origin.test", "4433",
                        "https://origin.test:4433/index.html"])
        #expect(r.status == 0, "\(r)\n\(server.output)")
        let f = try #require(try lab.flows().first { $0["serverPort"] as? Int == 4433 })
        #expect(f["transport"] as? String == "udp" && f["host"] as? String == "origin.test" && f["hostOrigin"] as? String == "quic", "\(f)")
        #expect(f["status"] as? String == "encrypted" && f["hostIsECHPublicName"] as? Bool == false)
        #expect((f["clientALPN"] as? [String])?.isEmpty == false, "\(f)")
        #expect((f["bytesDown"] as? Int ?? 0) > 1_000, "the handshake and the page came back: \(f)")
        #expect(r.err.contains("tv: names from QUIC: 1 connection named, 0 announced none, 0 could not be read (Initial packets: "), "\(r.err)")
        #expect(r.err.contains("tv:                  tv opens a QUIC connection's Initial packets to read its host and nothing else"), "\(r.err)")
        let detail = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir, "flow", String(f["id"] as? Int ?? 0)])
        #expect(detail.out.contains("  name         origin.test (from QUIC: the ClientHello (SNI) in its Initial packets)"), "\(detail)")
    }
}
