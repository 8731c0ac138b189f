/// The block `tv exec` prints to stderr when CMD exits (and `tv status` under `--mode tun`):
/// what went through the tunnel, from the engine's counters (`TunnelCounters.snapshot`, names →
/// values). The first line is what the programs behind the TUN sent and received, each packet
/// counted once, as the capture has them; the TUN's own read and write counts (TCP crosses it
/// twice, so each is both directions together: a new-user trial read them as "sent" and
/// "received") stay in the snapshot for diagnosis.
///
/// Shape (three lines at most; the drop line only when something was dropped):
/// ```
/// tunnel: programs sent 1,234 packets (96.5 KiB) and received 1,100 packets (1.2 MiB)
/// tunnel: 12 TCP connections and 1 more that failed upstream (refused or unanswered), 3 UDP flows (10 datagrams up, 9 down), 4 DNS queries (4 answered)
/// tunnel: dropped 5 packets: 3 icmp, 2 no connection
/// ```
public struct TunnelCountersPresentation: Sendable, Equatable {
    public let lines: [String]

    /// - Parameter counters: `TunnelCounters.snapshot` (missing names count as 0; drop reasons
    ///   are the names `dropped.REASON`).
    public init(counters: [String: UInt64]) {
        func n(_ name: String) -> UInt64 { counters[name] ?? 0 }
        func count(_ v: UInt64) -> String { Units.grouped(Int64(clamping: v)) }
        func plural(_ v: UInt64, _ one: String, _ many: String) -> String { "\(count(v)) \(v == 1 ? one : many)" }
        var lines = ["tunnel: programs sent \(plural(n("packetsFromPrograms"), "packet", "packets")) (\(Units.bytes(Int64(clamping: n("bytesFromPrograms"))))) "
                     + "and received \(plural(n("packetsToPrograms"), "packet", "packets")) (\(Units.bytes(Int64(clamping: n("bytesToPrograms")))))"]

        var tcp = plural(n("tcpRedirected"), "TCP connection", "TCP connections")
        // The failed ones are not among the relayed: "0 TCP connections (3 refused upstream)"
        // read as a part of none (a trial).
        var tcpNotes: [String] = []
        if n("tcpAcceptRefused") > 0 { tcpNotes.append("\(count(n("tcpAcceptRefused"))) not accepted") }
        // Connected upstream, then refused by the proxy: said by why (a trial read "15 not
        // accepted" of connections tv had connected and reset at its cap, and could not tell
        // the cap from a stop).
        if n("tcpNotAdoptedAtCap") > 0 { tcpNotes.append("\(count(n("tcpNotAdoptedAtCap"))) reset at tv's connection cap") }
        if n("tcpNotAdoptedStopping") > 0 { tcpNotes.append("\(count(n("tcpNotAdoptedStopping"))) reset as tv was stopping") }
        if n("tcpResetsSent") > 0 { tcpNotes.append(plural(n("tcpResetsSent"), "reset sent", "resets sent")) }
        if !tcpNotes.isEmpty { tcp += " (" + tcpNotes.joined(separator: ", ") + ")" }
        if n("tcpConnectFailed") > 0 { tcp += " and \(count(n("tcpConnectFailed"))) more that failed upstream (refused or unanswered)" }
        var parts = [tcp]
        if n("udpFlows") > 0 {
            parts.append(plural(n("udpFlows"), "UDP flow", "UDP flows")
                         + " (\(plural(n("udpDatagramsUp"), "datagram", "datagrams")) up, \(count(n("udpDatagramsDown"))) down)")
        }
        if n("dnsQueries") > 0 {
            // Each query is a UDP flow of its own, as in the flow list (a trial counted sockets
            // here and rows there): said as a part of the UDP flows.
            var dns = (n("udpFlows") >= n("dnsQueries") ? "\(count(n("dnsQueries"))) of them DNS \(n("dnsQueries") == 1 ? "query" : "queries")"
                       : plural(n("dnsQueries"), "DNS query", "DNS queries")) + " (\(count(n("dnsAnswers"))) answered"
            if n("dnsTimeouts") > 0 { dns += ", \(count(n("dnsTimeouts"))) unanswered" }
            if n("dnsQueriesUnsent") > 0 { dns += ", \(count(n("dnsQueriesUnsent"))) not sent: no resolver could be reached, tv answered SERVFAIL" }
            if n("dnsRepeatedAnswers") > 0 {
                // A duplicating path's second copies are their queries' (they were said to answer
                // no question asked while the flows listed them as answers: a trial).
                dns += ", \(plural(n("dnsRepeatedAnswers"), "answer", "answers")) repeated by the path or the resolver, each counted with its query"
            }
            if n("dnsStrayAnswers") > 0 { dns += "; \(plural(n("dnsStrayAnswers"), "datagram", "datagrams")) from a resolver answered no question asked and named nothing" }
            parts.append(dns + ")")
        }
        if n("dnsTCPAnswers") > 0 || n("dnsTCPAnswersDropped") > 0 {
            // Responses the relays read from DNS over TCP (`TCPDNSAnswers`), named from as UDP ones.
            var tcpDNS = plural(n("dnsTCPAnswers"), "DNS answer", "DNS answers") + " over TCP read for names"
            if n("dnsTCPAnswersDropped") > 0 { tcpDNS += " (\(count(n("dnsTCPAnswersDropped"))) more dropped: too many waited)" }
            parts.append(tcpDNS)
        }
        if n("fragmentsReassembled") > 0 { parts.append(plural(n("fragmentsReassembled"), "datagram reassembled", "datagrams reassembled")) }
        if n("pathMTUSignals") > 0 { parts.append(plural(n("pathMTUSignals"), "path-MTU signal", "path-MTU signals")) }
        if n("portUnreachableSignals") > 0 { parts.append(plural(n("portUnreachableSignals"), "port-unreachable signal", "port-unreachable signals")) }
        if n("unreachableSignals") > 0 {
            parts.append(plural(n("unreachableSignals"), "datagram", "datagrams") + " tv could not send answered ICMP unreachable")
        }
        if n("upstreamErrorsIgnored") > 0 { parts.append(plural(n("upstreamErrorsIgnored"), "upstream ICMP error not passed on", "upstream ICMP errors not passed on")) }
        lines.append("tunnel: " + parts.joined(separator: ", "))

        let drops = counters.compactMap { name, value -> (String, UInt64)? in
            guard value > 0, name.hasPrefix("dropped.") else { return nil }
            return (Self.words(String(name.dropFirst("dropped.".count))), value)
        }.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
        if !drops.isEmpty {
            let total = drops.reduce(UInt64(0)) { $0 &+ $1.1 }
            lines.append("tunnel: dropped \(plural(total, "packet", "packets")): " + drops.map { "\(count($0.1)) \($0.0)" }.joined(separator: ", "))
        }
        self.lines = lines
    }

    /// A drop reason's name in words: `noConnection` → `no connection`, `icmp` → `ICMP`.
    static func words(_ reason: String) -> String {
        switch reason {
        case "icmp": return "ICMP"
        case "linkControl": return "the kernel's own ICMPv6 (neighbour discovery, multicast listener reports)"
        case "synRetransmit": return "SYN retransmit"
        case "tunnelNetwork": return "to tv's own TUN network (a connection there would come back into the TUN: refused)"
        // SYNs, not connections: a program's kernel sends its SYN again after each drop.
        case "connectionCap":
            return "SYNs at tv's connection cap (nothing connected; dropped as a full listen queue drops them, so the programs' kernels sent them again)"
        case "proxyStopping": return "SYNs while tv was stopping (reset)"
        default:
            var out = ""
            for character in reason {
                if character.isUppercase { out += " " + character.lowercased() } else { out.append(character) }
            }
            return out
        }
    }
}
