import Testing
import FlowStore
import FlowTerms
@testable import TVCore

/// Issue 18: how a flow says who it was and how that is known, and where the tunnel's names
/// came from.
@Suite("Names: origins, notes, rows and the tunnel's naming counters")
struct NamePresentationTests {
    let now: Int64 = 1_764_471_900_000_000

    private func flow(_ origin: HostOrigin, host: String? = "www.example", transport: FlowTransport = .tcp) -> FlowRecord {
        FlowRecord(id: 9, startTime: now - 1_000_000, clientAddress: "10.77.0.2", clientPort: 40_000, serverAddress: "203.0.113.100",
                   serverPort: 80, transport: transport, host: host, hostOrigin: origin, status: .notEncrypted, duration: 500)
    }

    @Test("a row named from DNS adds the address after the service; an announced one does not")
    func row() {
        var inferred = flow(.dns)
        inferred.otherHosts = ["edge.cdn.example"]
        let rows = FlowListPresentation(page: FlowPage(flows: [inferred, flow(.sni, host: "a.test")], nextCursor: nil), now: now).rows
        #expect(rows.map(\.host) == ["www.example", "a.test"])
        #expect(rows.map(\.protocolAndPort) == ["tcp :80 · 203.0.113.100", "tcp :80"])
    }

    @Test("tv flow: inferred from DNS, with the other names under the header; the JSON carries them")
    func inferredDetail() {
        var f = flow(.dns)
        f.otherHosts = ["edge.cdn.example", "api.example"]
        let lines = FlowDetailPresentation.lines(f, now: now)
        #expect(lines[1] == "  name         www.example (inferred from DNS: a lookup gave this name for 203.0.113.100; the connection announced none)")
        #expect(lines.contains("  other names  203.0.113.100 also had the live names edge.cdn.example, api.example: the connection could belong to any of them"))
        let json = FlowDetailPresentation.json(f).serialized()
        #expect(json.contains("\"hostOrigin\":\"dns\",\"otherHosts\":[\"edge.cdn.example\",\"api.example\"],\"otherHostsOrigin\":null,\"hostIsECHPublicName\":false"))
        f.otherHosts = ["one.example"]
        #expect(FlowDetailPresentation.lines(f, now: now).contains("  other names  203.0.113.100 also had the live name one.example: the connection could belong to any of them"))
        f.otherHosts = []
        #expect(!FlowDetailPresentation.lines(f, now: now).contains { $0.hasPrefix("  other names") })
    }

    @Test("tv flow: QUIC, an ECH outer name, a DNS question, and no name (through a proxy, or UDP)")
    func otherOrigins() {
        var quic = flow(.quic, host: "public.example", transport: .udp)
        quic.hostIsECHPublicName = true
        let lines = FlowDetailPresentation.lines(quic, now: now)
        #expect(lines[1] == "  name         public.example (from QUIC: the ClientHello (SNI) in its Initial packets)")
        #expect(lines.contains("  ECH          the ClientHello carried encrypted_client_hello: this is the outer (public) name, and the name the client "
                               + "wanted may be encrypted inside (unless the extension was GREASE, which browsers send with the real name outside)"))
        let question = FlowDetailPresentation.lines(flow(.dnsQuestion, host: "named.test", transport: .udp), now: now)
        #expect(question[1] == "  name         named.test (the name this DNS query asked about)")
        // Its server is this host's resolver; its packets show the tunnel's DNS address (said).
        #expect(question.contains("  resolver     the server above is the resolver tv asked: under tv exec the program asked tv's DNS address "
                                  + "in the tunnel (its packets show that address) and tv asked this host's resolver; under --mode tun, "
                                  + "the one the program addressed"))
        #expect(FlowDetailPresentation.lines(flow(.none, host: nil), now: now)[1]
                == "  name         203.0.113.100 (no name was seen; this is the address: the connection announced none, and no live DNS answer named it (only tv exec and --mode tun see DNS; the proxy modes see none))")
        #expect(FlowDetailPresentation.lines(flow(.none, host: nil, transport: .udp), now: now)[1]
                == "  name         203.0.113.100 (no name was seen; this is the address: the connection announced none and no live DNS answer named it)")
        // Neither a name nor an address (a SOCKS5 UDP ASSOCIATE refused before any destination).
        var nowhere = flow(.none, host: nil)
        nowhere.serverAddress = ""
        #expect(Array(FlowDetailPresentation.lines(nowhere, now: now).prefix(2))
                == ["Flow \(nowhere.id): (no destination)", "  name         none: the connection ended before it named a destination"])
    }

    /// A trial drove headless Chromium, whose every ClientHello carries a GREASE
    /// encrypted_client_hello: `tv flow` said the wanted name "may be encrypted inside" under
    /// each flow tv inspected, where a client that sent requests over tv's leaf cannot have used
    /// ECH (tv holds no ECH key; a refused offer ends with ech_required, never a request).
    @Test("tv flow's ECH note: not under an inspected flow the client sent data on; kept where it can be true")
    func echNoteOnlyWhereItCanBeTrue() {
        let note = "  ECH          the ClientHello carried encrypted_client_hello: this is the outer (public) name, and the name the client "
            + "wanted may be encrypted inside (unless the extension was GREASE, which browsers send with the real name outside)"
        var chromium = flow(.sni, host: "localhost")
        chromium.hostIsECHPublicName = true
        chromium.status = .inspected
        chromium.bytesUp = 1_390
        chromium.bytesDown = 7_795
        #expect(!FlowNamePresentation.echMayHideName(chromium))
        #expect(!FlowDetailPresentation.lines(chromium, now: now).contains { $0.hasPrefix("  ECH") })
        // Inspected, nothing sent by the client (a spare connection, or a refused ECH offer's
        // ech_required): it may be true.
        var quiet = chromium
        quiet.bytesUp = 0
        quiet.bytesDown = 40
        #expect(FlowNamePresentation.echMayHideName(quiet))
        #expect(FlowDetailPresentation.lines(quiet, now: now).contains(note))
        // Not inspected (passed through, kept private, failed, or tv did not terminate TLS): tv
        // cannot tell, whatever moved.
        for status in [FlowStatus.encrypted, .keptPrivate, .failed, .interrupted] {
            var other = chromium
            other.status = status
            #expect(FlowNamePresentation.echMayHideName(other), "\(status)")
            #expect(FlowDetailPresentation.lines(other, now: now).contains(note), "\(status)")
        }
        // No extension: never.
        var plain = chromium
        plain.hostIsECHPublicName = false
        plain.bytesUp = 0
        plain.status = .encrypted
        #expect(!FlowNamePresentation.echMayHideName(plain))
    }

    /// Chromium's spare connections (closed 0.3 ms after their handshake when another connection
    /// to the host won the race) read "possible pinning" in a trial; weighed as unused, they
    /// carry no error, and `tv flow` says what they were.
    @Test("tv flow: an inspected flow the client closed having sent nothing, with no error, reads as a connection it did not use")
    func unusedConnection() {
        var spare = flow(.sni, host: "localhost")
        spare.status = .inspected
        spare.bytesUp = 0
        spare.bytesDown = 40
        #expect(FlowDetailPresentation.unused(spare))
        #expect(FlowDetailPresentation.lines(spare, now: now).contains(
            "  status       inspected — tv terminated TLS on both legs; the client sent nothing over it and closed it: a connection it did not use "
            + "(a browser opens spare connections and closes those it does not need)"))
        var pinning = spare
        pinning.error = "the client closed right after the handshake without sending data (possible pinning)"
        #expect(!FlowDetailPresentation.unused(pinning))
        #expect(FlowDetailPresentation.statusSentence(pinning) == "inspected — tv terminated TLS on both legs")
        var open = spare
        open.duration = nil
        #expect(!FlowDetailPresentation.unused(open))
        var used = spare
        used.bytesUp = 1
        #expect(!FlowDetailPresentation.unused(used))
    }

    @Test("the tunnel's names: lookups and QUIC with their figures and the sentence each needs")
    func counters() {
        #expect(TunnelNamesPresentation.lines([:], namedFromLookups: 0) == [
            "names from lookups: none — no DNS answer crossed the tunnel unencrypted (the programs used addresses, encrypted DNS, or a resolver on a connected network, which bypasses the tunnel), so connections are named only when they announce a host",
            "names from QUIC: none — nothing used QUIC",
        ])
        // Answers crossed and none gave an address (NXDOMAIN, NODATA, TXT): not "no answer crossed".
        #expect(TunnelNamesPresentation.lines(["dnsAnswersWithoutAddresses": 2], namedFromLookups: 0)[0]
                == "names from lookups: none — the 2 DNS answers that crossed the tunnel gave no address, so connections are named only when they announce a host")
        #expect(TunnelNamesPresentation.lines(["dnsAnswersWithoutAddresses": 1, "dnsAnswersUnreadable": 1], namedFromLookups: 0)[0]
                == "names from lookups: none — the 1 DNS answer that crossed the tunnel gave no address (1 answer could not be read), so connections are named only when they announce a host")
        let busy: [String: UInt64] = ["dnsAnswersWithAddresses": 3, "dnsNamesLearned": 5, "dnsAnswersWithoutAddresses": 1, "dnsAnswersUnreadable": 2,
                                      "quicNamed": 2, "quicPacketsOpened": 3, "quicReadRestarts": 1]
        #expect(TunnelNamesPresentation.lines(busy, namedFromLookups: 1) == [
            "names from lookups: 3 answers gave 5 names (1 gave none, 2 could not be read); 1 closed connection took its name from them (it announced no host of its own, and went to an address an answer gave)",
            "names from QUIC: 2 connections named, 0 announced none, 0 could not be read (Initial packets: 3 opened, 0 not opened, 1 read started over, 0 skipped: too many being read)",
            "                 tv opens a QUIC connection's Initial packets to read its host and nothing else; the connection is forwarded untouched and never decrypted",
        ])
        #expect(TunnelNamesPresentation.lines(["quicPacketsNotOpened": 4, "quicUnreadable": 1], namedFromLookups: 0).last
                == "                 no QUIC Initial packet could be opened, so QUIC connections keep the name a lookup gave them")
        #expect(TunnelNamesPresentation.lines(["quicPacketsOpened": 4, "quicUnreadable": 1], namedFromLookups: 0).last
                == "                 no QUIC handshake could be read to the end, so QUIC connections keep the name a lookup gave them")
        #expect(TunnelNamesPresentation.lines(["quicPacketsOpened": 1, "quicNoName": 1], namedFromLookups: 0).last
                == "                 no QUIC ClientHello announced a host, so QUIC connections keep the name a lookup gave them")
        #expect(TunnelNamesPresentation.lines(["dnsAnswersUnreadable": 1], namedFromLookups: 0)[0].hasSuffix("announce a host (1 answer could not be read)"))
        // Queries that never reached a resolver are said as that, not as programs using addresses.
        #expect(TunnelNamesPresentation.lines(["dnsQueriesUnsent": 8], namedFromLookups: 0)[0]
                == "names from lookups: none — the 8 DNS queries could not be sent to a resolver (tv answered SERVFAIL), so connections are named only when they announce a host")
    }
}
