import Wire

/// What each handshake message adds to a flow's facts (written by `ConnectionMachine` only).
extension FlowFacts {
    /// The client's ClientHello: what it offers, and its SNI as the flow's host.
    mutating func note(_ hello: ClientHello) {
        let offered = hello.supportedVersions.isEmpty ? [hello.legacyVersion] : hello.supportedVersions
        offeredVersions = offered.filter { !GREASE.isReserved($0) }.map(TLSProtocolVersion.init(rawValue:))
        offeredALPN = hello.alpnProtocols
        if let sni = hello.normalizedServerName {
            host = sni
            hostOrigin = .sni
        }
    }

    /// The upstream leg's finished handshake.
    mutating func note(_ done: ConnectionMachine.UpstreamHandshake) {
        upstreamTLSVersion = done.version
        versionSource = .upstreamLeg
        alpn = done.alpn.map { String(decoding: $0, as: UTF8.self) }
        serverCertificate = done.certificate
        upstreamVerified = done.verifyError == nil
        upstreamResumed = done.resumed
    }

    /// A passed-through connection's ServerHello: what the two ends agreed.
    mutating func note(_ hello: ServerHello) {
        clientTLSVersion = TLSProtocolVersion(rawValue: hello.negotiatedVersion)
        alpn = hello.alpnProtocol
        versionSource = .serverHello
    }
}
