import LocalCA
import Wire
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// What goes into `ConnectionMachine` (events) and what comes out (commands), and the facts
/// and plans they carry.
extension ConnectionMachine {
    struct Settings {
        var frontEnd: FrontEndKind
        var policy: InterceptionPolicy
        var upstreamInsecure = false
        var minimumTLSVersion: TLSProtocolVersion = .tls12
        var handshakeTimeoutMillis = 10_000
        var connectTimeoutMillis = 10_000
        /// The time a request head may take (`HeadDeadline`): the explicit proxy's request and a
        /// reverse-mode client's first plain head.
        var headTimeoutMillis = 10_000
        /// How long a relay may be idle before it is closed (seconds, for the sentence).
        var idleTimeoutSeconds = 300
        /// Encrypted pass-through may be spliced (`ProxyConfiguration.spliceEncryptedPassThrough`).
        var spliceEncryptedPassThrough = true
        var detector = PinningDetector()
        /// Pinning memory learns (`PinningMemory.learns`; false under `--no-pinning-detection`):
        /// refusals are remembered and weighed, and the flow says what that means for next time.
        var remembersClients = true
        /// The front end already reported the flow opened (the TUN's connect that took longer
        /// than a housekeeping tick: reported then, so the program lookup saw the program's socket
        /// while it waited): the machine's first report is an update, not a second open.
        var flowAlreadyOpened = false
        /// Which leaf key types the client leg presents (`LeafKeyPlan`).
        var leafKeys = LeafKeyPlan(primary: .ecdsaP256, suites: .init())
        /// The address the client connected to, when it is not the destination (reverse mode:
        /// the listener's address it reached): a leaf for a client without SNI names it too.
        var dialledAddress: IPAddress?
        /// `--proxy-auth`: the credentials the explicit and SOCKS5 front ends require (nil: none).
        var proxyCredentials: ProxyCredentials?
    }

    enum Phase: Equatable {
        case start
        case frontEnd
        /// Reverse mode: waiting for a complete plain request head (or a ClientHello's first
        /// byte) before connecting to the server.
        case awaitingHead
        case connecting
        case awaitingFirstBytes
        case upstreamHandshake
        case clientHandshake
        /// The client leg is up only to answer the upstream failure (`answering`) with a 502:
        /// waiting for the client's first request.
        case answering
        case relaying
        case plainHTTP
        case closed

        /// The driver routine that serves readiness in this phase: the machine's answer to
        /// "what does a readable or writable socket mean now", so the driver never asks the phase.
        var io: IORoutine {
            switch self {
            case .start, .frontEnd, .awaitingHead, .connecting, .awaitingFirstBytes: return .control
            case .upstreamHandshake: return .upstreamHandshake
            case .clientHandshake: return .clientHandshake
            case .answering: return .answer
            case .relaying: return .relay
            case .plainHTTP: return .plainHTTP
            case .closed: return .none
            }
        }
    }

    /// The driver's I/O routines, one per kind of work a socket event can start.
    enum IORoutine: Equatable {
        /// Peek the client's unread bytes, follow the connect, watch for the server's first bytes.
        case control
        /// Step the upstream TLS handshake (a client hang-up is peeked as control).
        case upstreamHandshake
        /// Step the client-leg TLS handshake.
        case clientHandshake
        /// Read the client's first request over tv's TLS leg (nothing goes to the server).
        case answer
        /// Move bytes both ways, arm the idle and buffer-release timers.
        case relay
        /// Serve the plain-HTTP machine.
        case plainHTTP
        /// Nothing: the connection is closed.
        case none
    }

    /// Facts from a finished upstream handshake.
    struct UpstreamHandshake: Equatable {
        var version: TLSProtocolVersion
        var alpn: [UInt8]?
        /// nil when the certificate verified; else why not (OpenSSL's verify error, read).
        var certificateProblem: UpstreamCertificateProblem?
        var certificate: ServerCertificateFacts?
        var certificateSANs: [SubjectAlternativeName]
        var resumed: Bool
        /// `FlowFacts.serverChain` and `.newCertificates`.
        var chain: [String] = []
        var newCertificates: [SeenCertificate] = []
    }

    /// Facts from a finished client-leg handshake.
    struct ClientHandshake: Equatable {
        var version: TLSProtocolVersion
        var resumed: Bool
        /// When it finished (wall clock, µs since 1970): the quiet-close window counts from here.
        var atMicros: Int64 = 0
    }

    /// How the client leg's handshake failed, as the TLS layer saw it.
    struct ClientHandshakeFailure: Equatable {
        var failure: TLSFailure
        /// Our first flight (with the certificate) went out before it failed.
        var flightSent: Bool

        /// How the client leg ended, for `PinningDetector`. `clientClosedBeforeFlight`: the
        /// client had gone before our certificate could reach it.
        func ending(clientClosedBeforeFlight: Bool) -> PinningDetector.Ending {
            if let alert = failure.peerAlert { return .alert(alert) }
            if failure.eof || failure.systemError == ECONNRESET || failure.systemError == EPIPE {
                return .closedDuringHandshake(certificateSent: flightSent && !clientClosedBeforeFlight)
            }
            return .otherError(failure.text)
        }
    }

    enum Event {
        case start
        /// Every unread byte the client has sent (a peek: the same bytes come again, with more,
        /// until consumed).
        case clientBytes(UnsafeRawBufferPointer)
        /// The client closed or reset before the data phase.
        case clientGone(reset: Bool)
        /// The client's FIN is here, after the unread bytes just delivered: no more will come.
        case clientFinished
        case resolved([SocketAddress])
        case resolveFailed(String)
        case connected(SocketAddress)
        case connectFailed(Errno)
        /// The server sent bytes (or closed) before the client spoke.
        case upstreamSpokeFirst
        /// The server closed before either side said anything (its end, with no byte before it).
        case upstreamClosedFirst
        /// The deadline set by `.armTimer` passed.
        case timeout
        case upstreamHandshakeDone(UpstreamHandshake)
        case upstreamHandshakeFailed(TLSFailure)
        /// The client leg's TLS started; `clientAlreadyClosed`: its FIN or reset was already
        /// here, so whatever ends the handshake, it never saw our certificate.
        case clientTLSStarted(clientAlreadyClosed: Bool)
        case clientHandshakeDone(ClientHandshake)
        case clientHandshakeFailed(ClientHandshakeFailure)
        /// Answering an upstream failure (`.readClientRequest`): plaintext the client sent over
        /// tv's leg (all of it, as it comes), until the machine knows whether it speaks HTTP.
        case clientRequestBytes(UnsafeRawBufferPointer)
        /// The relay's exchange rows refused HTTP/1 bytes tv cannot follow (`ExchangeReader.Stop
        /// .refused`): the burst holding them was not forwarded from `ExchangeRefusal.passing`
        /// on; tv answers as `answer` says (400 or 502, a reset, a close) and the relay ends.
        /// The client's bytes refused while earlier requests wait for their responses
        /// (`awaitsResponses`) come twice: first to hold the client, then, once those responses
        /// went on, for the answer.
        case exchangeRefused(ExchangeRefusal)
        /// The relay's first bytes began no HTTP where tv cannot know it is HTTP
        /// (`ExchangeReader.Stop.notHTTP`): relayed unread; an inspected flow says so.
        case exchangeNotHTTP(NotHTTPStart)
        /// An HTTP/1 request head on the relay was not whole within the head timeout of its first
        /// byte (the driver's `HeadDeadline`, as on the plain path and for reverse mode's first
        /// head); `answerable`: no earlier request waits for its response and none is part way
        /// (`ExchangeReader.requestHeadAnswerable`), so tv's 408 is read as this head's answer.
        case requestHeadLate(answerable: Bool)
        /// What reading the relay's exchanges found that the flow should say, when it says
        /// nothing else: the reading stopped at HTTP/2 bytes that broke its rules
        /// (`.exchangeReadingStopped`, the bytes going on as they come: why its open rows end
        /// incomplete), a side ended HTTP/2 with an error (`.http2GoAway`), the client sent a
        /// malformed request that was passed on (`.http2MalformedRequest`).
        case readingNote(ConnectionFailure)
        /// The relay's reader has counted this many requests without rows so far, past the
        /// connection's `RequestRowAllowance` (the flow says how many; its next report carries it).
        case requestRowsLeftOut(Int)
        /// The driver could not do what a command asked (no TLS session, no CA…).
        case failed(ConnectionFailure)
        /// The leaf for the client leg could not be minted: the client gets an internal_error alert.
        case leafMintFailed(String)
        /// The answer to `.suspectPinning`: what the close weighs (`PinningEvidenceRule.Weight`:
        /// counted, and whether it tipped the balance so the client's next connection to the key
        /// passes through; or not held against the client, and why).
        case pinningWeighed(PinKey, PinningDetector.PinningSign, PinningEvidenceRule.Weight)
        /// The relay saw no traffic for the idle timeout (at this wall-clock µs), while it waited
        /// for what `waiting` says (the driver's reading of its legs and exchange reader).
        case idle(atMicros: Int64, waiting: IdleWait)
        /// The relay has been quiet for `FlowProgressReport.intervalMicros` after bytes that were
        /// not told yet (`hasUnreportedProgress`), at this wall-clock µs.
        case progressQuiet(atMicros: Int64)
        /// The data phase is over.
        case relayEnded(RelayEnding)
        /// tv is stopping (at this wall-clock µs). `betweenExchanges`: the relay's exchange reader
        /// has no request or response part way (`ExchangeReader.isBetweenExchanges`; false when
        /// it is not read as HTTP); `holdsNothing`: the driver sent everything it held for either
        /// leg (one try, just before). Both true: the legs close with FINs, so the client still
        /// reads what its socket holds of the last response; else they are reset as ever.
        case shutdown(atMicros: Int64, betweenExchanges: Bool = false, holdsNothing: Bool = false)
    }

    /// How the data phase ended.
    struct RelayEnding: Equatable {
        /// nil: both sides closed in order.
        var failure: ConnectionFailure?
        /// A leg was reset: carry it as a reset.
        var reset = false
        /// When (wall clock, µs since 1970).
        var atMicros: Int64
    }

    struct UpstreamTLSPlan: Equatable {
        /// The SNI to send: the client's, never an IP (RFC 6066 §3).
        var serverName: String?
        /// The client's ALPN list, byte for byte.
        var alpn: [[UInt8]]
        /// What the certificate must match: the SNI, else the destination name, else its IP.
        var verifyHost: String
        /// The upstream session cache key.
        var sessionKey: String
    }

    struct ClientTLSPlan: Equatable {
        var identity: LeafIdentity
        /// The protocol to select on the client leg (what the server chose), nil for none.
        var alpn: [UInt8]?
        /// A leaf of each of these key types is presented, the CA's own first (`LeafKeyPlan`).
        var keyTypes: [KeyType]
    }

    enum RelayPlan: Equatable {
        /// Bytes as they are. `plaintext`: they are worth recording (not TLS).
        /// `observeServerHello`: read the ServerHello from the server's bytes for the facts.
        case raw(plaintext: Bool, observeServerHello: Bool)
        /// Both TLS legs are up: relay plaintext.
        case decrypted
    }

    /// What a relay that went quiet for the idle timeout was waiting for.
    enum IdleWait: Equatable {
        /// Nothing known: both sides were quiet.
        case nothing
        /// An HTTP/1 request tv reads was whole and no byte of its response had come: tv can
        /// answer it (504) in the server's place.
        case response
        /// tv held bytes for this side that it did not take: it stopped reading.
        case reading(ConnectionFailure.Side)
    }

    enum Command: Equatable {
        case openFlow
        case updateFlow
        /// Start (or keep) delivering `.clientBytes` peeks.
        case peekClient
        /// Drop this many bytes from the front of the client's unread bytes.
        case consumeClient(Int)
        case sendClient([UInt8])
        /// Write `bytes` to the server leg (over its TLS, when it has one), after what tv holds
        /// for it: tv's HTTP/2 GOAWAY (`HTTP2ConnectionError`).
        case sendServer([UInt8])
        /// tv's answer to the request waiting for its response (a 504 for a server that sent
        /// none): sent to the client and read as that request's response, `answered` by tv.
        case answerWaitingRequest([UInt8])
        case resolve(host: String, port: UInt16)
        case connect(SocketAddress)
        /// Deliver `.timeout` after this many ms (replaces the previous deadline); 0 = cancel.
        case armTimer(millis: Int)
        /// Deliver `.upstreamSpokeFirst` if the server sends first.
        case watchUpstreamFirstBytes
        case startUpstreamTLS(UpstreamTLSPlan)
        case startClientTLS(ClientTLSPlan)
        case relay(RelayPlan)
        /// The client gets no TLS leg from tv (passed through): no key log line of the
        /// ClientHello with this random (32 bytes) will come (`TLSSecretsRecorder.noSecretWillCome`:
        /// a capture stops holding its packets for one).
        case noClientSecret(clientRandom: [UInt8])
        /// Read the client's plaintext over tv's TLS leg, sending nothing to the server: deliver
        /// `.clientRequestBytes` as it comes (while the phase stays `.answering`), `.clientGone`
        /// if it ends first.
        case readClientRequest
        /// The client's first bytes over tv's leg, which began an HTTP request (HTTP/2's preface:
        /// `http2`): read them into its request row, which tv's answer then ends.
        case readRequestRow([UInt8], http2: Bool)
        /// Send close_notify on tv's TLS leg to the client (and FIN): the end of a session tv
        /// completed only to answer it, whose client spoke no HTTP.
        case closeClientTLS
        /// Hand the connection on to a `PlainHTTPMachine` (absolute-form requests), run by the
        /// same driver; the head is still unread.
        case startPlainHTTP
        /// Remember the key in pinning memory as `PinKind` (`reason`: the flow's sentence).
        case remember(PinKey, PinKind, reason: String)
        /// A close that may be pinning: weigh it (`PinningEvidence`) and answer
        /// `.pinningWeighed`.
        case suspectPinning(PinKey, PinningDetector.PinningSign)
        /// The client sent data over our leaf: it accepts our certificate for this host and port
        /// (`PinningEvidence.success`).
        case clientAccepted(PinKey)
        /// Drain what the client sent, answer with this fatal TLS alert, close.
        case refuseClientTLS(alert: UInt8)
        /// The client's request head was not complete in time (`HeadDeadline`): count it.
        case countHeadTimeout
        /// The client's bytes were refused while earlier requests wait for their responses
        /// (`ExchangeRefusal.awaitsResponses`): forward none of its later bytes (read and
        /// dropped, so its close is still seen) while the server's go on; the head clock stops.
        case holdClient
        /// DNS-over-TCP responses the server sent in this burst, each with its query's question:
        /// hand them to the `DNSAnswerSink` before the burst goes to the client.
        case dnsAnswered([TCPDNSAnswer])
        case close(reset: Bool)
        /// The relay ended by a read failure of one leg: deliver to `to` (the other leg) what tv
        /// already read and holds for it (unsent bytes, TLS records, the splice pipe, and the
        /// socket's send queue until the peer has acknowledged it), bounded by the idle timeout;
        /// then close as `.close(reset:)` does.
        case deliverThenClose(to: ConnectionFailure.Side, reset: Bool)

        /// Commands that still make sense once the connection is closed.
        var isBookkeeping: Bool {
            switch self {
            case .remember, .suspectPinning: return true
            default: return false
            }
        }
    }

    /// A short HTTP error response from the proxy itself (RFC 9112 §2.1): status `code` with its
    /// reason phrase (`HTTPReasonPhrase`), `Connection: close`, and `body` plus a newline as
    /// `text/plain`.
    static func errorResponse(_ code: Int, body: String, fields: String = "") -> [UInt8] {
        let body = body + "\n"
        let head = "HTTP/1.1 \(code) \(HTTPReasonPhrase.of(code))\r\n\(fields)Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        return Array((head + body).utf8)
    }

    /// The error response that says `failure`, naming tv as the speaker once
    /// (`ConnectionFailure.answer`).
    static func errorResponse(_ code: Int, _ failure: ConnectionFailure) -> [UInt8] {
        errorResponse(code, body: failure.answer)
    }
}
