import FlowStore
import Proxy

/// How the proxy's facts about a flow become a row of the flow database (a pure mapping).
public enum FlowRecordMapping {
    /// The row for `facts`. `tlsVersion` is what the real server negotiated: the upstream leg's
    /// version when inspected, the ServerHello's when passed through; `chosenVersionSource` says
    /// which. `clientTLSVersion` is what the client negotiated: the client leg's when inspected,
    /// the ServerHello's when passed through (one handshake). Bytes up are what the client sent, bytes down what the server sent.
    public static func record(_ f: FlowFacts) -> FlowRecord {
        var r = FlowRecord(id: Int64(f.id), startTime: f.startMicros, lastActivityTime: f.lastActivityMicros,
                           clientAddress: f.client.address, clientPort: Int(f.client.port),
                           serverAddress: f.server?.address ?? "", serverPort: Int(f.server?.port ?? f.port),
                           transport: f.transport,
                           host: f.host, hostOrigin: f.hostOrigin,
                           alpn: f.alpn, tlsVersion: (f.upstreamTLSVersion ?? f.clientTLSVersion)?.description,
                           status: f.status, bytesUp: Int64(clamping: f.bytesFromClient),
                           bytesDown: Int64(clamping: f.bytesFromServer), duration: f.durationMicros,
                           error: f.error)
        r.clientTLSVersion = f.clientTLSVersion?.description
        r.failureReason = f.failureReason
        // A kept-private flow says why from its recall (`FlowFacts.failureReason`): pinned, or
        // lacking tv's root. A fixed "this host pins" here contradicted `error` for the second
        // (a new-user trial); this sentence is only for a row without either.
        if case .keptPrivate = f.status, r.failureReason == nil {
            r.failureReason = "this client refused tv's certificate for this host and port before, so it passes through unread"
        }
        r.packetsUp = f.packetsFromClient.map { Int64(clamping: $0) }
        r.packetsDown = f.packetsFromServer.map { Int64(clamping: $0) }
        r.clientVersions = f.offeredVersions.map(\.description)
        r.clientALPN = f.offeredALPN
        r.otherHosts = f.otherHosts
        r.otherHostsOrigin = f.otherHostsOrigin
        r.dnsQuestionType = f.dnsQuestionType.map(Int.init)
        r.dnsServerAsked = f.dnsServerAsked
        r.dnsAskedAddress = f.dnsAskedAddress
        r.hostIsECHPublicName = f.hostIsECHPublicName
        r.requestsLeftOut = f.requestsLeftOut > 0 ? Int64(clamping: f.requestsLeftOut) : nil
        switch f.versionSource {
        case .serverHello?: r.chosenVersionSource = "server_hello"
        case .upstreamLeg?: r.chosenVersionSource = "upstream_leg"
        case nil: r.chosenVersionSource = nil
        }
        if let cert = f.serverCertificate {
            r.certificateSubject = cert.subject
            r.certificateIssuer = cert.issuer
            r.certificateSANs = cert.subjectAlternativeNames
            r.certificateNotBefore = cert.notBefore
            r.certificateNotAfter = cert.notAfter
            r.certificateSHA256 = cert.sha256
        }
        // What the check of the server's certificate found, acted on or not (--upstream-insecure).
        r.certificateVerified = f.upstreamVerified
        r.certificateProblem = f.upstreamCertificateProblem
        r.certificateChain = f.serverChain
        r.newCertificates = f.newCertificates
        return r
    }
}
