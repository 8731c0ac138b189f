import FlowStore
import FlowTerms
import Tunnel
import TVHome

/// A DNS query flow in words: what it asked (the QTYPE) and which server its program asked
/// (`DNSServerAsked`), rendered here once for `tv flow`'s "resolver" line and the flow list's
/// cell. A program that asks a server of its own choosing (a hard-coded 8.8.8.8) is said so: a
/// trial's `dig @server` and `dig` read alike, and the sentence said tv had asked the resolver.
public enum DNSQueryPresentation {
    /// The question's record type ("A", "AAAA", "TYPE65280"); nil when the row has none.
    public static func questionType(_ f: FlowRecord) -> String? {
        f.dnsQuestionType.map { DNSRecordTypeNames.name(UInt16(clamping: $0)) }
    }

    /// The sentence after "resolver" on `tv flow`: whom the program asked, and whom tv asked;
    /// nil for a flow that is no DNS query.
    public static func resolver(_ f: FlowRecord) -> String? {
        guard f.hostOrigin == .dnsQuestion || f.dnsServerAsked != nil else { return nil }
        let server = TerminalText.line(f.serverAddress)
        let asked = f.dnsAskedAddress.map(TerminalText.line) ?? server
        switch f.dnsServerAsked {
        case .tunnelAddress? where f.serverAddress == f.dnsAskedAddress:
            // Over TCP the row's server is the address the program connected to (tv's own); tv
            // passed the connection on to this host's resolver.
            return "the program asked tv's DNS address in the tunnel (\(asked)), the system resolver under tv exec; "
                + "tv passed the connection on to this host's resolver"
        case .tunnelAddress?:
            return "the program asked tv's DNS address in the tunnel (\(asked)), the system resolver under tv exec; "
                + "tv asked this host's resolver, the server above"
        case .tunnelAddressNoResolver?:
            return "the program asked tv's DNS address in the tunnel (\(asked)); this host's resolv.conf names no resolver, "
                + "so tv answered the query itself (SERVFAIL) and asked none"
        case .systemResolver?:
            return "the program asked \(asked) itself, the resolver this host's resolv.conf names"
        case .direct?:
            return "the program asked \(asked) directly, not the system resolver"
        case nil:
            // A row written before the server asked was kept: as it was said then.
            return "the server above is the resolver tv asked: under tv exec the program asked tv's DNS address "
                + "in the tunnel (its packets show that address) and tv asked this host's resolver; under --mode tun, "
                + "the one the program addressed"
        }
    }

    /// What the flow list adds to a DNS query's PROTO PORT cell: its type, and "direct" for a
    /// server the program chose itself (`udp :53 A · direct`).
    static func cell(_ f: FlowRecord) -> String? {
        guard f.hostOrigin == .dnsQuestion || f.dnsServerAsked != nil else { return nil }
        var words: [String] = []
        if let type = questionType(f) { words.append(type) }
        if f.dnsServerAsked == .direct { words.append("· direct") }
        return words.isEmpty ? nil : words.joined(separator: " ")
    }
}
