import COpenSSL
import CTVShims
import LocalCA
import Wire
#if canImport(Glibc)
import Glibc
#endif

/// The I/O driver of one client connection: it owns the sockets and TLS sessions, performs the
/// `ConnectionMachine`'s commands, and runs the data phase itself (the relay is not a machine
/// event per chunk: it reads into the loop's buffer and writes straight to the other leg).
///
/// Confined to its loop's thread.
final class ProxyConnection: LoopHandler {
    private unowned let loop: EventLoop
    private let shared: ProxyShared
    private var token: UInt64 = 0
    private var machine: ConnectionMachine
    let client: Leg
    private var upstream: Leg?

    private enum Stage { case control, upstreamHandshake, clientHandshake, relay, closed }
    private var stage: Stage = .control
    private var queue: [ConnectionMachine.Command] = []
    private var queueHead = 0
    private var executing = false
    private var needsPeek = false
    private var watchingUpstreamFirst = false

    private var phaseDeadline: UInt64 = 0
    private var armedAt: UInt64 = 0
    private var lastActivity: UInt64
    private let idleNanos: UInt64

    private var recordPlaintext = false
    private var serverHelloParser: ServerHelloParser?
    private var handshakeDoneMicros: Int64 = 0
    /// The client had closed or reset before our first flight went out: whatever ends its
    /// handshake, it never saw our certificate, so it is no evidence of pinning.
    private var clientClosedBeforeFlight = false
    private var endError: String?

    /// The loop's relay buffer.
    private var buffer: UnsafeMutableRawBufferPointer { loop.buffer }

    init(loop: EventLoop, fd: Int32, peer: SocketAddress, frontEnd: FrontEndKind) {
        self.loop = loop
        shared = loop.shared
        client = Leg(fd: fd)
        let facts = FlowFacts(id: shared.newFlowID(), startMicros: loop.wallNow, client: peer.endpoint)
        let configuration = shared.configuration
        let settings = ConnectionMachine.Settings(
            frontEnd: frontEnd, policy: shared.policy, upstreamInsecure: configuration.upstreamInsecure,
            minimumTLSVersion: configuration.minimumTLSVersion,
            serverFirstWaitMillis: configuration.serverFirstWaitMillis,
            handshakeTimeoutMillis: Int(configuration.handshakeTimeout * 1000),
            connectTimeoutMillis: Int(configuration.connectTimeout * 1000),
            headTimeoutMillis: Int(configuration.headTimeout * 1000),
            detector: configuration.pinningDetector)
        let pinning = shared.pinning
        machine = ConnectionMachine(settings: settings, facts: facts, isPinned: { pinning.isPinned($0) })
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

    private func feed(_ event: ConnectionMachine.Event) {
        queue.append(contentsOf: machine.handle(event))
        runCommands()
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
                if stage != .closed || command.isBookkeeping { perform(command) }
                continue
            }
            // Dropped, not kept: an idle connection should hold no spare capacity.
            queue = []
            queueHead = 0
            if stage == .closed {
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

    private func perform(_ command: ConnectionMachine.Command) {
        switch command {
        case .openFlow:
            shared.sink?.flowOpened(machine.facts)
        case .updateFlow:
            shared.sink?.flowUpdated(machine.facts)
        case .peekClient:
            needsPeek = true
        case .consumeClient(let count):
            consumeClient(count)
            needsPeek = true
        case .sendClient(let bytes):
            sendClient(bytes)
        case let .resolve(host, port):
            resolve(host: host, port: port)
        case .connect(let address):
            connect(to: address)
        case .armTimer(let millis):
            phaseDeadline = millis > 0 ? loop.now + UInt64(millis) * 1_000_000 : 0
            rearm()
        case .watchUpstreamFirstBytes:
            watchingUpstreamFirst = true
            if let upstream, upstream.readable || upstream.peerClosing { queue.append(contentsOf: machine.handle(.upstreamSpokeFirst)) }
        case .startUpstreamTLS(let plan):
            startUpstreamTLS(plan)
        case .startClientTLS(let plan):
            startClientTLS(plan)
        case .relay(let plan):
            startRelay(plan)
        case .startPlainHTTP:
            handOverToPlainHTTP()
        case let .rememberPinned(host, reason):
            shared.pinning.remember(host, reason: reason)
            loop.counters.pinned.wrappingAdd(1, ordering: .relaxed)
        case let .suspectPinning(host, reason):
            if shared.pinningEvidence.suspicion(host: host, connectionStart: machine.facts.startMicros, now: loop.wallNow) {
                shared.pinning.remember(host, reason: reason)
                loop.counters.pinned.wrappingAdd(1, ordering: .relaxed)
                machine.facts.pinningDetected = true
                machine.facts.error = (machine.facts.error ?? reason) + "; \(host) will be passed through from now on"
            }
        case .refuseClientTLS(let alert):
            refuseClient(alert: alert)
        case .countHeadTimeout:
            loop.counters.headTimeouts.wrappingAdd(1, ordering: .relaxed)
        case .close(let reset):
            finish(reset: reset)
        }
    }

    // MARK: loop callbacks

    func loopEvent(side: Int, events: UInt32) {
        guard stage != .closed else { return }
        let leg: Leg
        if side == 0 { leg = client } else if let up = upstream { leg = up } else { return }
        if events & (tv_EPOLLIN | tv_EPOLLERR | tv_EPOLLHUP | tv_EPOLLRDHUP) != 0 { leg.readable = true }
        if events & (tv_EPOLLRDHUP | tv_EPOLLHUP) != 0 { leg.peerClosing = true }
        if events & (tv_EPOLLOUT | tv_EPOLLERR | tv_EPOLLHUP) != 0 { leg.writable = true }
        switch stage {
        case .control:
            if side == 1 {
                upstreamControlEvent(events)
            } else if machine.readsClient {
                if events & tv_EPOLLIN != 0 || leg.peerClosing { peekClient() }
            } else if leg.peerClosing {
                peekClient()
            }
            flushClientReplies()
        case .upstreamHandshake:
            if side == 1 { driveUpstreamHandshake() } else if leg.peerClosing { peekClient() }
        case .clientHandshake:
            if side == 0 { driveClientHandshake() }
        case .relay:
            relay()
        case .closed:
            break
        }
    }

    func loopTimer(deadline: UInt64) {
        guard stage != .closed else { return }
        if deadline == armedAt { armedAt = 0 }
        let now = loop.now
        if phaseDeadline != 0 && now >= phaseDeadline {
            phaseDeadline = 0
            feed(.timeout)
            guard stage != .closed else { return }
        }
        if stage == .relay && now >= lastActivity &+ idleNanos {
            endError = "closed after \(Int(shared.configuration.idleTimeout)) s without traffic"
            finishRelay(reset: false)
            return
        }
        if stage == .relay && buffersMayBeHeld
            && now >= IdleBufferPolicy.attemptAt(lastActivity: lastActivity, refusedAt: bufferRefusedAt) {
            releaseIdleBuffers()
        }
        rearm()
    }

    func loopRunAgain() {
        guard stage == .relay else { return }
        relay()
    }

    func loopShutdown() {
        guard stage != .closed else { return }
        if machine.facts.error == nil { machine.facts.error = "tv stopped" }
        if stage == .relay {
            endError = machine.facts.error
            feed(.relayEnded(relayEnding()))
        }
        finish(reset: true)
    }

    private func rearm() {
        var next = phaseDeadline
        if stage == .relay {
            let idle = lastActivity &+ idleNanos
            if next == 0 || idle < next { next = idle }
            if buffersMayBeHeld {
                let quiet = IdleBufferPolicy.attemptAt(lastActivity: lastActivity, refusedAt: bufferRefusedAt)
                if quiet < next { next = quiet }
            }
        }
        guard next != 0, armedAt == 0 || next < armedAt else { return }
        armedAt = next
        loop.armTimer(token, at: next)
    }

    // MARK: control phase I/O

    private func peekClient() {
        guard stage != .closed else { return }
        let n = tv_peek(client.fd, buffer.baseAddress, buffer.count)
        if n > 0 {
            if machine.readsClient {
                feed(.clientBytes(UnsafeRawBufferPointer(rebasing: buffer[0..<n])))
                // The client finished sending (FIN) and what it sent is still not enough: no
                // more will come.
                if client.peerClosing && stage == .control && machine.readsClient {
                    feed(.clientGone(reset: false))
                }
            }
            return
        }
        if n == 0 {
            client.readClosed = true
            if stage == .clientHandshake { return driveClientHandshake() }
            feed(.clientGone(reset: false))
            return
        }
        let err = errno
        if err == EAGAIN || err == EWOULDBLOCK || err == EINTR { return }
        feed(.clientGone(reset: true))
    }

    private func consumeClient(_ count: Int) {
        var left = count
        while left > 0 {
            let n = Glibc.read(client.fd, buffer.baseAddress, min(left, buffer.count))
            if n <= 0 { break }
            left -= n
        }
    }

    private func sendClient(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            if client.hasPending { client.stash(raw); return }
            switch client.write(raw) {
            case .wrote(let n): if n < raw.count { client.stash(UnsafeRawBufferPointer(rebasing: raw[n...])) }
            case .failed: break
            }
        }
    }

    private func flushClientReplies() {
        guard stage == .control, client.hasPending, client.writable else { return }
        _ = client.flush()
    }

    private func resolve(host: String, port: UInt16) {
        let inbox = loop.inbox
        let token = self.token
        shared.resolver.resolve(host: host, port: port) { result in
            inbox.post { loop in
                guard let connection = loop.handler(for: token) as? ProxyConnection else { return }
                connection.resolved(result)
            }
        }
    }

    private func resolved(_ result: Result<[SocketAddress], Resolver.ResolveFailure>) {
        guard stage != .closed else { return }
        switch result {
        case .success(let addresses): feed(.resolved(addresses))
        case .failure(let failure): feed(.resolveFailed(failure.message))
        }
    }

    private func connect(to address: SocketAddress) {
        if let old = upstream {
            old.close(reset: false)
            upstream = nil
        }
        let attempt: Result<(fd: Int32, done: Bool), Errno>
        if let fd = preconnectedUpstream {
            // Connect-first front-ends (TUN) hand in the socket they already connected.
            preconnectedUpstream = nil
            attempt = .success((fd, true))
        } else {
            attempt = Socket.connect(to: address, mark: shared.configuration.upstreamMark)
        }
        switch attempt {
        case .success(let (fd, done)):
            let leg = Leg(fd: fd)
            leg.connecting = !done
            upstream = leg
            loop.watch(fd, token: token, side: 1, events: tv_EPOLLIN | tv_EPOLLOUT | tv_EPOLLRDHUP)
            if done { queue.append(contentsOf: machine.handle(.connected(address))) }
            pendingConnect = address
        case .failure(let err):
            queue.append(contentsOf: machine.handle(.connectFailed(err.phrase)))
        }
    }

    private var pendingConnect: SocketAddress?
    /// An upstream socket connected before the client's connection was adopted (connect-first).
    var preconnectedUpstream: Int32?
    /// The client address this connection counts against (`ClientAddressLimit`; nil: none).
    var admittedAddress: IPAddress?

    private func upstreamControlEvent(_ events: UInt32) {
        guard let up = upstream else { return }
        if up.connecting {
            guard events & (tv_EPOLLOUT | tv_EPOLLERR | tv_EPOLLHUP) != 0 else { return }
            let err = tv_socket_error(up.fd)
            up.connecting = false
            if err == 0, let address = pendingConnect {
                // Whatever came with the connect event is still unread (level of the socket).
                up.readable = events & tv_EPOLLIN != 0
                up.peerClosing = events & tv_EPOLLRDHUP != 0
                feed(.connected(address))
            } else {
                up.close(reset: false)
                upstream = nil
                feed(.connectFailed(Errno(err == 0 ? ECONNREFUSED : err).phrase))
            }
            return
        }
        if watchingUpstreamFirst && machine.phase == .awaitingFirstBytes && (up.readable || up.peerClosing) {
            feed(.upstreamSpokeFirst)
        }
    }

    private func refuseClient(alert: UInt8) {
        // Drain what the client sent (its ClientHello), so that closing sends a FIN after our
        // alert, not a reset that could discard it.
        while true {
            let n = Glibc.read(client.fd, buffer.baseAddress, buffer.count)
            if n <= 0 { break }
        }
        let record = TLSAlert.plaintextRecord(alert)
        _ = record.withUnsafeBytes { tv_send(client.fd, $0.baseAddress, $0.count) }
        _ = Glibc.shutdown(client.fd, Int32(SHUT_WR))
        finish(reset: false)
    }

    // MARK: TLS legs

    private func startUpstreamTLS(_ plan: ConnectionMachine.UpstreamTLSPlan) {
        guard let up = upstream, let ssl = SSL_new(shared.contexts.client) else {
            return finishWith("tv could not create a TLS session (\(OpenSSLError("SSL_new").reasons.joined(separator: "; ")))")
        }
        let session = TLSSession(ssl: ssl, isServer: false)
        session.attach(fd: up.fd)
        if let name = plan.serverName { _ = tv_ssl_set_sni(ssl, name) }
        if !plan.alpn.isEmpty {
            let wire = ALPNSelection.wireList(plan.alpn)
            _ = SSL_set_alpn_protos(ssl, wire, UInt32(wire.count))
        }
        if IPAddress(plan.verifyHost) != nil {
            _ = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), plan.verifyHost)
        } else {
            _ = SSL_set1_host(ssl, plan.verifyHost)
        }
        session.sessionCache = shared.contexts.sessionCache
        session.sessionKey = plan.sessionKey
        if let cached = shared.contexts.sessionCache.session(for: plan.sessionKey) {
            _ = SSL_set_session(ssl, cached.handle)
        }
        SSL_set_connect_state(ssl)
        up.tls = session
        stage = .upstreamHandshake
        driveUpstreamHandshake()
    }

    private func driveUpstreamHandshake() {
        guard stage == .upstreamHandshake, let up = upstream, let session = up.tls else { return }
        switch session.handshake() {
        case .wantRead, .wantWrite:
            return
        case .done:
            stage = .control
            feed(.upstreamHandshakeDone(upstreamFacts(session)))
        case .failed(let failure):
            if let key = session.sessionKey { shared.contexts.sessionCache.remove(key) }
            stage = .control
            feed(.upstreamHandshakeFailed(failure.text))
        }
    }

    private func upstreamFacts(_ session: TLSSession) -> ConnectionMachine.UpstreamHandshake {
        let ssl = session.ssl
        let verify = SSL_get_verify_result(ssl)
        // The peer's certificate as OpenSSL already parsed it (re-parsing the DER would decode
        // its public key again, the costliest part of OpenSSL 3's certificate parsing).
        var facts: ServerCertificateFacts?
        var names: [SubjectAlternativeName] = []
        if let peer = SSL_get0_peer_certificate(ssl) {
            if let last = loop.lastUpstreamCertificate, last.certificate.handle == peer {
                (facts, names) = (last.facts, last.names)
            } else {
                let certificate = Certificate.retaining(peer)
                names = certificate.subjectAlternativeNames
                facts = ServerCertificateFacts(certificate)
                loop.lastUpstreamCertificate = (certificate, facts!, names)
            }
        }
        if session.resumed { loop.counters.upstreamResumptions.wrappingAdd(1, ordering: .relaxed) }
        let verifyError: String? = verify == X509_V_OK ? nil : String(cString: X509_verify_cert_error_string(verify))
        return ConnectionMachine.UpstreamHandshake(
            version: session.version, alpn: session.selectedALPN, verifyError: verifyError,
            certificate: facts, certificateSANs: names, resumed: session.resumed)
    }

    private func startClientTLS(_ plan: ConnectionMachine.ClientTLSPlan) {
        guard let cache = shared.leafCache else { return finishWith("no CA is loaded") }
        let leaf: Leaf
        do {
            leaf = try cache.leaf(for: plan.identity, now: loop.wallNow / 1_000_000)
        } catch {
            let text = (error as? OpenSSLError)?.message ?? "\(error)"
            machine.facts.error = "tv could not mint a certificate: \(text)"
            return refuseClient(alert: TLSAlert.internalError)
        }
        guard let ssl = SSL_new(shared.contexts.server) else { return finishWith("tv could not create a TLS session") }
        let session = TLSSession(ssl: ssl, isServer: true)
        session.alpnChoice = plan.alpn
        session.attach(fd: client.fd)
        guard SSL_use_certificate(ssl, leaf.certificate.handle) == 1 else {
            ERR_clear_error()
            return finishWith("tv could not use its certificate for this connection")
        }
        SSL_set_accept_state(ssl)
        client.tls = session
        stage = .clientHandshake
        // A client that vanished while the upstream leg was set up (its FIN or reset already
        // here) may still let the flight be written, then fail the next read: not a pin.
        clientClosedBeforeFlight = client.peerClosing || tv_peer_has_closed(client.fd) == 1
        driveClientHandshake()
    }

    private func driveClientHandshake() {
        guard stage == .clientHandshake, let session = client.tls else { return }
        switch session.handshake() {
        case .wantRead, .wantWrite:
            return
        case .done:
            stage = .control
            handshakeDoneMicros = loop.wallNow
            if session.resumed { loop.counters.clientResumptions.wrappingAdd(1, ordering: .relaxed) }
            feed(.clientHandshakeDone(.init(version: session.version, resumed: session.resumed)))
        case .failed(let failure):
            stage = .control
            let ending: PinningDetector.Ending
            if let alert = failure.peerAlert {
                ending = .alert(alert)
            } else if failure.eof || failure.systemError == ECONNRESET || failure.systemError == EPIPE {
                ending = .closedDuringHandshake(certificateSent: session.flightSent && !clientClosedBeforeFlight)
            } else {
                ending = .otherError("the client's TLS handshake failed (\(failure.text))")
            }
            feed(.clientHandshakeFailed(ending))
        }
    }

    // MARK: data phase

    private func startRelay(_ plan: ConnectionMachine.RelayPlan) {
        guard upstream != nil else { return finishWith("internal error: relay without a server leg") }
        switch plan {
        case let .raw(plaintext, observe):
            recordPlaintext = plaintext
            if observe { serverHelloParser = ServerHelloParser() }
        case .decrypted:
            recordPlaintext = true
        }
        stage = .relay
        lastActivity = loop.now
        // Edges seen during the control phase are not repeated: start as if both were ready.
        client.readable = true
        client.writable = true
        upstream!.readable = true
        upstream!.writable = true
        // The handshakes may have left read buffers behind.
        if client.tls != nil || upstream!.tls != nil { buffersMayBeHeld = true }
        rearm()
        relay()
    }

    /// Moves what can move both ways; closes when both directions are done.
    private func relay() {
        guard stage == .relay, let up = upstream else { return }
        let moreUp = pump(from: client, to: up, direction: .clientToServer)
        guard stage == .relay else { return }
        let moreDown = pump(from: up, to: client, direction: .serverToClient)
        guard stage == .relay else { return }
        if client.readClosed && up.readClosed && up.writeClosed && client.writeClosed && !client.hasUnsent && !up.hasUnsent {
            finishRelay(reset: false)
            return
        }
        if moreUp || moreDown { loop.runAgain(token) }
    }

    /// OpenSSL may hold record buffers: bytes moved on a TLS leg since the last release. The
    /// release waits for `IdleBufferPolicy.quietNanos` without traffic (a timer, not every burst:
    /// called after every burst, `SSL_free_buffers` cost ~2.7 k instructions per h1 keep-alive
    /// request, ~6 %, even when it freed nothing; callgrind).
    private var buffersMayBeHeld = false

    /// When the quiet timer last found a leg it could not release (monotonic ns; 0 = not since
    /// the last activity): the next try waits another `IdleBufferPolicy.quietNanos`.
    private var bufferRefusedAt: UInt64 = 0

    /// Marks the TLS legs as possibly holding buffers and arms the quiet timer (once per quiet
    /// to busy transition).
    private func noteTLSActivity() {
        guard !buffersMayBeHeld, client.tls != nil || upstream?.tls != nil else { return }
        buffersMayBeHeld = true
        bufferRefusedAt = 0
        rearm()
    }

    /// The quiet timer: gives each TLS leg's buffers back when the policy allows; a leg it must
    /// leave is tried again a second later while the connection stays idle.
    private func releaseIdleBuffers() {
        buffersMayBeHeld = false
        bufferRefusedAt = 0
        for leg in [client, upstream] {
            guard let leg, let tls = leg.tls else { continue }
            let state = IdleBufferPolicy.LegState(
                readable: leg.readable, tlsPending: tls.hasPending, unsentRecords: tls.unsent,
                stashedPlaintext: leg.hasPending, readClosed: leg.readClosed)
            if IdleBufferPolicy.release(state, quietFor: loop.now &- lastActivity) {
                tls.releaseBuffers()
            } else {
                buffersMayBeHeld = true
                bufferRefusedAt = loop.now
            }
        }
    }

    /// Pass-through bytes are spliced (splice(2) through a pipe, no copy into user space) once a
    /// direction has carried this much: short exchanges are cheaper with one read and one write,
    /// and an idle connection should not hold two extra descriptors.
    static let spliceAfterBytes = 256 * 1024

    /// One direction. Returns true when it stopped only for fairness (more may be readable).
    private func pump(from source: Leg, to sink: Leg, direction: ChunkDirection) -> Bool {
        if sink.pipe != nil || (spliceAllowed && sink.copiedToward >= Self.spliceAfterBytes && !sink.hasPending && sink.openPipe()) {
            return splicePump(from: source, to: sink, direction: direction)
        }
        if sink.hasPending || sink.tls != nil {
            switch sink.flush() {
            case .drained: break
            case .blocked: return false
            case let .failed(reset, text): abort(reset: reset, "\(direction == .clientToServer ? "sending to the server" : "sending to the client") failed: \(text)"); return false
            }
        }
        defer {
            // Send what the burst gathered (records of a TLS sink), once.
            if stage == .relay, sink.tls != nil, case let .failed(reset, text) = sink.flushRecords() {
                abort(reset: reset, "\(direction == .clientToServer ? "sending to the server" : "sending to the client") failed: \(text)")
            }
        }
        var rounds = 0
        while !source.readClosed {
            let tlsBuffered = source.tls?.hasPending ?? false
            guard source.readable || tlsBuffered else { break }
            if rounds == 16 { return true }
            rounds += 1
            var result = source.read(into: buffer)
            // What a coalescing read met after the first record (an EOF or failure to act on once
            // the bytes before it are written).
            var after: Leg.ReadResult?
            if case .bytes(var n) = result, let tls = source.tls {
                // Records OpenSSL already holds (they came in with the same socket read) join this
                // chunk, so one write carries them: one record and one syscall instead of one per
                // small record (h2 frames), for us and for the peer that reads them.
                while tls.hasPending && buffer.count - n >= 16_384 {
                    let next = source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[n...]))
                    if case .bytes(let more) = next { n += more } else { after = next; break }
                }
                result = .bytes(n)
            }
            if case .eof = after { source.readClosed = true }
            switch result {
            case .bytes(let n):
                moved(n, direction)
                let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
                if spliceAllowed { sink.copiedToward &+= n }
                let written = sink.write(chunk)
                if case let .failed(reset, text) = after {
                    let who = direction == .clientToServer ? "client" : "server"
                    abort(reset: reset, reset ? "the \(who) reset the connection" : "reading from the \(who) failed: \(text)")
                    return false
                }
                switch written {
                case .wrote(let w):
                    if w < n {
                        sink.stash(UnsafeRawBufferPointer(rebasing: chunk[w...]))
                        return false
                    }
                    // Enough gathered for one large send: send it now; if the socket is full,
                    // stop reading this side (back-pressure).
                    if let tls = sink.tls, tls.unsent >= 64 * 1024 {
                        switch sink.flushRecords() {
                        case .drained: break
                        case .blocked: return false
                        case let .failed(reset, text):
                            abort(reset: reset, "\(direction == .clientToServer ? "sending to the server" : "sending to the client") failed: \(text)")
                            return false
                        }
                    }
                case let .failed(reset, text):
                    abort(reset: reset, "\(direction == .clientToServer ? "sending to the server" : "sending to the client") failed: \(text)")
                    return false
                }
            case .wouldBlock:
                // Drained; the quiet timer (`releaseIdleBuffers`) gives OpenSSL's buffers back.
                break
            case .blockedOnWrite:
                return false
            case .eof:
                source.readClosed = true
            case let .failed(reset, text):
                let who = direction == .clientToServer ? "client" : "server"
                abort(reset: reset, reset ? "the \(who) reset the connection" : "reading from the \(who) failed: \(text)")
                return false
            }
        }
        if source.readClosed && !sink.writeClosed && !sink.hasPending {
            if case .blocked = sink.flushRecords() { return false }
            sink.shutdownWrite()
        }
        return false
    }

    /// Encrypted pass-through, the ServerHello read, nothing to record: the bytes need not be seen.
    private var spliceAllowed: Bool {
        recordPlaintext == false && serverHelloParser == nil && upstream?.tls == nil && client.tls == nil
            && shared.configuration.spliceEncryptedPassThrough && (machine.facts.status == .encrypted || machine.facts.status == .keptPrivate)
    }

    private func splicePump(from source: Leg, to sink: Leg, direction: ChunkDirection) -> Bool {
        let failure: (Bool, String) -> Void = { [unowned self] reset, text in
            abort(reset: reset, "\(direction == .clientToServer ? "sending to the server" : "sending to the client") failed: \(text)")
        }
        switch sink.flushPipe() {
        case .drained: break
        case .blocked: return false
        case let .failed(reset, text): failure(reset, text); return false
        }
        var rounds = 0
        while !source.readClosed && source.readable {
            if rounds == 16 { return true }
            rounds += 1
            switch sink.spliceIn(from: source, max: 256 * 1024) {
            case .moved(let n):
                loop.counters.splicedBytes.wrappingAdd(UInt64(n), ordering: .relaxed)
                lastActivity = loop.now
                machine.facts.lastActivityMicros = loop.wallNow
                if direction == .clientToServer {
                    machine.facts.bytesFromClient &+= UInt64(n)
                    loop.counters.bytesFromClients.wrappingAdd(UInt64(n), ordering: .relaxed)
                } else {
                    machine.facts.bytesFromServer &+= UInt64(n)
                    loop.counters.bytesFromServers.wrappingAdd(UInt64(n), ordering: .relaxed)
                }
                switch sink.flushPipe() {
                case .drained: break
                case .blocked: return false
                case let .failed(reset, text): failure(reset, text); return false
                }
            case .wouldBlock:
                break
            case .eof:
                source.readClosed = true
            case let .failed(reset, text):
                let who = direction == .clientToServer ? "client" : "server"
                abort(reset: reset, reset ? "the \(who) reset the connection" : "reading from the \(who) failed: \(text)")
                return false
            }
        }
        if source.readClosed && !sink.writeClosed && !sink.hasUnsent {
            sink.shutdownWrite()
        }
        return false
    }

    @inline(__always)
    private func moved(_ n: Int, _ direction: ChunkDirection) {
        lastActivity = loop.now
        if !buffersMayBeHeld { noteTLSActivity() }
        machine.facts.lastActivityMicros = loop.wallNow
        let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
        if direction == .clientToServer {
            if !acceptanceRecorded { recordAcceptance() }
            machine.facts.bytesFromClient &+= UInt64(n)
            loop.counters.bytesFromClients.wrappingAdd(UInt64(n), ordering: .relaxed)
        } else {
            machine.facts.bytesFromServer &+= UInt64(n)
            loop.counters.bytesFromServers.wrappingAdd(UInt64(n), ordering: .relaxed)
            if serverHelloParser != nil { observeServerHello(chunk) }
        }
        if recordPlaintext, let recorder = shared.recorder, recorder.isRecording {
            recorder.record(flow: machine.facts.id, direction: direction,
                            offsetMicros: loop.wallNow - machine.facts.startMicros, bytes: chunk)
        }
    }

    /// The client sent data over our leaf: it accepts our certificate for this host.
    private var acceptanceRecorded = false
    private func recordAcceptance() {
        acceptanceRecorded = true
        guard machine.facts.status == .inspected, let host = machine.pinningHost else { return }
        shared.pinningEvidence.success(host: host, now: loop.wallNow)
    }

    private func observeServerHello(_ chunk: UnsafeRawBufferPointer) {
        switch serverHelloParser!.feed(chunk) {
        case .needMoreData: return
        case .serverHello(let hello):
            serverHelloParser = nil
            feed(.serverHello(hello))
        default:
            serverHelloParser = nil
        }
    }

    /// A leg failed: carry a reset as a reset, anything else as a close.
    private func abort(reset: Bool, _ text: String) {
        endError = text
        finishRelay(reset: reset)
    }

    private func relayEnding() -> ConnectionMachine.RelayEnding {
        ConnectionMachine.RelayEnding(
            clientApplicationBytes: machine.facts.bytesFromClient,
            microsSinceHandshake: handshakeDoneMicros == 0 ? 0 : loop.wallNow - handshakeDoneMicros,
            error: endError)
    }

    private func finishRelay(reset: Bool) {
        feed(.relayEnded(relayEnding()))
        finish(reset: reset)
    }

    private func finishWith(_ reason: String) {
        machine.facts.status = .failed(reason: reason)
        machine.facts.error = reason
        finish(reset: false)
    }

    /// Closes everything and reports the flow. Idempotent.
    private func finish(reset: Bool) {
        guard stage != .closed else { return }
        // Before the data phase a close may follow an answer (400, 408, 502): let it arrive.
        if !reset && stage == .control { client.shutdownAfterAnswer() }
        stage = .closed
        client.close(reset: reset)
        upstream?.close(reset: reset)
        upstream = nil
        if let fd = preconnectedUpstream {
            Glibc.close(fd)
            preconnectedUpstream = nil
        }
        loop.unregister(token)
        shared.connectionEnded(address: admittedAddress)
        // Commands still queued (pinning bookkeeping) may add to the facts: report after them.
        closeReportPending = true
        if !executing { reportClosed() }
    }

    private var closeReportPending = false

    private func reportClosed() {
        guard closeReportPending else { return }
        closeReportPending = false
        var facts = machine.facts
        facts.durationMicros = loop.wallNow - facts.startMicros
        loop.counters.countClosed(facts.status.kind)
        shared.sink?.flowClosed(facts)
        if recordPlaintext { shared.recorder?.flowEnded(flow: facts.id) }
    }

    // MARK: plain HTTP

    private func handOverToPlainHTTP() {
        // The forwarder takes the client socket and this flow's id; this object is done.
        stage = .closed
        loop.unregister(token)
        let forwarder = PlainHTTPForwarder(loop: loop, client: client, facts: machine.facts, admittedAddress: admittedAddress)
        forwarder.start()
    }
}

extension ConnectionMachine.Command {
    /// Commands that still make sense once the connection is closed.
    var isBookkeeping: Bool {
        switch self {
        case .rememberPinned, .suspectPinning: return true
        default: return false
        }
    }
}
