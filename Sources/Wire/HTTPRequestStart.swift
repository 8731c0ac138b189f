/// What a client's first bytes begin, read from as few bytes as tell: an HTTP/1 request line
/// (RFC 9112 §3: `method SP request-target SP HTTP-version`), HTTP/2's connection preface (RFC
/// 9113 §3.4), or something else. Pure and bounded: a line still well formed after `lineLimit`
/// bytes is taken for HTTP/1 (a long target).
///
/// tv reads it where a client's ClientHello offered no ALPN, so its protocol is known only from
/// what it says: such a client of a server tv could not reach gets tv's 502 when it speaks HTTP,
/// and no HTTP text when it speaks anything else (`openssl s_client` sending `PING`, an SMTP
/// client's `EHLO host`).
public enum HTTPRequestStart: Equatable, Sendable {
    case http1
    case http2Preface
    case notHTTP
    /// The bytes so far begin both an HTTP request and something else: read more.
    case undecided

    /// The most bytes read before a well-formed start is taken for HTTP/1.
    public static let lineLimit = 8192
    /// The longest method taken (the longest registered, `UPDATEREDIRECTREF`, has 17 bytes).
    static let methodLimit = 24

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    static let versionStart = Array("HTTP/1.".utf8)

    public static func judge(_ bytes: UnsafeRawBufferPointer) -> HTTPRequestStart {
        let n = bytes.count
        guard n > 0 else { return .undecided }
        // HTTP/2's preface first: `PRI * HTTP/2.0` is no HTTP/1 request line either.
        let shared = min(n, preface.count)
        if (0..<shared).allSatisfy({ bytes[$0] == preface[$0] }) { return n >= preface.count ? .http2Preface : .undecided }
        // The method: a token (RFC 9110 §9.1), then one space.
        var i = 0
        while i < n, i <= methodLimit, HTTPToken.isTokenByte(bytes[i]) { i += 1 }
        guard i < n else { return n > methodLimit ? .notHTTP : .undecided }
        guard i > 0, i <= methodLimit, bytes[i] == UInt8(ascii: " ") else { return .notHTTP }
        // The target: visible bytes (obs-text too), at least one, then one space.
        var j = i + 1
        while j < n, bytes[j] > 0x20, bytes[j] != 0x7F { j += 1 }
        guard j < n else { return n >= lineLimit ? .http1 : .undecided }
        guard j > i + 1, bytes[j] == UInt8(ascii: " ") else { return .notHTTP }
        // The version: `HTTP/1.`, which is enough to tell.
        for (k, expected) in versionStart.enumerated() {
            guard j + 1 + k < n else { return .undecided }
            guard bytes[j + 1 + k] == expected else { return .notHTTP }
        }
        return .http1
    }
}
