import CTVShims
import FlowTerms

/// The driver's side of `ExchangeReader`: the relay's plaintext bursts (and plain HTTP's, per
/// flow) go to the reader as they pass; what it reads goes to the flow sink (which only
/// enqueues). A connection whose stream is not HTTP stops being read and is forwarded as before;
/// one whose HTTP/2 broke the rules too, counted; HTTP/1 bytes tv cannot follow
/// (`ExchangeReader.Stop.refused`) are held back from where they begin and the machine answers,
/// resets or closes (`readExchanges`, `ProxyConnection+Relay`). While an HTTP/1 request head is
/// part way, its `HeadDeadline` runs (`relayHeadDeadline`).
extension ProxyConnection {
    /// A burst of the relay (inspected TLS or a plain relay); the refusal when the reader refused
    /// bytes of it (the relay holds them back, `ProxyConnection+Relay`). While an HTTP/1 request
    /// head is part way, its `HeadDeadline` runs (`noteRequestHead`).
    func readExchanges(_ chunk: UnsafeRawBufferPointer, _ direction: Direction, at micros: Int64) -> ExchangeRefusal? {
        if exchanges == nil {
            // Read once, at the first burst (the facts are a copy).
            let facts = machine.facts
            guard startReadingExchanges(flow: facts.id, scheme: facts.status == .inspected ? "https" : "http", http2: facts.alpn == "h2",
                                        http1: facts.alpn == "http/1.1", target: machine.reverseTarget) else { return nil }
        }
        guard direction == .clientToServer, let reader = exchanges else { return feedExchanges(chunk, direction, at: micros) }
        let refusal = feedExchanges(chunk, direction, at: micros)
        noteRequestHead(reader.requestHeadStartedAt, burstAt: micros)
        return refusal
    }

    /// A burst of plain HTTP's flow `flow` (a new flow ends the previous flow's reading).
    func readPlainExchanges(_ bytes: UnsafeRawBufferPointer, _ direction: Direction, flow: UInt64) {
        if let reader = exchanges, reader.settings.flowID != Int64(flow) { endPlainExchanges(flow: UInt64(reader.settings.flowID)) }
        guard startReadingExchanges(flow: flow, scheme: "http", http2: false) else { return }
        feedExchanges(bytes, direction, at: EngineClock.wallMicros())  // not the turn's clock: see `moved`
    }

    /// Makes the connection's `ExchangeReader` when there is none yet; false (and reading
    /// stopped) when the session reads no request rows.
    /// `http1`: ALPN chose http/1.1 (with `http2` and `target`, tv knows the stream is HTTP:
    /// `ExchangeReader.Settings.knowsHTTP`).
    func startReadingExchanges(flow: UInt64, scheme: String, http2: Bool, http1: Bool = false,
                               target: (scheme: String, authority: String)? = nil) -> Bool {
        guard exchanges == nil else { return true }
        guard shared.configuration.readsExchanges, shared.sink != nil else {
            exchangesStopped = true
            return false
        }
        exchanges = ExchangeReader(.init(flowID: Int64(flow), scheme: scheme, keepsQuery: shared.recorder?.keepsContent ?? false,
                                         http2: http2, http1: http1, target: target))
        return true
    }

    /// tv answered plain HTTP's client itself (`.answerClient`: a 502 when the server could not
    /// be reached, a 504, a 408): the answer is read as the response of the exchange waiting
    /// for one, which ends `.answered`, not `.complete` (nor cut: it had an answer, tv's). tv's
    /// answer ends the connection, so the reading ends with it, at the answer's time: a request
    /// whose body had not all come (a POST's body sent after its head) ended `502 cut`, its end
    /// stamped before its answer by the loop's older clock, and `~s` took it for the server's
    /// (a trial).
    func readPlainAnswer(_ bytes: UnsafeRawBufferPointer) {
        guard let reader = exchanges, reader.stop == nil else { return }
        let sink = shared.sink
        let now = EngineClock.wallMicros()
        let told: (ExchangeRecord) -> Void = { exchange in
            var exchange = exchange
            if exchange.state == .complete || (exchange.state == .incomplete && exchange.status != nil) { exchange.state = .answered }
            sink?.exchangeChanged(exchange)
        }
        // A refused request held behind the one answered never gets its own answer.
        reader.abandonHold(at: now) { sink?.exchangeChanged($0) }
        reader.feed(bytes, .serverToClient, at: now, emit: told)
        reader.end(at: now, emit: told)
        exchanges = nil
        exchangesStopped = true
    }

    /// Feeds `bytes` to the reader, tells the sink what it read; the refusal when it refused
    /// bytes of a relay (plain HTTP forwarding reads only what it forwards itself).
    @discardableResult
    func feedExchanges(_ bytes: UnsafeRawBufferPointer, _ direction: Direction, at micros: Int64) -> ExchangeRefusal? {
        guard let reader = exchanges else { return nil }
        let sink = shared.sink
        // A relay that reached tv without a name (transparent or TUN plain HTTP, TLS without
        // SNI) is named by its first request's authority: the machine decides.
        var authority: String?
        let wantsName = plain == nil && direction == .clientToServer && machine.wantsRequestName
        reader.feed(bytes, direction, at: micros) { record in
            // Its last bytes are in this burst, not yet written to the client.
            if direction == .serverToClient, record.state == .complete { completedInFlight.append(record) }
            if wantsName, authority == nil { authority = record.authority }
            sink?.exchangeChanged(record)
        }
        // Bytes tv cannot follow: not forwarded from where they begin; the machine answers,
        // resets or closes.
        var refusal: ExchangeRefusal?
        if plain == nil, case .refused(let refused)? = reader.stop { refusal = refused }
        // Refused while earlier requests wait for their responses: what came before goes on,
        // the machine holds the client, the reading goes on.
        if plain == nil, refusal == nil, let held = reader.takeHold() { refusal = held }
        if let authority, let command = machine.requestNamed(authority) { perform(command) }
        // A side ended HTTP/2 with an error: the flow says so (the machine decides).
        if plain == nil, let goaway = reader.takeGoAway() { feed(.readingNote(.http2GoAway(goaway))) }
        // The client sent a malformed request, passed on: the flow says which rule it broke.
        if plain == nil, let request = reader.takeMalformedRequest() { feed(.readingNote(.http2MalformedRequest(request))) }
        // Requests past the connection's row allowance: the flow keeps their count.
        let leftOut = reader.requestsLeftOut
        if leftOut > 0, let plain {
            if UInt64(leftOut) != plain.machine.facts?.requestsLeftOut {
                feedPlain(.requestRowsLeftOut(flow: UInt64(reader.settings.flowID), count: leftOut))
            }
        } else if leftOut > 0, UInt64(leftOut) != machine.facts.requestsLeftOut {
            feed(.requestRowsLeftOut(leftOut))
        }
        // HTTP/2 streams the client reset wait a while for their response heads, bytes moving or not.
        if plain == nil, exchangeSettleAt == 0, reader.awaitsCancelledResponses { armExchangeSettle() }
        // The head is in; its body is still to come: acknowledge now rather than after the
        // delayed-ACK timer (40 ms on Linux), which a client holding a small body under
        // Nagle's algorithm would wait out. One setsockopt per such request.
        if direction == .clientToServer, reader.takeRequestBodyWait() { _ = tv_set_quickack(client.fd, 1) }
        guard let stop = reader.stop else { return refusal }
        switch stop {
        case .malformed(let reason):
            loop.counters.exchangeReadingStopped.wrappingAdd(1, ordering: .relaxed)
            // A relay's flow says why its open rows end incomplete (the machine decides).
            if plain == nil { feed(.readingNote(.exchangeReadingStopped(reason))) }
        case .refused: loop.counters.exchangeReadingStopped.wrappingAdd(1, ordering: .relaxed)
        case .notHTTP(let start):
            // An inspected relay's flow says it was not read as HTTP, and why (the machine decides).
            if plain == nil { feed(.exchangeNotHTTP(start)) }
        case .tunnel, .ended: break
        }
        // A relay is one stream: done. Plain HTTP keeps the stopped reader (it ignores the rest
        // of its flow); the next flow is read afresh.
        if plain == nil {
            exchanges = nil
            exchangesStopped = true
            relayHeadDeadline.headCompleted()
        }
        return refusal
    }

    /// Starts the relay's head clock at a request head's first byte (`startedAt`, the reader's
    /// time of the client burst that began it; nil: no head part way) and stops it once the head
    /// is whole or reading stopped; arms the timer when it starts. One look at the reader per
    /// client burst (callgrind, debug build, 1,300 keep-alive requests: the reading as a whole
    /// took fewer instructions than before this change).
    private func noteRequestHead(_ startedAt: Int64?, burstAt micros: Int64) {
        guard let startedAt else {
            if relayHeadDeadline.deadline != nil { relayHeadDeadline.headCompleted() }
            return
        }
        // A head begun in an earlier burst keeps its clock; one begun in this burst (after
        // another ended in it, too) starts it now.
        if relayHeadDeadline.deadline != nil && startedAt != micros { return }
        relayHeadDeadline.headCompleted()
        relayHeadDeadline.headBegan(at: loop.now)
        rearm()
    }

    /// Arms the timer that ends the cancelled HTTP/2 streams whose wait is over (`settleExchanges`).
    private func armExchangeSettle() {
        exchangeSettleAt = loop.now &+ UInt64(HTTP2ExchangeReading.cancelledWaitMicros) * 1_000
        rearm()
    }

    /// The timer of `armExchangeSettle`: the reader ends the cancelled streams whose wait is over
    /// (their rows read open until then), and the timer is armed again while others wait.
    func settleExchanges() {
        exchangeSettleAt = 0
        guard let reader = exchanges else { return }
        let sink = shared.sink
        reader.settle(at: EngineClock.wallMicros()) { sink?.exchangeChanged($0) }
        if reader.awaitsCancelledResponses { armExchangeSettle() }
    }

    /// After a pass: tv holds nothing more for the client, so what completed is in its socket.
    func noteClientDrained() {
        if !completedInFlight.isEmpty && !client.hasUnsent { completedInFlight.removeAll(keepingCapacity: true) }
    }

    /// The connection closes: if bytes for the client are still unsent (a reset, a failed leg,
    /// tv stopping while the client does not read), the exchanges that ended in them never
    /// reached it whole, and their rows say so after all (`.incomplete`; they said complete
    /// when tv had read them). Found by a trial: `tv stop` during a download left a complete
    /// row for a 1 MiB response of which the client had 128,000 bytes.
    func endUndeliveredExchanges() {
        guard !completedInFlight.isEmpty else { return }
        let records = completedInFlight
        completedInFlight = []
        guard client.hasUnsent else { return }
        let sink = shared.sink
        for var record in records {
            record.state = .incomplete
            sink?.exchangeChanged(record)
        }
    }

    /// The connection's flow ended: what is still open ends with it.
    func endExchanges() {
        guard let reader = exchanges else { return }
        let sink = shared.sink
        reader.end(at: loop.wallNow) { sink?.exchangeChanged($0) }
        exchanges = nil
    }

    /// Plain HTTP's flow `flow` ended.
    func endPlainExchanges(flow: UInt64) {
        guard let reader = exchanges, reader.settings.flowID == Int64(flow) else { return }
        endExchanges()
    }
}
