import Wire

/// Where a relay's DNS-over-TCP responses go (the TUN front-end's names, `LiveHostNames`): the
/// relay reads the responses a program gets over TCP (`DNSOverTCPReader`), as the tunnel reads
/// UDP answers, and hands each on before the program can read it, so a connection the program
/// makes after the answer is named from it. Called on the worker loops: it must never block,
/// and counts what it cannot take.
public protocol DNSAnswerSink: Sendable {
    /// Responses read from one burst, each with the question its query asked.
    func take(_ answers: [TCPDNSAnswer])
    /// A connection's DNS over TCP ended: what its reader counted (strays, what it could not read).
    func streamEnded(_ counts: DNSOverTCPReader.Counts)
}

extension FlowFacts {
    /// A DNS-over-TCP connection's first query names its flow after its question, as a UDP
    /// query's names its own (`HostOrigin.dnsQuestion`, with the QTYPE): the query row said "no
    /// name was seen" (a trial's `dig +tcp`). Later questions on the connection leave it.
    /// - Returns: whether the facts changed.
    mutating func noteDNSQuestion(_ question: DNSQuestionEntry) -> Bool {
        guard dnsQuestionType == nil, !question.name.isEmpty else { return false }
        host = question.name
        hostOrigin = .dnsQuestion
        otherHosts = []
        otherHostsOrigin = nil
        dnsQuestionType = question.type
        return true
    }
}
