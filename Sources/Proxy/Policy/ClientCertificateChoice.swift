/// Which of the user's client certificates (`tv run --client-cert HOST_PATTERN=FILE`, and the
/// `tls.clientCerts` setting) answers a server that asks for one.
///
/// Pure: the patterns in the order given (the command line's first, then the setting's) and the
/// server's name and port in; the index of the first pattern that matches out (`HostPattern`'s
/// rule: searched in `host:port` and in `host`, case-insensitively), or nil when none does and
/// the server gets an empty Certificate message (RFC 8446 §4.4.2, RFC 5246 §7.4.6).
enum ClientCertificateChoice {
    /// - Parameters:
    ///   - host: the name the server's certificate is checked against (the SNI, else the
    ///     destination's name or address; in reverse mode the target's).
    ///   - port: the server's port.
    ///   - patterns: one per certificate, in order.
    /// - Returns: the index into `patterns` of the certificate to present, or nil for none.
    static func select(host: String, port: UInt16, patterns: [HostPattern]) -> Int? {
        patterns.firstIndex { $0.matches(host: host, port: port) }
    }
}
