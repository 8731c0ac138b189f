/// What a proxy client speaks first, as its first byte tells (pure): a TLS record (0x16, RFC 8446
/// §5.1's handshake content type), a SOCKS greeting (version 4 or 5, RFC 1928 §3), or an HTTP
/// method (a token's letter, RFC 9112 §3). `FrontEndReader` says a client that spoke one to a
/// port of another (`ConnectionFailure.wrongProxyProtocol`).
public enum ProxyProtocol: Equatable, Sendable {
    case http
    /// SOCKS5 (a greeting's version 5).
    case socks
    /// SOCKS4 or 4a (version 4), which tv does not speak.
    case socks4
    case tls

    /// What `first` begins, when it is one of the three; nil otherwise.
    static func spoken(first: UInt8) -> ProxyProtocol? {
        switch first {
        case 0x16: return .tls
        case 0x05: return .socks
        case 0x04: return .socks4
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return .http
        default: return nil
        }
    }

    var words: String {
        switch self {
        case .http: return "HTTP"
        case .socks: return "SOCKS5"
        case .socks4: return "SOCKS4"
        case .tls: return "TLS"
        }
    }
}
