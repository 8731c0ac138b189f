import Wire

/// The parsers of a connection's first bytes (the explicit proxy's request, a SOCKS5
/// handshake, a reverse-mode client's first head, the ClientHello), fed the client's unread
/// bytes as peeks. Pure: it says what the bytes are; `ConnectionMachine` decides what follows.
///
/// The parsers live in a box made on first use and dropped by `reset` (the front end is done):
/// inline, their 585 bytes were part of every connection for its whole life (+0.6 KiB per idle
/// connection in the harness's memory row). The box is copied on write, so the reader stays a
/// value.
struct FrontEndReader {
    /// The three parsers of one connection's first bytes.
    private final class Parsers {
        var http = HTTPRequestHeadParser()
        var socks: SOCKS5HandshakeParser
        var hello = ClientHelloParser()

        init(requiresPassword: Bool) { socks = SOCKS5HandshakeParser(requiresPassword: requiresPassword) }

        init(copying other: Parsers) {
            http = other.http
            socks = other.socks
            hello = other.hello
        }
    }

    /// nil before the first byte and after `reset`.
    private var parsers: Parsers?
    /// `--proxy-auth`: the credentials the explicit and SOCKS5 proxies require (nil: none).
    let credentials: ProxyCredentials?

    init(credentials: ProxyCredentials? = nil) {
        self.credentials = credentials
    }

    /// True while the parsers hold state (between the first peek and `reset`).
    var holdsParsers: Bool { parsers != nil }

    /// The box, made when missing and copied when shared with another copy of this reader.
    private mutating func ownParsers() -> Parsers {
        if parsers == nil {
            parsers = Parsers(requiresPassword: credentials != nil)
        } else if !isKnownUniquelyReferenced(&parsers) {
            parsers = Parsers(copying: parsers!)
        }
        return parsers!
    }

    private var httpParser: HTTPRequestHeadParser {
        get { parsers?.http ?? HTTPRequestHeadParser() }
        _modify { let box = ownParsers(); yield &box.http }
    }

    private var socksParser: SOCKS5HandshakeParser {
        get { parsers?.socks ?? SOCKS5HandshakeParser(requiresPassword: credentials != nil) }
        _modify { let box = ownParsers(); yield &box.socks }
    }

    private var helloParser: ClientHelloParser {
        get { parsers?.hello ?? ClientHelloParser() }
        _modify { let box = ownParsers(); yield &box.hello }
    }
    /// How many of the client's unread bytes the current parser has already seen.
    private(set) var fed = 0

    /// What a proxy request (HTTP or SOCKS5) came to.
    enum ProxyRequest: Equatable {
        case needMore
        /// Drop `consume` bytes, answer `reply`, read on (the SOCKS5 greeting).
        case reply(consume: Int, [UInt8])
        /// Drop `consume` bytes and connect.
        case connect(consume: Int, OriginalDestination)
        /// An absolute-form http:// request: the plain-HTTP forwarder takes it, head unread.
        case plainHTTP
        /// Answer (if anything) and close; `named`: where the request asked to go, when it said
        /// (a refused CONNECT's flow keeps its target: it read "ended before it named a
        /// destination", a trial).
        case refuse(ConnectionFailure, answer: [UInt8]?, named: OriginalDestination? = nil)
    }

    /// What a reverse-mode client's first bytes came to.
    enum ReverseHead: Equatable {
        case needMore
        /// Enough to connect (a ClientHello's first byte, a whole head or preface).
        case connect
        case refuse(ConnectionFailure, answer: [UInt8])
    }

    /// Releases what the parsers buffered (they are done).
    mutating func reset() {
        parsers = nil
    }

    /// Starts over at the next peek's first byte (after a connect).
    mutating func restart() { fed = 0 }

    private mutating func newBytes(_ all: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let start = min(fed, all.count)
        fed = all.count
        return UnsafeRawBufferPointer(rebasing: all[start...])
    }

    mutating func proxyRequest(_ all: UnsafeRawBufferPointer, frontEnd: FrontEndKind) -> ProxyRequest {
        let startsHere = fed == 0
        let fresh = newBytes(all)
        // Another protocol than the port's, from its first byte: said as the setting to change.
        if startsHere, let first = fresh.first, let spoken = ProxyProtocol.spoken(first: first) {
            switch (frontEnd, spoken) {
            case (.explicitHTTP, .tls), (.explicitHTTP, .socks), (.explicitHTTP, .socks4):
                return .refuse(.wrongProxyProtocol(spoken: spoken, port: .http), answer: nil)
            case (.socks5, .socks4):
                // SOCKS4's reply to a request tv cannot grant: VN 0, CD 91 (rejected or failed).
                return .refuse(.wrongProxyProtocol(spoken: .socks4, port: .socks), answer: [0x00, 0x5B, 0, 0, 0, 0, 0, 0])
            case (.socks5, .http):
                // An HTTP client reads an HTTP answer: it says what this port is.
                let failure = ConnectionFailure.wrongProxyProtocol(spoken: .http, port: .socks)
                return .refuse(failure, answer: ConnectionMachine.errorResponse(400, failure))
            case (.socks5, .tls):
                return .refuse(.wrongProxyProtocol(spoken: .tls, port: .socks), answer: nil)
            default:
                break
            }
        }
        switch frontEnd {
        case .explicitHTTP:
            let read = httpParser.feed(fresh)
            if let refusal = read.refusal {
                return .refuse(.proxyRequestUnreadable(refusal.reason), answer: ConnectionMachine.errorResponse(
                    refusal.status, body: "tv is an HTTP proxy and could not read this request: \(refusal.reason)"),
                               named: Self.asked(salvaging: all))
            }
            switch read {
            case .needMoreData, .malformed, .tooLong:
                return .needMore
            case .head(let head):
                if let credentials, let failure = ProxyAuthentication.failure(credentials.judge(proxyAuthorization: head.value(forHeader: "Proxy-Authorization"))) {
                    return .refuse(failure, answer: ProxyAuthentication.required(failure), named: Self.asked(head))
                }
                switch head.requestTarget {
                case .authority(let hostPort) where head.isConnect:
                    let host: String
                    do throws(IDNARefusal) { host = try IDNA.asciiHost(hostPort.host) } catch {
                        let failure = ConnectionFailure.hostNameRefused(error)
                        return .refuse(failure, answer: ConnectionMachine.errorResponse(400, failure))
                    }
                    fed -= head.byteCount
                    return .connect(consume: head.byteCount, OriginalDestination(host: host, port: hostPort.port, origin: .connect))
                case .absolute(let scheme, _, _) where scheme == "http" && !head.isConnect:
                    return .plainHTTP
                default:
                    let failure = ConnectionFailure.proxyRequestUnsupported(method: head.method, target: head.target)
                    return .refuse(failure, answer: ConnectionMachine.errorResponse(400, failure))
                }
            }
        case .socks5:
            switch socksParser.feed(fresh) {
            case .needMoreData:
                return .needMore
            case let .greeting(greeting, reply):
                let length = 2 + greeting.methods.count
                fed -= length
                return .reply(consume: length, reply)
            case let .credentials(user, password, length):
                if let failure = ProxyAuthentication.failure(credentials?.judge(user: user, password: password) ?? .missing) {
                    return .refuse(failure, answer: SOCKS5Greeting.credentialsRefused)
                }
                fed -= length
                return .reply(consume: length, SOCKS5Greeting.credentialsAccepted)
            case let .passwordNotOffered(_, reply):
                return .refuse(.proxyAuthenticationMissing, answer: reply)
            case .request(let request):
                let length = fed - socksParser.unconsumedBytes.count
                fed -= length
                let host: String
                switch request.destination {
                case .domain(let name):
                    do throws(IDNARefusal) { host = try IDNA.asciiHost(name) } catch {
                        return .refuse(.hostNameRefused(error), answer: SOCKS5Reply.failure(.hostUnreachable))
                    }
                default: host = request.destination.description
                }
                return .connect(consume: length, OriginalDestination(host: host, port: request.port, origin: .socks))
            case let .refused(reason, reply):
                return .refuse(.socksRefused(reason), answer: reply)
            case .malformed(let reason):
                return .refuse(.socksUnreadable(reason), answer: nil)
            }
        case .fixed:
            return .needMore
        }
    }

    /// Where an explicit proxy request asked to go (a CONNECT's authority, an absolute http://
    /// target), for the record of one refused before it was followed; nil when it named none or
    /// the name is refused (IDNA).
    static func asked(_ head: HTTPRequestHead) -> OriginalDestination? {
        asked(head.requestTarget, connect: head.isConnect)
    }

    /// Where a proxy request tv could not read asked to go, from its request line when that
    /// line reads (`MalformedRequestLine`, `HTTPRequestHeadParser.requestTarget`): the refused
    /// request's flow keeps its destination (a trial's 400 rows for a bad header had none).
    static func asked(salvaging bytes: UnsafeRawBufferPointer) -> OriginalDestination? {
        guard let line = MalformedRequestLine(bytes),
              let target = try? HTTPRequestHeadParser.requestTarget(line.target, method: line.method) else { return nil }
        return asked(target, connect: line.method == "CONNECT")
    }

    private static func asked(_ target: HTTPRequestTarget, connect: Bool) -> OriginalDestination? {
        switch target {
        case .authority(let hostPort) where connect:
            guard let host = try? IDNA.asciiHost(hostPort.host) else { return nil }
            return OriginalDestination(host: host, port: hostPort.port, origin: .connect)
        case .absolute(let scheme, let named, _) where scheme == "http":
            guard let host = try? IDNA.asciiHost(named.host) else { return nil }
            return OriginalDestination(host: host, port: named.port, origin: .connect)
        default:
            return nil
        }
    }

    /// Reverse mode before connecting: a TLS client connects at its first byte (its ClientHello
    /// is read, under the handshake deadline, once connected); a plain one once its first
    /// request head is whole. The bytes stay unread for the phases after the connect.
    mutating func reverseHead(_ all: UnsafeRawBufferPointer) -> ReverseHead {
        guard let first = all.first else { return .needMore }
        if first == 0x16 && fed == 0 { return .connect }
        // HTTP/2 with prior knowledge (RFC 9113 §3.3): the whole connection preface is its head.
        let preface = Self.http2Preface
        if all.count <= preface.count ? all.elementsEqual(preface.prefix(all.count)) : all.prefix(preface.count).elementsEqual(preface) {
            return all.count >= preface.count ? .connect : .needMore
        }
        let read = httpParser.feed(newBytes(all))
        // A whole head tv would not accept itself (no Host, say) is the server's to judge, as
        // before: tv's reverse mode relays requests, it does not police them. Bytes that cannot
        // begin a head, or a head too long to end (414 or 431), are refused.
        if case .malformed = read, Self.containsHeadEnd(all) {
            httpParser = HTTPRequestHeadParser()
            return .connect
        }
        if let refusal = read.refusal {
            return .refuse(.requestUnreadable(refusal.reason), answer: ConnectionMachine.errorResponse(
                refusal.status, body: "tv could not read this request: \(refusal.reason)"))
        }
        switch read {
        case .head:
            httpParser = HTTPRequestHeadParser()
            return .connect
        case .needMoreData, .malformed, .tooLong:
            return .needMore
        }
    }

    /// The ClientHello parser's answer for the bytes not yet fed.
    mutating func clientHello(_ all: UnsafeRawBufferPointer) -> ClientHelloParser.Result {
        helloParser.feed(newBytes(all))
    }

    /// Whether `bytes` hold the empty line that ends a head (CRLF CRLF, or bare LF LF as RFC 9112
    /// §2.2 lets a recipient accept).
    static func containsHeadEnd(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // Whether a line feed ended a line; carriage returns do not count as content.
        var afterLineFeed = false
        for byte in bytes {
            if byte == 0x0A {
                if afterLineFeed { return true }
                afterLineFeed = true
            } else if byte != 0x0D {
                afterLineFeed = false
            }
        }
        return false
    }

    /// `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`.
    static let http2Preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
}
