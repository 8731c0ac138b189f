import FlowStore
import FlowTerms
import TVHome

/// Who a flow was, and how that is known (the seed's Flow Inspector): the origin of its name in
/// words, and the caveats under `tv flow`'s header: the other names an inferred name's address
/// had, and an ECH connection's outer name. Names and addresses are escaped (`TerminalText`).
public enum FlowNamePresentation {
    /// The bracket after the name on `tv flow`'s `name` line.
    public static func origin(_ f: FlowRecord) -> String {
        switch f.hostOrigin {
        case .sni: return "from the TLS ClientHello (SNI)"
        case .quic: return "from QUIC: the ClientHello (SNI) in its Initial packets"
        // The explicit proxy's request: a CONNECT target, or a plain request's absolute URL (a
        // trial's plain `curl -x` flow read "CONNECT request"; the row does not say which).
        case .connect: return "from the proxy request (its CONNECT target or its URL)"
        case .socks: return "from the SOCKS5 request"
        case .reverse: return "the reverse-proxy target"
        case .httpHost: return "from the request's Host header: the connection reached tv with no name of its own"
        case .dns: return "inferred from DNS: a lookup gave this name for \(TerminalText.line(f.serverAddress)); the connection announced none"
        case .dnsQuestion:
            // With its QTYPE where the row has it (UDP and TCP queries alike).
            return DNSQueryPresentation.questionType(f).map { "the name this DNS query asked about, for its \($0) records" }
                ?? "the name this DNS query asked about"
        case .none:
            // Only the tunnel carries DNS; an unnamed TCP flow may have come through a proxy mode,
            // and the row does not say which front end it came through (a trial read the old
            // "(a proxy mode sees no DNS)" under a `tv exec` flow as being about that flow).
            return f.transport == .udp
                ? "no name was seen; this is the address: the connection announced none and no live DNS answer named it"
                : "no name was seen; this is the address: the connection announced none, and no live DNS answer named it (only tv exec and --mode tun see DNS; the proxy modes see none)"
        }
    }

    /// Lines under the header: the address's other live names (an inferred name only), and the
    /// outer name of an ECH ClientHello. Empty for most flows.
    public static func notes(_ f: FlowRecord) -> [String] {
        var out: [String] = []
        let names = f.otherHosts.map(TerminalText.line).joined(separator: ", ")
        let address = TerminalText.line(f.serverAddress)
        // Where the other names came from: the row says (`OtherHostsOrigin`); a row written
        // before it did is read by its name's origin, as then.
        let origin = f.otherHostsOrigin ?? (f.hostOrigin == .dns ? .lookups : f.hostOrigin == .sni || f.hostOrigin == .quic ? .proxyRequest : nil)
        switch origin {
        case .lookups? where f.hostOrigin == .dns && !f.otherHosts.isEmpty:
            out.append("  other names  \(address) also had the live name\(f.otherHosts.count == 1 ? "" : "s") \(names): "
                       + "the connection could belong to any of them")
        case .lookups? where !f.otherHosts.isEmpty:
            out.append("  other names  \(address) was also looked up as \(names)")
        case .lookupsNotAnnounced?:
            // A fact, not a verdict: a CDN's address is looked up under many names (a trial's
            // lookup of one name and a Host and SNI of another kept no trace of the lookup).
            out.append("  looked up    \(address) was looked up as \(names); the connection announced "
                       + "\(TerminalText.line(f.host ?? "")) (an address many names share, as a CDN's is, does this too)")
        case .proxyRequest?:
            if let asked = f.otherHosts.first {
                // A proxy request for one host whose TLS named another (`FlowFacts.note(_: ClientHello)`).
                out.append("  asked for    the proxy request named \(TerminalText.line(asked)), the ClientHello another: "
                           + "the server reached was the request's, the name is the one the TLS asked for (domain fronting looks so)")
            }
        default:
            break
        }
        if let resolver = DNSQueryPresentation.resolver(f) {
            // Rendered from the server the program asked (`DNSServerAsked`): tv's DNS address (tv
            // asked this host's resolver, the server the row names), the system resolver, or one
            // of its own choosing.
            out.append("  resolver     " + resolver)
        }
        if echMayHideName(f) {
            out.append("  ECH          the ClientHello carried encrypted_client_hello: this is the outer (public) name, and the name the client "
                       + "wanted may be encrypted inside (unless the extension was GREASE, which browsers send with the real name outside)")
        }
        return out
    }

    /// Whether the name the client wanted may be encrypted inside the ClientHello (ECH,
    /// draft-ietf-tls-esni): it carried encrypted_client_hello, and tv did not both answer it with
    /// its own leaf and carry data the client sent after. tv holds no ECH key, so it answers the
    /// outer hello; a client whose ECH offer is so refused checks the certificate against the
    /// outer (public) name and ends with an ech_required alert ("Authenticating for the Public
    /// Name"), never sending a request. An inspected flow the client sent data on was therefore
    /// not using ECH: its extension was GREASE (every Chromium flow carries one, and a trial read
    /// the note under each). Said where it can be true: a flow tv did not inspect, or an
    /// inspected one that carried nothing from the client.
    public static func echMayHideName(_ f: FlowRecord) -> Bool {
        f.hostIsECHPublicName && !(f.status == .inspected && f.bytesUp > 0)
    }

    /// `tv flows`' PROTO PORT cell: a row named from DNS adds the address after the service
    /// (`tcp :80 · 203.0.113.100`), since its name is the address's, not the connection's own.
    public static func service(_ f: FlowRecord) -> String {
        let service = FlowListPresentation.protocolAndPort(f)
        if let dns = DNSQueryPresentation.cell(f) { return service + " " + dns }
        guard f.hostOrigin == .dns, !f.serverAddress.isEmpty else { return service }
        return service + " · " + TerminalText.line(f.serverAddress)
    }
}
