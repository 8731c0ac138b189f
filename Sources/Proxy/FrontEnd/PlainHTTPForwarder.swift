import CTVShims
import Foundation
import LocalCA
import Wire
#if canImport(Glibc)
import Glibc
#endif

/// Absolute-form plain HTTP through the explicit proxy (RFC 9112 §3.2.2): each request line is
/// rewritten to origin-form, Proxy-* hop headers are dropped, the rest (body included, chunked
/// or not) is relayed as is. Keep-alive on both sides; a request for another host:port waits
/// until the previous responses are complete, then goes over a new upstream connection (a new
/// flow). Responses are relayed unchanged; their framing is only read to know when each ends.
///
/// Every request head must be whole within `ProxyConfiguration.headTimeout` of its first byte
/// (`HeadDeadline`), however slowly its bytes trickle in.
///
/// Confined to its loop's thread.
final class PlainHTTPForwarder: LoopHandler {
    private unowned let loop: EventLoop
    private let shared: ProxyShared
    private let client: Leg
    private var token: UInt64 = 0

    /// The current upstream and its flow.
    private var upstream: Leg?
    private var upstreamTarget: HostPort?
    private var facts: FlowFacts?
    /// The accept-time facts, reused for the first upstream's flow.
    private var firstFacts: FlowFacts?
    private var connecting = false
    private var connectAddress: SocketAddress?
    private var addresses: [SocketAddress] = []
    private var nextAddress = 0

    private enum ClientState {
        case head
        case body(HTTPBodyScanner)
        /// After a 101 response: bytes flow raw both ways.
        case tunnel
    }
    private var clientState: ClientState = .head
    private var headParser = HTTPRequestHeadParser()
    private var headFed = 0
    /// Client bytes held back (a request for another host while responses are outstanding).
    private var held: [UInt8] = []
    private var paused = false

    /// Request methods whose responses are still expected, oldest first.
    private var outstanding: [String] = []
    private var responseHead = HTTPResponseHeadScanner()
    private var responseBody: HTTPBodyScanner?
    private var closeAfterResponse = false
    private var upgraded = false
    private var closed = false
    private var lastActivity: UInt64
    private var armedAt: UInt64 = 0
    private var connectDeadline: UInt64 = 0
    private let idleNanos: UInt64
    private let recordingAllowed: Bool
    private var headDeadline: HeadDeadline
    /// The client address this connection counts against (`ClientAddressLimit`; nil: none).
    private let admittedAddress: IPAddress?

    init(loop: EventLoop, client: Leg, facts: FlowFacts, admittedAddress: IPAddress?) {
        self.loop = loop
        shared = loop.shared
        self.client = client
        self.admittedAddress = admittedAddress
        headDeadline = HeadDeadline(limitMillis: Int(loop.shared.configuration.headTimeout * 1000))
        firstFacts = facts
        lastActivity = loop.now
        idleNanos = UInt64(max(1, shared.configuration.idleTimeout) * 1e9)
        recordingAllowed = shared.recorder != nil
    }

    func start() {
        token = loop.register(self)
        loop.rewatch(client.fd, token: token, side: 0, events: tv_EPOLLIN | tv_EPOLLOUT | tv_EPOLLRDHUP)
        client.readable = true
        client.writable = true
        rearm()
        drive()
    }

    // MARK: loop

    func loopEvent(side: Int, events: UInt32) {
        guard !closed else { return }
        let leg: Leg
        if side == 0 { leg = client } else if let up = upstream { leg = up } else { return }
        if events & (tv_EPOLLIN | tv_EPOLLERR | tv_EPOLLHUP | tv_EPOLLRDHUP) != 0 { leg.readable = true }
        if events & (tv_EPOLLRDHUP | tv_EPOLLHUP) != 0 { leg.peerClosing = true }
        if events & (tv_EPOLLOUT | tv_EPOLLERR | tv_EPOLLHUP) != 0 { leg.writable = true }
        if side == 1 && connecting {
            guard events & (tv_EPOLLOUT | tv_EPOLLERR | tv_EPOLLHUP) != 0 else { return }
            let err = tv_socket_error(leg.fd)
            if err == 0 { connected() } else { connectFailed(Errno(err)) }
            return
        }
        drive()
    }

    func loopTimer(deadline: UInt64) {
        guard !closed else { return }
        if deadline == armedAt { armedAt = 0 }
        if connecting && connectDeadline != 0 && loop.now >= connectDeadline {
            keepNumericTarget()
            return fail(.unreachable(target: targetName, .noAnswer(seconds: nil)), status: 504)
        }
        if headDeadline.passed(at: loop.now) { return headTimedOut() }
        if loop.now >= lastActivity &+ idleNanos {
            return finish(reset: false, failure: .idle(seconds: Int(shared.configuration.idleTimeout)))
        }
        rearm()
    }

    /// A request head was not whole in time: 408 unless a response is under way, counted, closed.
    private func headTimedOut() {
        loop.counters.headTimeouts.wrappingAdd(1, ordering: .relaxed)
        let limit = Int(shared.configuration.headTimeout * 1000)
        let underWay = !outstanding.isEmpty || responseBody != nil || client.hasPending
        if HeadDeadline.ending(responseUnderWay: underWay) == .requestTimeout {
            let bytes = HeadDeadline.requestTimeoutResponse(limitMillis: limit)
            _ = bytes.withUnsafeBytes { tv_send(client.fd, $0.baseAddress, $0.count) }
            client.shutdownAfterAnswer()
        }
        finish(reset: false, failure: .headTimeout(limitMillis: limit))
    }

    func loopRunAgain() { drive() }

    func loopShutdown() { finish(reset: true, failure: .stopped) }

    private func rearm() {
        var next = lastActivity &+ idleNanos
        if connecting && connectDeadline != 0 && connectDeadline < next { next = connectDeadline }
        if let head = headDeadline.deadline, head < next { next = head }
        guard armedAt == 0 || next < armedAt else { return }
        armedAt = next
        loop.armTimer(token, at: next)
    }

    // MARK: the two directions

    private func drive() {
        guard !closed else { return }
        var more = false
        if let up = upstream, !connecting {
            if up.hasPending {
                switch up.flush() {
                case .failed(_, let text): return finish(reset: true, failure: .send(to: .server, text))
                default: break
                }
            }
            more = readUpstream(up) || more
            guard !closed else { return }
        }
        more = readClient() || more
        guard !closed else { return }
        if client.hasPending {
            if case .failed(_, let text) = client.flush() { return finish(reset: true, failure: .send(to: .client, text)) }
        }
        if client.readClosed && outstanding.isEmpty && !client.hasPending && !connecting {
            return finish(reset: false, failure: nil)
        }
        if more { loop.runAgain(token) }
    }

    /// Client → server. Returns true when stopped for fairness.
    private func readClient() -> Bool {
        var rounds = 0
        while !client.readClosed && !paused && client.readable {
            if let up = upstream, up.hasPending { return false }   // back-pressure
            if rounds == 16 { return true }
            rounds += 1
            switch client.read(into: loop.buffer) {
            case .bytes(let n):
                lastActivity = loop.now
                process(UnsafeRawBufferPointer(rebasing: loop.buffer[0..<n]))
                if closed { return false }
            case .wouldBlock, .blockedOnWrite:
                return false
            case .eof:
                client.readClosed = true
                if upgraded || (!outstanding.isEmpty) { upstream?.shutdownWrite() }
            case .failed(let reset, let text):
                finish(reset: reset, failure: .read(from: .client, reset: reset, text))
                return false
            }
        }
        return false
    }

    /// Handles bytes from the client in order: heads are rewritten, bodies passed on.
    private func process(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count && !closed {
            if paused {
                held.append(contentsOf: bytes[offset...])
                return
            }
            switch clientState {
            case .tunnel:
                sendUpstream(UnsafeRawBufferPointer(rebasing: bytes[offset...]), count: true)
                return
            case .body(var scanner):
                let n = scanner.consume(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
                if scanner.malformed { return fail(.chunkedBodyMalformed(.client), status: 400) }
                sendUpstream(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)]), count: true)
                offset += n
                clientState = scanner.isDone ? .head : .body(scanner)
            case .head:
                let before = headFed
                let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
                headFed += rest.count
                if headDeadline.deadline == nil {
                    headDeadline.headBegan(at: loop.now)
                    rearm()
                }
                switch headParser.feed(rest) {
                case .needMoreData:
                    return
                case .malformed(let reason):
                    return fail(.requestUnreadable(reason), status: 400)
                case .head(let head):
                    let used = head.byteCount - before
                    headParser = HTTPRequestHeadParser()
                    headFed = 0
                    headDeadline.headCompleted()
                    if !startRequest(head, rawHeadTail: UnsafeRawBufferPointer(rebasing: bytes[offset...]), used: used) {
                        return
                    }
                    offset += used
                }
            }
        }
    }

    /// Returns false when the request was held back (or refused).
    private func startRequest(_ head: HTTPRequestHead, rawHeadTail: UnsafeRawBufferPointer, used: Int) -> Bool {
        guard case let .absolute(scheme, destination, originForm) = head.requestTarget, scheme == "http", !head.isConnect else {
            fail(.notAbsoluteHTTP(method: head.method, target: head.target), status: 400)
            return false
        }
        if upstreamTarget != destination || upstream == nil {
            if !outstanding.isEmpty {
                // Wait for the previous responses; keep this request and what follows.
                paused = true
                held = Array(rebuildHeadPlaceholder(head)) + Array(rawHeadTail[used...])
                pendingHead = head
                return false
            }
            openUpstream(destination)
        }
        forward(head, originForm: originForm)
        return true
    }

    /// A held request is re-parsed from its rewritten-but-equivalent original text.
    private var pendingHead: HTTPRequestHead?
    private func rebuildHeadPlaceholder(_ head: HTTPRequestHead) -> [UInt8] {
        var text = "\(head.method) \(head.target) \(head.version)\r\n"
        for field in head.headers { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    private func forward(_ head: HTTPRequestHead, originForm: String) {
        var text = "\(head.method) \(originForm) \(head.version)\r\n"
        var sawHost = false
        for field in head.headers {
            let name = field.name.lowercased()
            if name.hasPrefix("proxy-") { continue }   // Proxy-Connection, Proxy-Authorization…
            if name == "host" { sawHost = true }
            text += "\(field.name): \(field.value)\r\n"
        }
        if !sawHost, let target = upstreamTarget { text += "Host: \(target.port == 80 ? (target.isIPv6 ? "[\(target.host)]" : target.host) : target.description)\r\n" }
        text += "\r\n"
        let bytes = Array(text.utf8)
        // The head as the server gets it (origin-form) is what was said on this flow: recorded
        // like the body bytes that follow it (sendUpstream records only counted bytes).
        bytes.withUnsafeBytes { record($0, .clientToServer) }
        loop.counters.bytesFromClients.wrappingAdd(UInt64(bytes.count), ordering: .relaxed)
        bytes.withUnsafeBytes { sendUpstream($0, count: false) }
        outstanding.append(head.method)
        if !head.keepsAlive { closeAfterResponse = true }
        switch head.bodyFraming {
        case .none: clientState = .head
        case .contentLength(let n): clientState = n == 0 ? .head : .body(HTTPBodyScanner(.length(n)))
        case .chunked: clientState = .body(HTTPBodyScanner(.chunked))
        }
        facts?.bytesFromClient &+= UInt64(bytes.count)
    }

    private func sendUpstream(_ bytes: UnsafeRawBufferPointer, count: Bool) {
        guard bytes.count > 0, let up = upstream else { return }
        if count {
            facts?.bytesFromClient &+= UInt64(bytes.count)
            loop.counters.bytesFromClients.wrappingAdd(UInt64(bytes.count), ordering: .relaxed)
            record(bytes, .clientToServer)
        }
        if connecting || up.hasPending { up.stash(bytes); return }
        switch up.write(bytes) {
        case .wrote(let n): if n < bytes.count { up.stash(UnsafeRawBufferPointer(rebasing: bytes[n...])) }
        case .failed(_, let text): finish(reset: true, failure: .send(to: .server, text))
        }
    }

    /// Server → client. Returns true when stopped for fairness.
    private func readUpstream(_ up: Leg) -> Bool {
        var rounds = 0
        while !up.readClosed && up.readable {
            if client.hasPending { return false }   // back-pressure
            if rounds == 16 { return true }
            rounds += 1
            switch up.read(into: loop.buffer) {
            case .bytes(let n):
                lastActivity = loop.now
                let chunk = UnsafeRawBufferPointer(rebasing: loop.buffer[0..<n])
                facts?.bytesFromServer &+= UInt64(n)
                facts?.lastActivityMicros = loop.wallNow
                loop.counters.bytesFromServers.wrappingAdd(UInt64(n), ordering: .relaxed)
                record(chunk, .serverToClient)
                observeResponse(chunk)
                if closed { return false }
                switch client.write(chunk) {
                case .wrote(let w): if w < n { client.stash(UnsafeRawBufferPointer(rebasing: chunk[w...])) }
                case .failed(_, let text):
                    finish(reset: true, failure: .send(to: .client, text))
                    return false
                }
                if responsesDone() { return false }
            case .wouldBlock, .blockedOnWrite:
                return false
            case .eof:
                up.readClosed = true
                upstreamEnded()
                return false
            case .failed(let reset, let text):
                finish(reset: reset, failure: .read(from: .server, reset: reset, text))
                return false
            }
        }
        return false
    }

    private func observeResponse(_ chunk: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < chunk.count && !upgraded {
            if var body = responseBody {
                offset += body.consume(UnsafeRawBufferPointer(rebasing: chunk[offset...]))
                if body.malformed { return finish(reset: true, failure: .chunkedBodyMalformed(.server)) }
                if body.isDone { responseBody = nil; responseComplete() } else { responseBody = body }
                continue
            }
            guard let method = outstanding.first else {
                // Bytes nobody asked for: pass them on and stop reading framing.
                return
            }
            switch responseHead.feed(UnsafeRawBufferPointer(rebasing: chunk[offset...]), requestMethod: method) {
            case .needMore:
                return
            case .malformed(let reason):
                return finish(reset: true, failure: .responseUnreadable(reason))
            case let .head(head, consumed):
                offset += consumed
                if head.status == 101 {
                    upgraded = true
                    clientState = .tunnel
                    outstanding.removeAll()
                    if !held.isEmpty { let bytes = held; held = []; paused = false; bytes.withUnsafeBytes { sendUpstream($0, count: true) } }
                    return
                }
                if (100..<200).contains(head.status) { continue }   // informational: the final response follows
                if head.closes { closeAfterResponse = true }
                if head.framing == .none { responseComplete() } else { responseBody = HTTPBodyScanner(head.framing) }
            }
        }
    }

    private func responseComplete() {
        if !outstanding.isEmpty { outstanding.removeFirst() }
    }

    /// After each chunk: when every response is in and the client asked to close, or a request
    /// is held for another host, act now.
    private func responsesDone() -> Bool {
        guard outstanding.isEmpty, responseBody == nil, !upgraded else { return false }
        if closeAfterResponse {
            client.shutdownWrite()
            if !client.hasPending { finish(reset: false, failure: nil) }
            return true
        }
        if paused {
            resumeHeld()
            return true
        }
        return false
    }

    private func resumeHeld() {
        paused = false
        let bytes = held
        held = []
        pendingHead = nil
        closeUpstream()
        bytes.withUnsafeBytes { process($0) }
        loop.runAgain(token)
    }

    private func upstreamEnded() {
        if let body = responseBody, body.framing == .untilClose {
            responseBody = nil
            responseComplete()
            closeAfterResponse = true
        }
        if upgraded || closeAfterResponse || !outstanding.isEmpty {
            // The server ended the exchange; the client learns it from our FIN.
            if !outstanding.isEmpty && !upgraded { endFlow(failure: .responseIncomplete) }
            client.shutdownWrite()
            finish(reset: false, failure: nil)
            return
        }
        // Idle keep-alive connection closed by the server: the next request reconnects.
        closeUpstream()
        if paused { resumeHeld() }
    }

    // MARK: upstream connections

    private func openUpstream(_ target: HostPort) {
        closeUpstream()
        upstreamTarget = target
        var flow = firstFacts ?? FlowFacts(id: shared.newFlowID(), startMicros: loop.wallNow, client: (firstFactsClient ?? Endpoint(address: "?", port: 0)))
        if firstFacts == nil { shared.sink?.flowOpened(flow) }
        firstFactsClient = flow.client
        firstFacts = nil
        let name = OriginalDestination(host: target.host, port: target.port, origin: .connect)
        flow.host = name.hostName
        flow.hostOrigin = name.hostName == nil ? .none : .connect
        flow.port = target.port
        flow.status = .notEncrypted
        facts = flow
        shared.sink?.flowUpdated(flow)
        // Requests go into the new leg's queue at once; it is flushed once connected.
        let leg = Leg(fd: -1)
        upstream = leg
        connecting = true
        connectDeadline = loop.now + UInt64(shared.configuration.connectTimeout * 1e9)
        rearm()
        if let address = name.numericAddress {
            addresses = [address]
            nextAddress = 0
            connectNext()
        } else {
            let inbox = loop.inbox, token = self.token, legID = ObjectIdentifier(leg)
            shared.resolver.resolve(host: target.host, port: target.port) { result in
                inbox.post { loop in
                    guard let me = loop.handler(for: token) as? PlainHTTPForwarder, let current = me.upstream, ObjectIdentifier(current) == legID else { return }
                    switch result {
                    case .success(let list):
                        me.addresses = list
                        me.nextAddress = 0
                        me.connectNext()
                    case .failure(let failure):
                        me.fail(.unreachable(target: "\(target)", .resolve(failure.message)), status: 502)
                    }
                }
            }
        }
    }
    private var firstFactsClient: Endpoint?

    private var lastConnectError: Errno?

    /// The current target as the user named it (host:port), for sentences.
    private var targetName: String { upstreamTarget.map { "\($0)" } ?? "the server" }

    private func connectNext() {
        guard let leg = upstream else { return }
        guard nextAddress < addresses.count else {
            keepNumericTarget()
            return fail(.unreachable(target: targetName, lastConnectError.map { .connect($0) } ?? .noAddress), status: 502)
        }
        let address = addresses[nextAddress]
        nextAddress += 1
        if leg.fd >= 0 { Glibc.close(leg.fd); leg.fd = -1 }
        switch Socket.connect(to: address, mark: shared.configuration.upstreamMark) {
        case .success(let (fd, done)):
            leg.fd = fd
            connectAddress = address
            loop.watch(fd, token: token, side: 1, events: tv_EPOLLIN | tv_EPOLLOUT | tv_EPOLLRDHUP)
            if done { connected() }
        case .failure(let err):
            lastConnectError = err
            connectNext()
        }
    }

    /// A target given as an address is where the flow went even when no connection was made:
    /// keep it as the flow's server, so the flow is named by it (`FlowFacts.server`).
    private func keepNumericTarget() {
        guard facts?.server == nil, let target = upstreamTarget,
              let address = OriginalDestination(host: target.host, port: target.port, origin: .connect).numericAddress else { return }
        facts?.server = address.endpoint
    }

    private func connected() {
        connecting = false
        connectDeadline = 0
        facts?.server = connectAddress?.endpoint
        if let facts { shared.sink?.flowUpdated(facts) }
        upstream?.readable = true
        upstream?.writable = true
        drive()
    }

    private func connectFailed(_ err: Errno) {
        lastConnectError = err
        if let leg = upstream, leg.fd >= 0 { Glibc.close(leg.fd); leg.fd = -1 }
        connectNext()
    }

    private func closeUpstream() {
        guard let up = upstream else { return }
        up.close(reset: false)
        upstream = nil
        upstreamTarget = nil
        connecting = false
        endFlow(failure: nil)
    }

    private func endFlow(failure: ConnectionFailure?) {
        guard var flow = facts else { return }
        facts = nil
        if let failure { flow.error = failure.sentence }
        flow.durationMicros = loop.wallNow - flow.startMicros
        loop.counters.countClosed(flow.status.kind)
        shared.sink?.flowClosed(flow)
        if recordingAllowed { shared.recorder?.flowEnded(flow: flow.id) }
    }

    private func record(_ bytes: UnsafeRawBufferPointer, _ direction: ChunkDirection) {
        guard recordingAllowed, let flow = facts, let recorder = shared.recorder, recorder.isRecording else { return }
        recorder.record(flow: flow.id, direction: direction, offsetMicros: loop.wallNow - flow.startMicros, bytes: bytes)
    }

    // MARK: ending

    /// Answers the client with an error (when no response is under way) and closes.
    private func fail(_ failure: ConnectionFailure, status: Int) {
        let reason = failure.sentence
        if outstanding.count <= 1 && responseBody == nil && !client.hasPending {
            let text = status == 400 ? "Bad Request" : status == 504 ? "Gateway Timeout" : "Bad Gateway"
            let bytes = ConnectionMachine.errorResponse(status, text, reason)
            _ = bytes.withUnsafeBytes { tv_send(client.fd, $0.baseAddress, $0.count) }
        }
        if facts != nil { facts?.status = .failed(reason: reason) }
        else if var flow = firstFacts {
            flow.status = .failed(reason: reason)
            facts = flow
            firstFacts = nil
        }
        finish(reset: false, failure: failure)
    }

    private func finish(reset: Bool, failure: ConnectionFailure?) {
        guard !closed else { return }
        closed = true
        if let up = upstream {
            up.close(reset: reset)
            upstream = nil
        }
        endFlow(failure: failure)
        if var flow = firstFacts {
            // No request ever reached a server.
            let error = failure?.sentence
            flow.status = .failed(reason: error ?? ConnectionFailure.clientGone(reset: false, .beforeFirstRequest).sentence)
            flow.error = error
            flow.durationMicros = loop.wallNow - flow.startMicros
            loop.counters.countClosed(.failed)
            shared.sink?.flowClosed(flow)
            firstFacts = nil
        }
        client.close(reset: reset)
        loop.unregister(token)
        shared.connectionEnded(address: admittedAddress)
    }
}
