import Wire
import FlowTerms

/// What each handshake message, and each relayed burst, adds to a flow's facts (written by
/// `ConnectionMachine` only).
extension FlowFacts {
    /// `bytes` moved in `direction` at `now` (µs): the totals and the last activity. On the hot
    /// path: two additions and a store.
    @inline(__always)
    mutating func count(_ bytes: Int, _ direction: Direction, atMicros now: Int64) {
        lastActivityMicros = now
        if direction == .clientToServer { bytesFromClient &+= UInt64(bytes) } else { bytesFromServer &+= UInt64(bytes) }
    }

    /// A plain relay's ClientHello (STARTTLS): the flow is an encrypted pass-through from here.
    mutating func noteUpgrade(_ hello: ClientHello) {
        status = .encrypted
        note(hello)
    }

    /// The client's ClientHello: what it offers, and its SNI as the flow's host.
    mutating func note(_ hello: ClientHello) {
        let offered = hello.supportedVersions.isEmpty ? [hello.legacyVersion] : hello.supportedVersions
        offeredVersions = offered.filter { !GREASE.isReserved($0) }.map(TLSProtocolVersion.init(rawValue:))
        offeredALPN = hello.alpnProtocols
        if let sni = hello.normalizedServerName {
            // The proxy request's target, when the ClientHello names another host, is kept beside
            // it (a CONNECT to one host with an SNI for another, as domain fronting does, kept no
            // trace of the CONNECT's: a trial); the SNI is the connection's own name, and the
            // names a DNS lookup gave the address stay beside it (`keepLookedUpNames`).
            let asked = (hostOrigin == .connect || hostOrigin == .socks) ? host.flatMap { $0 == sni ? nil : $0 } : nil
            if let asked {
                otherHosts = [asked]
                otherHostsOrigin = .proxyRequest
            } else if hostOrigin == .connect || hostOrigin == .socks {
                otherHosts = []
                otherHostsOrigin = nil
            } else {
                keepLookedUpNames(announced: sni)
            }
            host = sni
            hostOrigin = .sni
            hostIsECHPublicName = hello.carriesEncryptedClientHello
        } else if let problem = hello.serverNameProblem, error == nil {
            error = ConnectionFailure.unusableServerName(problem).sentence
        }
    }

    /// The upstream leg's finished handshake.
    mutating func note(_ done: ConnectionMachine.UpstreamHandshake) {
        upstreamTLSVersion = done.version
        versionSource = .upstreamLeg
        alpn = done.alpn.map { String(decoding: $0, as: UTF8.self) }
        serverCertificate = done.certificate
        serverChain = done.chain
        newCertificates = done.newCertificates
        upstreamVerified = done.certificateProblem == nil
        upstreamCertificateProblem = done.certificateProblem?.cause
        upstreamResumed = done.resumed
    }

    /// A passed-through connection's ServerHello: what the two ends agreed.
    mutating func note(_ hello: ServerHello) {
        clientTLSVersion = TLSProtocolVersion(rawValue: hello.negotiatedVersion)
        alpn = hello.alpnProtocol
        versionSource = .serverHello
    }
}
