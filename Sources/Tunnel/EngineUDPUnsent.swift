import CTVShims
import Proxy
import FlowTerms

/// Datagrams that cannot go, each given a failed flow of its own so the history says what was
/// tried: a DNS query to the tunnel's DNS address with no resolver to reach (none configured,
/// or it cannot be reached), which tv answers SERVFAIL at once so the program does not wait, the
/// query captured before the answer (a trial's capture had every answer before its question,
/// and the queries had no rows); and another datagram tv's connect could not send for its
/// destination (`UnsendableDatagram`: no route, refused), answered with ICMP unreachable.
extension EngineLoop {
    /// The row of a query to the tunnel's DNS address that never reached a resolver: failed,
    /// named after its question, ended when tv answered it SERVFAIL (`answerBytes`).
    func recordUnsentQuery(_ id: UInt64, _ key: UDPFlowKey, _ payload: UnsafeRawBufferPointer, resolver: PacketEndpoint?,
                                   why: ConnectionFailure.Unreachable, answerBytes: Int?) {
        guard sink != nil else { return }
        var facts = unsentFacts(id, key, server: resolver ?? key.remote, payloadCount: payload.count)
        facts.port = 53
        facts.status = .notEncrypted
        if case .success(let message) = DNSMessageParser.parse(payload), !message.isResponse, message.questions.count == 1,
           let question = message.questions.first, !question.name.isEmpty {
            facts.host = question.name
            facts.hostOrigin = .dnsQuestion
            facts.dnsQuestionType = question.type
        }
        noteServerAsked(&facts, key.remote)
        facts.bytesFromServer = UInt64(answerBytes ?? 0)
        facts.packetsFromServer = answerBytes == nil ? 0 : 1
        facts.fail(.unreachable(target: resolver.map { $0.endpoint.description } ?? "a resolver", why,
                                answered: answerBytes == nil ? nil : .serverFailure))
        recordUnsent(facts)
    }

    /// How long a five-tuple tv could not send for stays one failed flow (`recentlyUnsent`).
    static let unsentMemoryNanos: UInt64 = 5_000_000_000
    static let maximumUnsentRemembered = 1_024

    /// A program's datagram (`datagram`, its IP packet; `payload`, its UDP payload) tv's connect
    /// could not send for `unsendable` (`why`): its own failed flow, as a TCP connect tv could
    /// not make has, the datagram captured, then tv's ICMP answer; the program's next datagrams
    /// on the five-tuple within `unsentMemoryNanos` are that flow's too (a trial's retrying
    /// program made a row per datagram).
    func datagramUnsent(_ datagram: UnsafeRawBufferPointer, _ key: UDPFlowKey, _ payload: UnsafeRawBufferPointer,
                        _ unsendable: UnsendableDatagram, why: ConnectionFailure.Unreachable) {
        if let recent = recentlyUnsent[key], recent.until > now {
            capture(datagram, flow: recent.flowID, .clientToServer)
            answerUnsent(datagram, from: key.remote.address, .unsendable(unsendable), flow: nil, errno: nil, flowID: recent.flowID)
            return
        }
        let id = sink == nil ? nil : proxy.allocateFlowID()
        capture(datagram, flow: id ?? 0, .clientToServer)
        answerUnsent(datagram, from: key.remote.address, .unsendable(unsendable), flow: nil, errno: nil, flowID: id ?? 0)
        if let id {
            recordUnsentDatagram(id, key, payload, why: why, unsendable)
            if recentlyUnsent.count >= Self.maximumUnsentRemembered { recentlyUnsent = recentlyUnsent.filter { $0.value.until > now } }
            if recentlyUnsent.count < Self.maximumUnsentRemembered { recentlyUnsent[key] = (id, now &+ Self.unsentMemoryNanos) }
        }
        counters.udpFlows.wrappingAdd(1, ordering: .relaxed)
    }

    /// The row of a datagram tv could not send to its destination (`unsendable`, tv's connect
    /// failing with `why`): failed, named from DNS as a flow would be, ended by tv's ICMP answer.
    func recordUnsentDatagram(_ id: UInt64, _ key: UDPFlowKey, _ payload: UnsafeRawBufferPointer, why: ConnectionFailure.Unreachable,
                              _ unsendable: UnsendableDatagram) {
        guard sink != nil else { return }
        var facts = unsentFacts(id, key, server: key.remote, payloadCount: payload.count)
        facts.status = UDPEncryptionGuess.looksEncrypted(payload, port: key.remote.port) ? .encrypted : .notEncrypted
        nameFromDNS(&facts, address: key.remote.address)
        facts.packetsFromServer = 0
        facts.fail(.unreachable(target: key.remote.endpoint.description, why,
                                answered: .icmpUnreachable(programSaw: unsendable.programSees(isIPv6: key.app.address.isIPv6))))
        recordUnsent(facts)
    }

    /// A datagram's facts: its program's address, `server`, one datagram up.
    private func unsentFacts(_ id: UInt64, _ key: UDPFlowKey, server: PacketEndpoint, payloadCount: Int) -> FlowFacts {
        var facts = FlowFacts(id: id, startMicros: EngineClock.wallMicros(), client: key.app.endpoint)
        facts.transport = .udp
        facts.server = server.endpoint
        facts.port = key.remote.port
        facts.bytesFromClient = UInt64(payloadCount)
        facts.packetsFromClient = 1
        return facts
    }

    /// Opened and closed at once: the datagram was its whole life.
    private func recordUnsent(_ facts: FlowFacts) {
        var facts = facts
        facts.lastActivityMicros = facts.startMicros
        facts.durationMicros = 0
        sink?.flowOpened(facts)
        closed(facts)
    }

    /// A query that cannot go to a resolver: answer SERVFAIL from the DNS address at once, so the
    /// app does not wait; captured as `flow`'s.
    /// - Returns: the answer's DNS message bytes, nil when none could be made.
    @discardableResult
    func answerServerFailure(_ key: UDPFlowKey, _ query: UnsafeRawBufferPointer, flow: UInt64) -> Int? {
        guard let reply = DNSMessageParser.serverFailure(answering: query) else { return nil }
        let room = key.app.address.isIPv6 ? 48 : 28
        reply.withUnsafeBytes { (writeBuffer.baseAddress! + room).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        guard let length = PacketBuilder.udp(into: writeBuffer, source: key.remote, destination: key.app, payloadCount: reply.count) else { return nil }
        capture(UnsafeRawBufferPointer(rebasing: writeBuffer[0..<length]), flow: flow, .serverToClient)
        writeTUN(UnsafeRawBufferPointer(rebasing: writeBuffer[0..<length]))
        return reply.count
    }
}
