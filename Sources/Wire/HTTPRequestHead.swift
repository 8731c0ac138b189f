/// A parsed HTTP/1 request head: request line and header section, up to and including the empty
/// line (RFC 9112 §2.1, §3, §5), read for forwarding. Produced by `HTTPRequestHeadParser` from an
/// `HTTP1Head`.
public struct HTTPRequestHead: Sendable, Hashable {
    /// The method token as sent, case-sensitive (RFC 9110 §9.1), e.g. "CONNECT", "GET".
    public var method: String
    /// The request-target exactly as sent, e.g. "a.test:443" or "http://a.test/x?q".
    public var target: String
    /// The request-target classified by form, with host and port for CONNECT and absolute-form.
    public var requestTarget: HTTPRequestTarget
    /// HTTP/1.0 or HTTP/1.1.
    public var version: HTTPVersion
    /// The header field lines in the order sent, duplicates kept.
    public var headers: [HTTPHeaderField]
    /// Bytes of the stream the head occupies: any empty lines ignored before the request line,
    /// the request line, the field lines and the final empty line. The body (or tunnelled bytes)
    /// starts at this offset.
    public var byteCount: Int
    /// How the request body is delimited (RFC 9112 §6.3).
    public var bodyFraming: HTTPBodyFraming
    /// The Connection header's options, lowercased, in order (RFC 9110 §7.6.1), e.g. ["close"].
    public var connectionOptions: [String]

    /// Memberwise initialiser, for tests and for building values by hand.
    public init(
        method: String, target: String, requestTarget: HTTPRequestTarget, version: HTTPVersion,
        headers: [HTTPHeaderField], byteCount: Int, bodyFraming: HTTPBodyFraming, connectionOptions: [String]
    ) {
        self.method = method
        self.target = target
        self.requestTarget = requestTarget
        self.version = version
        self.headers = headers
        self.byteCount = byteCount
        self.bodyFraming = bodyFraming
        self.connectionOptions = connectionOptions
    }

    /// Whether this is a CONNECT request (the target is then `.authority`).
    public var isConnect: Bool { method == "CONNECT" }

    /// The host and port to connect to, for CONNECT (authority-form) and absolute-form targets;
    /// nil for origin-form and `*`.
    public var destination: HostPort? {
        switch requestTarget {
        case .authority(let hostPort): hostPort
        case .absolute(_, let hostPort, _): hostPort
        case .origin, .asterisk: nil
        }
    }

    /// The Content-Length in bytes, when the body is framed by it.
    public var contentLength: Int? {
        if case .contentLength(let length) = bodyFraming { return length }
        return nil
    }

    /// Whether the body uses the chunked transfer coding.
    public var isChunked: Bool { bodyFraming == .chunked }

    /// Whether the client expects the connection to stay open after this exchange
    /// (RFC 9112 §9.3): not if Connection has "close"; for HTTP/1.1 otherwise yes; for HTTP/1.0
    /// only with "keep-alive". The non-standard Proxy-Connection header is not consulted.
    public var keepsAlive: Bool {
        HTTPToken.keepsAlive(version: version, connectionOptions: connectionOptions)
    }

    /// The value of the first header named `name` (ASCII case-insensitive), or nil.
    public func value(forHeader name: String) -> String? {
        headers.first { $0.hasName(name) }?.value
    }

    /// The values of every header named `name` (ASCII case-insensitive), in order.
    public func values(forHeader name: String) -> [String] {
        headers.filter { $0.hasName(name) }.map(\.value)
    }
}
