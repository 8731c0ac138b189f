import FlowTerms

/// What the upstream leg saw of a server's request for a client certificate: whether a
/// CertificateRequest came (in the handshake, in TLS 1.3 post-handshake authentication, or in a
/// TLS 1.2 renegotiation; OpenSSL's certificate callback runs for each) and whether tv answered
/// it with one of the user's certificates.
struct ClientCertificateAsk: Equatable, Sendable {
    /// How many CertificateRequests arrived from the server (a TLS 1.2 server may renegotiate
    /// more than once).
    var requests = 0
    /// tv presented a certificate in answer (`ClientCertificateChoice` found one).
    var presented = false
    /// The server sent application data in a read that began after the latest CertificateRequest
    /// had arrived: it went on after tv's answer, so it took the answer (or could do without a
    /// certificate), and a close or reset after that is not a refusal. Data read in the same call
    /// that brought the request does not count (the server had not seen the answer yet).
    var serverWentOn = false

    /// A CertificateRequest arrived from the server.
    var requested: Bool { requests > 0 }

    init(requested: Bool = false, presented: Bool = false, serverWentOn: Bool = false) {
        requests = requested ? 1 : 0
        self.presented = presented
        self.serverWentOn = serverWentOn
    }

    /// A CertificateRequest arrived (OpenSSL's certificate callback): whatever the server sent
    /// before it says nothing about this one's answer.
    mutating func noteRequest() {
        requests += 1
        serverWentOn = false
    }

    /// A read that began when `requestsBefore` requests had arrived returned application data.
    mutating func noteServerData(requestsBefore: Int) {
        if requestsBefore > 0 && requestsBefore == requests { serverWentOn = true }
    }
}

/// Whether a failed upstream TLS leg failed because the server requires a client certificate,
/// decided from the alert the server sent (or the close) and what was asked and answered.
///
/// - `certificate_required` (116, RFC 8446 §6.2) always says so, in the handshake or as the first
///   read after it (a TLS 1.3 server judges the client's certificate after the client finished).
/// - After a CertificateRequest, the alerts a server sends when the certificate is missing or
///   refused (handshake_failure 40, bad_certificate 42, unsupported_certificate 43,
///   certificate_revoked 44, certificate_expired 45, certificate_unknown 46, unknown_ca 48,
///   access_denied 49: RFC 5246 §7.2.2, RFC 8446 §6.2), or a bare close or reset, say so too;
///   but not a close or reset after the server went on sending data past tv's answer (a server
///   that answers the request and then closes without close_notify, or resets: seen with
///   Python's `ssl` after a post-handshake request, on a loaded machine).
/// - Anything else is not about client certificates (nil).
enum ClientCertificateVerdict {
    /// The alerts that, after a CertificateRequest, mean the certificate was missing or refused.
    static let refusalAlerts: Set<UInt8> = [
        TLSAlert.handshakeFailure, TLSAlert.badCertificate, TLSAlert.unsupportedCertificate, TLSAlert.certificateRevoked,
        TLSAlert.certificateExpired, TLSAlert.certificateUnknown, TLSAlert.unknownCA, TLSAlert.accessDenied,
        TLSAlert.certificateRequired,
    ]

    /// The failure kind for `failure`, or nil when it is not about a client certificate.
    static func failure(_ failure: TLSFailure) -> ConnectionFailure? {
        let ask = failure.clientCertificate
        if let alert = failure.peerAlert {
            guard alert == TLSAlert.certificateRequired || (ask.requested && refusalAlerts.contains(alert)) else { return nil }
            return .clientCertificateRequired(presented: ask.presented, alert: alert)
        }
        guard ask.requested, !ask.serverWentOn, failure.eof || failure.systemError != nil else { return nil }
        return .clientCertificateRequired(presented: ask.presented, alert: nil)
    }

    /// The failure kind for a data-phase failure on the server's TLS leg (reading from it, or
    /// sending to it, e.g. in a renegotiation), or nil when it is not about a client certificate.
    static func failure(_ failure: ConnectionFailure) -> ConnectionFailure? {
        switch failure {
        case .read(.server, _, .tls(let tls)), .send(.server, .tls(let tls)): return Self.failure(tls)
        default: return nil
        }
    }
}
