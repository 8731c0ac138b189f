import LocalCA
import TVHome
#if canImport(Glibc)
import Glibc
#endif
import Wire

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
        guard !rest.isEmpty, !rest.hasPrefix(":") else {
            throw ProxyError.invalidMode(text, reason: "the reverse target needs a host and an optional port 1-65535")
        }
        // A URI authority's rules (RFC 3986 §3.2.2): a name, an IPv4 address or a bracketed IPv6
        // one, then one port. Userinfo, spaces and extra colons were taken as a host name to
        // resolve, and every request then failed with 502 (a trial).
        if rest.contains("@") {
            throw ProxyError.invalidMode(text, reason: "the reverse target cannot carry a user name or password; tv sends the client's own credentials")
        }
        var target: HostPort
        do { target = try HostPort.parse(authority: String(rest), defaultPort: tls ? 443 : 80, what: "the reverse target") } catch {
            throw ProxyError.invalidMode(text, reason: String(error.reason.dropLast()))
        }
        // An international name is dialled, named and verified in its A-label form.
        if IDNA.isInternational(target.host) {
            do { target.host = try IDNA.asciiHost(target.host) } catch {
                throw ProxyError.invalidMode(text, reason: "'\(TerminalText.line(target.host))' is not a valid international domain name (IDNA: \(error.reason))")
            }
        }
        return .reverse(tls: tls, host: target.host, port: target.port)
    }

    /// Whether a reverse target is the proxy's own listener on `host`:`port` (tv would relay each
    /// request to itself until a limit stopped it: a trial's one request made 1,023 flows): the
    /// same port, and the same address in any spelling (`127.1`, `2130706433`, `::ffff:127.0.0.1`
    /// and `localhost.` were let through: a re-check), `localhost` beside a loopback address, a
    /// loopback target while listening on every address, or the unspecified address (which
    /// reaches this host) while listening on loopback or everywhere. Names other than
    /// `localhost` are not resolved.
    public func reverseTargetIsListener(host listenHost: String, port listenPort: UInt16) -> Bool {
        guard case let .reverse(_, host, port) = self, port == listenPort else { return false }
        let target = Self.canonicalHost(host), listen = Self.canonicalHost(listenHost)
        let unspecified = { (text: String) in text == "0.0.0.0" || text == "::" }
        let loopback = { (text: String) in text == "localhost" || text.hasPrefix("127.") || text == "::1" }
        if target == listen { return true }
        if unspecified(listen) { return loopback(target) || unspecified(target) }
        if unspecified(target) { return loopback(listen) }
        // localhost resolves to 127.0.0.1 and ::1.
        if target == "localhost" { return listen == "127.0.0.1" || listen == "::1" }
        if listen == "localhost" { return target == "127.0.0.1" || target == "::1" }
        return false
    }

    /// One spelling per address: lowercase without a trailing dot, `localhost` for it and its
    /// subdomains (RFC 6761 §6.3), an address as `IPAddress` writes it (a v4-mapped one as its
    /// IPv4), IPv4 also from inet_aton's older forms (`127.1`, `0x7f000001`, `2130706433`).
    static func canonicalHost(_ host: String) -> String {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" || name.hasSuffix(".localhost") { return "localhost" }
        var v4 = in_addr()
        if inet_aton(name, &v4) != 0, let ip = IPAddress(bytes: withUnsafeBytes(of: &v4) { Array($0) }) { return ip.description }
        return IPAddress(name)?.unmapped.description ?? name
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
