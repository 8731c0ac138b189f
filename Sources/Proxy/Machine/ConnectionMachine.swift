import LocalCA
import Wire
import FlowTerms

/// The life of one client connection, as a sans-I/O state machine (the shape of mitmproxy's
/// proxy layers): the driver (`ProxyConnection`) feeds events, the machine answers commands and
/// keeps the flow's facts. Nothing here touches a socket or an OpenSSL handle, so every path is
/// tested by feeding events.
///
/// Phases: front-end (CONNECT / SOCKS5) → resolve → connect → wait for the client's first bytes
/// (or the server's, or a short timeout: server-speaks-first) → ClientHello → policy →
///   pass through (raw relay) | inspect: upstream TLS first, then the client leg with our leaf
///   → relay (burst totals, first client data, the end, pinning suspicion) → closed.
/// Reverse mode first waits for the client (`awaitingHead`): a plain HTTP client's whole first
/// request head, or the first byte of a ClientHello, before anything is opened to the server.
/// Events and commands: `ConnectionVocabulary.swift`; the first bytes' parsers: `FrontEndReader`.
struct ConnectionMachine {
    let settings: Settings
    private let isPinned: (String) -> Bool
    private(set) var phase: Phase = .start
    private(set) var facts: FlowFacts
    private(set) var destination: OriginalDestination?
    /// The client's SNI, normalised (the ClientHello itself is not kept: an idle connection
    /// should hold as little as possible).
    private(set) var serverName: String?
    private(set) var sawClientHello = false
    private(set) var decision: InterceptionPolicy.Decision?
    private var reader = FrontEndReader()
    private var addresses: [SocketAddress] = []
    private var nextAddress = 0
    private var lastConnectError: Errno?
    private(set) var sawClientBytes = false
    /// Reverse mode: the client sent something while tv waited for its head.
    private var sawHeadBytes = false
    /// Reverse mode to an HTTPS server, and the client spoke plain HTTP: tv is the TLS client of
    /// the server and relays the client's plaintext over that leg (mitmproxy's reverse mode does
    /// the same).
    private var plainClientOverTLS = false
    /// The client's FIN or reset was here when its TLS leg started: not a pinning signal.
    private var clientClosedBeforeFlight = false
    /// The relay phase: see `ConnectionMachine+Relay.swift`.
    private(set) var relay = RelayState()

    init(settings: Settings, facts: FlowFacts, isPinned: @escaping (String) -> Bool) {
        self.settings = settings
        self.facts = facts
        self.isPinned = isPinned
    }

    /// Whether the client's unread bytes are wanted now (`.clientBytes` peeks).
    var readsClient: Bool { phase == .frontEnd || phase == .awaitingHead || phase == .awaitingFirstBytes }

    /// A close before the data phase may follow an answer (400, 408, 502, an alert): the
    /// driver lets it arrive (shuts down writing, drains) before closing.
    var closeLingers: Bool { relay.plan == nil }

    var upstreamTLS: Bool? {
        if case .fixed(_, let tls) = settings.frontEnd { return tls }
        return nil
    }

    /// The name pinning is remembered under: the SNI, else the destination host.
    var pinningHost: String? { serverName ?? destination?.hostName ?? destination?.host }

    // MARK: events

    mutating func handle(_ event: Event) -> [Command] {
        switch event {
        case .start: return start()
        case .clientBytes(let bytes): return clientBytes(bytes)
        case .clientGone(let reset): return clientGone(reset: reset)
        case .clientFinished:
            // What it sent is still not enough for the phase that reads it.
            return readsClient ? clientGone(reset: false) : []
        case .resolved(let list):
            guard phase == .connecting else { return [] }
            addresses = list
            nextAddress = 0
            return connectNext()
        case .resolveFailed(let message):
            guard phase == .connecting else { return [] }
            return upstreamUnreachable(.resolve(message), socksCode: .hostUnreachable)
        case .connected(let address):
            guard phase == .connecting else { return [] }
            return connected(address)
        case .connectFailed(let err):
            guard phase == .connecting else { return [] }
            lastConnectError = err
            return connectNext()
        case .upstreamSpokeFirst:
            guard phase == .awaitingFirstBytes, !sawClientBytes else { return [] }
            return relayRaw(status: .notEncrypted, observeServerHello: false)
        case .timeout: return timeout()
        case .upstreamHandshakeDone(let done): return upstreamHandshakeDone(done)
        case .upstreamHandshakeFailed(let failure):
            guard phase == .upstreamHandshake else { return [] }
            if plainClientOverTLS { return badGateway(.upstreamHandshake(failure.text, clientRefused: false)) }
            return refuse(.upstreamHandshake(failure.text, clientRefused: true),
                          alert: failure.versionMismatch ? TLSAlert.protocolVersion : TLSAlert.handshakeFailure)
        case .clientTLSStarted(let closed):
            clientClosedBeforeFlight = closed
            return []
        case .clientHandshakeDone(let done):
            guard phase == .clientHandshake else { return [] }
            phase = .relaying
            facts.status = .inspected
            facts.clientTLSVersion = done.version
            facts.clientResumed = done.resumed
            relay.handshakeDoneMicros = done.atMicros
            return startRelay(.decrypted)
        case .clientHandshakeFailed(let failed):
            guard phase == .clientHandshake else { return [] }
            return clientHandshakeEnded(failed.ending(clientClosedBeforeFlight: clientClosedBeforeFlight))
        case .failed(let failure):
            guard phase != .closed else { return [] }
            return fail(failure, reset: false)
        case .leafMintFailed(let text):
            guard phase != .closed else { return [] }
            phase = .closed
            facts.error = ConnectionFailure.leafMint(text).sentence
            return [.armTimer(millis: 0), .refuseClientTLS(alert: TLSAlert.internalError)]
        case let .pinningWeighed(host, reason, tipped):
            guard tipped else { return [] }
            facts.pinningDetected = true
            facts.error = ConnectionFailure.pinned(reason: facts.error ?? reason, host: host).sentence
            return [.rememberPinned(host: host, reason: reason)]
        case .idle(let now):
            guard phase == .relaying else { return [] }
            return relayEnded(RelayEnding(failure: .idle(seconds: settings.idleTimeoutSeconds), atMicros: now))
        case .relayEnded(let ending): return relayEnded(ending)
        case .shutdown(let now):
            guard phase != .closed else { return [] }
            if facts.error == nil { facts.error = ConnectionFailure.stopped.sentence }
            if phase == .relaying { return relayEnded(RelayEnding(failure: nil, reset: true, atMicros: now)) }
            phase = .closed
            return [.close(reset: true)]
        }
    }

    private mutating func clientHandshakeEnded(_ ending: PinningDetector.Ending) -> [Command] {
        let verdict = settings.detector.judge(ending)
        var out: [Command] = []
        var failure = ConnectionFailure.clientHandshake(verdict.reason)
        if let host = pinningHost {
            switch verdict.evidence {
            case .definite:
                out.append(.rememberPinned(host: host, reason: failure.sentence))
                facts.pinningDetected = true
                failure = .pinned(reason: failure.sentence, host: host)
            case .suspicion:
                out.append(.suspectPinning(host: host, reason: failure.sentence))
            case .none:
                break
            }
        }
        return out + fail(failure, reset: false)
    }

    private mutating func start() -> [Command] {
        guard phase == .start else { return [] }
        var out: [Command] = [.openFlow]
        switch settings.frontEnd {
        case .explicitHTTP:
            phase = .frontEnd
            out += [.armTimer(millis: settings.headTimeoutMillis), .peekClient]
        case .socks5:
            phase = .frontEnd
            out += [.armTimer(millis: settings.handshakeTimeoutMillis), .peekClient]
        case .fixed(let destination, let tls) where tls != nil:
            // Reverse mode: nothing goes to the server before the client said something whole.
            aim(at: destination)
            phase = .awaitingHead
            out += [.armTimer(millis: settings.headTimeoutMillis), .peekClient]
        case .fixed(let destination, _):
            out += beginConnect(destination)
        }
        return out
    }

    private mutating func aim(at destination: OriginalDestination) {
        self.destination = destination
        facts.host = destination.hostName
        facts.hostOrigin = destination.hostName == nil ? (destination.origin == .reverse ? .reverse : .none) : destination.origin
        facts.port = destination.port
    }

    private mutating func beginConnect(_ destination: OriginalDestination) -> [Command] {
        aim(at: destination)
        phase = .connecting
        var out: [Command] = [.armTimer(millis: settings.connectTimeoutMillis)]
        if let address = destination.numericAddress {
            addresses = [address]
            nextAddress = 0
            out += connectNext()
        } else {
            out.append(.resolve(host: destination.hostName ?? destination.host, port: destination.port))
        }
        return out
    }

    private mutating func connectNext() -> [Command] {
        guard nextAddress < addresses.count else {
            return upstreamUnreachable(lastConnectError.map { .connect($0) } ?? .noAddress, socksCode: .connectionRefused)
        }
        let address = addresses[nextAddress]
        nextAddress += 1
        return [.connect(address)]
    }

    private mutating func connected(_ address: SocketAddress) -> [Command] {
        facts.server = address.endpoint
        phase = .awaitingFirstBytes
        reader.restart()
        var out: [Command] = [.updateFlow]
        switch settings.frontEnd {
        case .explicitHTTP: out.append(.sendClient(Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8)))
        case .socks5: out.append(.sendClient(SOCKS5Reply.success(boundAddress: .ipv4([0, 0, 0, 0]), boundPort: 0)))
        case .fixed: break
        }
        out += [.armTimer(millis: settings.serverFirstWaitMillis), .watchUpstreamFirstBytes, .peekClient]
        return out
    }

    mutating func upstreamUnreachable(_ why: ConnectionFailure.Unreachable, socksCode: SOCKS5Reply.Code) -> [Command] {
        let failure = ConnectionFailure.unreachable(target: destination.map(\.description) ?? "the server", why)
        // An address-only destination is named by its address, connected or not.
        if facts.server == nil, let address = destination?.numericAddress { facts.server = address.endpoint }
        var out: [Command] = []
        switch settings.frontEnd {
        case .explicitHTTP: out.append(.sendClient(Self.errorResponse(502, "Bad Gateway", failure)))
        case .socks5: out.append(.sendClient(SOCKS5Reply.failure(socksCode)))
        case .fixed: break
        }
        return out + fail(failure, reset: false)
    }

    // MARK: client bytes

    private mutating func clientBytes(_ all: UnsafeRawBufferPointer) -> [Command] {
        switch phase {
        case .frontEnd:
            switch reader.proxyRequest(all, frontEnd: settings.frontEnd) {
            case .needMore: return []
            case let .reply(count, reply): return [.consumeClient(count), .sendClient(reply)]
            case let .connect(count, destination): return [.consumeClient(count)] + beginConnect(destination)
            case .plainHTTP:
                phase = .plainHTTP
                return [.armTimer(millis: 0), .startPlainHTTP]
            case let .refuse(failure, answer): return (answer.map { [.sendClient($0)] } ?? []) + fail(failure, reset: false)
            }
        case .awaitingHead:
            guard let destination, !all.isEmpty else { return [] }
            sawHeadBytes = true
            switch reader.reverseHead(all) {
            case .needMore: return []
            case .connect: return beginConnect(destination)
            case let .refuse(failure, answer): return [.sendClient(answer)] + fail(failure, reset: false)
            }
        case .awaitingFirstBytes:
            return firstBytes(all)
        default:
            return []
        }
    }

    private mutating func firstBytes(_ all: UnsafeRawBufferPointer) -> [Command] {
        var out: [Command] = []
        if !sawClientBytes && all.count > 0 {
            sawClientBytes = true
            // The client spoke: the server-first wait is over; the ClientHello gets the full
            // handshake time (a split ClientHello may take a while, interop case 14).
            out.append(.armTimer(millis: settings.handshakeTimeoutMillis))
        }
        switch reader.clientHello(all) {
        case .needMoreData:
            return out
        case .notTLS:
            if upstreamTLS == true { return plainClientToTLSServer() }
            return relayRaw(status: .notEncrypted, observeServerHello: false)
        case .malformed(let reason):
            return fail(.clientHelloMalformed(reason), reset: false)
        case .clientHello(let hello):
            return received(hello)
        }
    }

    private mutating func received(_ hello: ClientHello) -> [Command] {
        sawClientHello = true
        serverName = hello.normalizedServerName
        // The parsers are done: release what they buffered.
        reader.reset()
        facts.note(hello)
        let sni = hello.normalizedServerName
        guard let destination else { return fail(.internalError("no destination"), reset: true) }
        if upstreamTLS == false {
            // reverse:http:// — the server does not speak TLS; nothing to inspect with.
            return relayRaw(status: .encrypted, observeServerHello: true)
        }
        let target = InterceptionPolicy.Target(sni: sni, destinationHost: destination.hostName ?? destination.host, port: destination.port)
        var decision = settings.policy.decide(target, isPinned: isPinned)
        if decision.action == .inspect, let best = facts.offeredVersions.max(), best < settings.minimumTLSVersion {
            decision = InterceptionPolicy.Decision(action: .passThrough, reason: .clientVersionTooOld)
            let note = ConnectionFailure.clientVersionTooOld(offered: best, minimum: settings.minimumTLSVersion)
            facts.notInspectedReason = note.sentence
            facts.error = note.sentence
        }
        self.decision = decision
        if decision.action == .passThrough {
            return relayRaw(status: decision.passThroughStatus, observeServerHello: true)
        }
        phase = .upstreamHandshake
        // Reverse mode: the server is the configured target, so its certificate must name the
        // target (as nginx's proxy_ssl_name defaults to the proxy_pass host), whatever name the
        // client used; other modes check the name the client asked for.
        let verifyHost = destination.origin == .reverse
            ? (destination.hostName ?? destination.host)
            : (sni ?? destination.hostName ?? destination.host)
        let plan = UpstreamTLSPlan(serverName: sni, alpn: hello.alpnProtocolIDs, verifyHost: verifyHost,
                                   sessionKey: "\(destination.host):\(destination.port)|\(sni ?? "")")
        return [.armTimer(millis: settings.handshakeTimeoutMillis), .startUpstreamTLS(plan), .updateFlow]
    }

    /// `reverse:https://…` and a client that sent plain bytes (an HTTP request): open a TLS leg
    /// to the target (SNI its name, never an IP, RFC 6066 §3; ALPN http/1.1, since the client
    /// speaks HTTP/1 in clear; the certificate must name the target) and relay the client's
    /// plaintext over it. The flow is "not encrypted" (the client's side was in clear) and keeps
    /// the upstream leg's TLS facts.
    private mutating func plainClientToTLSServer() -> [Command] {
        guard let destination else { return fail(.internalError("no destination"), reset: true) }
        plainClientOverTLS = true
        reader.reset()
        phase = .upstreamHandshake
        let name = destination.hostName
        let plan = UpstreamTLSPlan(serverName: name, alpn: [Array("http/1.1".utf8)],
                                   verifyHost: name ?? destination.host,
                                   sessionKey: "\(destination.host):\(destination.port)|\(name ?? "")")
        return [.armTimer(millis: settings.handshakeTimeoutMillis), .startUpstreamTLS(plan), .updateFlow]
    }

    /// The TLS leg to the server of a plain client failed: answer 502 in HTTP (a TLS alert means
    /// nothing to it) and close.
    private mutating func badGateway(_ failure: ConnectionFailure) -> [Command] {
        [.sendClient(Self.errorResponse(502, "Bad Gateway", failure))] + fail(failure, reset: false)
    }

    mutating func relayRaw(status: FlowStatus, observeServerHello: Bool) -> [Command] {
        phase = .relaying
        reader.reset()
        facts.status = status
        return startRelay(.raw(plaintext: status == .notEncrypted, observeServerHello: observeServerHello))
    }

    private mutating func upstreamHandshakeDone(_ done: UpstreamHandshake) -> [Command] {
        guard phase == .upstreamHandshake else { return [] }
        facts.note(done)
        if plainClientOverTLS {
            if let error = done.verifyError, !settings.upstreamInsecure {
                return badGateway(.upstreamCertificate(verifyError: error, clientRefused: false))
            }
            phase = .relaying
            facts.status = .notEncrypted
            return startRelay(.raw(plaintext: true, observeServerHello: false))
        }
        if let error = done.verifyError, !settings.upstreamInsecure {
            return refuse(.upstreamCertificate(verifyError: error, clientRefused: true), alert: TLSAlert.handshakeFailure)
        }
        let identity: LeafIdentity
        do {
            identity = try LeafNamePlan.identity(sni: serverName,
                                                 destinationHost: destination?.host ?? "",
                                                 upstreamSANs: done.certificateSANs)
        } catch let error as CAError {
            return refuse(.leafNameRefused(error.message), alert: TLSAlert.unrecognizedName)
        } catch {
            return refuse(.leafNameError("\(error)"), alert: TLSAlert.internalError)
        }
        phase = .clientHandshake
        return [.armTimer(millis: settings.handshakeTimeoutMillis), .startClientTLS(ClientTLSPlan(identity: identity, alpn: done.alpn)), .updateFlow]
    }

    private mutating func clientGone(reset: Bool) -> [Command] {
        let moment: ConnectionFailure.Moment
        switch phase {
        case .closed, .relaying, .plainHTTP: return []
        case .clientHandshake: return clientHandshakeEnded(.closedDuringHandshake(certificateSent: false))
        case .frontEnd, .start: moment = .beforeProxyRequest
        case .awaitingHead: moment = sawHeadBytes ? .beforeCompleteRequest : .beforeAnything
        case .connecting: moment = .whileConnecting
        case .awaitingFirstBytes: moment = sawClientBytes ? .inClientHello : .beforeAnything
        case .upstreamHandshake: moment = .duringServerHandshake
        }
        return fail(.clientGone(reset: reset, moment), reset: reset)
    }

    mutating func refuse(_ failure: ConnectionFailure, alert: UInt8) -> [Command] {
        phase = .closed
        facts.fail(failure)
        return [.armTimer(millis: 0), .refuseClientTLS(alert: alert)]
    }

    mutating func fail(_ failure: ConnectionFailure, reset: Bool) -> [Command] {
        phase = .closed
        facts.fail(failure)
        return [.armTimer(millis: 0), .close(reset: reset)]
    }

    // MARK: relay phase (facts are written here, the only place they can be)

    private mutating func startRelay(_ plan: RelayPlan) -> [Command] {
        relay.begin(plan, status: facts.status, splice: settings.spliceEncryptedPassThrough)
        return [.armTimer(millis: 0), .relay(plan), .updateFlow]
    }

    /// One burst of `chunk.count` bytes moved in `direction` at `now` (µs): the totals, the
    /// ServerHello read from a pass-through's first server bytes, the client's first data over
    /// our leaf. Called per chunk on the hot path: no allocation; a command only on the first
    /// client data of an inspected flow or when the ServerHello completes.
    @inline(__always)
    mutating func moved(_ chunk: UnsafeRawBufferPointer, _ direction: Direction, atMicros now: Int64) -> Command? {
        facts.lastActivityMicros = now
        if direction == .clientToServer {
            facts.bytesFromClient &+= UInt64(chunk.count)
            guard !relay.clientSpoke else { return nil }
            relay.clientSpoke = true
            guard facts.status == .inspected, let host = pinningHost else { return nil }
            return .clientAccepted(host: host)
        }
        facts.bytesFromServer &+= UInt64(chunk.count)
        guard relay.observing, let hello = relay.observeServerHello(chunk) else { return nil }
        facts.note(hello)
        return .updateFlow
    }

    /// Bytes spliced without being seen: only the totals.
    mutating func spliced(_ count: Int, _ direction: Direction, atMicros now: Int64) {
        facts.lastActivityMicros = now
        if direction == .clientToServer { facts.bytesFromClient &+= UInt64(count) } else { facts.bytesFromServer &+= UInt64(count) }
    }

    private mutating func relayEnded(_ ending: RelayEnding) -> [Command] {
        guard phase == .relaying || phase == .plainHTTP else { return [] }
        phase = .closed
        if let failure = ending.failure { facts.error = failure.sentence }
        var out: [Command] = []
        if facts.status == .inspected, let host = pinningHost,
           let (evidence, reason) = relay.pinningVerdict(settings.detector, clientBytes: facts.bytesFromClient, at: ending.atMicros) {
            facts.error = reason
            out.append(evidence == .definite ? .rememberPinned(host: host, reason: reason) : .suspectPinning(host: host, reason: reason))
        }
        out.append(.close(reset: ending.reset))
        return out
    }
}
