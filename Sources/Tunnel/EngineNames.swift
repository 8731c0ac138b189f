import Wire
import Proxy
import FlowTerms

/// Names from lookups: the DNS answers the tunnel carries feed `LiveHostNames`, and a flow that
/// announces no name is named after a live name of its server address (`HostOrigin.dns`).
/// Everything here runs on the engine thread and waits on nothing.
extension EngineLoop {
    /// How often expired names are swept out of the live table.
    static let nameSweepNanos: UInt64 = 10_000_000_000

    /// One DNS answer to `question` (`DNSAnswerMatch.answers`): the name → address pairs on the
    /// question's CNAME chain become live, and go to the observer (the `host_names` table,
    /// written off this thread).
    func learnNames(from message: DNSMessage, answering question: DNSQuestion?, wallMicros: Int64) {
        let names = message.resolvedAddresses(answering: question)
        guard !names.isEmpty else {
            counters.dnsAnswersWithoutAddresses.wrappingAdd(1, ordering: .relaxed)
            return
        }
        counters.dnsAnswersWithAddresses.wrappingAdd(1, ordering: .relaxed)
        counters.dnsNamesLearned.wrappingAdd(UInt64(names.count), ordering: .relaxed)
        liveNames.learn(names, question: message.questions.first?.name, now: now)
        dnsObserver?(names, wallMicros)
    }

    /// The live names of `address`, the one to show first at the head. DNS-over-TCP responses
    /// waiting from the relays are taken in first, so none read before this flow began is missed.
    func namesFromDNS(for address: PacketAddress) -> [String] {
        learnTCPAnswers()
        return liveNames.names(for: address, now: now)
    }

    /// The DNS-over-TCP responses the relays read (`TCPDNSAnswers`): each names what it answers,
    /// as a UDP answer does (`DNSAnswerMatch` against its query's question, then the question's
    /// CNAME chain). One atomic load when none waits.
    func learnTCPAnswers() {
        guard let waiting = configuration.tcpDNSAnswers, waiting.hasWaiting else { return }
        let wall = EngineClock.wallMicros()
        for answer in waiting.drain() {
            let asked = DNSQuestion(name: answer.asked.name, type: answer.asked.type, recordClass: answer.asked.recordClass)
            switch DNSAnswerMatch.judge(DNSMessageParser.parse(answer.message), asked: asked) {
            case .answers(let message): learnNames(from: message, answering: asked, wallMicros: wall)
            case .doesNotAnswer: counters.dnsStrayAnswers.wrappingAdd(1, ordering: .relaxed)
            case .unreadable: counters.dnsAnswersUnreadable.wrappingAdd(1, ordering: .relaxed)
            case .unchecked: break
            }
        }
    }

    /// Names `facts` after the live names of `address` when it has no name of its own. Not
    /// counted here: a flow may be named again later (a Host header wins) or twice (a refused
    /// connect's facts are made at its failure and again at its row), so the flows named so are
    /// counted once each as they close (`SessionTally`, `names.fromLookups.connectionsNamed`;
    /// a trial read 8, 2 and 4 for one session in three views).
    func nameFromDNS(_ facts: inout FlowFacts, address: PacketAddress) {
        _ = facts.nameFromDNS(namesFromDNS(for: address))
    }

    /// Which server the program asked (`DNSServerAsked`), and its address, on a DNS flow's facts.
    func noteServerAsked(_ facts: inout FlowFacts, _ remote: PacketEndpoint) {
        guard let asked = DNSServerAsked(remote: remote, configuration: configuration) else { return }
        facts.dnsServerAsked = asked
        facts.dnsAskedAddress = remote.address.description
    }

    /// Housekeeping: expired names out (every `nameSweepNanos`), the gauges set.
    func sweepNames() {
        learnTCPAnswers()
        if let tcp = configuration.tcpDNSAnswers { counters.noteTCPDNS(tcp) }
        if now &- lastNameSweep >= Self.nameSweepNanos {
            liveNames.expire(now: now)
            lastNameSweep = now
        }
        counters.liveNameAddresses.store(liveNames.count, ordering: .relaxed)
        counters.liveNamesEvicted.store(liveNames.evicted, ordering: .relaxed)
        counters.quicReading.store(quicReading, ordering: .relaxed)
    }
}
