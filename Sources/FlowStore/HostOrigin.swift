/// Where a flow's host name came from. Stored as the raw value.
public enum HostOrigin: String, Sendable, Equatable, CaseIterable {
    /// The TLS ClientHello's server_name extension.
    case sni
    /// The HTTP CONNECT request line.
    case connect
    /// The SOCKS5 request's domain name.
    case socks
    /// The reverse proxy's configured upstream.
    case reverse
    /// A DNS answer seen earlier for the server address.
    case dns
    /// No name is known; the flow is shown by address.
    case none
}
