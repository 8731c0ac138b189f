import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// DNS over TCP through `tv exec` (a trial found it named nothing), the server a query's program
/// asked, and a connection that announces a name other than the one looked up, through the real
/// binary against dnsmasq (and a resolver of the test's own) in the lab's origin namespace.
@Suite("tv exec: DNS over TCP names, the server asked, names looked up beside the one announced", .serialized,
       .enabled(if: LabRequirements.met && Sh.run(["which", "dig"]).status == 0, "needs root, /dev/net/tun, nginx, dnsmasq, dig"))
final class ExecDNSOverTCPTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    private func tv(_ arguments: [String]) -> Output { Sh.run([TVBinary.path!, "--data-dir", lab.dataDir] + arguments) }

    private func ids(host: String) throws -> [Int] {
        let r = tv(["flows", "--host", host, "--json"])
        guard r.status == 0, let data = r.out.data(using: .utf8),
              let page = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw LabError("tv flows --host: \(r)") }
        return (page["flows"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
    }

    /// A plain request without a Host header (so only a lookup can name it) to the origin's 8080.
    static let bareRequest = """
        import socket
        s = socket.create_connection(("10.203.0.2", 8080), timeout=10)
        s.sendall(b"GET /index.html HTTP/1.0\\r\\n\\r\\n")
        reply = b""
        while True:
            chunk = s.recv(65536)
            if not chunk: break
            reply += chunk
        print(reply.split(b"\\r\\n")[0].decode())
        """

    @Test("dig +tcp through tv's DNS address names its query row (name, type, the server asked) and the connection made after it; dig +tcp @server is said to be direct")
    func digOverTCP() throws {
        let request = try lab.script("bare.py", Self.bareRequest)
        // named.test is looked up over TCP only, before the connection; other.test after it, directly.
        let r = lab.exec([], ["sh", "-c", "dig +tcp +short +tries=1 named.test A && python3 \(request) && dig +tcp +short +tries=1 @10.203.0.2 other.test A"
                               + " && dig +short +tries=1 @10.203.0.2 other.test A"])
        #expect(r.status == 0 && r.out == "10.203.0.2\nHTTP/1.1 200 OK\n10.203.0.2\n10.203.0.2\n", "\(r)")
        let flows = try lab.flows()
        let viaTV = try #require(flows.first { $0["serverPort"] as? Int == 53 && $0["transport"] as? String == "tcp" && $0["host"] as? String == "named.test" },
                                 "\(flows)")
        #expect(viaTV["hostOrigin"] as? String == "dns_question" && viaTV["dnsQuestionType"] as? String == "A", "\(viaTV)")
        #expect(viaTV["dnsServerAsked"] as? String == "tunnel_address" && viaTV["dnsAskedAddress"] as? String == "10.77.0.53", "\(viaTV)")
        // The connection to the address only the TCP answer gave is named after it.
        let web = try #require(flows.first { $0["serverPort"] as? Int == 8080 })
        #expect(web["host"] as? String == "named.test" && web["hostOrigin"] as? String == "dns", "\(web)")
        // dig @server: direct, over TCP and over UDP alike.
        let direct = flows.filter { $0["serverPort"] as? Int == 53 && $0["host"] as? String == "other.test" }
        #expect(direct.count == 2 && Set(direct.compactMap { $0["transport"] as? String }) == ["tcp", "udp"], "\(direct)")
        #expect(direct.allSatisfy { $0["dnsServerAsked"] as? String == "direct" && $0["dnsAskedAddress"] as? String == "10.203.0.2" }, "\(direct)")
        let directID = try #require(direct.first { $0["transport"] as? String == "tcp" }?["id"] as? Int)
        let detail = tv(["flow", String(directID)])
        #expect(detail.out.contains("  resolver     the program asked 10.203.0.2 directly, not the system resolver"), "\(detail)")
        let viaDetail = tv(["flow", String(try #require(viaTV["id"] as? Int))])
        #expect(viaDetail.out.contains("  resolver     the program asked tv's DNS address in the tunnel (10.77.0.53), the system resolver under tv exec; "
                                       + "tv passed the connection on to this host's resolver"), "\(viaDetail)")
        let list = tv(["flows", "--host", "other.test"])
        #expect(list.out.contains("tcp :53 A · direct") && list.out.contains("udp :53 A · direct"), "\(list)")
    }

    @Test("glibc retries over TCP after a truncated answer: the connection to an address only the TCP answer gave is named after it")
    func glibcRetryOverTCP() throws {
        // A resolver of the test's own on 10.203.0.3: over UDP, a truncated answer with no record
        // (TC, RFC 1035 §4.1.1); over TCP the whole answer, 46 A records with 10.203.0.2 last.
        try Sh.must(["ip", "-n", lab.origin, "addr", "add", "10.203.0.3/24", "dev", "o-\(lab.tag)"])
        let server = try lab.script("tc-dns.py", """
            import socket, struct, threading
            def answer(q, tcp):
                qid, i = q[:2], 12
                while q[i]: i += 1 + q[i]
                question = q[12:i + 5]
                if not tcp:
                    return qid + struct.pack(">HHHHH", 0x8380, 1, 0, 0, 0) + question
                addresses = ["10.203.9.%d" % n for n in range(1, 46)] + ["10.203.0.2"]
                records = b"".join(b"\\xc0\\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton(a) for a in addresses)
                return qid + struct.pack(">HHHHH", 0x8180, 1, len(addresses), 0, 0) + question + records
            def udp():
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.bind(("10.203.0.3", 53))
                while True:
                    q, peer = s.recvfrom(512)
                    s.sendto(answer(q, False), peer)
            def serve(c):
                with c:
                    while True:
                        head = c.recv(2, socket.MSG_WAITALL)
                        if len(head) < 2: return
                        q = c.recv(struct.unpack(">H", head)[0], socket.MSG_WAITALL)
                        a = answer(q, True)
                        c.sendall(struct.pack(">H", len(a)) + a)
            threading.Thread(target=udp, daemon=True).start()
            t = socket.socket()
            t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            t.bind(("10.203.0.3", 53)); t.listen(8)
            while True:
                threading.Thread(target=serve, args=(t.accept()[0],), daemon=True).start()
            """)
        let resolver = try Daemon(["ip", "netns", "exec", lab.origin, "python3", server], log: lab.dir + "/tc-dns.log")
        defer { resolver.stop() }
        try "nameserver 10.203.0.3\noptions timeout:2 attempts:2\n".write(toFile: lab.dir + "/resolv.conf", atomically: true, encoding: .utf8)
        usleep(300_000)
        let client = try lab.script("many.py", """
            import socket
            addresses = [a[4][0] for a in socket.getaddrinfo("many.test", 8080, socket.AF_INET, socket.SOCK_STREAM)]
            print(len(addresses), "10.203.0.2" in addresses)
            """ + "\n" + Self.bareRequest)
        let r = lab.tv(["exec", "--yes", "--", "python3", client])
        #expect(r.status == 0 && r.out == "46 True\nHTTP/1.1 200 OK\n", "\(r)\n\(resolver.output)")
        let flows = try lab.flows()
        let web = try #require(flows.first { $0["serverPort"] as? Int == 8080 })
        #expect(web["host"] as? String == "many.test" && web["hostOrigin"] as? String == "dns", "\(web)")
        let tcpQuery = try #require(flows.first { $0["serverPort"] as? Int == 53 && $0["transport"] as? String == "tcp" }, "\(flows)")
        #expect(tcpQuery["host"] as? String == "many.test" && tcpQuery["dnsQuestionType"] as? String == "A"
                && tcpQuery["dnsServerAsked"] as? String == "tunnel_address", "\(tcpQuery)")
        #expect(r.err.contains("1 DNS answer over TCP read for names"), "\(r.err)")
    }

    @Test("a lookup of one name, then a Host header and an SNI of another: the name looked up stays among the flow's other names, found by --host, and tv flow says it")
    func announcedAnotherName() throws {
        let r = lab.exec(["--upstream-ca", lab.upstreamCA], ["sh", "-c",
            "getent hosts named.test >/dev/null && curl -s -o /dev/null -w '%{http_code}\\n' -H 'Host: www.bank.example' http://named.test:8080/index.html"
            + " && curl -s -o /dev/null -w '%{http_code}\\n' -k --connect-to www.bank.example:443:named.test:443 https://www.bank.example/index.html"])
        #expect(r.status == 0 && r.out == "200\n200\n", "\(r)")
        let flows = try lab.flows()
        let announced = flows.filter { $0["host"] as? String == "www.bank.example" }
        #expect(announced.count == 2 && Set(announced.compactMap { $0["hostOrigin"] as? String }) == ["http_host", "sni"], "\(flows)")
        #expect(announced.allSatisfy { ($0["otherHosts"] as? [String])?.contains("named.test") == true
                                       && $0["otherHostsOrigin"] as? String == "lookups_not_announced" }, "\(announced)")
        let found = try ids(host: "named.test")
        #expect(Set(announced.compactMap { $0["id"] as? Int }).isSubset(of: Set(found)), "\(found)")
        let detail = tv(["flow", String(try #require(announced.first?["id"] as? Int))])
        // curl may have gone over IPv6 (fd03::2) or IPv4: the sentence names the address it reached.
        #expect(detail.out.contains(" was looked up as named.test; the connection announced www.bank.example "
                                    + "(an address many names share, as a CDN's is, does this too)"), "\(detail)")
        #expect(detail.out.contains("  looked up    10.203.0.2 was looked up") || detail.out.contains("  looked up    fd03::2 was looked up"), "\(detail)")
    }

    @Test("no resolver in resolv.conf: tv answers SERVFAIL; the summary counts the datagrams its rows show, and the row says no resolver was asked")
    func noResolver() throws {
        try "options timeout:1 attempts:1\n".write(toFile: lab.dir + "/resolv.conf", atomically: true, encoding: .utf8)
        let r = lab.tv(["exec", "--yes", "--", "sh", "-c", "dig +tries=1 named.test A | grep -c SERVFAIL"])
        #expect(r.out == "1\n", "\(r)")
        #expect(r.err.contains("1 UDP flow (1 datagram up, 1 down)"), "\(r.err)")
        let query = try #require(try lab.flows().first { $0["host"] as? String == "named.test" })
        #expect(query["dnsServerAsked"] as? String == "tunnel_address_no_resolver" && query["packetsUp"] as? Int == 1
                && query["packetsDown"] as? Int == 1, "\(query)")
        let detail = tv(["flow", String(try #require(query["id"] as? Int))])
        #expect(detail.out.contains("  resolver     the program asked tv's DNS address in the tunnel (10.77.0.53); this host's resolv.conf names no resolver, "
                                    + "so tv answered the query itself (SERVFAIL) and asked none"), "\(detail)")
        #expect(!detail.out.contains("the server above is the resolver tv asked"), "\(detail)")
    }
}
