import FlowTerms
import Proxy

/// A DNS answer is held until its query's program is named, so the program can be.
///
/// Each DNS query is a flow whose program is looked up by its socket (`ProgramLookup`, on a
/// thread of its own). A resolver on the same machine answers within a millisecond, and a stub
/// resolver (glibc's, Python's `getaddrinfo`) closes its socket as soon as it reads the answer:
/// the lookup found no socket, and a trial's `tv exec` listed most queries with no program. The
/// answer now waits for the lookup (which posts to the engine's inbox when it has answered, or
/// at once when its queue dropped the request), at most `dnsAnswerHoldNanos`; the query's flow
/// row (its bytes, its end, the names learned) is written when the answer comes, as before.
/// Only the answer's delivery to the program waits; a datagram that answers no waiting query
/// goes at once.
extension EngineLoop {
    /// The longest an answer waits for its query's lookup: the lookup answers within a
    /// millisecond or two on an idle machine; the bound is for a lookup thread far behind, and
    /// stays well inside a stub resolver's first timeout (glibc's 5 s, `options timeout:1` at
    /// the least).
    static let dnsAnswerHoldNanos: UInt64 = 100_000_000

    /// Whether an answer to the query of flow `id` must wait for its lookup.
    func holdsAnswer(_ flow: UDPFlow, query id: UInt64) -> Bool {
        id != 0 && flow.queriesAwaitingProgram.contains(id)
    }

    /// Holds `packet` (an answer to the query of flow `id`, built for the program) until that
    /// query's lookup answers or the hold ends.
    func holdAnswer(_ flow: UDPFlow, query id: UInt64, packet: UnsafeRawBufferPointer, comment: String? = nil) {
        let deadline = now + Self.dnsAnswerHoldNanos
        if flow.heldAnswers.isEmpty { loop.armTimer(flow.token, at: deadline) }
        flow.heldAnswers.append(HeldDNSAnswer(flow: id, packet: Array(packet), deadline: deadline, comment: comment))
    }

    /// The lookup of the query of flow `id` on the association `key` answered (the sink's
    /// callback, through the inbox): an answer held for it goes now.
    func dnsProgramLookedUp(_ key: UDPFlowKey, flow id: UInt64) {
        guard let flow = udpFlows[key] else { return }
        flow.queriesAwaitingProgram.remove(id)
        release(flow) { $0.flow == id }
    }

    /// The hold's timer: the answers whose time is up go; the timer is armed again for the next.
    func releaseDueAnswers(_ flow: UDPFlow) {
        release(flow) { $0.deadline <= now }
        if let next = flow.heldAnswers.first { loop.armTimer(flow.token, at: next.deadline) }
    }

    /// Every held answer goes (the association closes: the program gets what came for it).
    func releaseAllAnswers(_ flow: UDPFlow) {
        release(flow) { _ in true }
    }

    /// The resolver answered the query `queryID` (all waiting ones when it cannot be read) with
    /// ICMP port unreachable: the query's flow fails with it, at once (it read "no answer within
    /// 5 s" and no program, while the program had seen the refusal at once: a tun trial), and the
    /// error waits for the query's lookup, as an answer does.
    /// - Parameter comment: what the capture keeps beside the error (`ICMPErrorNote`).
    func dnsRefused(_ flow: UDPFlow, queryID: UInt16?, packet: UnsafeRawBufferPointer, comment: String? = nil) {
        counters.portUnreachableSignals.wrappingAdd(1, ordering: .relaxed)
        let refused = queryID.map { id in flow.queries[id].map { [(id, $0)] } ?? [] } ?? Array(flow.queries)
        let wall = EngineClock.wallMicros()
        var held: UInt64 = 0
        for (id, query) in refused {
            flow.queries[id] = nil
            var facts = query.facts
            guard facts.id != 0 else { continue }
            if held == 0 && holdsAnswer(flow, query: facts.id) { held = facts.id }
            facts.durationMicros = wall - facts.startMicros
            facts.fail(.portUnreachable)
            if sink != nil { closed(facts) }
        }
        if held != 0 {
            holdAnswer(flow, query: held, packet: packet, comment: comment)
        } else {
            capture(packet, flow: refused.first?.1.facts.id ?? 0, .serverToClient, comment: comment)
            writeTUN(packet)
        }
    }

    /// Writes the held answers `which` picks to the program, in the order they came, and
    /// captures each as it goes.
    private func release(_ flow: UDPFlow, where which: (HeldDNSAnswer) -> Bool) {
        guard flow.heldAnswers.contains(where: which) else { return }
        var kept: [HeldDNSAnswer] = []
        for held in flow.heldAnswers {
            guard which(held) else { kept.append(held); continue }
            flow.queriesAwaitingProgram.remove(held.flow)
            held.packet.withUnsafeBytes { packet in
                capture(packet, flow: held.flow, .serverToClient, comment: held.comment)
                writeTUN(packet)
            }
        }
        flow.heldAnswers = kept
    }
}
