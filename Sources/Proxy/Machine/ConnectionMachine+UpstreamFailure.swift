import LocalCA
import Wire
import FlowTerms

/// The upstream TLS handshake of an inspected connection failed (the server's certificate did
/// not verify, the server requires a client certificate, it did not finish in time, or anything
/// else). What the client gets follows from what it says it speaks, as mitmproxy answers:
///
/// - its ClientHello offers http/1.1 in ALPN: tv's leg is completed anyway (a leaf for the SNI
///   or destination, made without the server's certificate) and its first request answered
///   with a 502 that says why, then the close;
/// - it offers ALPN without http/1.1 (h2 alone, another protocol): the handshake alert, since an
///   answer it could read would need that protocol;
/// - it offers no ALPN (RFC 7301 §3 leaves the protocol to the port): tv's leg is completed and
///   its first bytes tell (`HTTPRequestStart`): an HTTP/1 request gets the 502, HTTP/2's preface
///   the GOAWAY saying why, anything else the close of tv's TLS session (close_notify) with no
///   answer, since HTTP text would be read as the other protocol's (`openssl s_client` sending
///   `PING` read `HTTP/1.1 502 Bad Gateway`: a trial). OpenSSL sends no fatal alert of the
///   caller's choosing once a handshake finished, so close_notify is the TLS end there is.
///
/// Pinning memory learns nothing from this client leg: it only carries tv's answer for a
/// connection that failed at the server. A refusal of it (no root, a close after tv's
/// certificate) is not weighed or remembered, since passing the client's next connection
/// through would hide the server's failure behind "kept private"; and its request is not a
/// successful inspected exchange (`clientAccepted` is not sent), since nothing was exchanged
/// with the server. The flow fails with the upstream reason whatever the client leg does.
extension ConnectionMachine {
    /// The upstream handshake failed with `failure` (its answer `.badGateway`): a 502 over tv's
    /// leg for an HTTP/1 client, else `alert` (the failure then says the client was refused).
    mutating func upstreamFailed(alert: UInt8, _ failure: ConnectionFailure) -> [Command] {
        guard clientMaySpeakHTTP1, let destination else { return refuse(failure.answered(.alert), alert: alert) }
        let identity: LeafIdentity
        do {
            // Nothing is taken from the server's certificate: it did not verify, or never came.
            identity = try LeafNamePlan.identity(sni: serverName, destinationHost: destination.host,
                                                 dialledAddress: settings.dialledAddress, upstreamSANs: [])
        } catch {
            return refuse(failure.answered(.alert), alert: alert)
        }
        answering = failure
        phase = .clientHandshake
        let alpn = facts.offeredALPN.contains(Self.http1) ? Array(Self.http1.utf8) : nil
        return [.armTimer(millis: settings.handshakeTimeoutMillis),
                .startClientTLS(ClientTLSPlan(identity: identity, alpn: alpn, keyTypes: leafKeyTypes)), .updateFlow]
    }

    /// Whether the client's ClientHello leaves room for HTTP/1: it offers http/1.1, or no ALPN
    /// at all (its first bytes then tell: `answeringBytes`).
    var clientMaySpeakHTTP1: Bool {
        facts.offeredALPN.isEmpty || facts.offeredALPN.contains(Self.http1)
    }

    /// tv's leg to the client is up: read its first request.
    mutating func answeringLegUp() -> [Command] {
        phase = .answering
        return [.armTimer(millis: settings.headTimeoutMillis), .readClientRequest]
    }

    /// The client's plaintext over tv's leg: once it tells, the 502 (or HTTP/2's GOAWAY) for a
    /// request, read into its row first; the close of tv's TLS session for anything else. A
    /// client that offered http/1.1 said it speaks HTTP: its bytes are its request, as they come.
    mutating func answeringBytes(_ bytes: UnsafeRawBufferPointer) -> [Command] {
        guard let answering, !bytes.isEmpty else { return [] }
        answeringStart.append(contentsOf: bytes)
        let start = facts.offeredALPN.contains(Self.http1) ? .http1 : answeringStart.withUnsafeBytes { HTTPRequestStart.judge($0) }
        switch start {
        case .undecided:
            return []
        case .http1, .http2Preface:
            let http2 = start == .http2Preface
            let row = Command.readRequestRow(answeringStart, http2: http2)
            answeringStart = []
            return [row] + badGateway(answering, http2: http2)
        case .notHTTP:
            answeringStart = []
            return [.closeClientTLS] + fail(answering.answered(.closed), reset: false)
        }
    }

    private static let http1 = "http/1.1"
}
