import Wire
import FlowTerms

/// Absolute-form plain HTTP through the explicit proxy (RFC 9112 §3.2.2), as a sans-I/O machine:
/// the connection machine hands the client over (`.startPlainHTTP`, mitmproxy's NextLayer) and
/// the same driver (`ProxyConnection+PlainHTTP.swift`) feeds this one events and performs its
/// commands. Each request line is rewritten to origin-form, Proxy-* hop headers are dropped, the
/// rest (body included, chunked or not) is relayed as is. Keep-alive on both sides; a request
/// for another host:port waits until the previous responses are complete, then goes over a new
/// upstream connection (a new flow). Responses are relayed unchanged; their framing is only read
/// to know when each ends, and a response head goes on only once it is whole, so a head tv cannot
/// read, or none at all, is answered with tv's 502 instead (`PlainHTTPResponses`). Every request
/// head must be whole within the head timeout of its first byte (`HeadDeadline`), however slowly
/// its bytes trickle in. The upstream leg's connection attempts: `PlainHTTPUpstream`.
///
/// Commands go into the caller's reusable array (`handle(_:at:into:)`), and bytes of the event's
/// own chunk are named by range, so a chunk costs no allocation. Vocabulary:
/// `PlainHTTPVocabulary.swift`.
struct PlainHTTPMachine {
    let settings: Settings
    private let newFlowID: () -> UInt64
    private(set) var closed = false

    private enum ClientState {
        case head
        case body(HTTPBodyScanner)
        /// After a 101 response: bytes flow raw both ways.
        case tunnel
    }
    private var clientState: ClientState = .head
    private var headParser = HTTPRequestHeadParser()
    private var headFed = 0
    private(set) var headDeadline: HeadDeadline
    /// Client bytes held back (a request for another host while responses are outstanding).
    private var held: [UInt8] = []
    /// Reading the client waits (a request is held).
    private(set) var paused = false
    /// A request tv refused behind requests still waiting for their responses: its answer (the
    /// failure, tv's status) waits until those responses went on whole, then comes and the
    /// connection closes (`responsesDone`); the client is read no more meanwhile. Answered at
    /// once, it would be read as the earlier request's response (RFC 9112 §9.3.2); reset, the
    /// earlier request's response never reached the client (a hostile-input trial).
    private var refusedBehind: (failure: ConnectionFailure, status: Int)?

    /// The current flow (nil between upstream connections) and the accept-time one, reused for
    /// the first upstream's flow.
    private(set) var facts: FlowFacts?
    private var firstFacts: FlowFacts?
    private var client: Endpoint

    /// The upstream leg and its connection attempts (`PlainHTTPUpstream.swift`).
    private(set) var upstream = PlainHTTPUpstream()

    /// The responses awaited and where each ends (`PlainHTTPResponses.swift`).
    private(set) var responses = PlainHTTPResponses()
    /// When the client ended its side with a response awaited (monotonic ns; nil: it has not):
    /// the wait for that response is bounded from then (`Settings.abandonedWaitNanos`).
    private(set) var clientEndedAt: UInt64?
    private var closeAfterResponse = false
    private(set) var lastActivity: UInt64 = 0
    /// When the current upstream flow's moving bytes are next told (`.updateFlow`).
    private var progress = FlowProgressReport(startMicros: 0)
    /// Set by a server chunk after which this pass reads no more from the server.
    private(set) var serverReadsPaused = false

    /// No request is part way (head or body), none is held, no response is awaited or part way,
    /// and the connection is not a tunnel: closing it now cuts nothing.
    var isBetweenExchanges: Bool {
        guard case .head = clientState, headFed == 0, held.isEmpty else { return false }
        return responses.isIdle
    }

    /// The caller's command array while an event is handled (swapped in and out: no copy).
    private var emitted: [Command] = []
    private(set) var now = Instant(nanos: 0, micros: 0)

    init(settings: Settings, facts: FlowFacts, newFlowID: @escaping () -> UInt64) {
        self.settings = settings
        self.newFlowID = newFlowID
        firstFacts = facts
        client = facts.client
        headDeadline = HeadDeadline(limitMillis: settings.headTimeoutMillis)
    }

    /// Whether the client's bytes are wanted now.
    var readsClient: Bool { !closed && !paused && refusedBehind == nil }

    /// Handles `event` at `now`, appending its commands to `commands` (which the caller empties).
    mutating func handle(_ event: Event, at now: Instant, into commands: inout [Command]) {
        self.now = now
        swap(&emitted, &commands)
        handle(event)
        swap(&emitted, &commands)
    }

    mutating func emit(_ command: Command) { emitted.append(command) }

    private mutating func handle(_ event: Event) {
        guard !closed else { return }
        switch event {
        case .start:
            lastActivity = now.nanos
            rearm()
        case .clientBytes(let chunk):
            lastActivity = now.nanos
            process(chunk, owned: false)
        case .clientEnded:
            if responses.upgraded || !responses.outstanding.isEmpty { emit(.shutdownServerWrite) }
            if responses.awaitingHead {
                clientEndedAt = now.nanos
                rearm()
            }
        case let .clientFailed(reset, text):
            finish(reset: reset, failure: .read(from: .client, reset: reset, text))
        case .serverBytes(let chunk):
            serverBytes(chunk)
        case let .requestRowsLeftOut(flow, count):
            if facts?.id == flow { facts?.requestsLeftOut = UInt64(max(0, count)) }
        case .serverEnded:
            serverEnded()
        case let .serverFailed(reset, text):
            // What tv read from the server before the failure still reaches the client; when
            // that is no byte of the awaited response, tv's 502 follows it.
            let failure = ConnectionFailure.read(from: .server, reset: reset, text)
            if responses.awaitingHead {
                responses.dropHeldHead()
                fail(failure, status: 502, deliveringFirst: true)
            } else {
                finish(reset: reset, failure: failure, deliveringFirst: true)
            }
        case let .sendFailed(side, text):
            finish(reset: true, failure: .send(to: side, text))
        case let .resolved(list, id):
            guard upstream.resolved(list, attempt: id) else { return }
            connectNext()
        case let .resolveFailed(message, id):
            guard upstream.isCurrent(id), let target = upstream.target else { return }
            fail(.unreachable(target: "\(target)", .resolve(message)), status: 502)
        case .connected:
            guard upstream.connecting else { return }
            upstream.connected()
            facts?.server = upstream.address?.endpoint
            if let facts { emit(.updateFlow(facts)) }
            emit(.serverReady)
        case .connectFailed(let err):
            guard upstream.connecting else { return }
            upstream.refused(err)
            connectNext()
        case .timer:
            timer()
        case let .passDone(clientReadClosed, clientUnsent):
            if clientReadClosed && responses.outstanding.isEmpty && !clientUnsent && !upstream.connecting { finish(reset: false, failure: nil) }
        case .clientSent:
            finish(reset: false, failure: nil)
        case .shutdown(let holdsNothing):
            // Between exchanges with nothing left in tv, FINs: a reset would discard what the
            // client's socket holds unread of the last response.
            finish(reset: !(holdsNothing && isBetweenExchanges), failure: .stopped)
        }
    }

    // MARK: client → server

    /// Handles bytes from the client in order: heads are rewritten, bodies passed on. `owned`:
    /// the bytes are the machine's own (held ones), so they are sent as copies, not ranges.
    private mutating func process(_ bytes: UnsafeRawBufferPointer, owned: Bool) {
        var offset = 0
        while offset < bytes.count && !closed {
            if paused {
                held.append(contentsOf: bytes[offset...])
                return
            }
            switch clientState {
            case .tunnel:
                sendUpstream(bytes, offset..<bytes.count, owned: owned)
                return
            case .body(var scanner):
                let n = scanner.consume(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
                if let problem = scanner.failure { return fail(.chunkedBodyRefused(.client, problem), status: 400) }
                sendUpstream(bytes, offset..<(offset + n), owned: owned)
                offset += n
                clientState = scanner.isDone ? .head : .body(scanner)
            case .head:
                let before = headFed
                let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
                headFed += rest.count
                if headDeadline.deadline == nil {
                    headDeadline.headBegan(at: now.nanos)
                    rearm()
                }
                let read = headParser.feed(rest)
                if let refusal = read.refusal {
                    // Behind a request still waiting for its response, tv's answer would be read
                    // as that request's (a re-check's pipelined GET took the 400): it waits for
                    // the responses asked for (`refusedBehind`), as the relay's does.
                    guard responses.isIdle else {
                        refusedBehind = (.requestUnreadable(refusal.reason), refusal.status)
                        headDeadline.headCompleted()
                        return
                    }
                    return fail(.requestUnreadable(refusal.reason), status: refusal.status)
                }
                switch read {
                case .needMoreData, .malformed, .tooLong:
                    return
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
    private mutating func startRequest(_ head: HTTPRequestHead, rawHeadTail: UnsafeRawBufferPointer, used: Int) -> Bool {
        guard case let .absolute(scheme, named, originForm) = head.requestTarget, scheme == "http", !head.isConnect else {
            fail(.notAbsoluteHTTP(method: head.method, target: head.target), status: 400)
            return false
        }
        let destination: HostPort
        do throws(IDNARefusal) { destination = HostPort(host: try IDNA.asciiHost(named.host), port: named.port) } catch {
            fail(.hostNameRefused(error), status: 400)
            return false
        }
        if upstream.target != destination || !upstream.isOpen {
            if !responses.outstanding.isEmpty {
                // Wait for the previous responses; keep this request (re-parsed later from its
                // equivalent text) and what follows.
                paused = true
                held = head.equivalentBytes + Array(rawHeadTail[used...])
                return false
            }
            openUpstream(destination)
        }
        forward(head, originForm: originForm)
        return true
    }

    private mutating func forward(_ head: HTTPRequestHead, originForm: String) {
        let bytes = head.originFormBytes(originForm, target: upstream.target)
        // The head as the server gets it (origin-form) is what was said on this flow: recorded
        // like the body bytes that follow it.
        emit(.sendServer(bytes, record: recording))
        let upgrades = head.values(forHeader: "Upgrade")
        responses.expect(head.method, upgrade: upgrades.isEmpty ? nil : upgrades.joined(separator: ", "),
                         webSocketKey: upgrades.isEmpty ? nil : head.value(forHeader: "Sec-WebSocket-Key"))
        if !head.keepsAlive { closeAfterResponse = true }
        switch head.bodyFraming {
        case .none, .untilClose: clientState = .head   // a request is never .untilClose
        case .contentLength(let n): clientState = n == 0 ? .head : .body(HTTPBodyScanner(.contentLength(n)))
        // The relay's rule for a body's end too (`HTTPBodyScanner`).
        case .chunked: clientState = .body(HTTPBodyScanner(.chunked))
        }
        facts?.bytesFromClient &+= UInt64(bytes.count)
    }

    private mutating func sendUpstream(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, owned: Bool) {
        guard !range.isEmpty, upstream.isOpen else { return }
        facts?.bytesFromClient &+= UInt64(range.count)
        facts?.lastActivityMicros = now.micros
        emit(owned ? .sendServer(Array(bytes[range]), record: recording) : .forwardToServer(range, record: recording))
        reportProgressIfDue()
    }

    /// The flow's totals told while bytes move (`FlowProgressReport`: at most every 2 s); bytes
    /// not told yet arm the timer, which tells them once the flow has been quiet for the interval
    /// (`timer`), as the relay's `.progressQuiet` does.
    private mutating func reportProgressIfDue() {
        guard let facts else { return }
        let armed = progress.unreported
        if progress.isDue(atMicros: now.micros) {
            emit(.updateFlow(facts))
        } else if !armed {
            emit(.armTimer(at: now.nanos &+ FlowProgressReport.intervalNanos))
        }
    }

    /// The trailing report: bytes moved since the last report, and the flow quiet since for the
    /// interval (`FlowProgressReport.trailing`).
    mutating func reportTrailingProgress() {
        guard let facts, progress.unreported, now.nanos >= lastActivity &+ FlowProgressReport.intervalNanos,
              progress.trailing(atMicros: now.micros) else { return }
        emit(.updateFlow(facts))
    }

    /// When the trailing report is due (monotonic ns); nil when nothing is waiting to be told.
    var trailingProgressDeadline: UInt64? {
        progress.unreported && facts != nil ? lastActivity &+ FlowProgressReport.intervalNanos : nil
    }

    /// Where this flow's bytes are recorded (nil: not recorded).
    private var recording: Recording? {
        guard settings.recording, let flow = facts else { return nil }
        return Recording(flow: flow.id, offsetMicros: now.micros - flow.startMicros)
    }

    // MARK: server → client

    private mutating func serverBytes(_ chunk: UnsafeRawBufferPointer) {
        lastActivity = now.nanos
        serverReadsPaused = false
        facts?.bytesFromServer &+= UInt64(chunk.count)
        facts?.lastActivityMicros = now.micros
        emit(.tallyFromServer(chunk.count, record: recording))
        let reading = responses.read(chunk)
        if !reading.heldHeadFirst.isEmpty { emit(.sendClient(reading.heldHeadFirst, record: recording)) }
        if reading.serverCloses { closeAfterResponse = true }
        switch reading.stop {
        case nil:
            break
        case let .bodyRefused(problem, headPassed):
            // Part of the response went on: cut. None of it: what came before it goes on, then
            // tv's 502 in its place, as for a head tv cannot read (the relay's rule too).
            if headPassed { return finish(reset: true, failure: .chunkedBodyRefused(.server, problem)) }
            if reading.passing > 0 { emit(.writeClient(0..<reading.passing, record: recording)) }
            return fail(.chunkedBodyRefused(.server, problem), status: 502, deliveringFirst: true)
        case .headUnreadable(let reason):
            // What came before this head goes on, then tv's 502 with the reason, as for a
            // server tv cannot reach (a bare reset told the client nothing: a trial).
            if reading.passing > 0 { emit(.writeClient(0..<reading.passing, record: recording)) }
            return fail(.responseUnreadable(reason), status: 502, deliveringFirst: true)
        case .switchRefused(let refusal):
            // A 101 the request did not ask for: the same, and no tunnel (the relay's rule too).
            if reading.passing > 0 { emit(.writeClient(0..<reading.passing, record: recording)) }
            return fail(.switchRefused(refusal), status: 502, deliveringFirst: true)
        case .unasked(let bytes):
            // The responses asked for go on; the server's leg ends with its flow, and the
            // client's next request opens a new one (a new flow).
            if reading.passing > 0 { emit(.writeClient(0..<reading.passing, record: recording)) }
            dropUpstream(.responseUnasked(bytes: bytes))
            // What the responses asked for would do next still happens: the client's close
            // after a `Connection: close` response, a request held for another host.
            serverReadsPaused = responsesDone()
            return
        case .upgraded:
            clientState = .tunnel
            if !held.isEmpty {
                let bytes = held
                held = []
                paused = false
                bytes.withUnsafeBytes { sendUpstream($0, 0..<bytes.count, owned: true) }
            }
        }
        if reading.passing > 0 { emit(.writeClient(0..<reading.passing, record: recording)) }
        reportProgressIfDue()
        serverReadsPaused = responsesDone()
    }

    /// After each chunk: when every response is in and the client asked to close, or a request
    /// is held for another host, act now. True: read no more from the server in this pass.
    private mutating func responsesDone() -> Bool {
        guard responses.isIdle else { return false }
        if let (failure, status) = refusedBehind {
            refusedBehind = nil
            fail(failure, status: status, deliveringFirst: true)
            return true
        }
        if closeAfterResponse {
            emit(.shutdownClientWrite(finishWhenSent: true))
            return true
        }
        if paused {
            resumeHeld()
            return true
        }
        return false
    }

    private mutating func resumeHeld() {
        paused = false
        let bytes = held
        held = []
        closeUpstream()
        bytes.withUnsafeBytes { process($0, owned: true) }
        emit(.runAgain)
    }

    private mutating func serverEnded() {
        if responses.serverEnded() { closeAfterResponse = true }
        if responses.awaitingHead {
            responses.dropHeldHead()
            // The client ended its side first and the server closed in answer to that FIN (as
            // Node's servers do): the client left, as the wait's deadline would say; no 502
            // for it (a trial's `curl -m 1` was recorded as a server failure and a 502 by tv).
            if clientEndedAt != nil { return finish(reset: false, failure: .clientGone(reset: false, .beforeResponse)) }
            // No byte of the response reached the client (a head is held until whole): tv
            // answers in the server's place, as for a server it cannot reach.
            return fail(.responseIncomplete, status: 502, deliveringFirst: true)
        }
        if responses.upgraded || closeAfterResponse || !responses.outstanding.isEmpty {
            // The server ended the exchange; the client learns it from our FIN.
            if !responses.outstanding.isEmpty && !responses.upgraded { endFlow(failure: .responseIncomplete) }
            emit(.shutdownClientWrite(finishWhenSent: false))
            return finish(reset: false, failure: nil)
        }
        // Idle keep-alive connection closed by the server: the next request reconnects.
        closeUpstream()
        if paused { resumeHeld() }
    }

    // MARK: upstream connections

    var targetName: String { upstream.target.map { "\($0)" } ?? "the server" }

    private mutating func openUpstream(_ target: HostPort) {
        closeUpstream()
        var flow: FlowFacts
        if let first = firstFacts {
            flow = first
            firstFacts = nil
        } else {
            flow = FlowFacts(id: newFlowID(), startMicros: now.micros, client: client)
            emit(.openFlow(flow))
        }
        let name = OriginalDestination(host: target.host, port: target.port, origin: .connect)
        flow.host = name.hostName
        flow.hostOrigin = name.hostName == nil ? .none : .connect
        flow.port = target.port
        flow.status = .notEncrypted
        facts = flow
        progress = FlowProgressReport(startMicros: now.micros)
        emit(.updateFlow(flow))
        // Requests go into the new leg's queue at once; it is flushed once connected.
        let numeric = name.numericAddress
        upstream.open(target, numeric: numeric, deadline: now.nanos + settings.connectTimeoutNanos)
        emit(.newServerLeg)
        rearm()
        if numeric != nil {
            connectNext()
        } else {
            emit(.resolve(host: target.host, port: target.port, attempt: upstream.attempt))
        }
    }

    private mutating func connectNext() {
        guard upstream.isOpen else { return }
        guard let address = upstream.nextToTry() else {
            keepNumericTarget()
            return fail(.unreachable(target: targetName, upstream.lastError.map { .connect($0) } ?? .noAddress), status: 502)
        }
        emit(.connect(address))
    }

    /// A target given as an address is where the flow went even when no connection was made:
    /// keep it as the flow's server, so the flow is named by it (`FlowFacts.server`).
    mutating func keepNumericTarget() {
        guard facts?.server == nil, let target = upstream.target,
              let address = OriginalDestination(host: target.host, port: target.port, origin: .connect).numericAddress else { return }
        facts?.server = address.endpoint
    }

    private mutating func closeUpstream() {
        guard upstream.close() else { return }
        emit(.closeServer(reset: false))
        endFlow(failure: nil)
    }

    /// Resets the server's leg and ends its flow with `failure`; the client's connection goes
    /// on (its next request opens a new leg; a client gone meanwhile ends it at `.passDone`).
    private mutating func dropUpstream(_ failure: ConnectionFailure) {
        if upstream.close() { emit(.closeServer(reset: true)) }
        facts?.fail(failure)
        endFlow(failure: failure)
    }

    private mutating func endFlow(failure: ConnectionFailure?) {
        guard var flow = facts else { return }
        facts = nil
        if let failure { flow.error = failure.sentence }
        flow.durationMicros = now.micros - flow.startMicros
        emit(.closeFlow(flow, recorded: settings.recording))
    }

    // MARK: ending

    /// Answers the client with an error (when no response is under way) and closes;
    /// `deliveringFirst` as for `finish`. (A request refused behind one still waiting for its
    /// response is answered once that response went on: `refusedBehind`.)
    mutating func fail(_ failure: ConnectionFailure, status: Int, deliveringFirst: Bool = false) {
        if responses.outstanding.count <= 1 && responses.body == nil {
            emit(.answerClient(ConnectionMachine.errorResponse(status, failure), linger: false))
        }
        // No connection to the server was made: the head counted as sent when it was queued
        // never left (a refused flow read "↑ 80 B" where nothing reached any server: a trial).
        if case .unreachable = failure { facts?.bytesFromClient = 0 }
        if facts != nil {
            facts?.fail(failure)
        } else if var flow = firstFacts {
            flow.fail(failure)
            facts = flow
            firstFacts = nil
        }
        finish(reset: false, failure: failure, deliveringFirst: deliveringFirst)
    }

    /// - Parameter deliveringFirst: what tv holds for the client is delivered before the close
    ///   (`.deliverThenClose`): the server's read failed, and a reset would discard it.
    mutating func finish(reset: Bool, failure: ConnectionFailure?, deliveringFirst: Bool = false) {
        guard !closed else { return }
        closed = true
        if upstream.close() { emit(.closeServer(reset: reset)) }
        endFlow(failure: failure)
        if var flow = firstFacts {
            // No request ever reached a server.
            flow.fail(failure ?? .clientGone(reset: false, .beforeFirstRequest))
            flow.durationMicros = now.micros - flow.startMicros
            emit(.closeFlow(flow, recorded: false))
            firstFacts = nil
        }
        emit(deliveringFirst ? .deliverThenClose(reset: reset) : .close(reset: reset))
    }
}
