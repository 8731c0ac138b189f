#if canImport(Glibc)
import Glibc
#endif
import FlowTerms
import Wire

/// Why a connection, or its flow, failed: what failed, on which leg, with what the lower layer
/// said (the TLS alert, the errno, OpenSSL's reason). Decisions branch on the case; the one
/// sentence the user reads (the flow's error field, the 502 body) is rendered from it here and
/// nowhere else.
public enum ConnectionFailure: Equatable, Sendable {
    /// A side of the proxied connection.
    public enum Side: Equatable, Sendable {
        case client, server
    }

    /// When the client left before the data phase.
    public enum Moment: Equatable, Sendable {
        case beforeProxyRequest
        case beforeCompleteRequest
        case beforeAnything
        case whileConnecting
        case inClientHello
        case duringServerHandshake
        /// During tv's handshake with it, before tv's certificate reached it.
        case beforeHandshake
        /// The TUN front-ends: after tv's connect to the server had completed, before the
        /// connection reached the proxy (tv's listener had not accepted it), so nothing was relayed;
        /// tv then ended its connection to the server the same way at once. A program that gave
        /// up its connect while tv's was still going answers the handshake tv then forwards with
        /// a reset (a trial's Happy Eyeballs loser: the server held tv's idle connection ~10 s).
        case afterServerConnected
        /// The TUN front-ends: the program stopped resending its SYN while tv's connect to the
        /// server was still going (a socket closed in SYN-SENT sends nothing, so its next
        /// retransmission not coming is all tv sees: `SYNRetrySchedule`); tv then gave up its own
        /// connect, which would otherwise have knocked on the server's door for its kernel's full
        /// ~2 minutes of SYN retries.
        case stoppedResendingSYN
        /// Plain HTTP forwarding: no request reached a server.
        case beforeFirstRequest
        /// Plain HTTP forwarding: the client ended its side while its response was awaited, and
        /// none came within `PlainHTTPMachine.Settings.abandonedWaitNanos` (nginx's 499).
        case awaitingResponse
        /// Plain HTTP forwarding: the client ended its side while its response was awaited, and
        /// the server closed in answer, before its response began.
        case beforeResponse
    }

    /// Why no connection to the server was made.
    public enum Unreachable: Equatable, Sendable {
        /// The name did not resolve (the resolver's phrase).
        case resolve(String)
        /// Every address refused; the last connect's error.
        case connect(Errno)
        /// The name resolved to no address.
        case noAddress
        /// No answer within the connect timeout (seconds; nil: not said).
        case noAnswer(seconds: Int?)
        /// The socket could not be given its routing mark (SO_MARK, the TUN modes' loop guard).
        case mark(Errno)
        /// The host has no DNS resolver for tv to ask (the tunnel's DNS address forwards to one).
        case noResolver
    }

    /// How tv answered the client for a server it could not reach, where the client's own
    /// connect was the one that failed (the TUN front-ends complete no handshake before the
    /// upstream connects; the explicit proxy answers in its protocol and needs no note).
    public enum ClientAnswer: Equatable, Sendable {
        /// A TCP reset to the app's SYN (`EngineTCP.connectFailed`): its connect(2) fails with
        /// ECONNREFUSED (Linux's answer to a reset in SYN-SENT): a refusal, or an upstream error
        /// no ICMP carries (tv's own failures: `FailedConnectAnswer`).
        case reset
        /// A DNS SERVFAIL to the app's query to the tunnel's DNS address, so it does not wait.
        case serverFailure
        /// An ICMP destination unreachable to the app's datagram (`UnsendableDatagram`), which
        /// its socket reports as `programSaw`.
        case icmpUnreachable(programSaw: Errno)
        /// An ICMP destination unreachable to the app's SYN (`FailedConnectAnswer`), so its
        /// connect(2) failed with `programSaw`, the error tv's own connect got where ICMP can
        /// carry it (no route, host unreachable) rather than a reset's ECONNREFUSED.
        case icmpToConnect(programSaw: Errno)
        /// Nothing (`FailedConnectAnswer.nothing`): the server never answered tv's connect, and
        /// tv answered the program's SYN as the network had answered tv's, with silence; what
        /// the program then saw (its own timeout, its kernel's ETIMEDOUT) tv does not know.
        case nothing
    }

    case clientGone(reset: Bool, Moment)
    /// The explicit proxy's request could not be parsed (the parser's reason).
    case proxyRequestUnreadable(String)
    /// The explicit proxy got a request it does not take.
    case proxyRequestUnsupported(method: String, target: String)
    case socksRefused(String)
    /// `--proxy-auth`: the client gave no proxy credentials (no `Proxy-Authorization`, or a
    /// SOCKS5 greeting without username/password).
    case proxyAuthenticationMissing
    /// `--proxy-auth`: the client's credentials are wrong; `user` is the name it gave (nil: not
    /// `Basic base64(user:password)`). The password is never kept.
    case proxyAuthenticationWrong(user: String?)
    case socksUnreadable(String)
    /// The client spoke another protocol than the port's (`spoken`, told from its first byte):
    /// TLS or SOCKS to the explicit HTTP proxy, HTTP or TLS to the SOCKS5 port. Said as the
    /// setting to change (a trial read "byte 0x16, which cannot begin an HTTP method").
    case wrongProxyProtocol(spoken: ProxyProtocol, port: ProxyProtocol)
    /// The client's request could not be read as HTTP, so tv answered 400 and did not forward
    /// it: reverse mode's first request, plain HTTP forwarding's, and a relayed HTTP/1 request
    /// head servers could read otherwise (`ExchangeReader.Stop.refused`: a broken head, or
    /// framing a strict reading refuses).
    case requestUnreadable(String)
    /// The SOCKS5 handshake did not complete in time (seconds).
    case proxyRequestTimeout(seconds: Int)
    /// A request head did not complete within `HeadDeadline`'s limit.
    case headTimeout(limitMillis: Int)
    /// IDNA (libidn2, UTS #46) refuses the host name the client gave (CONNECT target, SOCKS5
    /// domain, absolute-form authority or SNI), so there is no A-label to dial or certify.
    case hostNameRefused(IDNARefusal)
    /// `target`: the destination as the user named it (host:port); `answered`: what the client
    /// saw of it, where that differs from the upstream's error (nil: told in the proxy's protocol).
    case unreachable(target: String, Unreachable, answered: ClientAnswer? = nil)
    case clientHelloMalformed(String)
    case clientHelloTimeout(seconds: Int)
    /// The TLS handshake with the server failed (OpenSSL's reason); `answer`: what the client
    /// got instead (`UpstreamAnswer`).
    case upstreamHandshake(String, answer: UpstreamAnswer)
    /// The TLS handshake with the server did not finish in time (seconds); `answer` as for
    /// `upstreamHandshake`.
    case upstreamHandshakeTimeout(seconds: Int, answer: UpstreamAnswer)
    /// The server requires a client certificate (`ClientCertificateVerdict`: a CertificateRequest
    /// then a refusal, or certificate_required). `presented`: tv sent the one the user gave for
    /// this host (`--client-cert`) and the server refused it; `alert`: the server's alert, nil
    /// when it just closed.
    case clientCertificateRequired(presented: Bool, alert: UInt8?)
    /// The server's certificate did not verify (why, with the way on for that kind: a CA to
    /// trust, the name it holds, the dates and the clock …); `answer`: what the client got
    /// instead (nothing was sent to the server).
    case upstreamCertificate(UpstreamCertificateProblem, answer: UpstreamAnswer)
    /// No leaf can be made for the name (LocalCA's message).
    case leafNameRefused(String)
    /// Making the leaf failed otherwise (the error as text).
    case leafNameError(String)
    /// tv could not mint the leaf (OpenSSL's message).
    case leafMint(String)
    /// The client does not trust tv's root (its alert, `PinningDetector.lacksRootAlerts`);
    /// `passThrough`: the key its later connections pass through under (nil: not remembered).
    case clientLacksRoot(alert: UInt8, passThrough: PinKey?)
    /// Possible pinning (`PinningDetector.PinningSign`); `passThrough`: the key whose next
    /// connection passes through (the closes tipped the balance), nil while they do not.
    case possiblePinning(PinningDetector.PinningSign, passThrough: PinKey?)
    /// The client aborted tv's handshake with an alert that is not about trust.
    case clientAborted(alert: UInt8)
    /// The client leg's TLS failed otherwise (OpenSSL's reason).
    case clientHandshakeFailed(String)
    /// Not a failure: passed through unread because pinning memory recalled this client, host
    /// and port (a note, like `clientVersionTooOld`).
    case keptPrivate(PinningRecall, PinKey)
    case clientHandshakeTimeout(seconds: Int)
    /// The client offers only versions below tv's minimum: passed through (a note, not a failure).
    case clientVersionTooOld(offered: TLSProtocolVersion, minimum: TLSProtocolVersion)
    /// Reading from a side failed (`reset`: a TCP reset; else how).
    case read(from: Side, reset: Bool, LegFailure)
    /// Sending to a side failed.
    case send(to: Side, LegFailure)
    /// The relay was idle for the idle timeout (seconds).
    case idle(seconds: Int)
    /// The server closed the connection before either side said anything.
    case serverClosedFirst
    /// A request was whole and the server sent nothing of its response for the idle timeout
    /// (seconds): tv answered 504 in its place.
    case noResponse(seconds: Int)
    /// The relay was idle for the idle timeout (seconds) while tv held bytes for `Side` that it
    /// did not take: it stopped reading.
    case stoppedReading(Side, seconds: Int)
    case stopped
    /// The TUN engine stopped while the connect to the server was still going: its command
    /// ended (`tv exec`, `commandEnded`), or tv was stopped.
    case stillConnecting(commandEnded: Bool)
    /// The proxy took no more connections when a front end handed this one over: it was
    /// stopping, or at its connection cap (`AdoptionRefusal`).
    case notAdopted(AdoptionRefusal)
    /// OpenSSL could not make a TLS session (its reasons, if any).
    case tlsSession(String?)
    case noCA
    case certificateUse
    /// A state tv should never reach.
    case internalError(String)
    /// Plain HTTP forwarding: a request that is not absolute-form http://.
    case notAbsoluteHTTP(method: String, target: String)
    /// A side's chunked body could not be read on (`problem`: malformed, or valid but past a
    /// bound of tv's, `ChunkedBodyProblem.isLimit`): tv refused it, on the relay and on the plain
    /// path alike (400 for the client's, 502 in the place of a response not yet begun, else the
    /// connection cut), rather than forward bytes it could not delimit.
    case chunkedBodyRefused(Side, ChunkedBodyProblem)
    /// More HTTP/1 requests waited for their responses on the relay than tv follows at once
    /// (`ExchangeReader.Settings.maxOpen`): tv passed on the ones it follows and their responses,
    /// then closed the connection rather than pass requests it would not record.
    case pipelinedPastLimit(Int)
    /// The server's response head could not be read (the scanner's sentence).
    case responseUnreadable(String)
    /// The server closed before its response was complete.
    case responseIncomplete
    /// The server sent bytes when no response was awaited (`bytes`, at least): dropped, and the
    /// connection to it closed (plain HTTP forwarding's client keeps its own; a relay's ends).
    case responseUnasked(bytes: Int)
    /// The server answered 101 Switching Protocols where the request did not ask for that
    /// switch (`SwitchingProtocols.Refusal`: no Upgrade asked, another protocol, a WebSocket
    /// accept that does not match the key): tv did not switch, and its 502 took the 101's place,
    /// as for a response head it cannot read, on the relay and the plain path alike.
    case switchRefused(SwitchingProtocols.Refusal)
    /// `reverse:https://…`: the client spoke HTTP/2 in clear (prior knowledge), and the server's
    /// TLS chose no HTTP/2 (`chosen`: the protocol ALPN chose, nil for none); tv relays bytes and
    /// cannot translate, so the client was told HTTP_1_1_REQUIRED (RFC 9113 §7).
    case serverLacksHTTP2(chosen: String?)
    /// A UDP flow's server answered with ICMP port unreachable (nothing listens on its port);
    /// tv passed it on to the program (`EngineLoop.udpErrorQueue`).
    case portUnreachable
    /// A TLS client's ClientHello passed through untouched (`reverse:http://`, or a rule) was
    /// answered with bytes that are not TLS: the server does not speak TLS on that port. A note
    /// on the flow (it read "encrypted — passed through" and only that the client reset: a trial).
    case serverAnsweredNotTLS
    /// The ClientHello sent a server name tv does not take as a name (`ClientHello.serverNameProblem`):
    /// the connection went on without it. A note on the flow, whose name then came from elsewhere
    /// (it read "announced none" of a connection that announced an unusable one: a trial).
    case unusableServerName(String)
    /// Reading a relay's HTTP/2 exchanges stopped at bytes that broke the rules (`reason`, the
    /// reader's sentence with its RFC section), the client's or the server's: the connection
    /// went on untouched; a note on the flow (a trial's row read "incomplete" with no why).
    /// HTTP/1 bytes tv cannot follow are refused instead (`ExchangeRefusal`).
    case exchangeReadingStopped(String)
    /// An inspected connection's first bytes begin no HTTP (`NotHTTPStart`) where tv cannot know
    /// the stream is HTTP before them (TLS without ALPN): relayed as another protocol, unread; a
    /// note on the flow (it said nothing: a trial's `\x00GET` read plain "inspected").
    case notReadAsHTTP(NotHTTPStart)
    /// A side of an inspected HTTP/2 connection ended it with an error (`HTTP2GoAway`: a
    /// GOAWAY whose code is not NO_ERROR); a note on the flow, which read as clean before.
    case http2GoAway(HTTP2GoAway)
    /// The client of an inspected HTTP/2 connection sent a malformed request
    /// (`HTTP2MalformedRequest`: RFC 9113 §8.1.1), which tv passed on; a note on the flow (a
    /// trial's repeated `:path` went to the server with nothing said).
    case http2MalformedRequest(HTTP2MalformedRequest)
    /// A side of an inspected HTTP/2 connection sent frames tv cannot read or a flood
    /// (`HTTP2ConnectionError`, RFC 9113 §5.4.1, §10.5): none of it went on, and tv ended the
    /// connection with a GOAWAY to each side (or closed the other side's).
    case http2ConnectionError(HTTP2ConnectionError)

    /// Which of the three client-leg kinds the counters and the flow name this is
    /// (`ClientLegOutcome`); nil for every other failure.
    var clientOutcome: ClientLegOutcome? {
        switch self {
        case .clientLacksRoot: return .lacksRoot
        case .possiblePinning: return .possiblePinning
        case .clientGone: return .clientLeft
        default: return nil
        }
    }

    /// Why a client lacks tv's root, as pinning memory keeps it (`tv pinned`): "the client does
    /// not trust tv's root (alert unknown_ca)".
    public static func lacksRootCause(alert: UInt8) -> String {
        "the client does not trust tv's root (alert \(TLSAlert.name(alert)))"
    }

    /// How a client is given tv's root, by kind of client.
    public static let rootAdvice = "give it the root (`tv ca export`; curl: --cacert or CURL_CA_BUNDLE, Python requests: REQUESTS_CA_BUNDLE, "
        + "Python and other OpenSSL programs: SSL_CERT_FILE, Node: NODE_EXTRA_CA_CERTS, Java: keytool -importcert into its truststore)"

    /// The one sentence for the flow's error field.
    public var sentence: String {
        switch self {
        case let .clientGone(reset, moment):
            let when: String
            switch moment {
            case .beforeProxyRequest: when = "before sending a proxy request"
            case .beforeCompleteRequest: when = "before sending a complete request"
            case .beforeAnything: when = "before sending anything"
            case .whileConnecting: when = "while tv was connecting to the server"
            case .inClientHello: when = "in the middle of its ClientHello"
            case .duringServerHandshake: when = "during the server's TLS handshake"
            case .beforeHandshake: when = "before the handshake"
            case .afterServerConnected:
                when = "after tv had connected to the server, before anything was relayed (tv then \(reset ? "reset" : "closed") its connection to the server)"
            case .stoppedResendingSYN:
                // Said as what tv saw: no packet says the program left.
                return "the program stopped resending its SYN while tv was connecting to the server (a connect given up sends nothing), so tv gave up its own connect too"
            case .beforeFirstRequest: when = "before its first request"
            case .awaitingResponse: when = "while it waited for the response, which had not begun when tv gave up waiting for it"
            case .beforeResponse: when = "before the response began, and the server then closed its side too"
            }
            return "the client \(reset ? "reset" : "closed") the connection \(when)"
        case .proxyRequestUnreadable(let reason): return "the client's proxy request was not understood: \(reason)"
        case let .proxyRequestUnsupported(method, target):
            return "tv takes CONNECT host:port or absolute-form http:// requests, not '\(method) \(HTTPRequestTarget.quoted(target))'"
        case .proxyAuthenticationMissing:
            return "the client gave no proxy credentials and this proxy requires them (tv run --proxy-auth); give the client the user name and password"
        case .proxyAuthenticationWrong(let user):
            return (user.map { "the client's proxy password for user '\($0)' is wrong" } ?? "the client's proxy credentials are not Basic user:password")
                + " (tv run --proxy-auth); give the client the user name and password"
        case .socksRefused(let reason): return "the SOCKS5 request was refused: \(reason)"
        case .socksUnreadable(let reason): return "the client's SOCKS5 handshake was not understood: \(reason)"
        case let .wrongProxyProtocol(spoken, port):
            switch (spoken, port) {
            case (.tls, .http):
                return "the client spoke TLS to tv's explicit proxy, which speaks plain HTTP (a client given an https:// proxy URL does this): give it http://HOST:PORT as its proxy"
            case (.socks, .http):
                return "the client spoke SOCKS to tv's HTTP proxy port: give it an http:// proxy, or run tv with --mode socks5 for SOCKS clients"
            case (.socks4, .http):
                return "the client spoke SOCKS4 to tv's HTTP proxy port, and tv speaks SOCKS5 only: give it an http:// proxy, or a socks5:// one with tv run --mode socks5"
            case (.socks4, .socks):
                return "the client spoke SOCKS4, and tv's SOCKS port speaks SOCKS5 only: give it a socks5:// (or socks5h://) proxy"
            case (.http, .socks), (.tls, .socks):
                return "the client spoke \(spoken.words) to tv's SOCKS5 port: give it a socks5:// proxy, or run tv without --mode socks5 for an HTTP proxy"
            default:
                return "the client spoke \(spoken.words) to a port that speaks \(port.words)"
            }
        case .requestUnreadable(let reason): return "the client's request was not understood: \(reason)"
        case .proxyRequestTimeout(let seconds): return "the client sent no complete proxy request within \(seconds) s"
        case .headTimeout(let limit): return HeadDeadline.reason(limitMillis: limit)
        case .hostNameRefused(let refusal):
            return "the host name '\(refusal.host)' is not a valid international domain name (IDNA: \(refusal.reason)); "
                + "use the name's registered spelling or its xn-- form"
        case let .unreachable(target, why, answered):
            let cause: String
            switch why {
            case .resolve(let message): cause = message
            case .connect(let err): cause = err.phrase
            case .noAddress: cause = "no address to connect to"
            case .noAnswer(let seconds): cause = seconds.map { "no answer within \($0) s" } ?? "no answer"
            case .mark(let err): cause = "SO_MARK failed: \(err.phrase)"
            case .noResolver: cause = "this host has no DNS resolver for tv to ask"
            }
            switch answered {
            case nil: return "tv could not connect to \(target) (\(cause))"
            case .reset?:
                return "tv could not connect to \(target) (\(cause)) and answered the program with a reset, so the program saw connection refused (ECONNREFUSED)"
            case .serverFailure?:
                return "tv could not send the query to \(target) (\(cause)) and answered the program SERVFAIL, so its lookup failed at once"
            case .icmpUnreachable(let seen)?:
                return "tv could not send to \(target) (\(cause)) and answered the program ICMP destination unreachable, so its socket reported \(seen.phrase)"
            case .icmpToConnect(let seen)?:
                return "tv could not connect to \(target) (\(cause)) and answered the program's connection request with ICMP destination unreachable, so its connect failed with \(seen.namedPhrase)"
            case .nothing?:
                // What tv did, not what the program saw: it may have given up before tv did.
                let how: String
                if case .noAnswer(let seconds) = why { how = seconds.map { " within \($0) s" } ?? "" } else { how = " (\(cause))" }
                return "tv's connect to \(target) got no answer\(how); tv answered the program nothing, as the network did"
            }
        case .clientHelloMalformed(let reason): return "the client sent a malformed TLS ClientHello (\(reason))"
        case .clientHelloTimeout(let seconds): return "the client's ClientHello did not complete within \(seconds) s"
        case let .upstreamHandshake(reason, answer):
            return "the TLS handshake with the server failed (\(reason))" + answer.note
        case let .upstreamHandshakeTimeout(seconds, answer):
            return "the TLS handshake with the server did not finish within \(seconds) s" + answer.note
        case let .clientCertificateRequired(presented, alert):
            let said = alert.map { " (alert \(TLSAlert.name($0)))" } ?? ""
            return presented
                ? "the server requires a client certificate and refused the one tv presented\(said); check the file given with --client-cert"
                : "the server requires a client certificate\(said) and tv has none for this host; give one with --client-cert HOST_PATTERN=FILE"
        case let .upstreamCertificate(problem, answer):
            return "the server's certificate does not verify (\(problem.cause)); \(answer.certificateNote); \(problem.advice)"
        case .leafNameRefused(let message): return "tv cannot make a certificate for this name: \(message)"
        case .leafNameError(let text): return "tv cannot make a certificate for this name (\(text))"
        case .leafMint(let text): return "tv could not mint a certificate: \(text)"
        case let .clientLacksRoot(alert, key):
            return ConnectionFailure.lacksRootCause(alert: alert) + ": " + ConnectionFailure.rootAdvice
                + (key.map { "; until then its connections to \($0.target) pass through unread (`tv pinned forget \($0.host)` after giving it the root)" } ?? "")
        case let .possiblePinning(sign, key):
            let what: String
            switch sign {
            case .closedAfterCertificate:
                // Without an alert: a client that checks a pin, or one that does not trust tv's
                // root and says nothing (Node.js closes so: a new-user trial found no word of the root).
                what = "the client closed the connection after seeing tv's certificate, before finishing the handshake (possible pinning); "
                    + "a client without tv's root that sends no alert closes so too (Node.js: give it the root with NODE_EXTRA_CA_CERTS=FILE, from `tv ca export`)"
            case .quietCloseAfterHandshake: what = "the client closed right after the handshake without sending data (possible pinning)"
            }
            return what + (key.map { "; its next connection to \($0.target) passes through unread" } ?? "")
        case .clientAborted(let alert): return "the client aborted the handshake (alert \(TLSAlert.name(alert)))"
        case .clientHandshakeFailed(let reason): return "the client's TLS handshake failed (\(reason))"
        case .portUnreachable:
            return "the server answered ICMP port unreachable (nothing listens on that port); tv passed it on, so the program saw connection refused (ECONNREFUSED)"
        case .http2GoAway(let goaway):
            return goaway.phrase
        case .http2MalformedRequest(let request):
            return request.phrase
        case .http2ConnectionError(let error):
            return error.phrase
        case .exchangeReadingStopped(let reason):
            // "exchanges": the reason may be the server's (it said "requests" of a response's
            // framing: the hostile-input trial).
            return "tv stopped reading this connection's exchanges, its bytes going on as they came: " + (reason.hasSuffix(".") ? String(reason.dropLast()) : reason)
        case .notReadAsHTTP(let start):
            return "tv did not read this connection as HTTP, its bytes going on as they came: " + start.sentence
        case .serverAnsweredNotTLS:
            return "the server answered the client's TLS ClientHello with bytes that are not TLS: it does not speak TLS on that port (tv passed both sides through untouched)"
        case .unusableServerName(let problem):
            return "the ClientHello announced a server name that is not one (\(problem)), so the flow is not named after it; the connection went on without it"
        case let .keptPrivate(recall, key):
            switch recall {
            case .remembered(.lacksRoot):
                return "passed through unread: this client lacked tv's root for \(key.target) before; give it the root, then `tv pinned forget \(key.host)`"
            case .remembered(.pinned):
                return "passed through unread: this client pins its certificate for \(key.target), or checks it only after the handshake and lacks tv's root (curl built with GnuTLS does) (`tv pinned forget \(key.host)` tries inspecting again)"
            case .retry:
                return "passed through unread: this client broke off tv's handshake with \(key.target), or closed right after it, and came back, so it pins its certificate, or checks it only after the handshake and lacks tv's root (curl built with GnuTLS does); remembered (`tv pinned forget \(key.host)` tries inspecting again)"
            case .hostWide:
                return "passed through unread: an older tv remembered \(key.host) as pinned for every client (`tv pinned forget \(key.host)` tries inspecting again)"
            }
        case .clientHandshakeTimeout(let seconds): return "the client's TLS handshake did not finish within \(seconds) s"
        case let .clientVersionTooOld(offered, minimum):
            return "the client offers only \(offered), below tv's minimum \(minimum); passed through"
        case let .read(side, reset, failure):
            return reset ? "the \(side.word) reset the connection" : "reading from the \(side.word) failed: \(failure.phrase)"
        case let .send(side, failure): return "sending to the \(side.word) failed: \(failure.phrase)"
        case .idle(let seconds): return "closed after \(seconds) s without traffic"
        case .serverClosedFirst: return "the server closed the connection before either side said anything"
        case .noResponse(let seconds): return "no response from the server within \(seconds) s of the request"
        case let .stoppedReading(side, seconds):
            return "closed after \(seconds) s in which the \(side.word) took nothing of what tv held for it (it stopped reading)"
        case .stopped: return "tv stopped"
        case .stillConnecting(let commandEnded):
            return commandEnded ? "still connecting when the command ended" : "still connecting when tv stopped"
        case .notAdopted(.stopping):
            return "tv was stopping when this connection reached it, so tv reset it and its connection to the server"
        case .notAdopted(.atConnectionCap(let cap)):
            return "tv was at its connection cap (\(cap) open, the most it takes at once) when this connection reached it, so tv reset it and its connection to the server"
        case .tlsSession(let reasons): return "tv could not create a TLS session" + (reasons.map { " (\($0))" } ?? "")
        case .noCA: return "no CA is loaded"
        case .certificateUse: return "tv could not use its certificate for this connection"
        case .internalError(let what): return "internal error: \(what)"
        case let .notAbsoluteHTTP(method, target):
            return "tv forwards absolute-form http:// requests on this connection, not '\(method) \(HTTPRequestTarget.quoted(target))'"
        case let .chunkedBodyRefused(side, problem):
            return "the \(side.word)'s chunked body " + (problem.isLimit ? "is past a limit of tv's: " : "is malformed: ") + problem.sentence
        case .pipelinedPastLimit(let limit):
            return "more than \(limit) requests waited for their responses on this connection, more than tv follows at once: tv passed on the first \(limit) and their responses, then closed the connection (a client sends the rest again on a new one)"
        case .responseUnreadable(let reason): return "the server's response was not understood: \(reason)"
        case .responseIncomplete: return "the server closed the connection before its response was complete"
        case .responseUnasked(let bytes):
            return "the server sent \(bytes) byte\(bytes == 1 ? "" : "s") no request asked for (a response the client would have taken for its next request's); tv dropped \(bytes == 1 ? "it" : "them") and closed the connection to the server"
        case .switchRefused(let refusal):
            return "the server's 101 Switching Protocols was refused, since \(refusal.sentence); tv answered 502 in its place and closed the connection"
        case .serverLacksHTTP2(let chosen):
            return "the client spoke HTTP/2 in clear and the server's TLS offered no HTTP/2 (ALPN chose \(chosen ?? "nothing")), which tv cannot translate; the client was told HTTP_1_1_REQUIRED, so speak HTTP/1.1 to this reverse proxy (curl without --http2-prior-knowledge)"
        }
    }
}

extension ConnectionFailure {
    /// Reading from or sending to the client failed: how a relay meets a client that went away.
    var onClientLeg: Bool {
        switch self {
        case .read(let side, _, _): return side == .client
        case .send(let side, _): return side == .client
        default: return false
        }
    }
}

extension ConnectionFailure {
    /// The sentence as the body of tv's own HTTP error response: tv named as the speaker once,
    /// "tv: " before a sentence that does not already say "tv …" (decided by the case, not the text).
    public var answer: String { namesTV ? sentence : "tv: " + sentence }

    /// Whether `sentence` begins with tv as its subject.
    private var namesTV: Bool {
        switch self {
        case .proxyRequestUnsupported, .unreachable, .leafNameRefused, .leafNameError, .leafMint, .stopped,
             .tlsSession, .certificateUse, .notAbsoluteHTTP:
            return true
        default:
            return false
        }
    }
}

extension ConnectionFailure {
    /// What `tv pinned` remembers of a client that came back after either sign of pinning (the
    /// memory does not keep which: a trial's client that broke off the handshake was listed as
    /// closing "right after the handshake without sending data").
    static let pinnedOnReturn = "the client broke off tv's handshake, or closed right after it without sending data, and came back (pinning)"
}
