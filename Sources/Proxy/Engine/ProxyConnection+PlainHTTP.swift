import CTVShims
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// After the connection machine handed the client on (`.startPlainHTTP`): this driver runs the
/// `PlainHTTPMachine` instead, with the same sockets, token and timer. It reads both legs,
/// feeds the bytes as events and performs the commands: writes, connects, flows reported,
/// bytes counted and recorded. Ranges in the commands name the bytes of the event's own chunk
/// (the loop's buffer), which stay there until the commands are performed.
extension ProxyConnection {
    func handOverToPlainHTTP() {
        let configuration = shared.configuration
        let settings = PlainHTTPMachine.Settings(
            headTimeoutMillis: Int(configuration.headTimeout * 1000),
            connectTimeoutNanos: UInt64(configuration.connectTimeout * 1e9),
            idleNanos: idleNanos, idleTimeoutSeconds: Int(configuration.idleTimeout),
            // Flows' bytes go to the recorder and to the exchange reader (`recordPlain`).
            recording: shared.recorder != nil || configuration.readsExchanges)
        let shared = self.shared
        plain = PlainHTTPBox(PlainHTTPMachine(settings: settings, facts: machine.facts, newFlowID: { shared.newFlowID() }))
        client.readable = true
        client.writable = true
        feedPlain(.start)
        drivePlain()
    }

    func feedPlain(_ event: PlainHTTPMachine.Event) {
        guard plain != nil else { return }
        switch event {
        case .clientBytes(let chunk), .serverBytes(let chunk): plainChunk = chunk
        default: break
        }
        plain!.machine.handle(event, at: .init(nanos: loop.now, micros: loop.wallNow), into: &plainQueue)
        runPlain()
    }

    /// An I/O failure while commands are performed: what the batch still meant to send is moot;
    /// the flows' bookkeeping still runs, then the failure's own commands.
    private func failPlain(_ event: PlainHTTPMachine.Event) {
        if plainHead < plainQueue.count {
            let keep = plainQueue[plainHead...].filter(\.isBookkeeping)
            plainQueue.removeSubrange(plainHead...)
            plainQueue.append(contentsOf: keep)
        }
        feedPlain(event)
    }

    private func runPlain() {
        guard !plainExecuting else { return }
        plainExecuting = true
        defer { plainExecuting = false }
        while plainHead < plainQueue.count {
            let command = plainQueue[plainHead]
            plainHead += 1
            if !released || command.isBookkeeping { performPlain(command) }
        }
        plainQueue.removeAll(keepingCapacity: true)
        plainHead = 0
    }

    private func performPlain(_ command: PlainHTTPMachine.Command) {
        switch command {
        case .openFlow(let flow):
            shared.sink?.flowOpened(flow)
        case .updateFlow(let flow):
            shared.sink?.flowUpdated(flow)
        case let .closeFlow(flow, recorded):
            loop.counters.countClosed(flow.status)
            if let offered = InspectionOutcome.of(decision: nil, status: flow.status, inspectionOn: shared.inspection.load(ordering: .relaxed),
                                                  handshakeDone: false, outcome: nil, failure: nil) {
                loop.counters.countInspection(offered)
            }
            endPlainExchanges(flow: flow.id)
            shared.sink?.flowClosed(flow)
            if recorded { shared.recorder?.flowEnded(flow: flow.id) }
        case .newServerLeg:
            let leg = Leg(fd: -1)
            leg.connecting = true
            upstream = leg
        case let .resolve(host, port, attempt):
            let inbox = loop.inbox, token = self.token
            shared.resolver.resolve(host: host, port: port) { result in
                inbox.post { loop in
                    guard let connection = loop.handler(for: token) as? ProxyConnection, !connection.released else { return }
                    switch result {
                    case .success(let list): connection.feedPlain(.resolved(list, attempt: attempt))
                    case .failure(let failure): connection.feedPlain(.resolveFailed(failure.message, attempt: attempt))
                    }
                }
            }
        case .connect(let address):
            connectPlain(address)
        case .serverReady:
            upstream?.readable = true
            upstream?.writable = true
            loop.runAgain(token)
        case .closeServer(let reset):
            upstream?.close(reset: reset)
            upstream = nil
        case let .sendServer(bytes, record):
            bytes.withUnsafeBytes { sendServer($0, record) }
        case let .forwardToServer(range, record):
            sendServer(UnsafeRawBufferPointer(rebasing: plainChunk![range]), record)
        case let .tallyFromServer(count, record):
            loop.counters.bytesFromServers.wrappingAdd(UInt64(count), ordering: .relaxed)
            recordPlain(UnsafeRawBufferPointer(rebasing: plainChunk![0..<count]), .serverToClient, record, readsExchanges: false)
        case let .writeClient(range, record):
            let bytes = UnsafeRawBufferPointer(rebasing: plainChunk![range])
            readPlainResponse(bytes, record)
            writePlainClient(bytes)
        case let .sendClient(bytes, record):
            bytes.withUnsafeBytes {
                readPlainResponse($0, record)
                writePlainClient($0)
            }
        case let .answerClient(bytes, linger):
            if client.hasPending {
                bytes.withUnsafeBytes { client.stash($0) }
            } else {
                _ = bytes.withUnsafeBytes { tv_send(client.fd, $0.baseAddress, $0.count) }
            }
            if !exchangesStopped { bytes.withUnsafeBytes { readPlainAnswer($0) } }
            if linger { client.shutdownAfterAnswer() }
        case .shutdownServerWrite:
            upstream?.shutdownWrite()
        case .shutdownClientWrite(let finishWhenSent):
            client.shutdownWrite()
            if finishWhenSent && !client.hasPending { feedPlain(.clientSent) }
        case .armTimer(let at):
            guard armedAt == 0 || at < armedAt else { break }
            armedAt = at
            loop.armTimer(token, at: at)
        case .countHeadTimeout:
            loop.counters.headTimeouts.wrappingAdd(1, ordering: .relaxed)
        case .runAgain:
            loop.runAgain(token)
        case .close(let reset):
            closePlain(reset: reset)
        case .deliverThenClose(let reset):
            // The machine closed the server's leg first (`.closeServer`).
            deliverThenFinish(to: client, reset: reset)
        }
    }

    /// What reaches the client of the server's response, read for the request rows.
    private func readPlainResponse(_ bytes: UnsafeRawBufferPointer, _ record: PlainHTTPMachine.Recording?) {
        guard let record, !exchangesStopped else { return }
        readPlainExchanges(bytes, .serverToClient, flow: record.flow)
    }

    /// Writes what the machine passes on to the client, behind what already waits for it (a held
    /// head's bytes then the rest of the chunk, in one batch); what the socket does not take waits.
    private func writePlainClient(_ bytes: UnsafeRawBufferPointer) {
        guard !client.hasPending else { return client.stash(bytes) }
        switch client.write(bytes) {
        case .wrote(let n): if n < bytes.count { client.stash(UnsafeRawBufferPointer(rebasing: bytes[n...])) }
        case .failed(_, let text): failPlain(.sendFailed(to: .client, text))
        }
    }

    /// Closes both legs (the flows were reported by `.closeFlow`). Idempotent.
    func closePlain(reset: Bool) {
        guard !released else { return }
        endUndeliveredExchanges()
        released = true
        client.close(reset: reset)
        upstream?.close(reset: reset)
        upstream = nil
        loop.unregister(token)
        shared.connectionEnded(address: admittedAddress)
    }

    private func connectPlain(_ address: SocketAddress) {
        guard let leg = upstream else { return }
        if leg.fd >= 0 { Glibc.close(leg.fd); leg.fd = -1 }
        switch Socket.connect(to: address, mark: shared.configuration.upstreamMark) {
        case .success(let (fd, done)):
            leg.fd = fd
            leg.connecting = !done
            loop.watch(fd, token: token, side: 1, events: tv_EPOLLIN | tv_EPOLLOUT | tv_EPOLLRDHUP)
            if done { feedPlain(.connected) }
        case .failure(let err):
            feedPlain(.connectFailed(err))
        }
    }

    private func sendServer(_ bytes: UnsafeRawBufferPointer, _ record: PlainHTTPMachine.Recording?) {
        loop.counters.bytesFromClients.wrappingAdd(UInt64(bytes.count), ordering: .relaxed)
        recordPlain(bytes, .clientToServer, record)
        guard let up = upstream else { return }
        if up.connecting || up.hasPending { up.stash(bytes); return }
        switch up.write(bytes) {
        case .wrote(let n): if n < bytes.count { up.stash(UnsafeRawBufferPointer(rebasing: bytes[n...])) }
        case .failed(_, let text): failPlain(.sendFailed(to: .server, text))
        }
    }

    /// Offers `bytes` to the recorder as what `direction`'s side said, and to the request rows'
    /// reader unless `readsExchanges` is false (the server's bytes: the rows read what reaches
    /// the client, `readPlainResponse`).
    private func recordPlain(_ bytes: UnsafeRawBufferPointer, _ direction: Direction, _ record: PlainHTTPMachine.Recording?,
                             readsExchanges: Bool = true) {
        guard let record else { return }
        if readsExchanges && !exchangesStopped { readPlainExchanges(bytes, direction, flow: record.flow) }
        guard let recorder = shared.recorder, recorder.isRecording else { return }
        recorder.record(flow: record.flow, direction: direction, offsetMicros: record.offsetMicros, bytes: bytes)
    }

    // MARK: loop callbacks in the plain-HTTP phase

    func plainEvent(side: Int, events: UInt32) {
        if side == 1, let up = upstream, up.connecting {
            guard events & (tv_EPOLLOUT | tv_EPOLLERR | tv_EPOLLHUP) != 0 else { return }
            let err = tv_socket_error(up.fd)
            if err == 0 {
                up.connecting = false
                feedPlain(.connected)
            } else {
                feedPlain(.connectFailed(Errno(err)))
            }
            return
        }
        drivePlain()
    }

    /// One pass over both legs.
    func drivePlain() {
        guard !released else { return }
        var more = false
        if let up = upstream, !up.connecting {
            if up.hasPending, case .failed(_, let text) = up.flush() { return failPlain(.sendFailed(to: .server, text)) }
            more = readPlainServer(up) || more
            guard !released else { return }
        }
        more = readPlainClient() || more
        guard !released else { return }
        let heldBack = client.hasPending
        if heldBack, case .failed(_, let text) = client.flush() { return failPlain(.sendFailed(to: .client, text)) }
        noteClientDrained()
        feedPlain(.passDone(clientReadClosed: client.readClosed, clientUnsent: client.hasPending))
        // The client's stash drained in this pass after back-pressure held the server's reads:
        // read on now, as no new edge may come (a server that sent everything, and then reset
        // or went quiet, signals nothing more). Without this a slow client's response stalled
        // until the idle timeout with the rest unread in tv's socket (ServerResetRunTests).
        if heldBack && !client.hasPending, let up = upstream, !up.readClosed, up.readable { more = true }
        if more && !released { loop.runAgain(token) }
    }

    /// Client → machine. Returns true when stopped for fairness.
    private func readPlainClient() -> Bool {
        var rounds = 0
        while !client.readClosed && plain?.machine.readsClient == true && client.readable {
            if let up = upstream, up.hasPending { return false }   // back-pressure
            if rounds == 16 { return true }
            rounds += 1
            switch client.read(into: buffer) {
            case .bytes(let n):
                feedPlain(.clientBytes(UnsafeRawBufferPointer(rebasing: buffer[0..<n])))
                if released { return false }
            case .wouldBlock, .blockedOnWrite:
                return false
            case .eof:
                client.readClosed = true
                feedPlain(.clientEnded)
            case let .failed(reset, text):
                feedPlain(.clientFailed(reset: reset, text))
                return false
            }
        }
        return false
    }

    /// Server → machine. Returns true when stopped for fairness.
    private func readPlainServer(_ up: Leg) -> Bool {
        var rounds = 0
        while !up.readClosed && up.readable {
            if client.hasPending { return false }   // back-pressure
            if rounds == 16 { return true }
            rounds += 1
            switch up.read(into: buffer) {
            case .bytes(let n):
                feedPlain(.serverBytes(UnsafeRawBufferPointer(rebasing: buffer[0..<n])))
                if released || upstream !== up || plain?.machine.serverReadsPaused == true { return false }
            case .wouldBlock, .blockedOnWrite:
                return false
            case .eof:
                up.readClosed = true
                feedPlain(.serverEnded)
                return false
            case let .failed(reset, text):
                feedPlain(.serverFailed(reset: reset, text))
                return false
            }
        }
        return false
    }
}

/// A `PlainHTTPMachine` on the heap, held only by connections that were handed over to it.
final class PlainHTTPBox {
    var machine: PlainHTTPMachine
    init(_ machine: PlainHTTPMachine) { self.machine = machine }
}
