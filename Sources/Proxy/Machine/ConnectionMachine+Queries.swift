import FlowTerms

/// What the driver and the machine's own files ask of the machine's state (read only).
extension ConnectionMachine {
    /// Whether the client's unread bytes are wanted now (`.clientBytes` peeks).
    var readsClient: Bool { phase == .frontEnd || phase == .awaitingHead || phase == .awaitingFirstBytes }

    /// A close before the data phase may follow an answer (400, 408, 502, an alert): the
    /// driver lets it arrive (shuts down writing, drains) before closing.
    var closeLingers: Bool { relay.plan == nil || answeredInRelay }

    var upstreamTLS: Bool? {
        if case .fixed(_, let tls) = settings.frontEnd { return tls }
        return nil
    }

    /// What pinning is remembered under (`PinKey`): this client (address and ClientHello
    /// fingerprint), the SNI (else the destination's name or address) and the port. Nil before
    /// the ClientHello.
    var pinKey: PinKey? {
        guard let helloFingerprint, let destination else { return nil }
        return PinKey(client: ClientIdentity(address: facts.client.address, helloFingerprint: helloFingerprint),
                      host: serverName ?? destination.hostName ?? destination.host, port: destination.port)
    }

    /// Reverse mode's target, as its requests are recorded (`ExchangeReader.Settings.target`):
    /// the scheme tv speaks to it and its `host:port`; nil in the other modes.
    var reverseTarget: (scheme: String, authority: String)? {
        guard case let .fixed(destination, upstreamTLS) = settings.frontEnd, destination.origin == .reverse, let upstreamTLS else { return nil }
        return (upstreamTLS ? "https" : "http", destination.description)
    }
}
