import Testing
import FlowStore
import FlowTerms
@testable import TVCore

/// A DNS query says which server its program asked (a trial's `dig @10.241.0.2` and `dig` read
/// alike, and both said tv had asked the resolver), and a connection that announced a name other
/// than the one looked up for its address says so (a trial's spoof.sh kept no trace of the lookup).
@Suite("DNS queries: the server the program asked; names looked up beside the one announced")
struct DNSQueryPresentationTests {
    let now: Int64 = 1_764_471_900_000_000

    private func query(_ asked: DNSServerAsked?, address: String?, server: String = "10.241.0.2", type: Int? = 1) -> FlowRecord {
        var f = FlowRecord(id: 12, startTime: now - 1_000_000, clientAddress: "10.77.0.2", clientPort: 40_000, serverAddress: server,
                           serverPort: 53, transport: .udp, host: "web4.t41.test", hostOrigin: .dnsQuestion, status: .notEncrypted, duration: 500)
        f.dnsServerAsked = asked
        f.dnsAskedAddress = address
        f.dnsQuestionType = type
        return f
    }

    private func resolverLine(_ f: FlowRecord) -> String? {
        FlowDetailPresentation.lines(f, now: now).first { $0.hasPrefix("  resolver") }
    }

    @Test("tv flow's resolver line, one sentence per server asked: tv's DNS address, none to ask, the system resolver, directly")
    func resolverSentences() {
        #expect(resolverLine(query(.tunnelAddress, address: "10.77.0.53"))
                == "  resolver     the program asked tv's DNS address in the tunnel (10.77.0.53), the system resolver under tv exec; tv asked this host's resolver, the server above")
        // Over TCP the row's server is tv's address the program connected to: no "server above".
        #expect(resolverLine(query(.tunnelAddress, address: "10.77.0.53", server: "10.77.0.53"))
                == "  resolver     the program asked tv's DNS address in the tunnel (10.77.0.53), the system resolver under tv exec; tv passed the connection on to this host's resolver")
        #expect(resolverLine(query(.direct, address: "10.241.0.2"))
                == "  resolver     the program asked 10.241.0.2 directly, not the system resolver")
        #expect(resolverLine(query(.systemResolver, address: "10.241.0.2"))
                == "  resolver     the program asked 10.241.0.2 itself, the resolver this host's resolv.conf names")
        // No resolver: the server is tv's own address, and no resolver was asked (a trial's rows said one was).
        #expect(resolverLine(query(.tunnelAddressNoResolver, address: "fd77::53", server: "fd77::53"))
                == "  resolver     the program asked tv's DNS address in the tunnel (fd77::53); this host's resolv.conf names no resolver, so tv answered the query itself (SERVFAIL) and asked none")
        // A row written before the server asked was kept reads as it did.
        #expect(resolverLine(query(nil, address: nil))?.hasPrefix("  resolver     the server above is the resolver tv asked: ") == true)
        // A connection that is no DNS query has no resolver line.
        var web = query(nil, address: nil, type: nil)
        web.hostOrigin = .sni
        #expect(resolverLine(web) == nil)
    }

    @Test("tv flow's name line gives the question's type")
    func nameLine() {
        #expect(FlowDetailPresentation.lines(query(.direct, address: "10.241.0.2", type: 28), now: now)[1]
                == "  name         web4.t41.test (the name this DNS query asked about, for its AAAA records)")
    }

    @Test("the flow list: a query's type, and 'direct' for a server the program chose itself; the JSON carries the typed facts")
    func listAndJSON() {
        let rows = FlowListPresentation(page: FlowPage(flows: [query(.direct, address: "8.8.8.8", server: "8.8.8.8"),
                                                               query(.tunnelAddress, address: "10.77.0.53", type: 28)], nextCursor: nil), now: now).rows
        #expect(rows.map(\.protocolAndPort) == ["udp :53 A · direct", "udp :53 AAAA"])
        let json = FlowDetailPresentation.json(query(.direct, address: "8.8.8.8", server: "8.8.8.8")).serialized()
        #expect(json.contains("\"dnsQuestionType\":\"A\",\"dnsServerAsked\":\"direct\",\"dnsAskedAddress\":\"8.8.8.8\""), "\(json)")
    }

    @Test("a connection that announced a name no lookup gave its address: said as a fact, the names looked up kept and shown")
    func announcedNotLookedUp() {
        var f = FlowRecord(id: 13, startTime: now - 1_000_000, clientAddress: "10.77.0.2", clientPort: 40_001, serverAddress: "10.241.0.2",
                           serverPort: 443, transport: .tcp, host: "www.bank.example", hostOrigin: .sni, status: .encrypted, duration: 500)
        f.otherHosts = ["alias-a.t41.test"]
        f.otherHostsOrigin = .lookupsNotAnnounced
        let lines = FlowDetailPresentation.lines(f, now: now)
        #expect(lines.contains("  looked up    10.241.0.2 was looked up as alias-a.t41.test; the connection announced www.bank.example "
                               + "(an address many names share, as a CDN's is, does this too)"), "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("  asked for") })
        // Announced and looked up too: the other names, plainly.
        f.host = "alias-a.t41.test"
        f.otherHosts = ["alias-b.t41.test"]
        f.otherHostsOrigin = .lookups
        #expect(FlowDetailPresentation.lines(f, now: now).contains("  other names  10.241.0.2 was also looked up as alias-b.t41.test"))
        // A proxy request's host (the explicit proxy) is still said as one.
        f.otherHosts = ["front.example"]
        f.otherHostsOrigin = .proxyRequest
        #expect(FlowDetailPresentation.lines(f, now: now).contains { $0.hasPrefix("  asked for    the proxy request named front.example") })
        #expect(FlowDetailPresentation.json(f).serialized().contains("\"otherHostsOrigin\":\"proxy_request\""))
    }
}
