import Proxy
import FlowTerms

/// DNS on a UDP association to port 53: each query its own flow, named after its question, and
/// each datagram from the resolver the traffic of the query whose DNS ID it carries
/// (`DNSReplyOwner`): a waiting query's answer closes its flow and names addresses
/// (`DNSAnswerMatch`), a repeat of an answer given is its own query's (`RecentDNSAnswers`).
extension EngineLoop {
    /// The flow a datagram of `flow` belongs to: the association's, or for DNS the query's
    /// (`DNSReplyOwner`: by the message's ID, a waiting query's or an answered one's); 0 when
    /// none was recorded.
    func flowID(of flow: UDPFlow, message: UnsafeRawBufferPointer) -> UInt64 {
        guard flow.isDNS else { return flow.facts?.id ?? 0 }
        switch Self.replyOwner(flow, message) {
        case .waiting(let id), .onlyWaiting(let id): return flow.queries[id]?.facts.id ?? 0
        case .answered(let id): return flow.answered[id]?.facts.id ?? 0
        case .none: return 0
        }
    }

    /// Whose a DNS message on `flow` is (`DNSReplyOwner`).
    static func replyOwner(_ flow: UDPFlow, _ message: UnsafeRawBufferPointer) -> DNSReplyOwner {
        let id = message.count >= 2 ? UInt16(message[0]) << 8 | UInt16(message[1]) : nil
        return DNSReplyOwner.of(id: id, isWaiting: id.map { flow.queries[$0] != nil } ?? false,
                                wasAnswered: id.map { flow.answered[$0] != nil } ?? false, onlyWaiting: onlyQuery(flow))
    }

    /// The ID of the one query waiting on `flow`, when exactly one waits: a datagram with another
    /// ID on the association (a spoofed or late answer) is that query's traffic, which the
    /// program received (a trial's wrong-ID reply reached dig and the capture, and no flow
    /// counted it). With several waiting, whose it is cannot be told.
    static func onlyQuery(_ flow: UDPFlow) -> UInt16? {
        flow.queries.count == 1 ? flow.queries.first?.key : nil
    }

    /// A query on a DNS association: its own flow, named after the question.
    func noteQuery(_ flow: UDPFlow, _ payload: UnsafeRawBufferPointer) {
        guard payload.count >= 12 else { return }
        let id = UInt16(payload[0]) << 8 | UInt16(payload[1])
        if var waiting = flow.queries[id] {
            // The app asked again (its resolver's retry): same flow.
            waiting.facts.bytesFromClient += UInt64(payload.count)
            waiting.facts.packetsFromClient = (waiting.facts.packetsFromClient ?? 0) + 1
            flow.queries[id] = waiting
            return
        }
        // A new query with the ID of one answered before: replies with it are the new one's.
        flow.answered.forget(id)
        counters.dnsQueries.wrappingAdd(1, ordering: .relaxed)
        counters.udpFlows.wrappingAdd(1, ordering: .relaxed)
        var question: DNSQuestion?
        if case .success(let message) = DNSMessageParser.parse(payload), !message.isResponse, message.questions.count == 1 {
            question = message.questions.first
        }
        guard let sink, let flowID = proxy.allocateFlowID() else {
            flow.queries[id] = DNSQueryFlow(facts: FlowFacts(id: 0, startMicros: 0, client: flow.key.app.endpoint),
                                            deadline: now + UInt64(configuration.dnsTimeout * 1e9), question: question)
            return
        }
        var facts = FlowFacts(id: flowID, startMicros: EngineClock.wallMicros(), client: flow.key.app.endpoint)
        facts.transport = .udp
        facts.server = flow.upstream.endpoint
        facts.port = 53
        facts.status = .notEncrypted
        if let question, !question.name.isEmpty {
            facts.host = question.name
            facts.hostOrigin = .dnsQuestion
        }
        facts.dnsQuestionType = question?.type
        noteServerAsked(&facts, flow.key.remote)
        facts.bytesFromClient = UInt64(payload.count)
        facts.packetsFromClient = 1
        facts.packetsFromServer = 0
        // Its answer waits for the program's lookup (`EngineDNSHold.swift`).
        let key = flow.key
        flow.queriesAwaitingProgram.insert(flowID)
        sink.flowOpened(facts) { [inbox] in inbox.post { $0.dnsProgramLookedUp(key, flow: flowID) } }
        flow.queries[id] = DNSQueryFlow(facts: facts, deadline: now + UInt64(configuration.dnsTimeout * 1e9), question: question)
    }

    /// A datagram from the resolver (passed on to the program whatever it is): counted on the
    /// query whose it is (`DNSReplyOwner`); only an answer to a waiting query's question
    /// (`DNSAnswerMatch`) closes the query's flow and hands the names to the observer. A repeat
    /// of an answer already given is counted on its query's flow (its row updated, its duration
    /// kept) as a repeated answer; one with no query's ID is a stray (counted; it names nothing;
    /// its bytes are the one waiting query's, `onlyQuery`).
    /// - Returns: the flow id of the query it answered or repeats an answer of (an answer still
    ///   held for its query's lookup holds the repeat behind it), else 0.
    func answer(_ flow: UDPFlow, _ payload: UnsafeRawBufferPointer) -> UInt64 {
        let id: UInt16
        switch Self.replyOwner(flow, payload) {
        case .waiting(let waitingID) where payload.count >= 12:
            id = waitingID
        case .waiting(let only), .onlyWaiting(let only):
            counters.dnsStrayAnswers.wrappingAdd(1, ordering: .relaxed)
            // Counted on the one query waiting, if one alone waits (`onlyQuery`), or on the
            // query with its ID when it is too short to answer it; it names nothing.
            if var waiting = flow.queries[only] {
                waiting.facts.bytesFromServer += UInt64(payload.count)
                waiting.facts.packetsFromServer = (waiting.facts.packetsFromServer ?? 0) + 1
                flow.queries[only] = waiting
            }
            return 0
        case .answered(let answeredID):
            return repeatedAnswer(flow, answeredID, payload)
        case .none:
            counters.dnsStrayAnswers.wrappingAdd(1, ordering: .relaxed)
            return 0
        }
        guard var query = flow.queries[id] else { return 0 }
        let wall = EngineClock.wallMicros()
        query.facts.bytesFromServer += UInt64(payload.count)
        query.facts.packetsFromServer = (query.facts.packetsFromServer ?? 0) + 1
        query.facts.lastActivityMicros = wall
        let parsed = DNSMessageParser.parse(payload)
        let match = DNSAnswerMatch.judge(parsed, asked: query.question)
        if match == .doesNotAnswer {
            // The program's resolver drops it and waits on; so does its query's flow.
            query.otherAnswers += 1
            flow.queries[id] = query
            counters.dnsStrayAnswers.wrappingAdd(1, ordering: .relaxed)
            return 0
        }
        flow.queries[id] = nil
        counters.dnsAnswers.wrappingAdd(1, ordering: .relaxed)
        switch match {
        case .answers(let message): learnNames(from: message, answering: query.question, wallMicros: wall)
        case .unreadable: counters.dnsAnswersUnreadable.wrappingAdd(1, ordering: .relaxed)
        case .unchecked, .doesNotAnswer: break
        }
        guard sink != nil, query.facts.id != 0 else {
            flow.answered.remember(id, query)
            return 0
        }
        query.facts.durationMicros = wall - query.facts.startMicros
        switch parsed {
        case .success(let message) where message.responseCode == 3: query.facts.error = "the name does not exist (NXDOMAIN)"
        case .success(let message) where message.responseCode != 0: query.facts.error = "the resolver answered: \(DNSMessage.responseCodeName(message.responseCode))"
        case .failure(let failure): query.facts.error = "the answer could not be read: \(failure.reason)"
        default: break
        }
        closed(query.facts)
        flow.answered.remember(id, query)
        return query.facts.id
    }

    /// A datagram with the ID of query `id`, answered before (`DNSReplyOwner.answered`): the
    /// same answer again (the path or the resolver sent it twice: counted as repeated) or another
    /// datagram with its ID (a stray); either way its query's traffic, counted on its flow, whose
    /// row is written again with it (its end and duration as the answer made them).
    /// - Returns: that query's flow id (0: none was recorded).
    func repeatedAnswer(_ flow: UDPFlow, _ id: UInt16, _ payload: UnsafeRawBufferPointer) -> UInt64 {
        guard var query = flow.answered[id] else { return 0 }
        if case .answers = DNSAnswerMatch.judge(DNSMessageParser.parse(payload), asked: query.question) {
            counters.dnsRepeatedAnswers.wrappingAdd(1, ordering: .relaxed)
        } else {
            counters.dnsStrayAnswers.wrappingAdd(1, ordering: .relaxed)
        }
        query.facts.bytesFromServer += UInt64(payload.count)
        query.facts.packetsFromServer = (query.facts.packetsFromServer ?? 0) + 1
        flow.answered[id] = query
        guard let sink, query.facts.id != 0 else { return 0 }
        sink.flowUpdated(query.facts)
        return query.facts.id
    }
}
