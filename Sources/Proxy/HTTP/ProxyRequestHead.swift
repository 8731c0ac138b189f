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
    ///
    /// Field values go on as the bytes the client sent (`HTTPHeaderField.latin1Bytes`): written
    /// back as UTF-8 text, a byte 0xE9 reached the server as 0xC3 0xA9 (a trial).
    func originFormBytes(_ originForm: String, target: HostPort?) -> [UInt8] {
        var bytes = Array("\(method) \(originForm) \(version)\r\n".utf8)
        var sawHost = false
        let hopByHop = connectionOptions.isEmpty ? [] : Set(connectionOptions).subtracting(Self.framingAndRouting)
        let generated = target.map { Array("Host: \($0.port == 80 ? ($0.isIPv6 ? "[\($0.host)]" : $0.host) : $0.description)\r\n".utf8) }
        for field in headers {
            let name = field.name.lowercased()
            if name.hasPrefix("proxy-") || hopByHop.contains(name) { continue }
            if name == "host" {
                if sawHost { continue }   // not reached: the parser refuses a second Host
                sawHost = true
                if let generated { bytes += generated } else { Self.append(field, to: &bytes) }
                continue
            }
            Self.append(field, to: &bytes)
        }
        if !sawHost, let generated { bytes += generated }
        bytes += [0x0D, 0x0A]
        return bytes
    }

    /// `name: value\r\n`, the value's own bytes.
    private static func append(_ field: HTTPHeaderField, to bytes: inout [UInt8]) {
        bytes += field.name.utf8
        bytes += [UInt8(ascii: ":"), UInt8(ascii: " ")]
        bytes += field.latin1Bytes
        bytes += [0x0D, 0x0A]
    }

    /// The fields a Connection header may not take away (`originFormBytes`).
    static let framingAndRouting: Set<String> = ["content-length", "transfer-encoding", "host", "upgrade", "connection"]

    /// The head as the client sent it, in equivalent text (to be parsed again later).
    var equivalentBytes: [UInt8] {
        var bytes = Array("\(method) \(target) \(version)\r\n".utf8)
        for field in headers { Self.append(field, to: &bytes) }
        bytes += [0x0D, 0x0A]
        return bytes
    }
}
