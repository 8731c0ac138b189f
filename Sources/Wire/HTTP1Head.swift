/// One parsed HTTP/1 head (RFC 9112 §2.1): the start line, the field lines in order, and how many
/// bytes of the stream it took. Produced by `HTTP1HeadParser` for requests and responses alike;
/// `HTTPRequestHead` adds what the proxy needs to know of a request.
public struct HTTP1Head: Sendable, Hashable {
    /// A request line (RFC 9112 §3) or a status line (RFC 9112 §4).
    public enum StartLine: Sendable, Hashable {
        /// `method SP request-target SP HTTP-version`; the target exactly as sent (UTF-8 decoded).
        case request(method: String, target: String, version: HTTPVersion)
        /// `HTTP-version SP status-code [SP reason-phrase]`; the code is 100...999, the reason is
        /// nil when the line ends after the code, else UTF-8 decoded when it is UTF-8 and one
        /// ISO-8859-1 character a byte when it is not.
        case status(version: HTTPVersion, code: Int, reason: String?)
    }

    /// The start line.
    public var startLine: StartLine
    /// The field lines in the order sent, duplicates kept (obs-fold unfolded when lenient).
    public var headers: [HTTPHeaderField]
    /// Bytes of the stream the head occupies: empty lines skipped before the start line, the
    /// start line, the field lines and the final empty line. The body starts at this offset.
    public var byteCount: Int

    /// Memberwise initialiser, for tests and for building values by hand.
    public init(startLine: StartLine, headers: [HTTPHeaderField], byteCount: Int) {
        self.startLine = startLine
        self.headers = headers
        self.byteCount = byteCount
    }

    /// The HTTP version of the start line.
    public var version: HTTPVersion {
        switch startLine {
        case .request(_, _, let version), .status(let version, _, _): version
        }
    }

    /// The request method, for a request head.
    public var method: String? {
        if case .request(let method, _, _) = startLine { return method }
        return nil
    }

    /// The status code, for a response head.
    public var status: Int? {
        if case .status(_, let code, _) = startLine { return code }
        return nil
    }

    /// The start line as it was sent, e.g. "GET / HTTP/1.1" or "HTTP/1.1 200 OK" (the parser
    /// accepts single spaces only, so this is the line's text).
    public var startLineText: String {
        switch startLine {
        case let .request(method, target, version): "\(method) \(target) \(version)"
        case let .status(version, code, reason?): "\(version) \(code) \(reason)"
        case let .status(version, code, nil): "\(version) \(code)"
        }
    }

    /// The value of the first header named `name` (ASCII case-insensitive), or nil.
    public func value(forHeader name: String) -> String? {
        headers.first { $0.hasName(name) }?.value
    }

    /// The values of every header named `name` (ASCII case-insensitive), in order.
    public func values(forHeader name: String) -> [String] {
        headers.filter { $0.hasName(name) }.map(\.value)
    }

    /// The Connection header's options, lowercased, in order (RFC 9110 §7.6.1), e.g. ["close"].
    public var connectionOptions: [String] {
        HTTPToken.lowercasedList(values(forHeader: "Connection"))
    }

    /// Whether the sender keeps the connection open after this message (RFC 9112 §9.3): not if
    /// Connection has "close"; for HTTP/1.1 otherwise yes; for HTTP/1.0 only with "keep-alive".
    public var keepsAlive: Bool {
        HTTPToken.keepsAlive(version: version, connectionOptions: connectionOptions)
    }
}
