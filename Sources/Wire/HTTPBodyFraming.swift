/// How the body of an HTTP/1 request is delimited (RFC 9112 §6.3).
public enum HTTPBodyFraming: Sendable, Hashable {
    /// No body: neither Content-Length nor Transfer-Encoding is present (RFC 9112 §6.3 rule 7).
    case none
    /// Exactly this many bytes follow the head (Content-Length, RFC 9110 §8.6).
    case contentLength(Int)
    /// The body is chunked until the zero-size chunk and trailers (Transfer-Encoding ending in
    /// `chunked`, RFC 9112 §7.1).
    case chunked
}
