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
