/// One TCP segment's payload from a capture (`CapturedDNSOverTCP`): tcpdump's reading of the
/// segment, the connection (its client's port), the direction, the bytes.
struct CapturedSegment {
    let summary: String
    let clientPort: Int
    /// Sent to the server (port 53), not from it.
    let toServer: Bool
    let payload: [UInt8]

    init(_ summary: String, clientPort: Int, toServer: Bool, _ payloadHex: String) {
        self.summary = summary
        self.clientPort = clientPort
        self.toServer = toServer
        payload = hex(payloadHex)
    }
}

extension CapturedDNSOverTCP {
    /// The segments of one connection, in the order they were captured.
    static func connection(_ clientPort: Int) -> [CapturedSegment] { all.filter { $0.clientPort == clientPort } }
    /// `dig +tcp tcp.test A`: one query, one answer, each in one segment.
    static let digOne = 40155
    /// `dig +tcp many.test A`: the answer (46 A records, 776 bytes with its length) in two segments.
    static let digMany = 35749
    /// glibc's retry over TCP after a truncated UDP answer (`getent ahostsv4 many.test`).
    static let glibcRetry = 51694
}
