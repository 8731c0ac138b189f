import LocalCA
import FlowTerms

/// Where the flow's negotiated TLS version was read.
public enum TLSVersionSource: String, Sendable, Hashable {
    /// From the server's ServerHello seen in a passed-through stream (Wire's ServerHello parser).
    case serverHello
    /// From our own upstream TLS leg (inspection).
    case upstreamLeg
}

/// A TLS protocol version as its wire value (0x0304 = TLS 1.3, RFC 8446 §4.2.1).
public struct TLSProtocolVersion: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let tls10 = TLSProtocolVersion(rawValue: 0x0301)
    public static let tls11 = TLSProtocolVersion(rawValue: 0x0302)
    public static let tls12 = TLSProtocolVersion(rawValue: 0x0303)
    public static let tls13 = TLSProtocolVersion(rawValue: 0x0304)

    public static func < (a: TLSProtocolVersion, b: TLSProtocolVersion) -> Bool { a.rawValue < b.rawValue }

    /// "TLSv1.3", as OpenSSL and Wireshark write it; "0x7f1c" for anything else.
    public var description: String {
        switch rawValue {
        case 0x0300: return "SSLv3"
        case 0x0301: return "TLSv1"
        case 0x0302: return "TLSv1.1"
        case 0x0303: return "TLSv1.2"
        case 0x0304: return "TLSv1.3"
        default: return "0x" + String(rawValue, radix: 16)
        }
    }
}

/// An address and port as numbers and text.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// The numeric address (`127.0.0.1`, `::1`).
    public var address: String
    public var port: UInt16
    public init(address: String, port: UInt16) {
        self.address = address
        self.port = port
    }
    // A byte test, not `String.contains`: with Foundation imported that is NSString's search,
    // and a request in reverse mode ran CoreFoundation's (faulting its pages in at rest, issue 21).
    /// `127.0.0.1:8080`, `[::1]:8080`.
    public var description: String { address.utf8.contains(UInt8(ascii: ":")) ? "[\(address)]:\(port)" : "\(address):\(port)" }
}

/// What we read from the real server's certificate (the leaf of the chain it sent).
public struct ServerCertificateFacts: Sendable, Hashable {
    public var subject: String
    public var issuer: String
    public var subjectAlternativeNames: [String]
    /// Seconds since 1970-01-01 UTC.
    public var notBefore: Int64
    public var notAfter: Int64
    /// SHA-256 of the DER, lowercase hex without separators.
    public var sha256: String

    public init(subject: String, issuer: String, subjectAlternativeNames: [String], notBefore: Int64, notAfter: Int64, sha256: String) {
        self.subject = subject
        self.issuer = issuer
        self.subjectAlternativeNames = subjectAlternativeNames
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.sha256 = sha256
    }

    /// Reads the facts of a certificate.
    public init(_ certificate: Certificate) {
        subject = certificate.subject
        issuer = certificate.issuer
        subjectAlternativeNames = certificate.subjectAlternativeNames.map(\.description)
        notBefore = certificate.notBefore
        notAfter = certificate.notAfter
        sha256 = Hex.encode(certificate.sha256)
    }
}


/// Everything the engine knows about one flow (one client connection, or one upstream of a plain
/// HTTP proxy connection). A value: the sink gets a copy at open, update and close.
public struct FlowFacts: Sendable, Hashable {
    /// Unique in this process, increasing; assigned by the engine (`ProxyConfiguration.flowIDs`).
    public var id: UInt64
    /// When the client connection was accepted, µs since 1970-01-01 UTC.
    public var startMicros: Int64
    /// When a byte last moved either way, µs since 1970-01-01 UTC.
    public var lastActivityMicros: Int64
    public var client: Endpoint
    /// Where the client's connection reached tv (the accepted socket's own address, the client
    /// socket's peer), set when tv listens on every address (`0.0.0.0`, `::`): the program
    /// lookup then asks for the client's socket by its exact four-tuple, and a miss means it is
    /// gone (a wildcard listener's guess made every miss a walk of the whole TCP table: a
    /// trial's `--listen 0.0.0.0` named 12 % of 30,000 short connections, the lookup thread a
    /// core busy). nil otherwise (one listener address is that peer already, `setListener`).
    public var reached: Endpoint?
    /// The server address we connected to; nil until connected, except that a destination given
    /// as an address (not a name) is kept here when connecting to it failed, so the failed flow
    /// still says where it was going (its `host` is nil then).
    public var server: Endpoint?
    public var transport: FlowTransport = .tcp
    /// The server's name (normalised, no trailing dot), or nil when only the address is known.
    public var host: String?
    public var hostOrigin: HostOrigin = .none
    /// The port the client wanted.
    public var port: UInt16 = 0
    /// The negotiated application protocol (`h2`, `http/1.1`), nil when none was agreed.
    public var alpn: String?
    /// The version on the client leg (inspected) or the one the server chose (passed through).
    public var clientTLSVersion: TLSProtocolVersion?
    /// The version on our upstream leg (inspected only).
    public var upstreamTLSVersion: TLSProtocolVersion?
    /// Where the chosen version was read.
    public var versionSource: TLSVersionSource?
    public var status: FlowStatus = .notEncrypted
    /// Bytes read from the client (plaintext when inspected, wire bytes otherwise).
    public var bytesFromClient: UInt64 = 0
    /// Bytes read from the server (plaintext when inspected, wire bytes otherwise).
    public var bytesFromServer: UInt64 = 0
    /// IP packets from the client and from the server, where they were counted (UDP through the
    /// TUN); nil when not counted (TCP is terminated by the kernel, so its packets are not ours).
    public var packetsFromClient: UInt64?
    public var packetsFromServer: UInt64?
    /// Set at close: µs from accept to close.
    public var durationMicros: Int64?
    /// One sentence when something went wrong, e.g. a reset, rendered from its failure kind
    /// (`ConnectionFailure.sentence`); for a `failed` flow it is why the flow failed. Stored once:
    /// `failureReason` reads it.
    public var error: String?
    /// The versions the client offered (supported_versions, or the legacy version), GREASE removed.
    public var offeredVersions: [TLSProtocolVersion] = []
    /// The ALPN protocols the client offered, in its order.
    public var offeredALPN: [String] = []
    /// The real server's certificate, when we saw it (inspection).
    public var serverCertificate: ServerCertificateFacts?
    /// The server's chain as the upstream leg saw it (`SSL_get_peer_cert_chain`): SHA-256s,
    /// lowercase hex, leaf first. Empty when not inspected.
    public var serverChain: [String] = []
    /// Certificates of `serverChain` this loop has not handed to the sink before: the sink
    /// stores their DER; the connection empties this once the flow was reported with it.
    public var newCertificates: [SeenCertificate] = []
    /// Whether the upstream certificate verified (nil when not checked).
    public var upstreamVerified: Bool?
    /// Why it did not verify, rendered from its kind (`UpstreamCertificateProblem.cause`); nil
    /// when it did, or was not checked. Recorded under `--upstream-insecure` too, where the flow
    /// was inspected all the same. Text, as `error` is: the facts are copied at every report.
    public var upstreamCertificateProblem: String?
    /// Whether the upstream leg resumed a TLS session (inspection).
    public var upstreamResumed: Bool?
    /// Whether the client leg resumed a TLS session (inspection).
    public var clientResumed: Bool?
    /// Whether this flow made tv remember its client, host and port (pinned, or lacking tv's
    /// root: `PinKind`).
    public var pinningDetected: Bool = false
    /// Why tv passed through a connection it would otherwise have inspected, one sentence
    /// rendered from its kind (`ConnectionFailure.clientVersionTooOld`, a note, not a failure);
    /// nil when it was not. The flow keeps it as its reason even if a later error replaces `error`.
    public var notInspectedReason: String?
    /// Other names of the flow, as `otherHostsOrigin` says: the other live names the server
    /// address had when `host` was inferred from DNS (most recent first; the connection could
    /// belong to any of them), the names lookups gave the address when the connection announced
    /// its own, or the proxy request's host when the ClientHello named another. `--host` finds a
    /// flow by them.
    public var otherHosts: [String] = []
    /// Where `otherHosts` came from; nil when nothing gave the flow other names.
    public var otherHostsOrigin: OtherHostsOrigin?
    /// A DNS query flow: its (first) question's QTYPE (RFC 1035 §3.2.2, 1 A, 28 AAAA); nil for
    /// any other flow.
    public var dnsQuestionType: UInt16?
    /// A DNS query flow seen by the tunnel: which server the program asked (tv's DNS address, the
    /// system resolver, or one of its own choosing); nil when not known.
    public var dnsServerAsked: DNSServerAsked?
    /// The address the program sent its query to, with `dnsServerAsked` (tv's DNS address in the
    /// tunnel, or the server it asked directly), numeric.
    public var dnsAskedAddress: String?
    /// `host` is the server_name of a ClientHello carrying `encrypted_client_hello`: the outer
    /// (public) name of an ECH handshake (or the real one, if the extension was GREASE).
    public var hostIsECHPublicName = false
    /// Requests read on the connection and counted without rows, past its row allowance
    /// (`RequestRowAllowance`) or its HTTP/2 streams followed at once
    /// (`RequestRowAllowance.streamsFollowed`); 0 when every request got its row.
    public var requestsLeftOut: UInt64 = 0

    /// - Parameter reached: where the client's connection reached tv (`reached`), when known.
    public init(id: UInt64, startMicros: Int64, client: Endpoint, reached: Endpoint? = nil) {
        self.id = id
        self.startMicros = startMicros
        self.lastActivityMicros = startMicros
        self.client = client
        self.reached = reached
    }
}

extension FlowFacts {
    /// Why the flow failed (the one stored sentence, `error`); for an encrypted flow tv would
    /// have inspected, why it passed it through (`notInspectedReason`); for a kept-private one,
    /// why it was kept (`error`: pinned, or lacking tv's root, `ConnectionFailure.keptPrivate`);
    /// nil otherwise.
    public var failureReason: String? {
        switch status {
        case .failed: return error
        case .encrypted: return notInspectedReason
        case .keptPrivate: return notInspectedReason ?? error
        default: return nil
        }
    }

    /// The flow failed: `status` becomes `failed` and `error` says why, rendered from `failure`.
    public mutating func fail(_ failure: ConnectionFailure) {
        status = .failed
        error = failure.sentence
    }
}
