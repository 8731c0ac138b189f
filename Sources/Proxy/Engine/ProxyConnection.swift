import CTVShims
import FlowTerms
import LocalCA
import Wire
#if canImport(Glibc)
import Glibc
#endif

/// The I/O driver of one client connection: it owns the sockets, TLS sessions, splice pipes and
/// timers, and performs the `ConnectionMachine`'s commands. It decides nothing: which I/O runs
/// follows the machine's phase, and every fact about the flow is the machine's. The relay moves
/// bytes itself (not a machine event per chunk: it reads into the loop's buffer and writes
/// straight to the other leg) and tells the machine each burst (`ConnectionMachine.moved`).
///
/// Files: this one (commands, loop callbacks, closing), `ProxyConnection+Client.swift` (client
/// peeks, replies, resolve and connect), `+TLS.swift` (the TLS legs), `+Relay.swift` (relay,
/// splice, idle buffers).
///
/// Confined to its loop's thread.
final class ProxyConnection: LoopHandler {
    unowned let loop: EventLoop
    let shared: ProxyShared
    var token: UInt64 = 0
    var machine: ConnectionMachine
    let client: Leg
    var upstream: Leg?
    /// The sockets were closed or handed on: nothing more to perform but bookkeeping.
    var released = false

    var queue: [ConnectionMachine.Command] = []
    var queueHead = 0
    var executing = false
    /// A `.peekClient` (or a consume) asked for the client's unread bytes after this batch.
    var needsPeek = false
    var closeReportPending = false
    /// This connection was offered tv's leaf and counts among its pin key's open ones
    /// (`PinningEvidence.leafOffered`) until it is released.
    var leafOffered = false

    var phaseDeadline: UInt64 = 0
    var armedAt: UInt64 = 0
    var lastActivity: UInt64
    /// A timer is armed for the bytes moved since the flow's last report (`armProgress`).
    var progressArmed = false
    /// When the exchange reader's cancelled HTTP/2 streams are settled (`settleExchanges`;
    /// monotonic ns, 0: none waits).
    var exchangeSettleAt: UInt64 = 0
    /// Set once the relay ended by one leg's read failure: what tv holds for the other leg is
    /// being delivered before the close (`ProxyConnection+Delivery`).
    var delivery: Delivery?
    let idleNanos: UInt64
    var pendingConnect: SocketAddress?
    /// An upstream socket connected before the client's connection was adopted (connect-first).
    var preconnectedUpstream: Int32?
    /// The client address this connection counts against (`ClientAddressLimit`; nil: none).
    var admittedAddress: IPAddress?

    /// OpenSSL may hold record buffers: bytes moved on a TLS leg since the last release
    /// (`releaseIdleBuffers`).
    var buffersMayBeHeld = false
    /// When the quiet timer last found a leg it could not release (monotonic ns; 0 = not since
    /// the last activity): the next try waits another `IdleBufferPolicy.quietNanos`.
    var bufferRefusedAt: UInt64 = 0

    /// After the hand-over to plain HTTP (`ProxyConnection+PlainHTTP.swift`): its machine,
    /// its command queue, and the chunk its ranges name.
    /// The plain-HTTP machine once the connection is handed over to it, boxed: inline, its
    /// 1,544 bytes (two `FlowFacts`, both head parsers) were part of every connection, plain or
    /// not (+1.4 KiB per idle connection in the harness's memory row).
    var plain: PlainHTTPBox?
    var plainQueue: [PlainHTTPMachine.Command] = []
    var plainHead = 0
    var plainExecuting = false
    var plainChunk: UnsafeRawBufferPointer?

    /// The HTTP exchanges read from the relay's plaintext (`ProxyConnection+Exchanges.swift`);
    /// nil until the first plaintext burst, and again once reading stopped (`exchangesStopped`).
    var exchanges: ExchangeReader?
    var exchangesStopped = false
    /// The client's bytes were refused while earlier requests wait for their responses
    /// (`.holdClient`): what it sends is read and dropped until the machine answers.
    var clientHeld = false
    /// The start of an HTTP/1 head the relay's reader has not seen end, each way
    /// (`ExchangeReader.heldHeadStart`): held back until it is whole, so a head tv refuses
    /// (past its limit, broken) reaches the other side in no part (`ProxyConnection+Relay`).
    /// Empty arrays (no allocation) while no head is split across bursts.
    var heldTowardServer: [UInt8] = []
    var heldTowardClient: [UInt8] = []
    /// When the HTTP/1 request head part way on the relay must be whole (`noteRequestHead`;
    /// nil deadline: none part way). 24 bytes a connection, as many as the refused-head tuple it
    /// replaced.
    var relayHeadDeadline: HeadDeadline
    /// The side whose end the relay read first, taken when the legs close (the server leg is
    /// released then): how the decrypted capture's stream closes (`StreamEnd`).
    private var firstClosed: Direction = .clientToServer
    /// Exchanges whose response ended in a server burst whose bytes are not all in the client's
    /// socket yet (cleared once tv holds nothing more for the client, `noteClientDrained`). A close
    /// that leaves bytes unsent ends them `.incomplete` after all (`endUndeliveredExchanges`).
    var completedInFlight: [ExchangeRecord] = []
    /// How the relay's chunks reach the chunk recorder (`ProxyConnection+Relay.swift`, `record`).
    var chunkRoute = ChunkRoute.unasked

    /// The loop's relay buffer.
    var buffer: UnsafeMutableRawBufferPointer { loop.buffer }

    /// - Parameters:
    ///   - flowID: the id a front-end already gave the connection (the TUN's); nil: a new one.
    ///   - flowAnnounced: the front end already reported that flow opened (`Settings.flowAlreadyOpened`).
    init(loop: EventLoop, fd: Int32, peer: SocketAddress, frontEnd: FrontEndKind, flowID: UInt64? = nil, flowAnnounced: Bool = false) {
        self.loop = loop
        shared = loop.shared
        client = Leg(fd: fd)
        // One getsockname(2), only where the listener does not say the address itself.
        let reached = shared.listensOnEveryAddress && frontEnd.clientConnectsToListener ? Socket.localAddress(fd)?.endpoint : nil
        let facts = FlowFacts(id: flowID ?? shared.newFlowID(), startMicros: loop.wallNow, client: peer.endpoint, reached: reached)
        let configuration = shared.configuration
        var settings = ConnectionMachine.Settings(
            frontEnd: frontEnd, policy: shared.policy, upstreamInsecure: configuration.upstreamInsecure,
            minimumTLSVersion: configuration.minimumTLSVersion,
            handshakeTimeoutMillis: Int(configuration.handshakeTimeout * 1000),
            connectTimeoutMillis: Int(configuration.connectTimeout * 1000),
            headTimeoutMillis: Int(configuration.headTimeout * 1000),
            idleTimeoutSeconds: Int(configuration.idleTimeout),
            spliceEncryptedPassThrough: configuration.spliceEncryptedPassThrough,
            detector: configuration.pinningDetector,
            remembersClients: configuration.pinningMemory.learns,
            leafKeys: shared.leafKeys,
            dialledAddress: frontEnd.dialsListener ? Socket.localAddress(fd)?.ip : nil,
            proxyCredentials: configuration.proxyCredentials)
        settings.flowAlreadyOpened = flowAnnounced
        machine = ConnectionMachine(settings: settings, facts: facts, recall: shared.recall)
        relayHeadDeadline = HeadDeadline(limitMillis: settings.headTimeoutMillis)
        lastActivity = loop.now
        idleNanos = UInt64(max(1, configuration.idleTimeout) * 1e9)
    }

    func start() {
        token = loop.register(self)
        _ = tv_set_nodelay(client.fd)
        loop.watch(client.fd, token: token, side: 0, events: tv_EPOLLIN | tv_EPOLLOUT | tv_EPOLLRDHUP)
        feed(.start)
    }

    // MARK: machine plumbing

    func feed(_ event: ConnectionMachine.Event) {
        queue.append(contentsOf: machine.handle(event))
        runCommands()
    }

    /// Feeds an event while commands are being performed: its commands run after the current ones.
    func enqueue(_ event: ConnectionMachine.Event) {
        queue.append(contentsOf: machine.handle(event))
    }

    private func runCommands() {
        guard !executing else { return }
        executing = true
        defer { executing = false }
        while true {
            if queueHead < queue.count {
                let command = queue[queueHead]
                queueHead += 1
                // After the close only bookkeeping remains (e.g. remembering a pinned host).
                if !released || command.isBookkeeping { perform(command) }
                continue
            }
            // Dropped, not kept: an idle connection should hold no spare capacity.
            queue = []
            queueHead = 0
            if released {
                reportClosed()
                break
            }
            if needsPeek {
                needsPeek = false
                peekClient()
                continue
            }
            break
        }
    }

    func perform(_ command: ConnectionMachine.Command) {
        switch command {
        case .openFlow:
            shared.sink?.flowOpened(machine.facts)
            if !machine.facts.newCertificates.isEmpty { machine.certificatesReported() }
        case .updateFlow:
            shared.sink?.flowUpdated(machine.facts)
            if !machine.facts.newCertificates.isEmpty { machine.certificatesReported() }
        case .dnsAnswered(let answers):
            shared.configuration.dnsAnswers?.take(answers)
        case .peekClient:
            needsPeek = true
        case .consumeClient(let count):
            consumeClient(count)
            needsPeek = true
        case .sendClient(let bytes):
            sendClient(bytes)
        case .sendServer(let bytes):
            sendServer(bytes)
        case .answerWaitingRequest(let bytes):
            // The waiting request's row gets tv's answer as its response (`answered`).
            bytes.withUnsafeBytes { readPlainAnswer($0) }
            sendClient(bytes)
        case let .resolve(host, port):
            resolve(host: host, port: port)
        case .connect(let address):
            connect(to: address)
        case .armTimer(let millis):
            phaseDeadline = millis > 0 ? loop.now + UInt64(millis) * 1_000_000 : 0
            rearm()
        case .watchUpstreamFirstBytes:
            if let upstream, upstream.readable || upstream.peerClosing { enqueue(upstreamFirstEvent(upstream)) }
        case .startUpstreamTLS(let plan):
            startUpstreamTLS(plan)
        case .startClientTLS(let plan):
            // Another connection of this client to this host and port holds tv's leaf while
            // it is open: its spare's quiet close is no sign of pinning (`PinningEvidenceRule`).
            if !leafOffered, let key = machine.pinKey {
                leafOffered = true
                shared.pinningEvidence.leafOffered(key)
            }
            startClientTLS(plan)
        case .relay:
            startRelay()
        case .noClientSecret(let random):
            shared.configuration.clientLegSecrets?.noSecretWillCome(clientRandom: random)
        case .readClientRequest:
            readClientRequest()
        case let .readRequestRow(bytes, http2):
            readRequestRow(bytes, http2: http2)
        case .closeClientTLS:
            client.shutdownWrite()
        case .startPlainHTTP:
            handOverToPlainHTTP()
        case let .remember(key, kind, reason):
            shared.pinning.remember(key, kind: kind, reason: reason)
            loop.counters.pinned.wrappingAdd(1, ordering: .relaxed)
        case let .suspectPinning(key, sign):
            let weight = shared.pinningEvidence.weigh(key, connectionStart: machine.facts.startMicros, now: loop.wallNow,
                                                      heldLeaf: leafOffered)
            enqueue(.pinningWeighed(key, sign, weight))
        case .clientAccepted(let key):
            shared.pinningEvidence.success(key, now: loop.wallNow)
        case .refuseClientTLS(let alert):
            refuseClient(alert: alert)
        case .countHeadTimeout:
            loop.counters.headTimeouts.wrappingAdd(1, ordering: .relaxed)
        case .holdClient:
            clientHeld = true
            relayHeadDeadline.headCompleted()
        case .close(let reset):
            finish(reset: reset)
        case let .deliverThenClose(side, reset):
            deliverThenFinish(to: side == .client ? client : upstream, reset: reset)
        }
    }

    // MARK: loop callbacks

    func loopEvent(side: Int, events: UInt32) {
        guard !released else { return }
        let leg: Leg
        if side == 0 { leg = client } else if let up = upstream { leg = up } else { return }
        if events & (tv_EPOLLIN | tv_EPOLLERR | tv_EPOLLHUP | tv_EPOLLRDHUP) != 0 { leg.readable = true }
        if events & (tv_EPOLLRDHUP | tv_EPOLLHUP) != 0 { leg.peerClosing = true }
        if events & (tv_EPOLLOUT | tv_EPOLLERR | tv_EPOLLHUP) != 0 { leg.writable = true }
        if delivery != nil { return deliver() }
        switch machine.phase.io {
        case .upstreamHandshake:
            if side == 1 { driveUpstreamHandshake() } else if leg.peerClosing { peekClient() }
        case .clientHandshake:
            if side == 0 { driveClientHandshake() }
        case .answer:
            if side == 0 { readClientRequest() }
        case .relay:
            relay()
        case .plainHTTP:
            plainEvent(side: side, events: events)
        case .none:
            break
        case .control:
            if side == 1 {
                upstreamControlEvent(events)
            } else if events & tv_EPOLLIN != 0 || leg.peerClosing {
                peekClient()
            }
            flushClientReplies()
        }
    }

    func loopTimer(deadline: UInt64) {
        guard !released else { return }
        if deadline == armedAt { armedAt = 0 }
        if delivery != nil { return deliver() }
        if plain != nil { return feedPlain(.timer) }
        let now = loop.now
        if phaseDeadline != 0 && now >= phaseDeadline {
            phaseDeadline = 0
            feed(.timeout)
            guard !released else { return }
        }
        // The relay's timers (only the relay arms them; the machine ignores `.idle` elsewhere).
        if relayHeadDeadline.passed(at: now) {
            relayHeadDeadline.headCompleted()
            feed(.requestHeadLate(answerable: exchanges?.requestHeadAnswerable ?? false))
            guard !released else { return }
        }
        if now >= lastActivity &+ idleNanos {
            feed(.idle(atMicros: loop.wallNow, waiting: idleWait))
            guard !released else { return }
        }
        if buffersMayBeHeld && now >= IdleBufferPolicy.attemptAt(lastActivity: lastActivity, refusedAt: bufferRefusedAt) {
            releaseIdleBuffers()
        }
        if exchangeSettleAt != 0 && now >= exchangeSettleAt { settleExchanges() }
        if progressArmed && now >= lastActivity &+ FlowProgressReport.intervalNanos {
            progressArmed = false
            feed(.progressQuiet(atMicros: loop.wallNow))
            guard !released else { return }
        }
        rearm()
    }

    /// What the relay waits for as it goes quiet for the idle timeout: a leg that took nothing of
    /// what tv holds for it, else an HTTP/1 request whose response has not begun (read by the
    /// exchange reader), else nothing known.
    private var idleWait: ConnectionMachine.IdleWait {
        if client.hasUnsent { return .reading(.client) }
        if upstream?.hasUnsent == true { return .reading(.server) }
        if exchanges?.awaitsResponse == true { return .response }
        return .nothing
    }

    func loopRunAgain() {
        guard !released else { return }
        if delivery != nil { return deliver() }
        switch machine.phase.io {
        case .relay: relay()
        case .plainHTTP: drivePlain()
        case .control, .upstreamHandshake, .clientHandshake, .answer, .none: break
        }
    }

    func loopShutdown() {
        guard !released else { return }
        if let delivery { return closeAfterDelivery(reset: delivery.reset) }
        let holdsNothing = sendWhatIsHeld()
        if plain != nil { return feedPlain(.shutdown(holdsNothing: holdsNothing)) }
        let betweenExchanges = machine.relay.recordsContent && !exchangesStopped && (exchanges?.isBetweenExchanges ?? true)
        feed(.shutdown(atMicros: loop.wallNow, betweenExchanges: betweenExchanges, holdsNothing: holdsNothing))
    }

    /// tv is stopping: one try (never waiting) to send what it holds for each leg of a relay or
    /// of plain HTTP (the splice pipe, plaintext SSL_write did not take, TLS records). Returns
    /// true when nothing is left; false in any other phase.
    private func sendWhatIsHeld() -> Bool {
        guard machine.phase.io == .relay || plain != nil else { return false }
        var holdsNothing = true
        for case let leg? in [client, upstream] where leg.fd >= 0 && !leg.connecting {
            if case .drained = leg.flushAll() { continue }
            holdsNothing = false
        }
        return holdsNothing
    }

    func rearm() {
        var next = phaseDeadline
        if let delivery, next == 0 || delivery.nextCheck < next { next = delivery.nextCheck }
        if machine.phase.io == .relay {
            let idle = lastActivity &+ idleNanos
            if next == 0 || idle < next { next = idle }
            if buffersMayBeHeld {
                let quiet = IdleBufferPolicy.attemptAt(lastActivity: lastActivity, refusedAt: bufferRefusedAt)
                if quiet < next { next = quiet }
            }
            if progressArmed {
                let told = lastActivity &+ FlowProgressReport.intervalNanos
                if told < next { next = told }
            }
            if let head = relayHeadDeadline.deadline, head < next { next = head }
            if exchangeSettleAt != 0 && exchangeSettleAt < next { next = exchangeSettleAt }
        }
        guard next != 0, armedAt == 0 || next < armedAt else { return }
        armedAt = next
        loop.armTimer(token, at: next)
    }

    // MARK: closing

    /// Closes everything and reports the flow. Idempotent.
    func finish(reset: Bool) {
        guard !released else { return }
        if !reset && machine.closeLingers { client.shutdownAfterAnswer() }
        endUndeliveredExchanges()
        released = true
        // Neither end read (tv closed both): the client's first.
        let clientEnd = client.readClosedAtNanos ?? .max, serverEnd = upstream?.readClosedAtNanos ?? .max
        firstClosed = serverEnd < clientEnd ? .serverToClient : .clientToServer
        client.close(reset: reset)
        upstream?.close(reset: reset)
        upstream = nil
        if let fd = preconnectedUpstream {
            Glibc.close(fd)
            preconnectedUpstream = nil
        }
        loop.unregister(token)
        shared.connectionEnded(address: admittedAddress)
        if leafOffered, let key = machine.pinKey {
            leafOffered = false
            shared.pinningEvidence.leafConnectionEnded(key)
        }
        // Commands still queued (pinning bookkeeping) may add to the facts: report after them.
        closeReportPending = true
        if !executing { reportClosed() }
    }

    private func reportClosed() {
        guard closeReportPending else { return }
        closeReportPending = false
        var facts = machine.facts
        facts.durationMicros = loop.wallNow - facts.startMicros
        loop.counters.countClosed(facts.status)
        if let outcome = machine.outcome { loop.counters.countClientOutcome(outcome) }
        if let offered = InspectionOutcome.of(decision: machine.decision, status: facts.status,
                                              inspectionOn: shared.inspection.load(ordering: .relaxed),
                                              handshakeDone: machine.relay.handshakeDoneMicros > 0,
                                              outcome: machine.outcome, failure: machine.failure) {
            loop.counters.countInspection(offered)
        }
        endExchanges()
        if let counts = machine.finishDNS() { shared.configuration.dnsAnswers?.streamEnded(counts) }
        shared.sink?.flowClosed(facts)
        if machine.relay.recordingStarted {
            shared.recorder?.flowEnded(flow: facts.id, end: ConnectionFailure.streamEnd(status: facts.status, failure: machine.failure ?? machine.relayEndedBy,
                                                                                        firstClosed: firstClosed))
        }
    }
}
