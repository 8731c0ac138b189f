import FlowTerms

/// A server that requires a client certificate and ends the connection in the data phase (TLS
/// 1.3's certificate_required comes after the client's handshake finished; post-handshake
/// authentication and TLS 1.2 renegotiation ask mid-stream): the flow fails with
/// `ConnectionFailure.clientCertificateRequired`, and a client that speaks HTTP/1 and has heard
/// nothing from the server yet is answered with a 502 that says so.
extension ConnectionMachine {
    mutating func clientCertificateEnded(_ failure: ConnectionFailure) -> [Command] {
        var out: [Command] = []
        if facts.bytesFromServer == 0 && clientSpeaksHTTP1 {
            answeredInRelay = true
            out.append(.sendClient(Self.errorResponse(502, failure)))
        }
        return out + fail(failure, reset: false)
    }

    /// Whether the client speaks HTTP/1 here: a plain client relayed over tv's TLS leg
    /// (reverse:https), a client whose first bytes began a request line, or, before it said
    /// anything over an inspected leg, one that will: ALPN chose http/1.1, or chose nothing
    /// and the client offered http/1.1.
    var clientSpeaksHTTP1: Bool {
        if plainClientOverTLS { return true }
        if relay.clientSpoke { return relay.clientSpokeHTTP1 }
        guard relay.plan == .decrypted else { return false }
        if let alpn = facts.alpn { return alpn == "http/1.1" }
        return facts.offeredALPN.contains("http/1.1")
    }
}
