import Testing
@testable import TVCore

@Suite struct TunnelCountersPresentationTests {
    @Test("a run with TCP, UDP, DNS and drops: three lines, drops largest first, words for reasons")
    func full() {
        let counters: [String: UInt64] = [
            "packetsRead": 2_334, "bytesRead": 1_357_107, "packetsWritten": 2_334, "bytesWritten": 1_357_107,
            "packetsFromPrograms": 1_234, "bytesFromPrograms": 98_816, "packetsToPrograms": 1_100, "bytesToPrograms": 1_258_291,
            "tcpRedirected": 12, "tcpConnectFailed": 1, "tcpResetsSent": 2, "udpFlows": 7, "udpDatagramsUp": 10,
            "udpDatagramsDown": 9, "dnsQueries": 4, "dnsAnswers": 3, "dnsTimeouts": 1, "fragmentsReassembled": 1,
            "pathMTUSignals": 2, "dropped.icmp": 3, "dropped.noConnection": 2, "dropped.badChecksum": 2, "natEntries": 5,
        ]
        #expect(TunnelCountersPresentation(counters: counters).lines == [
            "tunnel: programs sent 1,234 packets (96.5 KiB) and received 1,100 packets (1.2 MiB)",
            "tunnel: 12 TCP connections (2 resets sent) and 1 more that failed upstream (refused or unanswered), 7 UDP flows (10 datagrams up, 9 down), "
                + "4 of them DNS queries (3 answered, 1 unanswered), 1 datagram reassembled, 2 path-MTU signals",
            "tunnel: dropped 7 packets: 3 ICMP, 2 bad checksum, 2 no connection",
        ])
    }

    @Test("nothing happened: two lines, singular forms, no drop line")
    func empty() {
        #expect(TunnelCountersPresentation(counters: [:]).lines == [
            "tunnel: programs sent 0 packets (0 B) and received 0 packets (0 B)",
            "tunnel: 0 TCP connections",
        ])
        #expect(TunnelCountersPresentation(counters: ["packetsRead": 1, "bytesRead": 60, "packetsFromPrograms": 1, "bytesFromPrograms": 60, "tcpRedirected": 1, "dropped.synRetransmit": 1]).lines == [
            "tunnel: programs sent 1 packet (60 B) and received 0 packets (0 B)",
            "tunnel: 1 TCP connection",
            "tunnel: dropped 1 packet: 1 SYN retransmit",
        ])
    }

    /// A trial's summary read "20 TCP connections (15 not accepted)" of connections tv had
    /// connected and then reset at its cap, and could not tell the cap from a stop.
    @Test("at the cap: SYNs dropped are said as SYNs held back with nothing connected, apart from connections the proxy refused, each by why")
    func connectionCap() {
        #expect(TunnelCountersPresentation(counters: ["tcpRedirected": 5, "dropped.connectionCap": 31, "dropped.synRetransmit": 2]).lines == [
            "tunnel: programs sent 0 packets (0 B) and received 0 packets (0 B)",
            "tunnel: 5 TCP connections",
            "tunnel: dropped 33 packets: 31 SYNs at tv's connection cap (nothing connected; dropped as a full listen queue drops them, so the programs' kernels sent them again), 2 SYN retransmit",
        ])
        #expect(TunnelCountersPresentation(counters: ["tcpRedirected": 7, "tcpNotAdoptedAtCap": 2, "tcpNotAdoptedStopping": 1, "tcpAcceptRefused": 1,
                                                      "dropped.proxyStopping": 3]).lines.dropFirst() == [
            "tunnel: 7 TCP connections (1 not accepted, 2 reset at tv's connection cap, 1 reset as tv was stopping)",
            "tunnel: dropped 3 packets: 3 SYNs while tv was stopping (reset)",
        ])
    }

    @Test("DNS answers a duplicating path repeated are said as repeats counted with their queries, apart from the datagrams that answered no question (a trial read the repeats as the latter)")
    func repeatedAnswers() {
        #expect(TunnelCountersPresentation(counters: ["udpFlows": 2, "udpDatagramsUp": 2, "udpDatagramsDown": 8, "dnsQueries": 2, "dnsAnswers": 2,
                                                      "dnsRepeatedAnswers": 6]).lines[1]
                == "tunnel: 0 TCP connections, 2 UDP flows (2 datagrams up, 8 down), 2 of them DNS queries (2 answered, 6 answers repeated by the path or the resolver, each counted with its query)")
        #expect(TunnelCountersPresentation(counters: ["udpFlows": 1, "udpDatagramsUp": 1, "udpDatagramsDown": 3, "dnsQueries": 1, "dnsAnswers": 1,
                                                      "dnsRepeatedAnswers": 1, "dnsStrayAnswers": 1]).lines[1]
                == "tunnel: 0 TCP connections, 1 UDP flow (1 datagram up, 3 down), 1 of them DNS query (1 answered, 1 answer repeated by the path or the resolver, each counted with its query; 1 datagram from a resolver answered no question asked and named nothing)")
    }

    @Test("upstream ICMP errors: port unreachable passed on and errors not passed on follow the path-MTU signals")
    func upstreamErrors() {
        let counters: [String: UInt64] = ["udpFlows": 1, "udpDatagramsUp": 2, "pathMTUSignals": 1, "udpErrorQueueRead": 4,
                                          "portUnreachableSignals": 1, "upstreamErrorsIgnored": 2]
        #expect(TunnelCountersPresentation(counters: counters).lines[1]
                == "tunnel: 0 TCP connections, 1 UDP flow (2 datagrams up, 0 down), 1 path-MTU signal, 1 port-unreachable signal, "
                + "2 upstream ICMP errors not passed on")
        #expect(TunnelCountersPresentation(counters: ["udpFlows": 2, "udpDatagramsUp": 2, "dnsQueries": 2, "dnsQueriesUnsent": 2]).lines[1]
                == "tunnel: 0 TCP connections, 2 UDP flows (2 datagrams up, 0 down), 2 of them DNS queries (0 answered, 2 not sent: no resolver could be reached, tv answered SERVFAIL)")
        #expect(TunnelCountersPresentation(counters: ["upstreamErrorsIgnored": 1]).lines[1]
                == "tunnel: 0 TCP connections, 1 upstream ICMP error not passed on")
        #expect(TunnelCountersPresentation(counters: ["udpFlows": 1, "unreachableSignals": 3, "portUnreachableSignals": 1]).lines[1]
                == "tunnel: 0 TCP connections, 1 UDP flow (0 datagrams up, 0 down), 1 port-unreachable signal, "
                + "3 datagrams tv could not send answered ICMP unreachable")
    }

    @Test func reasonWords() {
        #expect(TunnelCountersPresentation.words("badExtensionHeaders") == "bad extension headers")
        #expect(TunnelCountersPresentation.words("truncated") == "truncated")
        #expect(TunnelCountersPresentation.words("linkControl") == "the kernel's own ICMPv6 (neighbour discovery, multicast listener reports)")
    }
}
