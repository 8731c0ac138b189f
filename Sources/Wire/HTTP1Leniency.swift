/// How the HTTP/1 codec (`HTTP1HeadParser`, `HTTPChunkedDecoder`) treats syntax that RFC 9112 lets
/// a recipient either refuse or read: the proxy refuses what its next hop might read differently;
/// a reader of recorded content reads what can still be read unambiguously and says where it stops.
///
/// Both modes accept a bare LF as a line end and skip empty lines before the start line
/// (RFC 9112 §2.2), and refuse a bare CR, a NUL or CR in a field value (RFC 9110 §5.5), a field
/// name that is not a token or is followed by whitespace (RFC 9112 §5.1), and a chunk size that
/// is not hexadecimal (RFC 9112 §7.1).
public enum HTTP1Leniency: Sendable, Hashable {
    /// The proxy's request heads on the plain path, the response heads it forwards, and every
    /// chunked body it relays (`HTTPBodyScanner`): obs-fold is refused (RFC 9112 §5.2: a server
    /// answers it 400, a proxy 502, or unfolds it, which a relay of the bytes cannot), the
    /// request-target must be visible ASCII (RFC 9112 §3.2), a chunk size line must start with
    /// its first hex digit and its extensions end in CRLF (RFC 9112 §7.1).
    case strict
    /// Recorded content: obs-fold is unfolded into one space (RFC 9112 §5.2), a request-target
    /// may carry non-ASCII bytes (obs-text), whitespace before a chunk size is skipped and a
    /// bare LF ends a chunk extension.
    case lenient
}
