import Wire

/// An absolute-form request head (RFC 9112 §3.2.2) as a forward proxy passes it on.
extension HTTPRequestHead {
    /// The head as the origin server gets it: the target in origin-form, the Proxy-* fields
    /// (Proxy-Connection, Proxy-Authorization…) dropped, and the Host field made from `target`
    /// (RFC 9112 §3.2: the port only when it is not 80; an international name in its A-label
    /// form), in the place of the client's Host field (the parser refuses two) or added at the
    /// end without one. RFC 9112 §3.2.2: a proxy MUST ignore the received Host of an
    /// absolute-form request and generate it from the target (a trial's `Host: evil.example`
    /// reached the server at 127.0.0.1 and named the request row).
    ///
    /// Fields the client's Connection header names are hop-by-hop (RFC 9110 §7.6.1: a proxy
    /// removes them before forwarding; a trial's `Connection: X-Hop` reached the server), but for
    /// `HTTPRequestHead.framingAndRouting`: naming Content-Length, Transfer-Encoding or Host there
    /// would have tv read the body one way and the server another (request smuggling), and
    /// Upgrade goes on for the protocol switch tv relays.
    func originFormBytes(_ originForm: String, target: HostPort?) -> [UInt8] {
        var text = "\(method) \(originForm) \(version)\r\n"
        var sawHost = false
        let hopByHop = connectionOptions.isEmpty ? [] : Set(connectionOptions).subtracting(Self.framingAndRouting)
        let generated = target.map { "Host: \($0.port == 80 ? ($0.isIPv6 ? "[\($0.host)]" : $0.host) : $0.description)\r\n" }
        for field in headers {
            let name = field.name.lowercased()
            if name.hasPrefix("proxy-") || hopByHop.contains(name) { continue }
            if name == "host" {
                if sawHost { continue }   // not reached: the parser refuses a second Host
                sawHost = true
                text += generated ?? "\(field.name): \(field.value)\r\n"
                continue
            }
            text += "\(field.name): \(field.value)\r\n"
        }
        if !sawHost, let generated { text += generated }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// The fields a Connection header may not take away (`originFormBytes`).
    static let framingAndRouting: Set<String> = ["content-length", "transfer-encoding", "host", "upgrade", "connection"]

    /// The head as the client sent it, in equivalent text (to be parsed again later).
    var equivalentBytes: [UInt8] {
        var text = "\(method) \(target) \(version)\r\n"
        for field in headers { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }
}
