/// How the body of an HTTP/1 message is delimited (RFC 9112 §6.3).
public enum HTTPBodyFraming: Sendable, Hashable {
    /// No body: neither Content-Length nor Transfer-Encoding is present on a request (RFC 9112
    /// §6.3 rule 7), or the response cannot have one (HEAD, 1xx, 204, 304, 2xx to CONNECT; rules 1-2).
    case none
    /// Exactly this many bytes follow the head (Content-Length, RFC 9110 §8.6).
    case contentLength(Int)
    /// The body is chunked until the zero-size chunk and trailers (Transfer-Encoding ending in
    /// `chunked`, RFC 9112 §7.1).
    case chunked
    /// The body runs until the sender closes the connection (a response without length, or
    /// whose Transfer-Encoding does not end in chunked; RFC 9112 §6.3 rules 4 and 8). Never a
    /// request the proxy accepts.
    case untilClose
}
