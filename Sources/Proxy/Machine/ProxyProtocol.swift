/// What a proxy client speaks first, as its first byte tells (pure): a TLS record (0x16, RFC 8446
/// §5.1's handshake content type), a SOCKS greeting (version 4 or 5, RFC 1928 §3), or an HTTP
/// method (a token's letter, RFC 9112 §3). `FrontEndReader` says a client that spoke one to a
/// port of another (`ConnectionFailure.wrongProxyProtocol`).
public enum ProxyProtocol: Equatable, Sendable {
    case http
    case socks
    case tls

    /// What `first` begins, when it is one of the three; nil otherwise.
    static func spoken(first: UInt8) -> ProxyProtocol? {
        switch first {
        case 0x16: return .tls
        case 0x04, 0x05: return .socks
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return .http
        default: return nil
        }
    }

    var words: String {
        switch self {
        case .http: return "HTTP"
        case .socks: return "SOCKS"
        case .tls: return "TLS"
        }
    }
}
