/// Where a flow's host name came from. Stored in the flow database as the raw value.
///
/// Announced names (`sni`, `quic`, `connect`, `socks`, `reverse`, `http_host`) are the connection's own;
/// `dns` is a name of the address the connection went to, inferred from a lookup, and yields to
/// any announced one.
public enum HostOrigin: String, Sendable, Hashable, CaseIterable {
    /// The client's TLS ClientHello `server_name` (RFC 6066 §3).
    case sni
    /// The `server_name` of the ClientHello read from the connection's QUIC Initial packets
    /// (RFC 9001 §5.2, §4): announced, like `sni`, over UDP.
    case quic
    /// The explicit proxy request: the `CONNECT host:port` target or an absolute-form URL's host.
    case connect
    /// The SOCKS5 CONNECT request (RFC 1928 §4), a domain name or an address.
    case socks
    /// The fixed server of `--mode reverse:…`.
    case reverse
    /// The first request's `Host` header (RFC 9110 §7.2) or absolute-form authority, on a
    /// connection that reached tv without a name: plain HTTP in `--mode transparent`, `--mode
    /// tun` and `tv exec`, or inspected TLS whose ClientHello carried no SNI. Announced, like
    /// `sni`: it replaces a name inferred from DNS.
    case httpHost = "http_host"
    /// Inferred from DNS: the connection announced no name, and a live DNS answer the tunnel
    /// carried gave this name for the server address (the TUN front-end only: the proxy modes
    /// see no DNS).
    case dns
    /// A DNS query flow: the name its question asked about (RFC 1035 §4.1.2).
    case dnsQuestion = "dns_question"
    /// No name is known: the flow is shown by its destination address.
    case none
}
