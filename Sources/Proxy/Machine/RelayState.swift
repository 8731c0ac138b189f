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

    /// An inspected relay ended: how `PinningDetector` judges the client's close.
    func pinningVerdict(_ detector: PinningDetector, clientBytes: UInt64, at now: Int64) -> PinningDetector.Verdict {
        let elapsed = handshakeDoneMicros == 0 ? 0 : now - handshakeDoneMicros
        return detector.judge(.closedAfterHandshake(applicationBytes: clientBytes, elapsedMicros: elapsed))
    }
}
