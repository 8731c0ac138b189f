import LocalCA
import Wire
import FlowTerms

/// The life of one client connection, as a sans-I/O state machine (the shape of mitmproxy's
/// proxy layers): the driver (`ProxyConnection`) feeds events, the machine answers commands and
/// keeps the flow's facts. Nothing here touches a socket or an OpenSSL handle, so every path is
/// tested by feeding events.
///
/// Phases: front-end (CONNECT / SOCKS5) → resolve → connect → wait for whoever speaks first
/// (the client's first bytes, however late, or the server's: server-speaks-first) →
/// ClientHello → policy →
///   pass through (raw relay) | inspect: upstream TLS first, then the client leg with our leaf
///   (the upstream failed: the leg anyway, for an HTTP/1 client, whose first request gets a 502,
///   `ConnectionMachine+UpstreamFailure.swift`) → relay (burst totals, first client data, a TLS handshake inside a plain relay, the end,
///   pinning suspicion) → closed.
/// Reverse mode first waits for the client (`awaitingHead`): a plain HTTP client's whole first
/// request head, or the first byte of a ClientHello, before anything is opened to the server.
/// Events and commands: `ConnectionVocabulary.swift`; the first bytes' parsers: `FrontEndReader`.
struct ConnectionMachine {
    let settings: Settings
    /// Pinning memory's answer for this connection's key, asked once, when the ClientHello is
    /// decided (the driver asks `PinningMemory`, then `PinningEvidence` for a retry; the second
    /// argument is when this connection began).
    private let recall: (PinKey, Int64) -> PinningRecall?
    /// Set by the machine and its extensions only; the driver reads it (`Phase.io`).
    var phase: Phase = .start
    private(set) var facts: FlowFacts
    private(set) var destination: OriginalDestination?
    /// The client's SNI, normalised (the ClientHello itself is not kept: an idle connection
    /// should hold as little as possible).
    private(set) var serverName: String?
    /// How the client's program speaks TLS (`ClientHelloFingerprint`), for the pinning key.
    private(set) var helloFingerprint: String?
    /// Which of the three client-leg kinds this connection ended as (`ClientLegOutcome`), for
    /// the counters; nil for none.
    private(set) var outcome: ClientLegOutcome?
    private(set) var sawClientHello = false
    /// The leaf key types the client's ClientHello can use (`LeafKeyPlan.keyTypes`).
    private(set) var leafKeyTypes: [KeyType] = []
    private(set) var decision: InterceptionPolicy.Decision?
    /// Why the connection failed, when it did (`tv diag` counts takeovers by leg and reason).
    private(set) var failure: ConnectionFailure?
    /// How the relay ended when it ended in a failure (a reset, a broken leg, idle): the flow
    /// kept going until then, so this is not `failure`; the decrypted capture ends its stream
    /// with RST for a reset (`ConnectionFailure.cutsOff`).
    private(set) var relayEndedBy: ConnectionFailure?
    /// The client's bytes were refused while earlier requests waited for their responses
    /// (`ExchangeRefusal.awaitsResponses`): why, while the answer waits.
    private(set) var heldBy: ConnectionFailure?
    // The front-end and connect state below is written only by the machine's own files
    // (`+ClientBytes`, `+Connect`); facts, the phase's facts and the decision stay private(set).
    var reader: FrontEndReader
    var addresses: [SocketAddress] = []
    var nextAddress = 0
    var lastConnectError: Errno?
    var sawClientBytes = false
    /// Reverse mode: the client sent something while tv waited for its head.
    var sawHeadBytes = false
    /// Reverse mode: the client's first bytes were an HTTP/1 request head (not a ClientHello or
    /// HTTP/2's preface), so a server tv cannot reach is answered with a 502 in HTTP/1.
    var headWasHTTP1 = false
    /// Reverse mode: the client's first byte began a TLS record (a ClientHello).
    var headWasTLS = false
    /// A server tv could not reach whose client has not been read yet (reverse mode's TLS client
    /// of an HTTPS target; transparent mode, which connects before the client speaks): the
    /// failure its first bytes are answered with once read, a 502 in HTTP/1 to a request head,
    /// over tv's leg to a ClientHello (as for a server whose handshake failed,
    /// `upstreamFailed`). Closed at once, curl read `SSL_ERROR_SYSCALL` or "Empty reply from
    /// server" where the explicit proxy's client read tv's 502 saying why (a trial).
    var unreachableToAnswer: ConnectionFailure?

    /// How long a transparent client tv could not find a server for is waited for to speak
    /// (ms): most send their request with the connect; one that waits for the server to speak
    /// (SSH) is closed then.
    static let unreachableAnswerWaitMillis = 1_000
    /// Reverse mode to an HTTPS server, and the client spoke plain HTTP: tv is the TLS client of
    /// the server and relays the client's plaintext over that leg (mitmproxy's reverse mode does
    /// the same).
    private(set) var plainClientOverTLS = false
    /// That plain client began with HTTP/2's connection preface (prior knowledge, RFC 9113 §3.3).
    private(set) var plainClientSpeaksH2 = false
    /// The client's FIN or reset was here when its TLS leg started: not a pinning signal.
    private var clientClosedBeforeFlight = false
    /// The upstream handshake failed and tv's leg to the client is completed only to answer
    /// its first request with a 502 that says this (`ConnectionMachine+UpstreamFailure.swift`).
    var answering: ConnectionFailure?
    /// What the client sent over that leg while it was not yet known to speak HTTP
    /// (`HTTPRequestStart`; at most its line limit and one read).
    var answeringStart: [UInt8] = []
    /// The relay phase: see `ConnectionMachine+Relay.swift`.
    private(set) var relay = RelayState()
    /// When the relay's moving bytes are next told (`.updateFlow`).
    private var progress: FlowProgressReport

    init(settings: Settings, facts: FlowFacts, recall: @escaping (PinKey, Int64) -> PinningRecall?) {
        self.settings = settings
        reader = FrontEndReader(credentials: settings.proxyCredentials)
        self.facts = facts
        self.recall = recall
        progress = FlowProgressReport(startMicros: facts.startMicros)
    }

    /// A 502 went to the client in the data phase (`ConnectionMachine+ClientCertificate.swift`
    /// sets it): closing lets it arrive.
    var answeredInRelay = false

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
        case .upstreamClosedFirst:
            // Nothing was said either way: not a plain-text relay (a trial's empty tunnel, closed
            // by the server's idle timeout, read "not encrypted — plain bytes").
            guard phase == .awaitingFirstBytes, !sawClientBytes else { return [] }
            return fail(.serverClosedFirst, reset: false)
        case .timeout: return timeout()
        case .upstreamHandshakeDone(let done): return upstreamHandshakeDone(done)
        case .upstreamHandshakeFailed(let failure):
            guard phase == .upstreamHandshake else { return [] }
            let certificate = ClientCertificateVerdict.failure(failure)
            // A plain HTTP/2 client's server that refuses h2 in its handshake (alert
            // no_application_protocol, RFC 7301 §3.2: nginx without http2) lacks HTTP/2 as one
            // that chose another protocol does (it read as a failed handshake: a re-check).
            if plainClientOverTLS, plainClientSpeaksH2, certificate == nil, failure.peerAlert == TLSAlert.noApplicationProtocol {
                return badGateway(.serverLacksHTTP2(chosen: nil))
            }
            if plainClientOverTLS { return badGateway(certificate ?? .upstreamHandshake(failure.text, answer: .badGateway)) }
            if let certificate { return upstreamFailed(alert: TLSAlert.handshakeFailure, certificate) }
            // The server's no_application_protocol (RFC 7301 §3.2: none of the offered ALPN ids)
            // is the client's to hear as such, as it would directly (it heard handshake_failure:
            // a trial's curl said "handshake failure" where direct it said "no application protocol").
            let alert = failure.peerAlert == TLSAlert.noApplicationProtocol ? TLSAlert.noApplicationProtocol
                : failure.versionMismatch ? TLSAlert.protocolVersion : TLSAlert.handshakeFailure
            return upstreamFailed(alert: alert, .upstreamHandshake(failure.text, answer: .badGateway))
        case .clientTLSStarted(let closed):
            clientClosedBeforeFlight = closed
            return []
        case .clientHandshakeDone(let done):
            guard phase == .clientHandshake else { return [] }
            // The client leg is up either way (also when it only carries a 502): say its version.
            facts.clientTLSVersion = done.version
            facts.clientResumed = done.resumed
            if answering != nil { return answeringLegUp() }
            phase = .relaying
            facts.status = .inspected
            relay.handshakeDoneMicros = done.atMicros
            return startRelay(.decrypted)
        case .clientHandshakeFailed(let failed):
            guard phase == .clientHandshake else { return [] }
            return clientHandshakeEnded(failed.ending(clientClosedBeforeFlight: clientClosedBeforeFlight))
        case .clientRequestBytes(let bytes):
            guard phase == .answering else { return [] }
            return answeringBytes(bytes)
        case .exchangeRefused(let refusal):
            guard phase == .relaying else { return [] }
            // Earlier requests wait for their responses: those go on, the client's bytes do not,
            // and the answer comes once they have (the reader says when); the flow says why now,
            // so it does if the connection ends first.
            if refusal.awaitsResponses {
                guard heldBy == nil else { return [] }
                heldBy = refusal.failure
                facts.error = refusal.failure.sentence
                return [.holdClient, .updateFlow]
            }
            // The plain path's answers: tv's 400 to a request (RFC 9112 §6.3, RFC 9110 §5.5) or
            // 502 in a response's place, then the close; a reset where no answer fits; a close
            // after the responses asked for. Nothing of the refused bytes went on, and the flow
            // says why.
            phase = .closed
            relayEndedBy = refusal.failure
            // The held refusal's own answer says nothing new; another (the server's response
            // refused meanwhile) comes after it.
            if let held = heldBy, held != refusal.failure {
                facts.error = held.sentence + "; then " + refusal.failure.sentence
            } else {
                facts.error = refusal.failure.sentence
            }
            switch refusal.answer {
            case .status(let status): return [.sendClient(Self.errorResponse(status, refusal.failure)), .deliverThenClose(to: .client, reset: false)]
            case .reset: return [.close(reset: true)]
            case .close: return [.deliverThenClose(to: .client, reset: false)]
            case .goaway(let error):
                // RFC 9113 §5.4.1: a GOAWAY with the error's code to its sender; the other side's
                // GOAWAY INTERNAL_ERROR goes on after what it was sent, then both close.
                let frames = error.goaways
                func send(_ bytes: [UInt8], to side: ConnectionFailure.Side) -> Command { side == .client ? .sendClient(bytes) : .sendServer(bytes) }
                guard let other = frames.toOther else { return [send(frames.toSender, to: error.sentBy), .close(reset: false)] }
                return [send(frames.toSender, to: error.sentBy), send(other, to: error.otherSide),
                        .deliverThenClose(to: error.otherSide, reset: false)]
            }
        case .requestHeadLate(let answerable):
            guard phase == .relaying else { return [] }
            // As the plain path and reverse mode's first head: 408 and the close, counted; no
            // 408 where an earlier request waits for its response (it would be read as that one's).
            let failure = ConnectionFailure.headTimeout(limitMillis: settings.headTimeoutMillis)
            phase = .closed
            relayEndedBy = failure
            facts.error = failure.sentence
            guard HeadDeadline.ending(responseUnderWay: !answerable) == .requestTimeout else { return [.countHeadTimeout, .close(reset: false)] }
            return [.countHeadTimeout, .sendClient(HeadDeadline.requestTimeoutResponse(limitMillis: settings.headTimeoutMillis)),
                    .deliverThenClose(to: .client, reset: false)]
        case .exchangeNotHTTP(let start):
            // Said on an inspected flow, which tv decrypted to read; a plain relay of another
            // protocol (SSH, SMTP) is no news: its status says tv only relayed it.
            guard facts.status == .inspected, facts.error == nil else { return [] }
            facts.error = ConnectionFailure.notReadAsHTTP(start).sentence
            return [.updateFlow]
        case .readingNote(let note):
            guard facts.error == nil else { return [] }
            facts.error = note.sentence
            return [.updateFlow]
        case .requestRowsLeftOut(let count):
            // Told with the flow's next report (every 2 s while bytes move, and at its end).
            facts.requestsLeftOut = UInt64(max(0, count))
            return []
        case .failed(let failure):
            guard phase != .closed else { return [] }
            return fail(failure, reset: false)
        case .leafMintFailed(let text):
            guard phase != .closed else { return [] }
            // No leaf for tv's error page: the client gets the alert, the flow the server's reason.
            if let answering { return refuse(answering, alert: TLSAlert.internalError) }
            phase = .closed
            facts.error = ConnectionFailure.leafMint(text).sentence
            return [.armTimer(millis: 0), .refuseClientTLS(alert: TLSAlert.internalError)]
        case let .pinningWeighed(key, sign, weight):
            // A quiet close after the handshake (the relay's) is said as what the evidence made
            // of it: a sign of pinning, or a connection the client did not use (another of its
            // connections held tv's certificate, or it used it for this host): no error, and not
            // counted as possible pinning (a trial's `tv diag` counted Chromium's spares so).
            if sign == .quietCloseAfterHandshake {
                guard weight.isEvidence else { return [] }
                outcome = .possiblePinning
                facts.error = ConnectionFailure.possiblePinning(sign, passThrough: nil).sentence
            }
            // The closes tipped the balance: the client's next connection passes through (and is
            // remembered then, when it came back: `PinningEvidenceRule`).
            guard weight == .counted(tipped: true) else { return [] }
            let failure = ConnectionFailure.possiblePinning(sign, passThrough: key)
            facts.error = failure.sentence  // a failed flow's reason too (`failureReason` reads it)
            return []
        case let .idle(now, waiting):
            guard phase == .relaying else { return [] }
            let seconds = settings.idleTimeoutSeconds
            switch waiting {
            case .nothing:
                return relayEnded(RelayEnding(failure: .idle(seconds: seconds), atMicros: now))
            case .reading(let side):
                return relayEnded(RelayEnding(failure: .stoppedReading(side, seconds: seconds), atMicros: now))
            case .response:
                // As the plain-HTTP path answers a server that never began its response (a
                // trial's inspected request to a silent server got a bare close).
                let failure = ConnectionFailure.noResponse(seconds: seconds)
                return [.answerWaitingRequest(Self.errorResponse(504, failure))] + relayEnded(RelayEnding(failure: failure, atMicros: now))
            }
        case .progressQuiet(let now):
            guard phase == .relaying, progress.trailing(atMicros: now) else { return [] }
            return [.updateFlow]
        case .relayEnded(let ending): return relayEnded(ending)
        case let .shutdown(now, betweenExchanges, holdsNothing):
            guard phase != .closed else { return [] }
            if facts.error == nil { facts.error = ConnectionFailure.stopped.sentence }
            // A reset would cut nothing only between exchanges with nothing left in tv; even then
            // it would discard what the client's socket holds unread (a trial's 1 MiB response:
            // its row said complete, the client read 128,000 bytes and then the reset).
            if phase == .relaying {
                return relayEnded(RelayEnding(failure: nil, reset: !(betweenExchanges && holdsNothing), atMicros: now))
            }
            phase = .closed
            return [.close(reset: true)]
        }
    }

    /// tv's handshake with the client failed: the flow fails as `clientLegEnding` says.
    private mutating func clientHandshakeEnded(_ ending: PinningDetector.Ending) -> [Command] {
        // A leg completed only to answer the server's failure teaches pinning memory nothing.
        if let answering { return fail(answering, reset: false) }
        let end = Self.clientLegEnding(settings.detector.judge(ending), key: settings.remembersClients ? pinKey : nil)
        if case .remember? = end.memory { facts.pinningDetected = true }
        return (end.memory.map { [$0] } ?? []) + fail(end.failure, reset: false)
    }

    private mutating func start() -> [Command] {
        guard phase == .start else { return [] }
        var out: [Command] = [settings.flowAlreadyOpened ? .updateFlow : .openFlow]
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

    mutating func aim(at destination: OriginalDestination) {
        self.destination = destination
        facts.host = destination.hostName
        facts.hostOrigin = destination.hostName == nil ? (destination.origin == .reverse ? .reverse : .none) : destination.origin
        facts.nameFromDNS(destination.inferredNames)
        facts.port = destination.port
        if let asked = destination.dnsServerAsked {
            facts.dnsServerAsked = asked
            facts.dnsAskedAddress = destination.host
        }
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
        // Who speaks first decides, however long it takes: a client that sends its ClientHello
        // late is inspected like a prompt one, a server that speaks first is relayed as is.
        // Until then the wait is an idle connection, closed after the idle time.
        out += [.armTimer(millis: settings.idleTimeoutSeconds * 1000), .watchUpstreamFirstBytes, .peekClient]
        return out
    }

    mutating func upstreamUnreachable(_ why: ConnectionFailure.Unreachable, socksCode: SOCKS5Reply.Code) -> [Command] {
        let failure = ConnectionFailure.unreachable(target: destination.map(\.description) ?? "the server", why)
        // An address-only destination is named by its address, connected or not.
        if facts.server == nil, let address = destination?.numericAddress { facts.server = address.endpoint }
        var out: [Command] = []
        switch settings.frontEnd {
        case .explicitHTTP: out.append(.sendClient(Self.errorResponse(502, failure)))
        case .socks5: out.append(.sendClient(SOCKS5Reply.failure(socksCode)))
        case .fixed:
            // Reverse mode's plain client waits for an HTTP answer (it had nothing at all: a trial).
            if headWasHTTP1 { out.append(.sendClient(Self.errorResponse(502, failure))) }
            // A TLS client of an HTTPS target, with inspection on: its ClientHello is read, then
            // answered as a failed upstream handshake is (`received`).
            if headWasTLS, upstreamTLS == true, settings.policy.inspectionEnabled, settings.policy.caAvailable {
                unreachableToAnswer = failure
                phase = .awaitingFirstBytes
                return [.armTimer(millis: settings.handshakeTimeoutMillis), .peekClient]
            }
            // Transparent mode: nothing was read before the connect; its first bytes decide.
            if !sawHeadBytes, !sawClientBytes, destination?.origin != .reverse {
                unreachableToAnswer = failure
                phase = .awaitingFirstBytes
                return [.armTimer(millis: Self.unreachableAnswerWaitMillis), .peekClient]
            }
        }
        return out + fail(failure, reset: false)
    }

    mutating func received(_ hello: ClientHello) -> [Command] {
        sawClientHello = true
        serverName = hello.normalizedServerName
        leafKeyTypes = settings.leafKeys.keyTypes(for: hello)
        // The parsers are done: release what they buffered.
        reader.reset()
        facts.note(hello)
        // TLS from here: an open flow in its handshake read "not encrypted" in every live view
        // until its outcome (a trial); inspected, passed through or failed replaces it.
        if facts.status == .notEncrypted { facts.status = .encrypted }
        let sni = hello.normalizedServerName
        guard let destination else { return fail(.internalError("no destination"), reset: true) }
        if let failure = unreachableToAnswer {
            unreachableToAnswer = nil
            // Only where tv would inspect this client (no --ignore-hosts match, no memory of it
            // lacking the root or pinning): else it is closed, as before.
            let target = InterceptionPolicy.Target(sni: sni, destinationHost: destination.hostName ?? destination.host, port: destination.port)
            let key = pinKey
            guard settings.policy.decide(target, recall: { key.flatMap { recall($0, facts.startMicros) } }).action == .inspect else {
                return fail(failure, reset: false)
            }
            return upstreamFailed(alert: TLSAlert.internalError, failure)
        }
        if upstreamTLS == false {
            // reverse:http:// — the server does not speak TLS; nothing to inspect with.
            return [.noClientSecret(clientRandom: hello.random)] + relayRaw(status: .encrypted, observeServerHello: true)
        }
        helloFingerprint = ClientHelloFingerprint.of(hello)
        let target = InterceptionPolicy.Target(sni: sni, destinationHost: destination.hostName ?? destination.host, port: destination.port)
        let key = pinKey
        var decision = settings.policy.decide(target, recall: { key.flatMap { recall($0, facts.startMicros) } })
        if decision.action == .inspect, let best = facts.offeredVersions.max(), best < settings.minimumTLSVersion {
            decision = InterceptionPolicy.Decision(action: .passThrough, reason: .clientVersionTooOld)
            let note = ConnectionFailure.clientVersionTooOld(offered: best, minimum: settings.minimumTLSVersion)
            facts.notInspectedReason = note.sentence
            facts.error = note.sentence
        }
        self.decision = decision
        if decision.action == .passThrough {
            var out: [Command] = [.noClientSecret(clientRandom: hello.random)]
            if case .remembered(let recalled) = decision.reason, let key {
                facts.error = ConnectionFailure.keptPrivate(recalled, key).sentence
                if recalled == .retry {
                    facts.pinningDetected = true
                    out.append(.remember(key, .pinned, reason: ConnectionFailure.pinnedOnReturn))
                }
            }
            return out + relayRaw(status: decision.passThroughStatus, observeServerHello: true)
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
    /// to the target (SNI its name, never an IP, RFC 6066 §3; ALPN the protocol the client
    /// speaks in clear: h2 after HTTP/2's preface, else http/1.1 (h2c prior knowledge was sent
    /// to a server that had chosen http/1.1: a trial); the certificate must name the target) and
    /// relay the client's plaintext over it. The flow is "not encrypted" (the client's side was
    /// in clear) and keeps the upstream leg's TLS facts.
    mutating func plainClientToTLSServer(h2: Bool) -> [Command] {
        guard let destination else { return fail(.internalError("no destination"), reset: true) }
        plainClientOverTLS = true
        plainClientSpeaksH2 = h2
        reader.reset()
        phase = .upstreamHandshake
        let name = destination.hostName
        let plan = UpstreamTLSPlan(serverName: name, alpn: [Array((h2 ? "h2" : "http/1.1").utf8)],
                                   verifyHost: name ?? destination.host,
                                   sessionKey: "\(destination.host):\(destination.port)|\(name ?? "")")
        return [.armTimer(millis: settings.handshakeTimeoutMillis), .startUpstreamTLS(plan), .updateFlow]
    }

    /// The TLS leg to the server of a plain client failed, or of a TLS client that speaks HTTP/1
    /// (`answering`): answer 502 in HTTP (a TLS alert means nothing to the plain client) and close.
    /// A plain HTTP/2 client (or a TLS client that began with HTTP/2's preface: `http2`) gets
    /// HTTP/2 instead: its SETTINGS and a GOAWAY saying why (an HTTP/1 502 is bytes it cannot read).
    mutating func badGateway(_ failure: ConnectionFailure, http2: Bool? = nil) -> [Command] {
        if http2 ?? plainClientSpeaksH2 {
            var code = HTTP2Preface.internalError
            if case .serverLacksHTTP2 = failure { code = HTTP2Preface.http11Required }
            return [.sendClient(HTTP2Preface.settingsThenGoaway(code: code, debug: failure.answer))] + fail(failure, reset: false)
        }
        return [.sendClient(Self.errorResponse(502, failure))] + fail(failure, reset: false)
    }

    /// Relays the two sides' bytes as they are. A plain relay (`status` not encrypted: the server
    /// spoke first, or the client's first bytes were not TLS) is watched for a TLS handshake
    /// inside it (`TLSUpgradeWatch`: STARTTLS).
    mutating func relayRaw(status: FlowStatus, observeServerHello: Bool) -> [Command] {
        phase = .relaying
        reader.reset()
        facts.status = status
        let plaintext = status == .notEncrypted
        return startRelay(.raw(plaintext: plaintext, observeServerHello: observeServerHello), watchForTLS: plaintext,
                          readDNS: plaintext && facts.port == 53)
    }

    /// The sink was given `facts.newCertificates`: later reports need not carry their DER.
    mutating func certificatesReported() { facts.newCertificates = [] }

    private mutating func upstreamHandshakeDone(_ done: UpstreamHandshake) -> [Command] {
        guard phase == .upstreamHandshake else { return [] }
        facts.note(done)
        if plainClientOverTLS {
            if let problem = done.certificateProblem, !settings.upstreamInsecure {
                return badGateway(.upstreamCertificate(problem, answer: .badGateway))
            }
            if plainClientSpeaksH2, done.alpn != Array("h2".utf8) {
                return badGateway(.serverLacksHTTP2(chosen: done.alpn.map { String(decoding: $0, as: UTF8.self) }))
            }
            phase = .relaying
            facts.status = .notEncrypted
            return startRelay(.raw(plaintext: true, observeServerHello: false))
        }
        if let problem = done.certificateProblem, !settings.upstreamInsecure {
            return upstreamFailed(alert: TLSAlert.handshakeFailure, .upstreamCertificate(problem, answer: .badGateway))
        }
        let identity: LeafIdentity
        do {
            identity = try LeafNamePlan.identity(sni: serverName,
                                                 destinationHost: destination?.host ?? "",
                                                 dialledAddress: settings.dialledAddress,
                                                 upstreamSANs: done.certificateSANs)
        } catch let error as CAError {
            return refuse(.leafNameRefused(error.message), alert: TLSAlert.unrecognizedName)
        } catch {
            return refuse(.leafNameError("\(error)"), alert: TLSAlert.internalError)
        }
        phase = .clientHandshake
        return [.armTimer(millis: settings.handshakeTimeoutMillis), .startClientTLS(ClientTLSPlan(identity: identity, alpn: done.alpn, keyTypes: leafKeyTypes)), .updateFlow]
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
        case .answering: return fail(answering ?? .clientGone(reset: reset, .beforeFirstRequest), reset: reset)
        }
        return fail(.clientGone(reset: reset, moment), reset: reset)
    }

    mutating func refuse(_ failure: ConnectionFailure, alert: UInt8) -> [Command] {
        phase = .closed
        self.failure = failure
        facts.fail(failure)
        return [.armTimer(millis: 0), .refuseClientTLS(alert: alert)]
    }

    /// Neither side said anything within the idle time after the connect: closed as an idle
    /// relay is (the flow keeps its status, nothing was carried).
    mutating func silentTooLong() -> [Command] {
        phase = .closed
        facts.error = ConnectionFailure.idle(seconds: settings.idleTimeoutSeconds).sentence
        return [.armTimer(millis: 0), .close(reset: false)]
    }

    mutating func fail(_ failure: ConnectionFailure, reset: Bool) -> [Command] {
        phase = .closed
        outcome = failure.clientOutcome
        self.failure = failure
        facts.fail(failure)
        return [.armTimer(millis: 0), .close(reset: reset)]
    }

    // MARK: relay phase (facts are written here, the only place they can be)

    private mutating func startRelay(_ plan: RelayPlan, watchForTLS: Bool = false, readDNS: Bool = false) -> [Command] {
        relay.begin(plan, status: facts.status, splice: settings.spliceEncryptedPassThrough, watchForTLS: watchForTLS, readDNS: readDNS)
        return [.armTimer(millis: 0), .relay(plan), .updateFlow]
    }

    /// One burst of `chunk.count` bytes moved in `direction` at `now` (µs): the totals, the
    /// ServerHello read from a pass-through's first server bytes, the client's first data over
    /// our leaf, a TLS handshake beginning inside a plain relay. Called per chunk on the hot
    /// path: no allocation (but while a handshake message is being read); a command only on the
    /// first client data of an inspected flow, when a hello completes, or when the totals are
    /// due to be told (`FlowProgressReport`: `.updateFlow` at most every 2 s while bytes move).
    @inline(__always)
    mutating func moved(_ chunk: UnsafeRawBufferPointer, _ direction: Direction, atMicros now: Int64) -> Command? {
        facts.count(chunk.count, direction, atMicros: now)
        if direction == .clientToServer {
            if !relay.clientSpoke {
                relay.clientSpoke = true
                relay.clientSpokeHTTP1 = RelayState.beginsHTTP1Request(chunk)
                if facts.status == .inspected, let key = pinKey { return .clientAccepted(key) }
            }
        } else if relay.observing, let found = relay.observeServerHello(chunk) {
            switch found {
            case .serverHello(let hello):
                facts.note(hello)
                return .updateFlow
            case .notTLS where facts.error == nil:
                facts.error = ConnectionFailure.serverAnsweredNotTLS.sentence
                return .updateFlow
            default:
                break
            }
        }
        if relay.readsDNS, let command = readDNS(chunk, direction) { return command }
        guard relay.watchesUpgrade, let finding = relay.observeUpgrade(chunk, direction) else {
            return progress.isDue(atMicros: now) ? .updateFlow : nil
        }
        // A plain relay turned into TLS (STARTTLS, or a client whose first bytes were plain): an
        // encrypted pass-through from here, named by the ClientHello; the ServerHello says the
        // version and protocol the two ends agreed.
        switch finding {
        case .clientHello(let hello, _):
            sawClientHello = true
            serverName = hello.normalizedServerName
            facts.noteUpgrade(hello)
        case .serverHello(let hello):
            facts.note(hello)
        case .noServerHello:
            return nil
        }
        return .updateFlow
    }

    /// A burst of a plain relay to port 53, read as DNS over TCP (`RelayState.readDNS`): the
    /// first question names the flow (`.updateFlow`); the server's responses go to the driver
    /// (`.dnsAnswered`), which hands them on before it writes the burst to the client.
    private mutating func readDNS(_ chunk: UnsafeRawBufferPointer, _ direction: Direction) -> Command? {
        let found = relay.readDNS(chunk, direction)
        if let question = found.question, facts.noteDNSQuestion(question) { return .updateFlow }
        return found.answers.isEmpty ? nil : .dnsAnswered(found.answers)
    }

    /// The connection closed: what its DNS-over-TCP reader counted (nil: it read none), once.
    mutating func finishDNS() -> DNSOverTCPReader.Counts? { relay.finishDNS() }

    /// Bytes moved since the flow was last told (the driver arms a timer for `.progressQuiet`).
    var hasUnreportedProgress: Bool { progress.unreported }

    /// Whether a request's authority could still name the flow (`requestNamed`): it has no
    /// name, or one inferred from DNS. The driver asks before handing one over.
    var wantsRequestName: Bool { phase == .relaying && (facts.host == nil || facts.hostOrigin == .dns) }

    /// The relay's exchange reader read a request naming `authority` (its `Host` header or
    /// absolute-form target): the flow is named after it when it reached tv without a name
    /// (`FlowFacts.nameFromRequest`); `.updateFlow` then, else nothing.
    mutating func requestNamed(_ authority: String) -> Command? {
        guard wantsRequestName, facts.nameFromRequest(authority: authority) else { return nil }
        return .updateFlow
    }

    /// Bytes spliced without being seen: the totals, told as `moved`'s are (`.updateFlow` when due).
    mutating func spliced(_ count: Int, _ direction: Direction, atMicros now: Int64) -> Command? {
        facts.count(count, direction, atMicros: now)
        return progress.isDue(atMicros: now) ? .updateFlow : nil
    }

    private mutating func relayEnded(_ ending: RelayEnding) -> [Command] {
        guard phase == .relaying || phase == .plainHTTP else { return [] }
        if let failure = ending.failure, let certificate = ClientCertificateVerdict.failure(failure) {
            return clientCertificateEnded(certificate)
        }
        phase = .closed
        relayEndedBy = ending.failure
        // A kept-private flow's error is why it was passed through (its status line points to
        // it); how that relay ended is no news (curl lacking the root resets: the reason was lost,
        // a re-check).
        // A note the flow already carries (an unusable SNI, a server that answered no TLS) is
        // kept before it: a reset after the answer replaced it, depending on timing (CI).
        var quiet: (key: PinKey, sign: PinningDetector.PinningSign)?
        if facts.status == .inspected, let key = pinKey,
           case .possiblePinning(let sign) = relay.pinningVerdict(settings.detector, clientBytes: facts.bytesFromClient, at: ending.atMicros) {
            quiet = (key, sign)
        }
        // A quiet close weighed below is said then: what tv met on the client's leg as it went
        // (its reset, or tv's bytes for it refused: "sending to the client failed: broken pipe")
        // is no error of a spare connection the client did not use, and pinning's sentence
        // replaces it otherwise.
        if let failure = ending.failure, facts.status != .keptPrivate, !(quiet != nil && settings.remembersClients && failure.onClientLeg) {
            facts.error = facts.error.map { "\($0); then \(failure.sentence)" } ?? failure.sentence
        }
        var out: [Command] = []
        if let quiet {
            if settings.remembersClients {
                // Said once weighed (`.pinningWeighed`): a browser's spare is no sign of pinning.
                out.append(.suspectPinning(quiet.key, quiet.sign))
            } else {
                outcome = .possiblePinning
                facts.error = ConnectionFailure.possiblePinning(quiet.sign, passThrough: nil).sentence
            }
        }
        // What tv already read from the failed leg is still the other's: delivered first. A
        // server that reset after its response reached tv lost the client what tv still held
        // (an 8 MiB response through a CONNECT tunnel, read at 4 MB/s: 6.8 MB arrived; direct,
        // all of it), as the reset discarded tv's unsent bytes and its socket's send queue.
        if case .read(let side, _, _)? = ending.failure {
            out.append(.deliverThenClose(to: side == .server ? .client : .server, reset: ending.reset))
        } else {
            out.append(.close(reset: ending.reset))
        }
        return out
    }
}
