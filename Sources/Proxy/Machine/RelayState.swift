import Wire
import FlowTerms

/// The data phase's own state inside `ConnectionMachine`: what the relay plan allows (record,
/// splice), whether the client has spoken over our leaf, the ServerHello being read from a
/// pass-through, a plain relay watched for a TLS handshake inside it (`TLSUpgradeWatch`), and
/// when the client handshake finished (for the quiet-close pinning check).
struct RelayState {
    /// The plan the relay runs (nil before the data phase).
    private(set) var plan: ConnectionMachine.RelayPlan?
    /// The bytes are worth recording now (plaintext, or decrypted); false from the burst that
    /// began TLS inside a plain relay (ciphertext is not content).
    private(set) var recordsContent = false
    /// The relay recorded from its start: the recorder holds this flow until told it ended
    /// (true even once `recordsContent` turned false).
    private(set) var recordingStarted = false
    /// Bytes may be spliced (encrypted pass-through, splicing allowed, nothing left to read).
    /// A plain relay is never spliced (its bytes are recorded and watched); one that turned
    /// into TLS may be once the handshake's outcome is read.
    private(set) var spliceAllowed = false
    /// The client has sent data in the relay.
    var clientSpoke = false
    /// The client's first bytes in the relay began an HTTP/1 request line (`beginsHTTP1Request`):
    /// a failure before the server said anything may be answered with a 502.
    var clientSpokeHTTP1 = false
    /// When the client leg's handshake finished (wall clock µs; 0 = none).
    var handshakeDoneMicros: Int64 = 0
    /// Reading the ServerHello from the server's first bytes: boxed, because `RelayState` is part
    /// of every connection for its whole life and the parser (~200 B inline) is needed only until
    /// a pass-through's ServerHello is read (most connections never use it).
    private var helloParser: HelloReading?
    private var spliceWhenObserved = false
    /// Watching a plain relay's bursts for a ClientHello (nil: not watching, or done).
    private var upgrade: TLSUpgradeWatch?
    /// Reading a plain relay to port 53 as DNS over TCP (nil: not DNS): boxed, 8 bytes in
    /// every connection, made only for port 53.
    private var dns: DNSRelayReading?
    private var spliceSetting = false

    var observing: Bool { helloParser != nil }

    /// Whether bursts go to `observeUpgrade` (a plain relay, within the watch's budget).
    var watchesUpgrade: Bool { upgrade != nil }

    /// Whether bursts go to `readDNS` (a plain relay to port 53).
    var readsDNS: Bool { dns != nil }

    /// The relay starts with `plan` for a flow of this `status`; `splice`: the configuration
    /// allows splicing encrypted pass-through; `watchForTLS`: a plain (`plaintext`) relay of the
    /// client's own bytes, watched for a TLS handshake inside it; `readDNS`: a plain relay to
    /// port 53, read as DNS over TCP instead (`DNSOverTCPReader`; no STARTTLS on port 53).
    mutating func begin(_ plan: ConnectionMachine.RelayPlan, status: FlowStatus, splice: Bool, watchForTLS: Bool = false,
                        readDNS: Bool = false) {
        self.plan = plan
        spliceSetting = splice
        switch plan {
        case let .raw(plaintext, observe):
            recordsContent = plaintext
            recordingStarted = plaintext
            if plaintext && readDNS {
                dns = DNSRelayReading()
            } else if plaintext && watchForTLS {
                upgrade = TLSUpgradeWatch()
            }
            if observe { helloParser = .reading(ServerHelloParser()) }
            // Encrypted pass-through: the bytes need not be seen once the ServerHello is read.
            let spliceable = !plaintext && splice && (status == .encrypted || status == .keptPrivate)
            spliceAllowed = spliceable && !observe
            spliceWhenObserved = spliceable && observe
        case .decrypted:
            recordsContent = true
            recordingStarted = true
        }
    }

    /// Shows a plain relay's burst to the upgrade watch. A ClientHello stops the recording (what
    /// follows is ciphertext); the ServerHello after it (or its absence) ends the watch and lets
    /// the relay splice, as an encrypted pass-through does once its ServerHello is read.
    mutating func observeUpgrade(_ chunk: UnsafeRawBufferPointer, _ direction: Direction) -> TLSUpgradeWatch.Finding? {
        guard upgrade != nil else { return nil }
        let finding = upgrade!.observe(chunk, direction)
        switch finding {
        case .clientHello:
            recordsContent = false
        case .serverHello, .noServerHello:
            spliceAllowed = spliceSetting
        case nil:
            break
        }
        if upgrade?.isWatching == false { upgrade = nil }
        return finding
    }

    /// Shows a burst to the DNS-over-TCP reader: the first question of the queries it held (nil:
    /// none), and the responses it held, each with its query's question. Nothing is allocated for
    /// a burst without a response (but a message split across bursts, held until whole).
    mutating func readDNS(_ chunk: UnsafeRawBufferPointer, _ direction: Direction) -> (question: DNSQuestionEntry?, answers: [TCPDNSAnswer]) {
        guard let dns else { return (nil, []) }
        var question: DNSQuestionEntry?
        var answers: [TCPDNSAnswer] = []
        dns.reader.read(chunk, fromClient: direction == .clientToServer) { finding in
            switch finding {
            case .query(_, let asked): if question == nil { question = asked }
            case .response(let answer): answers.append(answer)
            }
        }
        return (question, answers)
    }

    /// The relay ended: what the DNS reader counted, once (nil: it read no DNS).
    mutating func finishDNS() -> DNSOverTCPReader.Counts? {
        guard let dns else { return nil }
        self.dns = nil
        dns.reader.finish()
        return dns.reader.counts
    }

    /// Feeds the server's bytes to the ServerHello parser; what it found once it is done (then
    /// reading stops): a hello, bytes that are not TLS, an alert…; nil while it reads.
    mutating func observeServerHello(_ chunk: UnsafeRawBufferPointer) -> ServerHelloParser.Result? {
        guard case .reading(var parser) = helloParser else { return nil }
        let result = parser.feed(chunk)
        if case .needMoreData = result {
            helloParser = .reading(parser)
            return nil
        }
        helloParser = nil
        spliceAllowed = spliceWhenObserved
        return result
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

    /// An inspected relay ended: how `PinningDetector` judges the client's close.
    func pinningVerdict(_ detector: PinningDetector, clientBytes: UInt64, at now: Int64) -> PinningDetector.Verdict {
        let elapsed = handshakeDoneMicros == 0 ? 0 : now - handshakeDoneMicros
        return detector.judge(.closedAfterHandshake(applicationBytes: clientBytes, elapsedMicros: elapsed))
    }
}

/// `RelayState`'s ServerHello parser, boxed (8 bytes in every connection instead of ~200).
enum HelloReading {
    indirect case reading(ServerHelloParser)
}

/// `RelayState`'s DNS-over-TCP reader, boxed (a reference in every connection, the reader only
/// for port 53).
final class DNSRelayReading {
    var reader = DNSOverTCPReader()
}
