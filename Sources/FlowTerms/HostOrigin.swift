/// Where a flow's host name came from. Stored in the flow database as the raw value.
public enum HostOrigin: String, Sendable, Hashable, CaseIterable {
    /// The client's TLS ClientHello `server_name` (RFC 6066 §3).
    case sni
    /// The explicit proxy request: the `CONNECT host:port` target or an absolute-form URL's host.
    case connect
    /// The SOCKS5 CONNECT request (RFC 1928 §4), a domain name or an address.
    case socks
    /// The fixed server of `--mode reverse:…`.
    case reverse
    /// DNS: a DNS answer seen earlier for the server address, or for a DNS query flow the name it
    /// asked about (the TUN front-end).
    case dns
    /// No name is known: the flow is shown by its destination address.
    case none
}
