import Wire

/// An absolute-form request head (RFC 9112 §3.2.2) as a forward proxy passes it on.
extension HTTPRequestHead {
    /// The head as the origin server gets it: the target in origin-form, the Proxy-* fields
    /// (Proxy-Connection, Proxy-Authorization…) dropped, a Host field added from `target` when
    /// the client sent none (RFC 9112 §3.2: the port only when it is not 80). A Host field with
    /// bytes beyond ASCII (a raw international name) is replaced by `target`'s, whose host is
    /// the A-label form (RFC 9112 §3.2.2 lets a proxy replace Host from an absolute-form target).
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
        for field in headers {
            let name = field.name.lowercased()
            if name.hasPrefix("proxy-") || hopByHop.contains(name) { continue }
            if name == "host" {
                if target != nil && IDNA.isInternational(field.value) { continue }
                sawHost = true
            }
            text += "\(field.name): \(field.value)\r\n"
        }
        if !sawHost, let target { text += "Host: \(target.port == 80 ? (target.isIPv6 ? "[\(target.host)]" : target.host) : target.description)\r\n" }
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
