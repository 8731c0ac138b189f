import Wire
import FlowTerms

/// A TLS handshake that begins inside a plain relay, noticed from the bytes the relay copies:
/// STARTTLS and its kin (SMTP, IMAP, POP3, FTP `AUTH TLS`, LDAP StartTLS, PostgreSQL's
/// SSLRequest), or a client whose first bytes were not TLS.
///
/// Where it looks: only at the first byte of each burst a direction delivers (`observe`). Every
/// upgrade protocol makes the TLS client wait for the peer's go-ahead ("220", "+OK", 'S') before
/// its ClientHello, and the relay has read every byte before that go-ahead (it forwarded it), so
/// the ClientHello starts a burst. A burst that begins `16 03 … 01` (a handshake record holding
/// a client_hello, RFC 8446 §5.1 and §4) is handed to Wire's `ClientHelloParser`; only a whole,
/// well-formed ClientHello counts. Whoever sent it is the TLS client: the other direction's next
/// bytes are read for the ServerHello (the version and ALPN the two ends agreed).
///
/// How long it looks: until each direction has carried `budgetBytes` without a handshake
/// beginning, then never again on this connection. Upgrades happen within the first exchanges
/// (an SMTP banner and EHLO reply, IMAP's CAPABILITY, XMPP's stream features: hundreds of bytes
/// to a few KiB), so 64 KiB a direction is a wide margin; past it a long plain exchange (a
/// download) is not scanned for chance `16 03` bytes at every burst. Within it, a burst costs a
/// byte comparison and a subtraction; nothing is allocated until a burst looks like a
/// ClientHello (the parsers then buffer the one handshake message, at most 64 KiB).
struct TLSUpgradeWatch {
    /// Bytes each direction may carry before the watch stops looking for a ClientHello.
    static let budgetBytes = 64 * 1024

    /// What a burst showed.
    enum Finding: Equatable {
        /// A whole ClientHello, sent in `from`: the connection is TLS from here on.
        case clientHello(ClientHello, from: Direction)
        /// The ServerHello answering it.
        case serverHello(ServerHello)
        /// The other side answered the ClientHello with something that is no ServerHello (an
        /// alert, not TLS, malformed): the handshake's outcome stays unknown; the watch is over.
        case noServerHello
    }

    /// The parsers' cases are boxed (`indirect`): the watch is part of every connection and
    /// costs a word until a burst looks like a ClientHello.
    private enum Reading {
        /// Looking at each burst's first byte while the budgets last.
        case looking
        /// A burst from `from` began like a ClientHello.
        indirect case clientHello(ClientHelloParser, from: Direction)
        /// The ClientHello came from the other side of `from`: reading its answer.
        indirect case serverHello(ServerHelloParser, from: Direction)
        /// Found what there was to find, or the budgets are spent.
        case over
    }

    private var reading = Reading.looking
    /// What each direction may still carry while looking (index: `Direction.index`).
    private var budget = (budgetBytes, budgetBytes)

    /// Whether bursts are still worth showing to `observe`.
    var isWatching: Bool {
        if case .over = reading { return false }
        return true
    }

    /// Whether the watch is reading a handshake message across bursts (a ClientHello or the
    /// ServerHello after it).
    var isReadingHandshake: Bool {
        switch reading {
        case .clientHello, .serverHello: return true
        case .looking, .over: return false
        }
    }

    /// One burst the relay moved in `direction`; what it showed, if anything.
    mutating func observe(_ chunk: UnsafeRawBufferPointer, _ direction: Direction) -> Finding? {
        switch reading {
        case .over:
            return nil
        case .looking:
            return look(chunk, direction)
        case .clientHello(var parser, let from):
            guard direction == from else {
                // The peer does not speak before a ClientHello is whole: what was being read
                // were chance bytes of a plain protocol. This burst is looked at afresh.
                reading = .looking
                return look(chunk, direction)
            }
            // The parser leaves its box while it is fed, so its buffer is not copied on write.
            reading = .over
            return readClientHello(chunk, from: from, parser: &parser)
        case .serverHello(var parser, let from):
            guard direction == from else { return nil }
            reading = .over
            switch parser.feed(chunk) {
            case .needMoreData:
                reading = .serverHello(parser, from: from)
                return nil
            case .serverHello(let hello):
                return .serverHello(hello)
            case .notTLS, .malformed, .alert:
                return .noServerHello
            }
        }
    }

    /// A burst while looking: the start of a ClientHello, or plain bytes spent from the budget.
    private mutating func look(_ chunk: UnsafeRawBufferPointer, _ direction: Direction) -> Finding? {
        guard left(direction) > 0 else { return nil }
        guard Self.beginsClientHello(chunk) else {
            spend(chunk.count, direction)
            return nil
        }
        var parser = ClientHelloParser()
        return readClientHello(chunk, from: direction, parser: &parser)
    }

    /// Feeds a burst from `from` to the ClientHello being read; its bytes count against the
    /// budget like any other (a chance `16 03 … 01` that never completes stops at the parser's
    /// 64 KiB bound, then looking goes on while budget is left).
    private mutating func readClientHello(_ chunk: UnsafeRawBufferPointer, from: Direction, parser: inout ClientHelloParser) -> Finding? {
        let result = parser.feed(chunk)
        spend(chunk.count, from)
        switch result {
        case .needMoreData:
            reading = .clientHello(parser, from: from)
            return nil
        case .clientHello(let hello):
            reading = .serverHello(ServerHelloParser(), from: from.opposite)
            return .clientHello(hello, from: from)
        case .notTLS, .malformed:
            // Chance bytes of a plain protocol: keep looking at later bursts, budget allowing.
            reading = left(.clientToServer) > 0 || left(.serverToClient) > 0 ? .looking : .over
            return nil
        }
    }

    /// A burst's first bytes as a handshake record that holds a client_hello: content type 22,
    /// major version 3, handshake type 1 (RFC 8446 §5.1, §4), as far as the burst goes.
    static func beginsClientHello(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard let first = chunk.first, first == 0x16 else { return false }
        if chunk.count > 1 && chunk[1] != 0x03 { return false }
        if chunk.count > 5 && chunk[5] != 0x01 { return false }
        return true
    }

    private func left(_ direction: Direction) -> Int {
        direction == .clientToServer ? budget.0 : budget.1
    }

    private mutating func spend(_ count: Int, _ direction: Direction) {
        if direction == .clientToServer { budget.0 -= count } else { budget.1 -= count }
        if budget.0 <= 0 && budget.1 <= 0, case .looking = reading { reading = .over }
    }
}
