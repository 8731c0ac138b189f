/// Incremental server side of the SOCKS5 handshake (RFC 1928 §3, §4) for no-authentication
/// CONNECT: feed it the client's bytes as they arrive and act on each step.
///
/// ```swift
/// var socks = SOCKS5HandshakeParser()
/// var step = socks.feed(bytesFromSocket)
/// loop: while true {
///     switch step {
///     case .needMoreData: break loop                      // read more, feed again
///     case .greeting(_, let reply): send(reply)            // 05 00
///         step = socks.feed([])                            // bytes already buffered may hold the request
///     case .request(let request): connect(request.hostPort) // then send SOCKS5Reply(…).encoded
///         forward(socks.unconsumedBytes); break loop
///     case .refused(_, let reply): send(reply); close(); break loop
///     case .malformed: close(); break loop
///     }
/// }
/// ```
///
/// It accepts only method 0x00 (no authentication), or with `requiresPassword` only 0x02
/// (username/password, RFC 1929: the `.credentials` step), and command CONNECT; the others are refused
/// with the reply bytes RFC 1928 prescribes. The RSV byte is not checked. Each message is at most
/// 262 bytes, so the parser holds at most that plus whatever a single feed carried past it.
public struct SOCKS5HandshakeParser: Sendable, IncrementalParser {
    /// What to do next.
    public enum Step: Sendable, Hashable {
        /// The current message is not complete; feed more bytes.
        case needMoreData
        /// The greeting offers no authentication: send `reply` (`05 00`), then feed again (with no
        /// bytes if none arrived) for the request.
        case greeting(SOCKS5Greeting, reply: [UInt8])
        /// `requiresPassword`: the greeting does not offer 0x02 (username/password): send `reply`
        /// (`05 FF`), then close. Final.
        case passwordNotOffered(SOCKS5Greeting, reply: [UInt8])
        /// `requiresPassword`: the RFC 1929 request (`01 ULEN UNAME PLEN PASSWD`, `byteCount`
        /// bytes): check the credentials, then send `01 00` and feed again for the CONNECT
        /// request, or send `01 01` (any non-zero status) and close.
        case credentials(user: [UInt8], password: [UInt8], byteCount: Int)
        /// A CONNECT request: connect, then send `SOCKS5Reply(…).encoded`. Final; bytes that
        /// followed it are in `unconsumedBytes`.
        case request(SOCKS5Request)
        /// Send `reply` (`05 FF` for the greeting, a `SOCKS5Reply` failure for the request), then
        /// close; `reason` is one sentence. Final.
        case refused(reason: String, reply: [UInt8])
        /// The bytes are not SOCKS5 (the version byte is not 5); close without replying. Final.
        case malformed(reason: String)
    }

    private enum Stage: Sendable {
        case greeting, credentials, request, finished(Step)
    }

    private var buffer: [UInt8] = []
    private var stage = Stage.greeting

    /// Bytes fed after the request; empty until the step is `.request`.
    public private(set) var unconsumedBytes: [UInt8] = []

    /// Whether the client must authenticate with username/password (RFC 1929) before its request.
    public let requiresPassword: Bool

    /// Creates a parser waiting for the greeting; `requiresPassword`: accept only method 0x02.
    public init(requiresPassword: Bool = false) { self.requiresPassword = requiresPassword }

    /// Feeds the next bytes (any length, including zero) and returns the next step. A final step
    /// is returned again for every later call.
    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) -> Step {
        if case .finished(let step) = stage { return step }
        buffer.append(contentsOf: bytes)
        switch stage {
        case .greeting: return readGreeting()
        case .credentials: return readCredentials()
        case .request: return readRequest()
        case .finished(let step): return step
        }
    }



    private mutating func finish(_ step: Step) -> Step {
        stage = .finished(step)
        return step
    }

    /// `VER NMETHODS METHODS` (RFC 1928 §3).
    private mutating func readGreeting() -> Step {
        guard let version = buffer.first else { return .needMoreData }
        guard version == 5 else {
            return finish(.malformed(reason: "The greeting starts with version \(version), but SOCKS5 starts with 5."))
        }
        guard buffer.count >= 2 else { return .needMoreData }
        let length = 2 + Int(buffer[1])
        guard buffer.count >= length else { return .needMoreData }
        let greeting = SOCKS5Greeting(methods: Array(buffer[2 ..< length]))
        buffer.removeFirst(length)
        if requiresPassword {
            guard greeting.methods.contains(SOCKS5Greeting.usernamePasswordMethod) else {
                return finish(.passwordNotOffered(greeting, reply: SOCKS5Greeting.refuseReply))
            }
            stage = .credentials
            return .greeting(greeting, reply: SOCKS5Greeting.passwordReply)
        }
        guard greeting.offersNoAuthentication else {
            let offered = greeting.methods.map { "0x" + String($0, radix: 16) }.joined(separator: ", ")
            return finish(.refused(
                reason: "The client offers authentication methods [\(offered)] but not 0x00 (no authentication), the only one accepted.",
                reply: SOCKS5Greeting.refuseReply))
        }
        stage = .request
        return .greeting(greeting, reply: SOCKS5Greeting.acceptReply)
    }

    /// `VER ULEN UNAME PLEN PASSWD` (RFC 1929 §2; VER is 1).
    private mutating func readCredentials() -> Step {
        guard let version = buffer.first else { return .needMoreData }
        guard version == 1 else {
            return finish(.malformed(reason: "The username/password request starts with version \(version), but RFC 1929 starts with 1."))
        }
        guard buffer.count >= 2 else { return .needMoreData }
        let userLength = Int(buffer[1])
        guard buffer.count >= 3 + userLength else { return .needMoreData }
        let passwordLength = Int(buffer[2 + userLength])
        let length = 3 + userLength + passwordLength
        guard buffer.count >= length else { return .needMoreData }
        let user = Array(buffer[2 ..< 2 + userLength]), password = Array(buffer[3 + userLength ..< length])
        buffer.removeFirst(length)
        stage = .request
        return .credentials(user: user, password: password, byteCount: length)
    }

    /// `VER CMD RSV ATYP DST.ADDR DST.PORT` (RFC 1928 §4).
    private mutating func readRequest() -> Step {
        guard let version = buffer.first else { return .needMoreData }
        guard version == 5 else {
            return finish(.malformed(reason: "The request starts with version \(version), but SOCKS5 starts with 5."))
        }
        guard buffer.count >= 2 else { return .needMoreData }
        let command = buffer[1]
        guard command == SOCKS5Request.connectCommand else {
            let name = command == SOCKS5Request.bindCommand ? "BIND (2)" : command == SOCKS5Request.udpAssociateCommand ? "UDP ASSOCIATE (3)" : "\(command)"
            return finish(.refused(
                reason: "The client asks for command \(name), but only CONNECT (1) is served.",
                reply: SOCKS5Reply.failure(.commandNotSupported)))
        }
        guard buffer.count >= 4 else { return .needMoreData }
        let addressType = buffer[3]
        let length: Int
        switch addressType {
        case SOCKS5Address.ipv4Type: length = 4 + 4 + 2
        case SOCKS5Address.ipv6Type: length = 4 + 16 + 2
        case SOCKS5Address.domainType:
            guard buffer.count >= 5 else { return .needMoreData }
            length = 4 + 1 + Int(buffer[4]) + 2
        default:
            return finish(.refused(
                reason: "The request uses address type \(addressType), but only IPv4 (1), domain name (3) and IPv6 (4) exist.",
                reply: SOCKS5Reply.failure(.addressTypeNotSupported)))
        }
        guard buffer.count >= length else { return .needMoreData }
        let destination: SOCKS5Address
        switch addressType {
        case SOCKS5Address.ipv4Type:
            destination = .ipv4(Array(buffer[4 ..< 8]))
        case SOCKS5Address.ipv6Type:
            destination = .ipv6(Array(buffer[4 ..< 20]))
        default:
            let name = buffer[5 ..< length - 2]
            guard !name.isEmpty else {
                return finish(.refused(reason: "The request names an empty domain.", reply: SOCKS5Reply.failure(.generalFailure)))
            }
            for byte in name where byte < 0x21 || byte == 0x7F {
                return finish(.refused(
                    reason: "The requested domain contains byte 0x\(String(byte, radix: 16)), \(byte == 0x20 ? "a space" : "a control character").",
                    reply: SOCKS5Reply.failure(.generalFailure)))
            }
            guard let text = IDNA.utf8Text(name) else {
                return finish(.refused(reason: "The requested domain is neither ASCII nor valid UTF-8.",
                                       reply: SOCKS5Reply.failure(.generalFailure)))
            }
            destination = .domain(text)
        }
        let port = UInt16(buffer[length - 2]) << 8 | UInt16(buffer[length - 1])
        unconsumedBytes = Array(buffer[length...])
        buffer = []
        return finish(.request(SOCKS5Request(command: command, destination: destination, port: port)))
    }
}
