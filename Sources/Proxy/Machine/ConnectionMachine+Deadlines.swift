import FlowTerms

/// What each phase's deadline means when it passes (`.armTimer` then `.timeout`).
extension ConnectionMachine {
    mutating func timeout() -> [Command] {
        let handshakeSeconds = settings.handshakeTimeoutMillis / 1000
        switch phase {
        case .frontEnd:
            if case .explicitHTTP = settings.frontEnd { return headTimedOut() }
            return fail(.proxyRequestTimeout(seconds: handshakeSeconds), reset: false)
        case .awaitingHead:
            return headTimedOut()
        case .connecting:
            return upstreamUnreachable(.noAnswer(seconds: settings.connectTimeoutMillis / 1000), socksCode: .ttlExpired)
        case .awaitingFirstBytes:
            // A server tv could not reach, and the client said nothing in the wait: its reason.
            if let failure = unreachableToAnswer {
                unreachableToAnswer = nil
                return fail(failure, reset: false)
            }
            // Nobody spoke for the idle time: closed as an idle relay would be (nothing was
            // carried, nothing is known to be encrypted).
            if !sawClientBytes { return silentTooLong() }
            return fail(.clientHelloTimeout(seconds: handshakeSeconds), reset: false)
        case .upstreamHandshake:
            // A plain client (reverse:https) reads a 502; a TLS client as `upstreamFailed` decides.
            let failure = ConnectionFailure.upstreamHandshakeTimeout(seconds: handshakeSeconds, answer: .badGateway)
            if plainClientOverTLS { return badGateway(failure) }
            return upstreamFailed(alert: TLSAlert.handshakeFailure, failure)
        case .clientHandshake:
            return fail(answering ?? .clientHandshakeTimeout(seconds: handshakeSeconds), reset: false)
        case .answering:
            // The client asked nothing in time: the flow still says why the server failed.
            return fail(answering ?? .headTimeout(limitMillis: settings.headTimeoutMillis), reset: false)
        case .start, .relaying, .plainHTTP, .closed:
            return []
        }
    }

    /// The request head did not come whole in time: 408 (nothing was sent to the client yet),
    /// counted, closed.
    mutating func headTimedOut() -> [Command] {
        [.countHeadTimeout, .sendClient(HeadDeadline.requestTimeoutResponse(limitMillis: settings.headTimeoutMillis))]
            + fail(.headTimeout(limitMillis: settings.headTimeoutMillis), reset: false)
    }
}
