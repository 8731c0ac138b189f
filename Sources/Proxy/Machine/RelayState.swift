import Wire
import FlowTerms

/// The data phase's own state inside `ConnectionMachine`: what the relay plan allows (record,
/// splice), whether the client has spoken over our leaf, the ServerHello being read from a
/// pass-through, and when the client handshake finished (for the quiet-close pinning check).
struct RelayState {
    /// The plan the relay runs (nil before the data phase).
    private(set) var plan: ConnectionMachine.RelayPlan?
    /// The bytes are worth recording (plaintext, or decrypted).
    private(set) var recordsContent = false
    /// Bytes may be spliced (encrypted pass-through, splicing allowed, nothing left to read).
    private(set) var spliceAllowed = false
    /// The client has sent data in the relay.
    var clientSpoke = false
    /// The client's first bytes in the relay began an HTTP/1 request line (`beginsHTTP1Request`):
    /// a failure before the server said anything may be answered with a 502.
    var clientSpokeHTTP1 = false
    /// When the client leg's handshake finished (wall clock µs; 0 = none).
    var handshakeDoneMicros: Int64 = 0
    /// Reading the ServerHello from the server's first bytes.
    private var helloParser: ServerHelloParser?
    private var spliceWhenObserved = false

    var observing: Bool { helloParser != nil }

    /// The relay starts with `plan` for a flow of this `status`; `splice`: the configuration
    /// allows splicing encrypted pass-through.
    mutating func begin(_ plan: ConnectionMachine.RelayPlan, status: FlowStatus, splice: Bool) {
        self.plan = plan
        switch plan {
        case let .raw(plaintext, observe):
            recordsContent = plaintext
            if observe { helloParser = ServerHelloParser() }
            // Encrypted pass-through: the bytes need not be seen once the ServerHello is read.
            let spliceable = !plaintext && splice && (status == .encrypted || status == .keptPrivate)
            spliceAllowed = spliceable && !observe
            spliceWhenObserved = spliceable && observe
        case .decrypted:
            recordsContent = true
        }
    }

    /// Feeds the server's bytes to the ServerHello parser; the hello once complete (then, or on
    /// bytes that are no ServerHello, reading stops).
    mutating func observeServerHello(_ chunk: UnsafeRawBufferPointer) -> ServerHello? {
        guard helloParser != nil else { return nil }
        let result = helloParser!.feed(chunk)
        if case .needMoreData = result { return nil }
        helloParser = nil
        spliceAllowed = spliceWhenObserved
        if case .serverHello(let hello) = result { return hello }
        return nil
    }

    /// Whether `bytes` begin an HTTP/1 request line: a method of 1 to 20 ASCII capital letters
    /// (RFC 9110 §9: the registered methods are) and a space, and not HTTP/2's connection
    /// preface (`PRI * HTTP/2.0`, RFC 9113 §3.4).
    static func beginsHTTP1Request(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var count = 0
        for byte in bytes {
            if byte == UInt8(ascii: " ") {
                guard count > 0 else { return false }
                return !(count == 3 && bytes[0] == UInt8(ascii: "P") && bytes[1] == UInt8(ascii: "R") && bytes[2] == UInt8(ascii: "I"))
            }
            guard byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z"), count < 20 else { return false }
            count += 1
        }
        return false
    }

    /// An inspected relay ended: whether that looks like pinning (`PinningDetector`), and the
    /// sentence; nil when it does not.
    func pinningVerdict(_ detector: PinningDetector, clientBytes: UInt64, at now: Int64) -> (PinningDetector.Evidence, String)? {
        let elapsed = handshakeDoneMicros == 0 ? 0 : now - handshakeDoneMicros
        let verdict = detector.judge(.closedAfterHandshake(applicationBytes: clientBytes, elapsedMicros: elapsed))
        guard verdict.evidence != .none, let reason = verdict.reason else { return nil }
        return (verdict.evidence, reason)
    }
}
