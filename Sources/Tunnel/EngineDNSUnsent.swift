import CTVShims
import Proxy
import FlowTerms

/// DNS queries to the tunnel's DNS address that cannot go to a resolver (none configured, or it
/// cannot be reached): tv answers each SERVFAIL at once, so the program does not wait, and gives
/// it a failed flow of its own, the query captured before the answer (a trial's capture had every
/// answer before its question, and the queries had no rows).
extension EngineLoop {
    /// The row of a query to the tunnel's DNS address that never reached a resolver: failed,
    /// named after its question, ended when tv answered it SERVFAIL (`answerBytes`).
    func recordUnsentQuery(_ id: UInt64, _ key: UDPFlowKey, _ payload: UnsafeRawBufferPointer, resolver: PacketEndpoint?,
                                   why: ConnectionFailure.Unreachable, answerBytes: Int?) {
        guard let sink else { return }
        var facts = FlowFacts(id: id, startMicros: EngineClock.wallMicros(), client: key.app.endpoint)
        facts.transport = .udp
        facts.server = (resolver ?? key.remote).endpoint
        facts.port = 53
        facts.status = .notEncrypted
        if case .success(let message) = DNSMessageParser.parse(payload), !message.isResponse, message.questions.count == 1,
           let question = message.questions.first, !question.name.isEmpty {
            facts.host = question.name
            facts.hostOrigin = .dnsQuestion
        }
        facts.bytesFromClient = UInt64(payload.count)
        facts.packetsFromClient = 1
        facts.bytesFromServer = UInt64(answerBytes ?? 0)
        facts.packetsFromServer = answerBytes == nil ? 0 : 1
        facts.fail(.unreachable(target: resolver.map { $0.endpoint.description } ?? "a resolver", why,
                                answered: answerBytes == nil ? nil : .serverFailure))
        facts.lastActivityMicros = facts.startMicros
        facts.durationMicros = 0
        sink.flowOpened(facts)
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
