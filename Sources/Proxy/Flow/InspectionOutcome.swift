import FlowTerms

/// How one closed connection counts in `tv diag`'s inspection figures: whether it was offered for
/// inspection (tv read its first bytes while inspection was on) and what became of the offer.
/// A pure classification of the machine's facts at close (`of`); the loops count it
/// (`LoopCounters.countInspection`) and `ProxyCounters.inspection` sums it by `key`.
public enum InspectionOutcome: Sendable, Hashable {
    /// Offered, and its first bytes were not TLS (plain HTTP, a server that speaks first, a
    /// protocol of its own on 443): nothing to take over.
    case notTLS
    /// Offered and taken over: both of tv's legs finished their handshakes.
    case inspected
    /// Offered and passed through by a rule: `--ignore-hosts`, `--allow-hosts`, or a client whose
    /// TLS versions are all below tv's minimum.
    case passedByRule
    /// Offered and passed through because pinning memory recalled this client, host and port:
    /// it pinned (`.pinned`) or lacked tv's root (`.lacksRoot`) before.
    case keptPrivate(PinKind)
    /// Offered while the session had no CA to make certificates with.
    case noCertificateAuthority
    /// Offered, and the client leg ended as one of the three kinds (`ClientLegOutcome`).
    case clientRefused(ClientLegOutcome)
    /// Offered, and taking it over failed on `leg` for `reason` (`ConnectionFailure.diagnosticKey`).
    case failed(leg: ConnectionFailure.Side, reason: String)

    /// The control-socket name of the counter this outcome adds to, under `inspection.`:
    /// `notTLS`, `inspected`, `passedByRule`, `keptPrivate.pinned`, `keptPrivate.lacksRoot`,
    /// `noCA`, `clientRefused.lacksRoot` (…`possiblePinning`, `clientLeft`),
    /// `failed.client.REASON`, `failed.server.REASON`.
    public var key: String {
        switch self {
        case .notTLS: return "notTLS"
        case .inspected: return "inspected"
        case .passedByRule: return "passedByRule"
        case .keptPrivate(let kind): return kind == .lacksRoot ? "keptPrivate.lacksRoot" : "keptPrivate.pinned"
        case .noCertificateAuthority: return "noCA"
        case .clientRefused(let outcome): return "clientRefused." + outcome.rawValue
        case let .failed(leg, reason): return "failed.\(leg == .client ? "client" : "server").\(reason)"
        }
    }

    /// Classifies a closed connection; nil when it was never offered (inspection was off, or it
    /// ended before tv read its first bytes).
    /// - Parameters:
    ///   - decision: the ClientHello's decision (nil: no ClientHello was read at the start).
    ///   - inspectionOn: whether inspection is on now (for a connection without a decision).
    ///   - handshakeDone: tv's client leg finished its handshake.
    public static func of(decision: InterceptionPolicy.Decision?, status: FlowStatus, inspectionOn: Bool,
                          handshakeDone: Bool, outcome: ClientLegOutcome?, failure: ConnectionFailure?) -> InspectionOutcome? {
        guard let decision else {
            // No ClientHello first: a plain relay (or one that turned into TLS later, STARTTLS).
            return inspectionOn && status != .failed ? .notTLS : nil
        }
        switch decision.reason {
        case .inspectionOff: return nil
        case .noCertificateAuthority: return .noCertificateAuthority
        case .remembered(.remembered(.lacksRoot)): return .keptPrivate(.lacksRoot)
        case .remembered: return .keptPrivate(.pinned)
        case .ignored, .notAllowed, .clientVersionTooOld: return .passedByRule
        case .inspect:
            if let outcome { return .clientRefused(outcome) }
            if handshakeDone { return .inspected }
            guard let failure, let (leg, reason) = failure.diagnosticKey else { return .failed(leg: .client, reason: "other") }
            return .failed(leg: leg, reason: reason)
        }
    }
}

extension ConnectionFailure {
    /// The leg a takeover failed on and a camelCase name for why, as `tv diag` counts it
    /// (`inspection.failed.LEG.REASON`); nil for failures that are not about taking a
    /// connection over (the proxy request, forwarding, the relay after both handshakes).
    public var diagnosticKey: (Side, String)? {
        switch self {
        case .clientGone: return (.client, "clientLeft")
        case .clientLacksRoot: return (.client, "lacksRoot")
        case .possiblePinning: return (.client, "possiblePinning")
        case .clientAborted: return (.client, "aborted")
        case .clientHandshakeFailed: return (.client, "handshake")
        case .clientHandshakeTimeout: return (.client, "timeout")
        case .clientHelloMalformed, .clientHelloTimeout: return (.client, "clientHello")
        case .leafNameRefused, .leafNameError, .leafMint, .certificateUse: return (.client, "leafCertificate")
        case .noCA: return (.client, "noCA")
        case .tlsSession: return (.client, "tlsSession")
        case .upstreamHandshake: return (.server, "handshake")
        case .upstreamHandshakeTimeout: return (.server, "timeout")
        case .upstreamCertificate: return (.server, "certificate")
        case .clientCertificateRequired: return (.server, "clientCertificateRequired")
        case .unreachable: return (.server, "unreachable")
        case .read(let side, _, _): return (side, "connectionLost")
        case .send(let side, _): return (side, "connectionLost")
        case .proxyRequestUnreadable, .proxyRequestUnsupported, .socksRefused, .proxyAuthenticationMissing,
             .proxyAuthenticationWrong, .socksUnreadable, .wrongProxyProtocol, .requestUnreadable, .proxyRequestTimeout, .headTimeout,
             .hostNameRefused, .keptPrivate, .clientVersionTooOld, .idle, .noResponse, .stoppedReading, .serverClosedFirst, .stopped, .stillConnecting, .notAdopted, .internalError,
             .notAbsoluteHTTP, .chunkedBodyRefused, .pipelinedPastLimit, .responseUnreadable, .responseIncomplete, .responseUnasked, .switchRefused,
             .portUnreachable, .serverAnsweredNotTLS, .unusableServerName, .exchangeReadingStopped, .notReadAsHTTP, .http2GoAway,
             .http2MalformedRequest, .http2ConnectionError, .serverLacksHTTP2:
            return nil
        }
    }
}
