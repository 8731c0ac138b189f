import FlowTerms

/// One flow (a TCP connection or UDP association) as the flow database keeps it: one row of
/// `flows`. Times are microseconds since the Unix epoch unless a field says seconds; byte counts
/// are payload bytes (up = client → server, down = server → client).
public struct FlowRecord: Sendable, Equatable {
    /// Row id; 0 until `FlowWriter.open(_:)` assigns one.
    public var id: Int64
    /// When the flow began (µs since the epoch).
    public var startTime: Int64
    /// When bytes last moved either way (µs since the epoch).
    public var lastActivityTime: Int64
    /// The client's IP address as text (`127.0.0.1`, `::1`).
    public var clientAddress: String
    /// The client's port (0…65535).
    public var clientPort: Int
    /// The server's (original destination's) IP address as text.
    public var serverAddress: String
    /// The server's port (0…65535).
    public var serverPort: Int
    /// TCP or UDP.
    public var transport: FlowTransport
    /// The server's host name, when one is known (see `hostOrigin`).
    public var host: String?
    /// Where `host` came from (`.none` when there is no name).
    public var hostOrigin: HostOrigin
    /// The ALPN protocol in use (`h2`, `http/1.1`), if negotiated.
    public var alpn: String?
    /// The TLS version the server negotiated (`TLSv1.3`), if any: the server leg's when tv
    /// inspected (tv to server), the one end-to-end handshake's when passed through.
    public var tlsVersion: String?
    /// The TLS version the client negotiated (`TLSv1.3`), if any: the client leg's when tv
    /// inspected (client to tv; nil when that handshake did not finish), the same as `tlsVersion`
    /// when passed through (one handshake end to end); nil for a client that spoke no TLS.
    public var clientTLSVersion: String?
    /// What became of the flow's contents (inspected, kept private …).
    public var status: FlowStatus
    /// Why the flow failed or was kept private, in words.
    public var failureReason: String?
    /// Bytes client → server.
    public var bytesUp: Int64
    /// Bytes server → client.
    public var bytesDown: Int64
    /// IP packets client → server and server → client, where they were counted (UDP through the
    /// TUN); nil when not counted.
    public var packetsUp: Int64?
    public var packetsDown: Int64?
    /// How long the flow lasted (µs); nil while it is open.
    public var duration: Int64?
    /// The last I/O or TLS error text, if any.
    public var error: String?
    /// TLS versions the ClientHello offered (`TLSv1.3`, `TLSv1.2`).
    public var clientVersions: [String]
    /// ALPN ids the ClientHello offered.
    public var clientALPN: [String]
    /// Where `tlsVersion` was learned (`server_hello`, `upstream_leg`).
    public var chosenVersionSource: String?
    /// The server certificate's subject, as one line.
    public var certificateSubject: String?
    /// The server certificate's issuer, as one line.
    public var certificateIssuer: String?
    /// The server certificate's subjectAltName entries (`DNS:example.com`, `IP:192.0.2.1`).
    public var certificateSANs: [String]
    /// The server certificate's notBefore (seconds since the epoch).
    public var certificateNotBefore: Int64?
    /// The server certificate's notAfter (seconds since the epoch).
    public var certificateNotAfter: Int64?
    /// SHA-256 of the server certificate's DER, lowercase hex (64 characters).
    public var certificateSHA256: String?
    /// The flow's other names, as `otherHostsOrigin` says (`FlowFacts.otherHosts`): the other
    /// live names of an address `host` was inferred for, the names lookups gave the address of a
    /// connection that announced its own, or a proxy request's host. Empty when none.
    public var otherHosts: [String] = []
    /// Where `otherHosts` came from; nil when nothing gave other names, and in rows written
    /// before it was kept (`tv flow` then reads them by `hostOrigin`, as before).
    public var otherHostsOrigin: OtherHostsOrigin?
    /// A DNS query flow: its question's QTYPE (1 A, 28 AAAA); nil otherwise.
    public var dnsQuestionType: Int?
    /// A DNS query flow seen by the tunnel: which server its program asked; nil when not known.
    public var dnsServerAsked: DNSServerAsked?
    /// The address the program sent its query to (with `dnsServerAsked`).
    public var dnsAskedAddress: String?
    /// `host` is the server_name of a ClientHello that carried an `encrypted_client_hello`
    /// extension: the outer (public) name of an ECH handshake, unless the extension was GREASE.
    public var hostIsECHPublicName = false
    /// The server's certificate chain as the upstream leg saw it: SHA-256s (lowercase hex), leaf
    /// first (`flows.chain`; the DER of each is in `certificates`). Empty when none was seen.
    public var certificateChain: [String] = []
    /// Whether the server's certificate verified on tv's upstream leg; nil when none was
    /// checked (passed through, not TLS, or a row from before). Recorded under
    /// `--upstream-insecure` too, where an inspected flow's server may not have verified.
    public var certificateVerified: Bool?
    /// Why it did not verify (`UpstreamCertificateProblem.cause`, one clause); nil otherwise.
    public var certificateProblem: String?
    /// Requests tv read on the connection and counted without writing their rows, past its row
    /// allowance (the first 10,000, then 10 a second: `RequestRowAllowance`) or opened while 256
    /// of its HTTP/2 streams were followed (`RequestRowAllowance.streamsFollowed`); nil when none
    /// were (and in rows written before it was kept).
    public var requestsLeftOut: Int64?
    /// Certificates of `certificateChain` whose DER the writer has not been given yet this
    /// session: it stores them (`INSERT OR IGNORE` into `certificates`) with the record. Not a
    /// column; never read back.
    public var newCertificates: [SeenCertificate] = []
    /// The local program behind the flow, or why it is not known; nil until the program lookup
    /// answered. Read from the row; written only by `FlowEvent.program` (the record events
    /// leave it as it is).
    public var program: FlowProgram?
    /// The instance that saw the flow, for a row read from the shared store (`SharedFlowHistory`);
    /// nil for a row of this data folder. Its content and packets are in that instance's folder.
    public var instance: InstanceIdentity?

    /// A record; everything past the five-tuple and status defaults to "not known yet".
    public init(
        id: Int64 = 0,
        startTime: Int64,
        lastActivityTime: Int64? = nil,
        clientAddress: String,
        clientPort: Int,
        serverAddress: String,
        serverPort: Int,
        transport: FlowTransport = .tcp,
        host: String? = nil,
        hostOrigin: HostOrigin = .none,
        alpn: String? = nil,
        tlsVersion: String? = nil,
        status: FlowStatus,
        failureReason: String? = nil,
        bytesUp: Int64 = 0,
        bytesDown: Int64 = 0,
        duration: Int64? = nil,
        error: String? = nil,
        clientVersions: [String] = [],
        clientALPN: [String] = [],
        chosenVersionSource: String? = nil,
        certificateSubject: String? = nil,
        certificateIssuer: String? = nil,
        certificateSANs: [String] = [],
        certificateNotBefore: Int64? = nil,
        certificateNotAfter: Int64? = nil,
        certificateSHA256: String? = nil,
        packetsUp: Int64? = nil,
        packetsDown: Int64? = nil,
        clientTLSVersion: String? = nil,
        program: FlowProgram? = nil
    ) {
        self.program = program
        self.clientTLSVersion = clientTLSVersion
        self.packetsUp = packetsUp
        self.packetsDown = packetsDown
        self.id = id
        self.startTime = startTime
        self.lastActivityTime = lastActivityTime ?? startTime
        self.clientAddress = clientAddress
        self.clientPort = clientPort
        self.serverAddress = serverAddress
        self.serverPort = serverPort
        self.transport = transport
        self.host = host
        self.hostOrigin = hostOrigin
        self.alpn = alpn
        self.tlsVersion = tlsVersion
        self.status = status
        self.failureReason = failureReason
        self.bytesUp = bytesUp
        self.bytesDown = bytesDown
        self.duration = duration
        self.error = error
        self.clientVersions = clientVersions
        self.clientALPN = clientALPN
        self.chosenVersionSource = chosenVersionSource
        self.certificateSubject = certificateSubject
        self.certificateIssuer = certificateIssuer
        self.certificateSANs = certificateSANs
        self.certificateNotBefore = certificateNotBefore
        self.certificateNotAfter = certificateNotAfter
        self.certificateSHA256 = certificateSHA256
    }
}
