import LocalCA
import FlowTerms

/// Everything a `ProxyServer` needs, decided by the caller (the `tv run` command line, a test).
public struct ProxyConfiguration: Sendable {
    /// How clients reach us (default: explicit HTTP proxy).
    public var mode: ProxyMode = .regular
    /// Where to listen. Port 0 picks a free port (tests); `ProxyServer.start()` returns the real one.
    public var listenHost: String = "127.0.0.1"
    public var listenPort: UInt16 = 8080
    /// Whether `start()` opens a listening socket. False for the TUN front-end, which accepts on
    /// its own listener (inside the TUN's namespace) and hands connections in with `adopt`.
    public var listens: Bool = true
    /// SO_MARK for every upstream socket the engine opens (`--mode tun`: policy routing lets marked
    /// sockets bypass the TUN); nil = unmarked.
    public var upstreamMark: UInt32?
    /// Event-loop threads; nil = one per CPU this process may run on.
    public var workers: Int?
    /// Whether TLS is inspected (can be changed live with `ProxyServer.setInspection`).
    public var inspectionEnabled: Bool = true
    /// The CA whose leaves we present; nil = no CA usable for TLS (everything passes through).
    public var authority: CertificateAuthority?
    /// A leaf cache to share (e.g. with other sessions); nil = one made from `authority`.
    public var leafCache: LeafCache?
    /// `--ignore-hosts` / `--allow-hosts` regular expressions (mitmproxy semantics).
    public var ignoreHosts: [String] = []
    public var allowHosts: [String] = []
    /// Skip verification of the real server's certificate (`--upstream-insecure`).
    public var upstreamInsecure: Bool = false
    /// A PEM file of extra CA certificates trusted for upstream verification (`--upstream-ca`).
    public var upstreamCAFile: String?
    /// Client certificates for servers that ask for one (`--client-cert HOST_PATTERN=FILE`, then
    /// the `tls.clientCerts` setting): the first whose pattern matches the server is
    /// presented. Each file is checked when the proxy starts (`ProxyError.clientCertificateUnusable`).
    public var clientCertificates: [ClientCertificateRule] = []
    /// Append NSS key log lines for both legs here (`--keylog`, or `SSLKEYLOGFILE`), created 0600.
    public var keylogPath: String?
    /// Where the client legs' TLS secrets go besides the key log file (the TUN capture's
    /// Decryption Secrets Blocks); nil: nowhere.
    public var clientLegSecrets: (any TLSSecretsRecorder)?
    /// Where the upstream legs' TLS secrets go (the audit session's key log, i21-audit); nil: nowhere.
    public var upstreamLegSecrets: (any TLSSecretsRecorder)?
    /// When the two recorders above start getting lines: OpenSSL makes key log lines only once
    /// this is on (`KeyLogSwitch`: making them costs 6.4 % of a new inspected connection's
    /// instructions). nil: from the start. A key log file (`keylogPath`) gets lines from the start
    /// either way.
    public var keyLogSwitch: KeyLogSwitch?
    /// `--proxy-auth USER:PASSFILE`: the credentials the explicit and SOCKS5 modes require of
    /// every client (HTTP 407 / RFC 1929); nil: none.
    public var proxyCredentials: ProxyCredentials?
    /// Lowest TLS version accepted on either leg (default TLS 1.2; 1.0 also lowers OpenSSL's
    /// security level so that legacy servers and clients can finish a handshake).
    public var minimumTLSVersion: TLSProtocolVersion = .tls12
    /// Seconds allowed for resolving + connecting upstream.
    public var connectTimeout: Double = 10
    /// Seconds allowed for a complete ClientHello and for each TLS handshake.
    public var handshakeTimeout: Double = 10
    /// Seconds without a byte either way before a connection is closed (`--idle-timeout`), and
    /// a plain HTTP request's wait for its response's head before tv answers 504. 2 h 4 min:
    /// RFC 5382 §5 REQ-5's least for a NAT that drops an idle established TCP connection, which
    /// is what `tv exec` and `--mode tun` stand in for; at 600 s a trial's idle SSH-like
    /// connection was cut at 10 minutes (IMAP IDLE refreshes every 29, database pools idle for
    /// longer). The per-client and total connection caps bound what idle connections can hold.
    public var idleTimeout: Double = 7_440
    /// Seconds a client may take to send a complete request head (`tv run --head-timeout`): an
    /// explicit proxy's request, a reverse-mode client's first plain HTTP head, and every later
    /// head on a plain keep-alive connection; bytes trickling in do not extend it (`HeadDeadline`).
    /// A plain HTTP client that runs out of it is answered 408 and closed. 10 s, as HAProxy's
    /// usual `timeout http-request` (nginx's `client_header_timeout` is 60 s).
    public var headTimeout: Double = 10
    /// Concurrent connections; beyond it new ones are refused (and counted). `start()` lowers it
    /// to what the file-descriptor limit allows (`DescriptorBudget`; the soft limit is raised to
    /// the hard one first): `ProxyCounters.connectionCap` is the cap in force.
    public var maxConnections: Int = 10_000
    /// Connections one client address may hold at once (`tv run --max-per-client`); beyond it
    /// new ones from that address are refused, counted (`ProxyCounters.refusedPerClient`) and
    /// said (`ProxyNotice.clientAddressLimit`). nil: `ClientAddressLimit.defaultMaximum` of the
    /// cap; 0: no limit. Connections handed in with `ProxyServer.adopt` (the TUN, `tv exec`) come
    /// from this host's own programs and are not limited per address.
    public var maxConnectionsPerClient: Int?
    /// Receives what the engine says as it happens (refused connections, lack of descriptors), on
    /// a loop thread: it must return quickly. nil = nothing is said (still counted).
    public var notices: (@Sendable (ProxyNotice) -> Void)?
    /// Threads running getaddrinfo, so that name resolution never blocks a loop.
    public var resolverThreads: Int = 2
    /// Per-loop relay buffer (bytes): the most one read from a leg takes. 256 KiB: a bulk plain
    /// HTTP download through `tv exec` took 1,034 reads + 1,452 sends per 256 MiB instead of
    /// 4,103 + 4,450 with 64 KiB (strace -f; PERFORMANCE.md "Redirected front-ends").
    public var relayBufferSize: Int = 256 * 1024
    /// `--busy-poll MICROS`: after a wait that found work, each event loop polls without sleeping
    /// for up to this many µs, its window adapting to the gaps between events (0, the default:
    /// never). `BusyPollPolicy` says when and why.
    public var busyPollMicros: Int = 0
    /// Use splice(2) for passed-through TLS (no recording is possible there anyway).
    public var spliceEncryptedPassThrough: Bool = true
    /// Where flow ids come from (`FlowIDSequence`: the flow writer's, so a floor raised on it
    /// holds for the engine's connections too).
    public var flowIDs = FlowIDSequence(first: 1)
    /// Receives flow facts; nil = facts are not reported.
    public var flowSink: (any FlowSink)?
    /// Where responses read from DNS over TCP go (the TUN front-end's live names); nil: they
    /// name nothing beyond their own flow.
    public var dnsAnswers: (any DNSAnswerSink)?
    /// Remembers clients that pin, or lack tv's root, per host and port (`PinKey`).
    public var pinningMemory: any PinningMemory = InMemoryPinningMemory()
    /// Receives plaintext chunks when it says it is recording.
    public var chunkRecorder: (any ChunkRecorder)?
    /// Read HTTP exchanges (method, path, status, sizes, times) from the plaintext of inspected
    /// and plain connections and hand them to `flowSink` (`FlowSink.exchangeChanged`); on by
    /// default (issue 16). Off, the relay never looks at the bytes.
    public var readsExchanges = true
    /// Judges client-leg endings for pinning.
    public var pinningDetector = PinningDetector()
    /// How many sequential quiet closes of one client (no alert) pass its next connection
    /// through (default 1: a pinning client gets through on its second attempt).
    public var pinningEvidence = PinningEvidenceRule()

    public init() {}

    /// Parses `HOST:PORT` (IPv6 in brackets) into `listenHost`/`listenPort`.
    /// - Throws: `ProxyError.invalidListenAddress`.
    public mutating func setListen(_ text: String) throws {
        guard let (host, port) = splitHostPort(text, defaultPort: nil) ?? (text.allSatisfy(\.isNumber) ? UInt16(text).map { ("127.0.0.1", $0) } : nil),
              !host.isEmpty else {
            throw ProxyError.invalidListenAddress(text)
        }
        listenHost = host
        listenPort = port
    }
}
