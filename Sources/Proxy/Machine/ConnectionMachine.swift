import LocalCA
import Wire

/// The life of one client connection up to the data phase, as a sans-I/O state machine (the
/// shape of mitmproxy's proxy layers): the driver feeds events, the machine answers commands.
/// Nothing here touches a socket or an OpenSSL handle, so every path is tested by feeding events.
///
/// Phases: front-end (CONNECT / SOCKS5) → resolve → connect → wait for the client's first bytes
/// (or the server's, or a short timeout: server-speaks-first) → ClientHello → policy →
///   pass through (raw relay) | inspect: upstream TLS first, then the client leg with our leaf.
/// Reverse mode first waits for the client (`awaitingHead`): a plain HTTP client's whole first
/// request head, or the first byte of a ClientHello, before anything is opened to the server.
struct ConnectionMachine {
    struct Settings {
        var frontEnd: FrontEndKind
        var policy: InterceptionPolicy
        var upstreamInsecure = false
        var minimumTLSVersion: TLSProtocolVersion = .tls12
        var serverFirstWaitMillis = 300
        var handshakeTimeoutMillis = 10_000
        var connectTimeoutMillis = 10_000
        /// The time a request head may take (`HeadDeadline`): the explicit proxy's request and a
        /// reverse-mode client's first plain head.
        var headTimeoutMillis = 10_000
        var detector = PinningDetector()
    }

    enum Phase: Equatable {
        case start
        case frontEnd
        /// Reverse mode: waiting for a complete plain request head (or a ClientHello's first
        /// byte) before connecting to the server.
        case awaitingHead
        case connecting
        case awaitingFirstBytes
        case upstreamHandshake
        case clientHandshake
        case relaying
        case plainHTTP
        case closed
    }

    /// Facts from a finished upstream handshake.
    struct UpstreamHandshake: Equatable {
        var version: TLSProtocolVersion
        var alpn: [UInt8]?
        /// nil when the certificate verified; else OpenSSL's verify error text.
        var verifyError: String?
        var certificate: ServerCertificateFacts?
        var certificateSANs: [SubjectAlternativeName]
        var resumed: Bool
    }

    /// Facts from a finished client-leg handshake.
    struct ClientHandshake: Equatable {
        var version: TLSProtocolVersion
        var resumed: Bool
    }

    enum Event {
        case start
        /// Every unread byte the client has sent (a peek: the same bytes come again, with more,
        /// until consumed).
        case clientBytes(UnsafeRawBufferPointer)
        /// The client closed or reset before the data phase.
        case clientGone(reset: Bool)
        case resolved([SocketAddress])
        case resolveFailed(String)
        case connected(SocketAddress)
        case connectFailed(String)
        /// The server sent bytes before the client did.
        case upstreamSpokeFirst
        /// The deadline set by `.armTimer` passed.
        case timeout
        case upstreamHandshakeDone(UpstreamHandshake)
        case upstreamHandshakeFailed(String)
        case clientHandshakeDone(ClientHandshake)
        case clientHandshakeFailed(PinningDetector.Ending)
        /// Pass-through: the server's ServerHello was read from the relayed bytes.
        case serverHello(ServerHello)
        /// The data phase is over.
        case relayEnded(RelayEnding)
    }

    struct RelayEnding: Equatable {
        var clientApplicationBytes: UInt64
        var microsSinceHandshake: Int64
        var error: String?
    }

    struct UpstreamTLSPlan: Equatable {
        /// The SNI to send: the client's, never an IP (RFC 6066 §3).
        var serverName: String?
        /// The client's ALPN list, byte for byte.
        var alpn: [[UInt8]]
        /// What the certificate must match: the SNI, else the destination name, else its IP.
        var verifyHost: String
        /// The upstream session cache key.
        var sessionKey: String
    }

    struct ClientTLSPlan: Equatable {
        var identity: LeafIdentity
        /// The protocol to select on the client leg (what the server chose), nil for none.
        var alpn: [UInt8]?
    }

    enum RelayPlan: Equatable {
        /// Bytes as they are. `plaintext`: they are worth recording (not TLS).
        /// `observeServerHello`: read the ServerHello from the server's bytes for the facts.
        case raw(plaintext: Bool, observeServerHello: Bool)
        /// Both TLS legs are up: relay plaintext.
        case decrypted
    }

    enum Command: Equatable {
        case openFlow
        case updateFlow
        /// Start (or keep) delivering `.clientBytes` peeks.
        case peekClient
        /// Drop this many bytes from the front of the client's unread bytes.
        case consumeClient(Int)
        case sendClient([UInt8])
        case resolve(host: String, port: UInt16)
        case connect(SocketAddress)
        /// Deliver `.timeout` after this many ms (replaces the previous deadline); 0 = cancel.
        case armTimer(millis: Int)
        /// Deliver `.upstreamSpokeFirst` if the server sends first.
        case watchUpstreamFirstBytes
        case startUpstreamTLS(UpstreamTLSPlan)
        case startClientTLS(ClientTLSPlan)
        case relay(RelayPlan)
        /// Hand the connection to the plain-HTTP forwarder (absolute-form requests); the head is
        /// still unread.
        case startPlainHTTP
        case rememberPinned(host: String, reason: String)
        /// A close that may be pinning: weigh it (`PinningEvidence`); remember the host if it
        /// tips the balance.
        case suspectPinning(host: String, reason: String)
        /// Drain what the client sent, answer with this fatal TLS alert, close.
        case refuseClientTLS(alert: UInt8)
        /// The client's request head was not complete in time (`HeadDeadline`): count it.
        case countHeadTimeout
        case close(reset: Bool)
    }

    let settings: Settings
    private let isPinned: (String) -> Bool
    private(set) var phase: Phase = .start
    var facts: FlowFacts
    private(set) var destination: OriginalDestination?
    /// The client's SNI, normalised (the ClientHello itself is not kept: an idle connection
    /// should hold as little as possible).
    private(set) var serverName: String?
    private(set) var sawClientHello = false
    private(set) var decision: InterceptionPolicy.Decision?
    private var httpParser = HTTPRequestHeadParser()
    private var socksParser = SOCKS5HandshakeParser()
    private var helloParser = ClientHelloParser()
    /// How many of the client's unread bytes the current parser has already seen.
    private var fed = 0
    private var addresses: [SocketAddress] = []
    private var nextAddress = 0
    private var lastConnectError = ""
    private var sawClientBytes = false
    /// Reverse mode: the client sent something while tv waited for its head.
    private var sawHeadBytes = false
    /// Reverse mode to an HTTPS server, and the client spoke plain HTTP: tv is the TLS client of
    /// the server and relays the client's plaintext over that leg (mitmproxy's reverse mode does
    /// the same).
    private var plainClientOverTLS = false

    init(settings: Settings, facts: FlowFacts, isPinned: @escaping (String) -> Bool) {
        self.settings = settings
        self.facts = facts
        self.isPinned = isPinned
    }

    /// Whether the client's unread bytes are wanted now (`.clientBytes` peeks).
    var readsClient: Bool { phase == .frontEnd || phase == .awaitingHead || phase == .awaitingFirstBytes }

    var upstreamTLS: Bool? {
        if case .fixed(_, let tls) = settings.frontEnd { return tls }
        return nil
    }

    // MARK: events

    mutating func handle(_ event: Event) -> [Command] {
        switch event {
        case .start: return start()
        case .clientBytes(let bytes): return clientBytes(bytes)
        case .clientGone(let reset): return clientGone(reset: reset)
        case .resolved(let list):
            guard phase == .connecting else { return [] }
            addresses = list
            nextAddress = 0
            return connectNext()
        case .resolveFailed(let message):
            guard phase == .connecting else { return [] }
            return upstreamUnreachable(message, socksCode: .hostUnreachable)
        case .connected(let address):
            guard phase == .connecting else { return [] }
            return connected(address)
        case .connectFailed(let message):
            guard phase == .connecting else { return [] }
            lastConnectError = message
            return connectNext()
        case .upstreamSpokeFirst:
            guard phase == .awaitingFirstBytes, !sawClientBytes else { return [] }
            return relayRaw(status: .notEncrypted, observeServerHello: false)
        case .timeout: return timeout()
        case .upstreamHandshakeDone(let done): return upstreamHandshakeDone(done)
        case .upstreamHandshakeFailed(let reason):
            guard phase == .upstreamHandshake else { return [] }
            if plainClientOverTLS { return badGateway("the TLS handshake with the server failed (\(reason))") }
            return refuse("the TLS handshake with the server failed (\(reason)); the client was refused",
                          alert: reason.contains("version") ? TLSAlert.protocolVersion : TLSAlert.handshakeFailure)
        case .clientHandshakeDone(let done):
            guard phase == .clientHandshake else { return [] }
            phase = .relaying
            facts.status = .inspected
            facts.clientTLSVersion = done.version
            facts.clientResumed = done.resumed
            return [.armTimer(millis: 0), .relay(.decrypted), .updateFlow]
        case .clientHandshakeFailed(let ending):
            guard phase == .clientHandshake else { return [] }
            let verdict = settings.detector.judge(ending)
            var out: [Command] = []
            var reason = verdict.reason ?? "the client's TLS handshake failed"
            if let host = pinningHost {
                switch verdict.evidence {
                case .definite:
                    out.append(.rememberPinned(host: host, reason: reason))
                    facts.pinningDetected = true
                    reason += "; \(host) will be passed through from now on"
                case .suspicion:
                    out.append(.suspectPinning(host: host, reason: reason))
                case .none:
                    break
                }
            }
            return out + fail(reason, reset: false)
        case .serverHello(let hello):
            guard phase == .relaying else { return [] }
            facts.clientTLSVersion = TLSProtocolVersion(rawValue: hello.negotiatedVersion)
            facts.alpn = hello.alpnProtocol
            facts.versionSource = .serverHello
            return [.updateFlow]
        case .relayEnded(let ending):
            guard phase == .relaying || phase == .plainHTTP else { return [] }
            phase = .closed
            if let error = ending.error { facts.error = error }
            if facts.status == .inspected {
                let verdict = settings.detector.judge(.closedAfterHandshake(applicationBytes: ending.clientApplicationBytes,
                                                                             elapsedMicros: ending.microsSinceHandshake))
                if verdict.evidence != .none, let host = pinningHost, let reason = verdict.reason {
                    facts.error = reason
                    return [verdict.evidence == .definite ? .rememberPinned(host: host, reason: reason) : .suspectPinning(host: host, reason: reason)]
                }
            }
            return []
        }
    }

    /// The name pinning is remembered under: the SNI, else the destination host.
    var pinningHost: String? { serverName ?? destination?.hostName ?? destination?.host }

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
            return upstreamUnreachable(lastConnectError.isEmpty ? "no address to connect to" : lastConnectError, socksCode: .connectionRefused)
        }
        let address = addresses[nextAddress]
        nextAddress += 1
        return [.connect(address)]
    }

    private mutating func connected(_ address: SocketAddress) -> [Command] {
        facts.server = address.endpoint
        phase = .awaitingFirstBytes
        fed = 0
        var out: [Command] = [.updateFlow]
        switch settings.frontEnd {
        case .explicitHTTP: out.append(.sendClient(Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8)))
        case .socks5: out.append(.sendClient(SOCKS5Reply.success(boundAddress: .ipv4([0, 0, 0, 0]), boundPort: 0)))
        case .fixed: break
        }
        out += [.armTimer(millis: settings.serverFirstWaitMillis), .watchUpstreamFirstBytes, .peekClient]
        return out
    }

    private mutating func upstreamUnreachable(_ message: String, socksCode: SOCKS5Reply.Code) -> [Command] {
        let target = destination.map(\.description) ?? "the server"
        let reason = "tv could not connect to \(target) (\(message))"
        // An address-only destination is named by its address, connected or not.
        if facts.server == nil, let address = destination?.numericAddress { facts.server = address.endpoint }
        var out: [Command] = []
        switch settings.frontEnd {
        case .explicitHTTP: out.append(.sendClient(Self.errorResponse(502, "Bad Gateway", reason)))
        case .socks5: out.append(.sendClient(SOCKS5Reply.failure(socksCode)))
        case .fixed: break
        }
        return out + fail(reason, reset: false)
    }

    private mutating func timeout() -> [Command] {
        switch phase {
        case .frontEnd:
            if case .explicitHTTP = settings.frontEnd { return headTimedOut() }
            return fail("the client sent no complete proxy request within \(settings.handshakeTimeoutMillis / 1000) s", reset: false)
        case .awaitingHead:
            return headTimedOut()
        case .connecting:
            return upstreamUnreachable("no answer within \(settings.connectTimeoutMillis / 1000) s", socksCode: .ttlExpired)
        case .awaitingFirstBytes:
            if !sawClientBytes { return relayRaw(status: .notEncrypted, observeServerHello: false) }
            return fail("the client's ClientHello did not complete within \(settings.handshakeTimeoutMillis / 1000) s", reset: false)
        case .upstreamHandshake:
            return refuse("the TLS handshake with the server did not finish within \(settings.handshakeTimeoutMillis / 1000) s; the client was refused", alert: TLSAlert.handshakeFailure)
        case .clientHandshake:
            return fail("the client's TLS handshake did not finish within \(settings.handshakeTimeoutMillis / 1000) s", reset: false)
        case .start, .relaying, .plainHTTP, .closed:
            return []
        }
    }

    /// The request head did not come whole in time: 408 (nothing was sent to the client yet),
    /// counted, closed.
    private mutating func headTimedOut() -> [Command] {
        [.countHeadTimeout, .sendClient(HeadDeadline.requestTimeoutResponse(limitMillis: settings.headTimeoutMillis))]
            + fail(HeadDeadline.reason(limitMillis: settings.headTimeoutMillis), reset: false)
    }

    // MARK: client bytes

    private mutating func clientBytes(_ all: UnsafeRawBufferPointer) -> [Command] {
        switch phase {
        case .frontEnd:
            return frontEndBytes(all)
        case .awaitingHead:
            return headBytes(all)
        case .awaitingFirstBytes:
            return firstBytes(all)
        default:
            return []
        }
    }

    private mutating func newBytes(_ all: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let start = min(fed, all.count)
        fed = all.count
        return UnsafeRawBufferPointer(rebasing: all[start...])
    }

    private mutating func frontEndBytes(_ all: UnsafeRawBufferPointer) -> [Command] {
        let fresh = newBytes(all)
        switch settings.frontEnd {
        case .explicitHTTP:
            switch httpParser.feed(fresh) {
            case .needMoreData:
                return []
            case .malformed(let reason):
                return [.sendClient(Self.errorResponse(400, "Bad Request", "tv is an HTTP proxy and could not read this request: \(reason)"))]
                    + fail("the client's proxy request was not understood: \(reason)", reset: false)
            case .head(let head):
                switch head.requestTarget {
                case .authority(let hostPort) where head.isConnect:
                    fed -= head.byteCount
                    return [.consumeClient(head.byteCount)]
                        + beginConnect(OriginalDestination(host: hostPort.host, port: hostPort.port, origin: .connect))
                case .absolute(let scheme, _, _) where scheme == "http" && !head.isConnect:
                    phase = .plainHTTP
                    return [.armTimer(millis: 0), .startPlainHTTP]
                default:
                    let why = "tv takes CONNECT host:port or absolute-form http:// requests, not '\(head.method) \(head.target)'"
                    return [.sendClient(Self.errorResponse(400, "Bad Request", why))] + fail(why, reset: false)
                }
            }
        case .socks5:
            switch socksParser.feed(fresh) {
            case .needMoreData:
                return []
            case let .greeting(greeting, reply):
                let length = 2 + greeting.methods.count
                fed -= length
                return [.consumeClient(length), .sendClient(reply)]
            case .request(let request):
                let length = fed - socksParser.unconsumedBytes.count
                fed -= length
                let host: String
                switch request.destination {
                case .domain(let name): host = name
                default: host = request.destination.description
                }
                return [.consumeClient(length)]
                    + beginConnect(OriginalDestination(host: host, port: request.port, origin: .socks))
            case let .refused(reason, reply):
                return [.sendClient(reply)] + fail("the SOCKS5 request was refused: \(reason)", reset: false)
            case .malformed(let reason):
                return fail("the client's SOCKS5 handshake was not understood: \(reason)", reset: false)
            }
        case .fixed:
            return []
        }
    }

    /// Reverse mode before connecting: a TLS client connects at its first byte (its ClientHello
    /// is read, under the handshake deadline, once connected); a plain one once its first
    /// request head is whole. The bytes stay unread for the phases after the connect.
    private mutating func headBytes(_ all: UnsafeRawBufferPointer) -> [Command] {
        guard let destination, let first = all.first else { return [] }
        sawHeadBytes = true
        if first == 0x16 && fed == 0 { return beginConnect(destination) }
        // HTTP/2 with prior knowledge (RFC 9113 §3.3): the whole connection preface is its head.
        let preface = Self.http2Preface
        if all.count <= preface.count ? all.elementsEqual(preface.prefix(all.count)) : all.prefix(preface.count).elementsEqual(preface) {
            return all.count >= preface.count ? beginConnect(destination) : []
        }
        switch httpParser.feed(newBytes(all)) {
        case .needMoreData:
            return []
        case .malformed(let reason):
            // A whole head tv would not accept itself (no Host, say) is the server's to judge,
            // as before: tv's reverse mode relays requests, it does not police them. Bytes that
            // cannot begin a head, or a head too long to end, are refused.
            if Self.containsHeadEnd(all) {
                httpParser = HTTPRequestHeadParser()
                return beginConnect(destination)
            }
            return [.sendClient(Self.errorResponse(400, "Bad Request", "tv could not read this request: \(reason)"))]
                + fail("the client's request was not understood: \(reason)", reset: false)
        case .head:
            httpParser = HTTPRequestHeadParser()
            return beginConnect(destination)
        }
    }

    /// Whether `bytes` hold the empty line that ends a head (CRLF CRLF, or bare LF LF as RFC 9112
    /// §2.2 lets a recipient accept).
    static func containsHeadEnd(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // Whether a line feed ended a line; carriage returns do not count as content.
        var afterLineFeed = false
        for byte in bytes {
            if byte == 0x0A {
                if afterLineFeed { return true }
                afterLineFeed = true
            } else if byte != 0x0D {
                afterLineFeed = false
            }
        }
        return false
    }

    /// `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`.
    static let http2Preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    private mutating func firstBytes(_ all: UnsafeRawBufferPointer) -> [Command] {
        var out: [Command] = []
        if !sawClientBytes && all.count > 0 {
            sawClientBytes = true
            // The client spoke: the server-first wait is over; the ClientHello gets the full
            // handshake time (a split ClientHello may take a while, interop case 14).
            out.append(.armTimer(millis: settings.handshakeTimeoutMillis))
        }
        let fresh = newBytes(all)
        switch helloParser.feed(fresh) {
        case .needMoreData:
            return out
        case .notTLS:
            if upstreamTLS == true { return plainClientToTLSServer() }
            return relayRaw(status: .notEncrypted, observeServerHello: false)
        case .malformed(let reason):
            return fail("the client sent a malformed TLS ClientHello (\(reason))", reset: false)
        case .clientHello(let hello):
            return received(hello)
        }
    }

    private mutating func received(_ hello: ClientHello) -> [Command] {
        sawClientHello = true
        serverName = hello.normalizedServerName
        // The parsers are done: release what they buffered.
        helloParser = ClientHelloParser()
        httpParser = HTTPRequestHeadParser()
        socksParser = SOCKS5HandshakeParser()
        let offered = hello.supportedVersions.isEmpty ? [hello.legacyVersion] : hello.supportedVersions
        facts.offeredVersions = offered.filter { !GREASE.isReserved($0) }.map(TLSProtocolVersion.init(rawValue:))
        facts.offeredALPN = hello.alpnProtocols
        let sni = hello.normalizedServerName
        if let sni {
            facts.host = sni
            facts.hostOrigin = .sni
        }
        guard let destination else { return fail("internal error: no destination", reset: true) }
        if upstreamTLS == false {
            // reverse:http:// — the server does not speak TLS; nothing to inspect with.
            return relayRaw(status: .encrypted, observeServerHello: true)
        }
        let target = InterceptionPolicy.Target(sni: sni, destinationHost: destination.hostName ?? destination.host, port: destination.port)
        var decision = settings.policy.decide(target, isPinned: isPinned)
        if decision.action == .inspect, let best = facts.offeredVersions.max(), best < settings.minimumTLSVersion {
            decision = InterceptionPolicy.Decision(action: .passThrough, reason: .clientVersionTooOld)
            facts.error = "the client offers only \(best), below tv's minimum \(settings.minimumTLSVersion); passed through"
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
        guard let destination else { return fail("internal error: no destination", reset: true) }
        plainClientOverTLS = true
        helloParser = ClientHelloParser()
        httpParser = HTTPRequestHeadParser()
        socksParser = SOCKS5HandshakeParser()
        phase = .upstreamHandshake
        let name = destination.hostName
        let plan = UpstreamTLSPlan(serverName: name, alpn: [Array("http/1.1".utf8)],
                                   verifyHost: name ?? destination.host,
                                   sessionKey: "\(destination.host):\(destination.port)|\(name ?? "")")
        return [.armTimer(millis: settings.handshakeTimeoutMillis), .startUpstreamTLS(plan), .updateFlow]
    }

    /// The TLS leg to the server of a plain client failed: answer 502 in HTTP (a TLS alert means
    /// nothing to it) and close.
    private mutating func badGateway(_ reason: String) -> [Command] {
        [.sendClient(Self.errorResponse(502, "Bad Gateway", reason))] + fail(reason, reset: false)
    }

    private mutating func relayRaw(status: FlowStatus, observeServerHello: Bool) -> [Command] {
        phase = .relaying
        helloParser = ClientHelloParser()
        httpParser = HTTPRequestHeadParser()
        socksParser = SOCKS5HandshakeParser()
        facts.status = status
        return [.armTimer(millis: 0), .relay(.raw(plaintext: status == .notEncrypted, observeServerHello: observeServerHello)), .updateFlow]
    }

    private mutating func upstreamHandshakeDone(_ done: UpstreamHandshake) -> [Command] {
        guard phase == .upstreamHandshake else { return [] }
        facts.upstreamTLSVersion = done.version
        facts.versionSource = .upstreamLeg
        facts.alpn = done.alpn.map { String(decoding: $0, as: UTF8.self) }
        facts.serverCertificate = done.certificate
        facts.upstreamVerified = done.verifyError == nil
        facts.upstreamResumed = done.resumed
        if plainClientOverTLS {
            if let error = done.verifyError, !settings.upstreamInsecure {
                return badGateway("the server's certificate does not verify (\(error)); nothing was sent to it")
            }
            phase = .relaying
            facts.status = .notEncrypted
            return [.armTimer(millis: 0), .relay(.raw(plaintext: true, observeServerHello: false)), .updateFlow]
        }
        if let error = done.verifyError, !settings.upstreamInsecure {
            return refuse("the server's certificate does not verify (\(error)); nothing was forged and the client was refused",
                          alert: TLSAlert.handshakeFailure)
        }
        let identity: LeafIdentity
        do {
            identity = try LeafNamePlan.identity(sni: serverName,
                                                 destinationHost: destination?.host ?? "",
                                                 upstreamSANs: done.certificateSANs)
        } catch let error as CAError {
            return refuse("tv cannot make a certificate for this name: \(error.message)", alert: TLSAlert.unrecognizedName)
        } catch {
            return refuse("tv cannot make a certificate for this name (\(error))", alert: TLSAlert.internalError)
        }
        phase = .clientHandshake
        return [.armTimer(millis: settings.handshakeTimeoutMillis), .startClientTLS(ClientTLSPlan(identity: identity, alpn: done.alpn)), .updateFlow]
    }

    private mutating func clientGone(reset: Bool) -> [Command] {
        switch phase {
        case .closed, .relaying, .plainHTTP: return []
        case .clientHandshake:
            return handle(.clientHandshakeFailed(.closedDuringHandshake(certificateSent: false)))
        default:
            let when: String
            switch phase {
            case .frontEnd, .start: when = "before sending a proxy request"
            case .awaitingHead: when = sawHeadBytes ? "before sending a complete request" : "before sending anything"
            case .connecting: when = "while tv was connecting to the server"
            case .awaitingFirstBytes: when = sawClientBytes ? "in the middle of its ClientHello" : "before sending anything"
            default: when = "during the server's TLS handshake"
            }
            return fail("the client \(reset ? "reset" : "closed") the connection \(when)", reset: reset)
        }
    }

    private mutating func refuse(_ reason: String, alert: UInt8) -> [Command] {
        phase = .closed
        facts.status = .failed(reason: reason)
        facts.error = reason
        return [.armTimer(millis: 0), .refuseClientTLS(alert: alert)]
    }

    private mutating func fail(_ reason: String, reset: Bool) -> [Command] {
        phase = .closed
        facts.status = .failed(reason: reason)
        facts.error = reason
        return [.armTimer(millis: 0), .close(reset: reset)]
    }

    /// A short HTTP error response from the proxy itself.
    /// A whole `Connection: close` response with a one-line plain-text body naming tv as the
    /// speaker once: "tv: " goes before `message` unless it already starts with "tv ".
    static func errorResponse(_ code: Int, _ text: String, _ message: String) -> [UInt8] {
        let body = (message.hasPrefix("tv ") ? message : "tv: " + message) + "\n"
        let head = "HTTP/1.1 \(code) \(text)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        return Array((head + body).utf8)
    }
}
