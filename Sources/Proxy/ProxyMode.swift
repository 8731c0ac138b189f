import TVHome

/// How clients reach the proxy and how their destination is learnt.
public enum ProxyMode: Sendable, Hashable, CustomStringConvertible {
    /// Explicit HTTP proxy: `CONNECT host:port` and absolute-form plain HTTP requests.
    case regular
    /// SOCKS5 CONNECT without authentication (RFC 1928).
    case socks5
    /// Every client connection goes to one server; `tls` says whether it speaks TLS.
    case reverse(tls: Bool, host: String, port: UInt16)
    /// Connections redirected to the listener by the user's own nftables/iptables `REDIRECT`
    /// rule; the destination is read with `SO_ORIGINAL_DST` / `IP6T_SO_ORIGINAL_DST`.
    case transparent
    /// The whole host through a TUN device (the Tunnel module); the engine does not listen.
    case tun

    /// Parses mitmproxy's spelling: `regular`, `socks5`, `transparent`, `tun`,
    /// `reverse:https://HOST[:PORT]`, `reverse:http://HOST[:PORT]` (ports default to 443 / 80;
    /// IPv6 hosts in brackets).
    /// - Throws: `ProxyError.invalidMode`.
    public static func parse(_ text: String) throws -> ProxyMode {
        switch text {
        case "regular", "": return .regular
        case "socks5": return .socks5
        case "transparent": return .transparent
        case "tun": return .tun
        default: break
        }
        guard text.hasPrefix("reverse:") else {
            let near = Spelling.closest(to: text, among: ["regular", "socks5", "transparent", "tun"])
            throw ProxyError.invalidMode(text, reason: near.map { "did you mean '\($0)'?" } ?? "")
        }
        var rest = Substring(text.dropFirst("reverse:".count))
        let tls: Bool
        if rest.hasPrefix("https://") { tls = true; rest = rest.dropFirst(8) }
        else if rest.hasPrefix("http://") { tls = false; rest = rest.dropFirst(7) }
        else { throw ProxyError.invalidMode(text, reason: "the reverse target must start with https:// or http://") }
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...].allSatisfy({ $0 == "/" }) else {
                throw ProxyError.invalidMode(text, reason: "the reverse target cannot have a path")
            }
            rest = rest[..<slash]
        }
        guard let (host, port) = splitHostPort(String(rest), defaultPort: tls ? 443 : 80), !host.isEmpty else {
            throw ProxyError.invalidMode(text, reason: "the reverse target needs a host and an optional port 1-65535")
        }
        return .reverse(tls: tls, host: host, port: port)
    }

    public var description: String {
        switch self {
        case .regular: return "regular"
        case .socks5: return "socks5"
        case .transparent: return "transparent"
        case .tun: return "tun"
        case let .reverse(tls, host, port):
            return "reverse:\(tls ? "https" : "http")://\(Endpoint(address: host, port: port))"
        }
    }
}

/// Splits `host[:port]` / `[v6][:port]`; nil when the port is not 1-65535.
public func splitHostPort(_ text: String, defaultPort: UInt16?) -> (String, UInt16)? {
    var host = text
    var portText: String?
    if text.hasPrefix("[") {
        guard let close = text.firstIndex(of: "]") else { return nil }
        host = String(text[text.index(after: text.startIndex)..<close])
        let after = text[text.index(after: close)...]
        if after.hasPrefix(":") { portText = String(after.dropFirst()) } else if !after.isEmpty { return nil }
    } else if let colon = text.lastIndex(of: ":") {
        if text.firstIndex(of: ":") != colon { return defaultPort.map { (text, $0) } } // bare IPv6
        host = String(text[..<colon])
        portText = String(text[text.index(after: colon)...])
    }
    if let portText {
        guard let p = UInt16(portText), p > 0 else { return nil }
        return (host, p)
    }
    guard let defaultPort else { return nil }
    return (host, defaultPort)
}
