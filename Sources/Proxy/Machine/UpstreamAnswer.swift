/// What the client of an inspected connection got when its server failed (the upstream TLS
/// handshake, its certificate, its time): the ending of `ConnectionFailure.upstreamHandshake`,
/// `.upstreamHandshakeTimeout` and `.upstreamCertificate`, decided by
/// `ConnectionMachine.upstreamFailed` and the client's first bytes (`HTTP1RequestStart`).
public enum UpstreamAnswer: Equatable, Sendable {
    /// tv's 502 saying why, over its own leg (an HTTP client), or over the plain connection of
    /// a `reverse:https` client; also the answer held while tv waits for the client's request.
    case badGateway
    /// The client's handshake was refused with a TLS alert: its ALPN offered no HTTP/1.
    case alert
    /// The client offered no ALPN and its first bytes over tv's leg were no HTTP request (a TLS
    /// alert cannot follow a finished handshake through OpenSSL): its TLS session was closed
    /// with close_notify, unanswered, so no HTTP text reached a program that speaks another protocol.
    case closed

    /// The clause `upstreamHandshake`'s and `upstreamHandshakeTimeout`'s sentences end with.
    var note: String {
        switch self {
        case .badGateway: return ""
        case .alert: return "; the client was refused"
        case .closed: return "; the client's first bytes were no HTTP request, so tv closed its TLS session unanswered"
        }
    }

    /// What `upstreamCertificate`'s sentence says tv did, between the cause and the advice.
    var certificateNote: String {
        switch self {
        case .badGateway: return "nothing was sent to it"
        case .alert: return "nothing was forged and the client was refused"
        case .closed: return "nothing was sent to it, and the client's first bytes were no HTTP request, so tv closed its TLS session unanswered"
        }
    }
}

extension ConnectionFailure {
    /// The same failure with the client answered as `answer` (the three upstream cases; any
    /// other failure as it is).
    func answered(_ answer: UpstreamAnswer) -> ConnectionFailure {
        switch self {
        case .upstreamHandshake(let reason, _): return .upstreamHandshake(reason, answer: answer)
        case .upstreamHandshakeTimeout(let seconds, _): return .upstreamHandshakeTimeout(seconds: seconds, answer: answer)
        case .upstreamCertificate(let problem, _): return .upstreamCertificate(problem, answer: answer)
        default: return self
        }
    }
}
