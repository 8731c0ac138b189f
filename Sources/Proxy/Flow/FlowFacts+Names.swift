import Wire
import FlowTerms

/// Names a flow did not announce on its own leg: inferred from DNS answers, or read from a QUIC
/// client's Initial packets (the TUN front-end, issue 18).
extension FlowFacts {
    /// Names a flow that has no name yet after the live names DNS answers gave its server
    /// address (`HostOrigin.dns`): the first becomes `host`, the rest `otherHosts`. A flow that
    /// already has a name (announced) keeps it; empty `names` change nothing.
    /// - Returns: whether the flow was named.
    @discardableResult
    public mutating func nameFromDNS(_ names: [String]) -> Bool {
        guard host == nil, let first = names.first else { return false }
        host = first
        hostOrigin = .dns
        otherHosts = Array(names.dropFirst())
        otherHostsOrigin = .lookups
        return true
    }

    /// The connection announced `announced` (SNI, QUIC, its request's Host) after it was named
    /// from DNS: the names lookups gave its address stay its other names (so `--host` finds it by
    /// them), and whether the announced name is among them is kept (`OtherHostsOrigin`): a
    /// connection to an address looked up as one name that announces another is said so by
    /// `tv flow` (a trial's lookup of alias-a.test followed by a Host and SNI of
    /// www.bank.example kept no trace of the lookup). A flow not named from DNS keeps what it has.
    mutating func keepLookedUpNames(announced: String) {
        guard hostOrigin == .dns, let inferred = host else { return }
        let lookedUp = [inferred] + otherHosts
        otherHosts = lookedUp.filter { $0 != announced }
        otherHostsOrigin = lookedUp.contains(announced) ? .lookups : .lookupsNotAnnounced
    }

    /// Names a flow that reached tv without a name after its request's authority (`Host` header
    /// or absolute-form target, RFC 9110 §7.2; `HostOrigin.httpHost`): a flow with no name, or
    /// one inferred from DNS, takes the authority's host (lowercased, no port, no trailing dot,
    /// A-labels); an announced name stays. An address, or text that is no host, names nothing.
    /// - Returns: whether the flow was named.
    @discardableResult
    public mutating func nameFromRequest(authority: String) -> Bool {
        guard host == nil || hostOrigin == .dns else { return false }
        guard let parsed = try? HostPort.parse(authority: authority, defaultPort: port == 0 ? 80 : port),
              let ascii = try? IDNA.asciiHost(parsed.host) else { return false }
        guard let name = OriginalDestination(host: ascii, port: parsed.port, origin: .connect).hostName else { return false }
        keepLookedUpNames(announced: name)
        host = name
        hostOrigin = .httpHost
        return true
    }

    /// The ClientHello read from the flow's QUIC Initial packets (RFC 9001 §4): what it offers,
    /// and its server_name as the host (`HostOrigin.quic`), which replaces a name inferred from
    /// DNS. The flow is encrypted (QUIC is, and tv passes it through).
    public mutating func noteQUIC(_ hello: ClientHello) {
        note(hello)
        status = .encrypted
        if hostOrigin == .sni { hostOrigin = .quic }
    }

    /// A DNS-over-TCP connection's first query names its flow after its question, as a UDP
    /// query's names its own (`HostOrigin.dnsQuestion`, with the QTYPE): the query row said "no
    /// name was seen" (a trial's `dig +tcp`). Later questions on the connection leave it.
    /// - Returns: whether the facts changed.
    mutating func noteDNSQuestion(_ question: DNSQuestionEntry) -> Bool {
        guard dnsQuestionType == nil, !question.name.isEmpty else { return false }
        host = question.name
        hostOrigin = .dnsQuestion
        otherHosts = []
        otherHostsOrigin = nil
        dnsQuestionType = question.type
        return true
    }
}
