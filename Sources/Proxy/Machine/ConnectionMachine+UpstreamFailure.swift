import LocalCA
import FlowTerms

/// The upstream TLS handshake of an inspected connection failed (the server's certificate did
/// not verify, the server requires a client certificate, it did not finish in time, or anything
/// else): a client that will speak HTTP/1 inside the TLS (its ClientHello offers ALPN http/1.1,
/// or no ALPN at all) gets tv's leg completed anyway (a leaf for the SNI or destination, made without the server's
/// certificate) and its first request answered with a 502 that says why, then the close, as
/// mitmproxy does. A client that offers only other protocols (h2 alone) keeps the handshake
/// alert: an answer it could read would need HTTP/2 framing.
///
/// Pinning memory learns nothing from this client leg: it only carries tv's error page for a
/// connection that failed at the server. A refusal of it (no root, a close after tv's
/// certificate) is not weighed or remembered, since passing the client's next connection
/// through would hide the server's failure behind "kept private"; and its request is not a
/// successful inspected exchange (`clientAccepted` is not sent), since nothing was exchanged
/// with the server. The flow fails with the upstream reason whatever the client leg does.
extension ConnectionMachine {
    /// The upstream handshake failed with `failure` (rendered for whether the client was refused
    /// with an alert): a 502 over tv's leg for an HTTP/1 client, else `alert`.
    mutating func upstreamFailed(alert: UInt8, _ failure: (_ clientRefused: Bool) -> ConnectionFailure) -> [Command] {
        // A client offering only h2 (or other protocols) keeps the alert: a 502 it could read
        // would need HTTP/2 framing (a SETTINGS exchange, a HEADERS frame), which tv does not speak.
        guard clientWillSpeakHTTP1, let destination else { return refuse(failure(true), alert: alert) }
        let identity: LeafIdentity
        do {
            // Nothing is taken from the server's certificate: it did not verify, or never came.
            identity = try LeafNamePlan.identity(sni: serverName, destinationHost: destination.host,
                                                 dialledAddress: settings.dialledAddress, upstreamSANs: [])
        } catch {
            return refuse(failure(true), alert: alert)
        }
        answering = failure(false)
        phase = .clientHandshake
        let alpn = facts.offeredALPN.contains(Self.http1) ? Array(Self.http1.utf8) : nil
        return [.armTimer(millis: settings.handshakeTimeoutMillis),
                .startClientTLS(ClientTLSPlan(identity: identity, alpn: alpn, keyTypes: leafKeyTypes)), .updateFlow]
    }

    /// Whether the client's ClientHello says it will speak HTTP/1: it offers http/1.1, or no
    /// ALPN at all (RFC 7301 §3: without ALPN, HTTPS is HTTP/1.1).
    var clientWillSpeakHTTP1: Bool {
        facts.offeredALPN.isEmpty || facts.offeredALPN.contains(Self.http1)
    }

    /// tv's leg to the client is up: read its first request.
    mutating func answeringLegUp() -> [Command] {
        phase = .answering
        return [.armTimer(millis: settings.headTimeoutMillis), .readClientRequest]
    }

    private static let http1 = "http/1.1"
}
