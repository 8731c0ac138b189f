import FlowStore
import FlowTerms
import TVHome
import Wire

/// Where a request was sent, when that is not where its URL says. A request row's URL is the
/// request's target URI (RFC 9110 §7.1): its host and port come from the request's own `Host`
/// or `:authority`, which a client may set to anything. The connection it travelled on went
/// where the client told the proxy (a `CONNECT` or SOCKS target, reverse mode's server) or, in
/// the TUN and transparent modes, to the address it dialled. Both are facts an auditor needs:
/// a `Host: b.example` sent inside `CONNECT a.example:443` reached a.example's server, and a
/// curl with `--connect-to` (or a test pointing a name at a local port) reached a port its URL
/// does not name. `tv request --curl` repeats the request there (`curlConnectTo`); `tv request`
/// says it (`sentence`). Pure.
public struct RequestDestination: Sendable, Equatable {
    /// The URL's host (IPv6 without brackets, as written) and port (the scheme's default when
    /// it names none: 443 for https, 80 for http).
    public let url: HostPort
    /// Where the connection went: the name the client gave the proxy (CONNECT, SOCKS5,
    /// reverse mode's target) when it gave one, else the server's address; and the server's port.
    public let connection: HostPort

    /// The destination of `exchange` on `flow`, nil when its URL names the connection's server
    /// (the flow's name or its address, at the flow's port; names compared in their A-label
    /// form, without case or a trailing dot), when the exchange is a CONNECT request (its URL
    /// is the tunnel it asked for), or when either side is unknown (no authority, no server
    /// port, an authority that does not parse).
    public static func differing(_ exchange: ExchangeRecord, on flow: FlowRecord) -> RequestDestination? {
        guard !exchange.connect, let authority = exchange.authority, (1 ... 65_535).contains(flow.serverPort) else { return nil }
        let defaultPort: UInt16 = exchange.scheme == "https" ? 443 : 80
        guard let url = try? HostPort.parse(authority: authority, defaultPort: defaultPort) else { return nil }
        let port = UInt16(flow.serverPort)
        let urlHost = comparable(url.host)
        // A flow named by its request's own Host (`httpHost`: a CONNECT to an address, plain
        // HTTP through the TUN) is compared by address: its name is the claim being checked (a
        // re-check's Host: b.test inside CONNECT 127.0.0.1 went unflagged).
        let name = flow.hostOrigin == .httpHost ? nil : flow.host.map(comparable)
        if url.port == port, urlHost == comparable(flow.serverAddress) || name == urlHost { return nil }
        let named: Set<HostOrigin> = [.connect, .socks, .reverse]
        let host = named.contains(flow.hostOrigin) ? flow.host ?? flow.serverAddress : flow.serverAddress
        guard !host.isEmpty else { return nil }
        return RequestDestination(url: url, connection: HostPort(host: host, port: port))
    }

    /// curl's `--connect-to` value, `HOST1:PORT1:HOST2:PORT2` with IPv6 addresses in brackets
    /// (curl's CURLOPT_CONNECT_TO): the URL's host and port, then the connection's.
    public var curlConnectTo: String { "\(url.description):\(connection.description)" }

    /// What `tv request` says under the title, one line.
    public var sentence: String {
        "  sent to \(TerminalText.line(connection.description)), not the \(TerminalText.line(url.description)) its URL names (the URL's host is the request's own Host or :authority, RFC 9110 §7.2)"
    }

    /// A host as compared: A-label form (a name that does not convert is compared as written),
    /// lowercased, without a trailing dot.
    static func comparable(_ host: String) -> String {
        var text = ((try? IDNA.asciiHost(host)) ?? host).lowercased()
        if text.hasSuffix("."), text.count > 1 { text.removeLast() }
        return text
    }
}
