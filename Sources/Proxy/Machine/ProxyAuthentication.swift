/// `--proxy-auth`'s decisions for the explicit proxy (RFC 9110 §11.7.1, §15.5.8): which failure
/// a verdict is, and the 407 that answers it.
enum ProxyAuthentication {
    /// The failure for `verdict`; nil when the credentials were accepted.
    static func failure(_ verdict: ProxyCredentials.Verdict) -> ConnectionFailure? {
        switch verdict {
        case .accepted: return nil
        case .missing: return .proxyAuthenticationMissing
        case .wrong(let user): return .proxyAuthenticationWrong(user: user)
        }
    }

    /// `407 Proxy Authentication Required` with `Proxy-Authenticate: Basic realm="tv"` (the
    /// challenge RFC 9110 §11.7.1 requires), the failure's sentence as its body, and
    /// `Connection: close`: tv closes after it, and the client retries on a new connection.
    static func required(_ failure: ConnectionFailure) -> [UInt8] {
        ConnectionMachine.errorResponse(407, body: failure.answer,
                                        fields: "Proxy-Authenticate: Basic realm=\"tv\", charset=\"UTF-8\"\r\n")
    }
}
