/// The facts a proxy needs from a TLS ClientHello (RFC 8446 §4.1.2; also the TLS 1.2 form of
/// RFC 5246 §7.4.1.2), read without any cryptography.
///
/// Lists keep the order and the GREASE values (RFC 8701) exactly as the client sent them; filter
/// with `GREASE.isReserved(_:)`. Produced by `ClientHelloParser`.
public struct ClientHello: Sendable, Hashable {
    /// `legacy_version`: `0x0303` for TLS 1.2 and 1.3 clients (RFC 8446 §4.1.2).
    public var legacyVersion: UInt16
    /// The 32-byte client `random` (the key used by SSLKEYLOGFILE lines).
    public var random: [UInt8]
    /// Length in bytes of `legacy_session_id`, 0...32.
    public var sessionIDLength: Int
    /// `cipher_suites` in client preference order, GREASE included.
    public var cipherSuites: [UInt16]
    /// The `host_name` entry of the server_name extension (type 0, RFC 6066 §3), exactly as sent
    /// (printable ASCII, or UTF-8 U-labels from a client that skipped IDNA; case and any trailing
    /// dot preserved); nil when the client sent no SNI. `withASCIIServerName()` converts it.
    public var serverName: String?
    /// Why a `host_name` that was sent is not `serverName` (it holds a space or a control byte, or
    /// is neither ASCII nor UTF-8), a clause to put in a sentence; nil when there was none or it was taken. Such a
    /// hello is still read: a server may accept it (nginx did), and refusing the whole hello
    /// broke a passed-through connection tv only watches (a trial).
    public var serverNameProblem: String?
    /// The application_layer_protocol_negotiation list (type 16, RFC 7301 §3.1) as raw protocol
    /// identifiers (each 1...255 bytes) in preference order; empty when absent.
    public var alpnProtocolIDs: [[UInt8]]
    /// The supported_versions list (type 43, RFC 8446 §4.2.1), e.g. `[0x0304, 0x0303]`, GREASE
    /// included; empty when absent.
    public var supportedVersions: [UInt16]
    /// Whether the session_ticket extension (type 35, RFC 5077) is present, empty or not.
    public var offersSessionTicket: Bool
    /// Whether the pre_shared_key extension (type 41, RFC 8446 §4.2.11) is present.
    public var offersPreSharedKey: Bool
    /// Named groups of the key_share entries (type 51, RFC 8446 §4.2.8) in order, e.g. `[0x001D]`
    /// for x25519; empty when absent or when the client sent no shares.
    public var keyShareGroups: [UInt16]
    /// The signature_algorithms list (type 13, RFC 8446 §4.2.3; RFC 5246 §7.4.1.4.1), e.g.
    /// `[0x0403, 0x0804]`, in the client's order; nil when the extension is absent.
    public var signatureAlgorithms: [UInt16]?
    /// The supported_groups list (type 10, RFC 8446 §4.2.7; RFC 8422 §5.1.1), e.g.
    /// `[0x001D, 0x0017]`, GREASE included; nil when the extension is absent.
    public var supportedGroups: [UInt16]?
    /// Every extension type in the order sent, GREASE included.
    public var extensionTypes: [UInt16]
    /// Size of the whole handshake message in bytes, its 4-byte header included (record headers
    /// excluded).
    public var handshakeLength: Int

    /// Memberwise initialiser, for tests and for building values by hand.
    public init(
        legacyVersion: UInt16, random: [UInt8], sessionIDLength: Int, cipherSuites: [UInt16],
        serverName: String?, alpnProtocolIDs: [[UInt8]], supportedVersions: [UInt16],
        offersSessionTicket: Bool, offersPreSharedKey: Bool, keyShareGroups: [UInt16],
        extensionTypes: [UInt16], handshakeLength: Int, signatureAlgorithms: [UInt16]? = nil,
        supportedGroups: [UInt16]? = nil, serverNameProblem: String? = nil
    ) {
        self.serverNameProblem = serverNameProblem
        self.signatureAlgorithms = signatureAlgorithms
        self.supportedGroups = supportedGroups
        self.legacyVersion = legacyVersion
        self.random = random
        self.sessionIDLength = sessionIDLength
        self.cipherSuites = cipherSuites
        self.serverName = serverName
        self.alpnProtocolIDs = alpnProtocolIDs
        self.supportedVersions = supportedVersions
        self.offersSessionTicket = offersSessionTicket
        self.offersPreSharedKey = offersPreSharedKey
        self.keyShareGroups = keyShareGroups
        self.extensionTypes = extensionTypes
        self.handshakeLength = handshakeLength
    }

    /// This hello with `serverName` in A-label form (`IDNA.asciiHost`: `bücher.test` →
    /// `xn--bcher-kva.test`); unchanged when the name is ASCII or absent. Throws IDNA's refusal.
    public func withASCIIServerName() throws(IDNARefusal) -> ClientHello {
        guard let name = serverName, IDNA.isInternational(name) else { return self }
        var converted = self
        converted.serverName = try IDNA.asciiHost(name)
        return converted
    }

    /// `serverName` lowercased (ASCII) with one trailing dot removed: the form to compare hosts
    /// and key certificate caches with (RFC 6066 §3 host names are case-insensitive and carry no
    /// trailing dot). Nil when there is no SNI or nothing remains.
    public var normalizedServerName: String? {
        guard var name = serverName?.lowercased() else { return nil }
        if name.hasSuffix(".") { name.removeLast() }
        return name.isEmpty ? nil : name
    }

    /// The ALPN identifiers decoded as UTF-8 (invalid bytes become U+FFFD), e.g. `["h2", "http/1.1"]`.
    /// Use `alpnProtocolIDs` to re-send them byte for byte.
    public var alpnProtocols: [String] {
        alpnProtocolIDs.map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether TLS 1.3 (`0x0304`) is in supported_versions (RFC 8446 §4.2.1).
    public var offersTLS13: Bool { supportedVersions.contains(TLSVersion.tls13) }
}

extension ClientHello {
    /// Decodes a complete handshake message (4-byte header then body) of type client_hello.
    ///
    /// Follows RFC 8446 §4.1.2 and §4.2: every vector must fit its container, the extensions block
    /// must end the message exactly, an extension type may appear once, pre_shared_key must be last.
    init(handshakeMessage: UnsafeBufferPointer<UInt8>) throws(WireFormatError) {
        let prefix = try HelloPrefix(handshakeMessage, hello: "ClientHello", sessionIDField: "legacy_session_id", section: "4.1.2")
        var body = prefix.body
        let length = prefix.bodyLength
        legacyVersion = prefix.legacyVersion
        random = prefix.random
        sessionIDLength = prefix.sessionIDLength

        var suites = try body.readVector16("the cipher_suites list")
        guard suites.remaining >= 2, suites.remaining % 2 == 0 else {
            throw WireFormatError("The cipher_suites list is \(suites.remaining) bytes long, but it must hold at least one 2-byte suite and an even number of bytes.")
        }
        var cipherSuites: [UInt16] = []
        cipherSuites.reserveCapacity(suites.remaining / 2)
        while !suites.isAtEnd { cipherSuites.append(try suites.readUInt16("a cipher suite")) }
        self.cipherSuites = cipherSuites

        let compression = try body.readVector8("the legacy_compression_methods list")
        guard compression.remaining >= 1 else {
            throw WireFormatError("The legacy_compression_methods list is empty, but it must hold at least one method.")
        }

        serverName = nil
        serverNameProblem = nil
        alpnProtocolIDs = []
        supportedVersions = []
        offersSessionTicket = false
        offersPreSharedKey = false
        keyShareGroups = []
        signatureAlgorithms = nil
        supportedGroups = nil
        extensionTypes = []
        handshakeLength = length + 4

        // A TLS 1.2 ClientHello may end right after the compression methods (RFC 5246 §7.4.1.2).
        guard var extensions = try HelloExtensions(&body, hello: "ClientHello") else { return }
        while let (type, found) = try extensions.next() {
            var data = found
            switch type {
            case TLSExtensionType.serverName:
                (serverName, serverNameProblem) = try Self.readServerName(&data)
            case TLSExtensionType.applicationLayerProtocolNegotiation:
                alpnProtocolIDs = try ALPNList.read(&data, exactlyOne: false)
            case TLSExtensionType.supportedVersions:
                supportedVersions = try Self.readCodeList(&data, "supported_versions", "version", rfc: nil, oneByteLength: true)
            case TLSExtensionType.keyShare:
                keyShareGroups = try Self.readKeyShareGroups(&data)
            case TLSExtensionType.signatureAlgorithms:
                signatureAlgorithms = try Self.readCodeList(&data, "signature_algorithms", "scheme", rfc: "RFC 8446 §4.2.3")
            case TLSExtensionType.supportedGroups:
                supportedGroups = try Self.readCodeList(&data, "supported_groups", "group", rfc: "RFC 8446 §4.2.7")
            case TLSExtensionType.sessionTicket:
                offersSessionTicket = true
            case TLSExtensionType.preSharedKey:
                offersPreSharedKey = true
            default:
                break
            }
        }
        extensionTypes = extensions.types
        if offersPreSharedKey, extensionTypes.last != TLSExtensionType.preSharedKey {
            throw WireFormatError("The pre_shared_key extension is not the last extension, which RFC 8446 §4.2.11 requires.")
        }
    }

    /// server_name (RFC 6066 §3): a non-empty list of (name_type, opaque name<1..2^16-1>); at most
    /// one host_name (type 0): printable ASCII, or valid UTF-8 without spaces or control bytes.
    /// - Returns: the name, or nil and why a host_name that was sent cannot be one (the list's
    ///   shape is still refused: those are the RFC's rules, not the name's).
    private static func readServerName(_ data: inout ByteCursor) throws(WireFormatError) -> (String?, String?) {
        var list = try data.readVector16("the server_name list")
        guard data.isAtEnd else {
            throw WireFormatError("The server_name list is followed by \(WireFormatError.count(data.remaining, "extra byte")) inside its extension.")
        }
        guard !list.isAtEnd else {
            throw WireFormatError("The server_name extension holds an empty list, which RFC 6066 §3 forbids.")
        }
        var hostName: String?
        var problem: String?
        var sawHostName = false
        while !list.isAtEnd {
            let nameType = try list.readUInt8("a server name type")
            let name = try list.readVector16("a server name")
            guard nameType == 0 else { continue }
            guard !sawHostName else {
                throw WireFormatError("The server_name extension holds two host_name entries, which RFC 6066 §3 forbids.")
            }
            sawHostName = true
            guard name.remaining > 0 else {
                throw WireFormatError("The server_name host_name is empty, which RFC 6066 §3 forbids.")
            }
            let bytes = name.remainingBuffer
            if let byte = bytes.first(where: { $0 < 0x21 || $0 == 0x7F }) {
                problem = "the server_name host_name contains byte 0x\(String(byte, radix: 16)), \(byte == 0x20 ? "a space" : "a control character")"
                continue
            }
            // RFC 6066 §3 asks for A-labels; UTF-8 U-labels are read here and converted (or
            // refused) with `IDNA.asciiHost` by whoever uses the name.
            guard let text = IDNA.utf8Text(bytes) else {
                problem = "the server_name host_name is neither ASCII nor valid UTF-8"
                continue
            }
            hostName = text
        }
        return (hostName, problem)
    }

    /// A list of 2-byte codes filling its extension: supported_versions in a ClientHello (RFC 8446
    /// §4.2.1: `ProtocolVersion versions<2..254>`, a 1-byte length), signature_algorithms
    /// (§4.2.3: `SignatureScheme supported_signature_algorithms<2..2^16-2>`) and supported_groups
    /// (§4.2.7: `NamedGroup named_group_list<2..2^16-1>`), both with a 2-byte length.
    /// - Throws: `WireFormatError` naming `name` when the list is empty, odd, or not alone.
    private static func readCodeList(_ data: inout ByteCursor, _ name: String, _ item: String, rfc: String?,
                                     oneByteLength: Bool = false) throws(WireFormatError) -> [UInt16] {
        var list = try oneByteLength ? data.readVector8("the \(name) list") : data.readVector16("the \(name) list")
        guard data.isAtEnd else {
            throw WireFormatError("The \(name) list is followed by \(WireFormatError.count(data.remaining, "extra byte")) inside its extension.")
        }
        guard list.remaining >= 2, list.remaining % 2 == 0 else {
            throw WireFormatError("The \(name) list is \(list.remaining) bytes long, but it must hold at least one 2-byte \(item) and an even number of bytes\(rfc.map { " (\($0))" } ?? "").")
        }
        var codes: [UInt16] = []
        codes.reserveCapacity(list.remaining / 2)
        while !list.isAtEnd { codes.append(try list.readUInt16("a \(item)")) }
        return codes
    }

    /// key_share in a ClientHello (RFC 8446 §4.2.8): `KeyShareEntry client_shares<0..2^16-1>`, each
    /// a group and a non-empty `key_exchange<1..2^16-1>`.
    private static func readKeyShareGroups(_ data: inout ByteCursor) throws(WireFormatError) -> [UInt16] {
        var shares = try data.readVector16("the client_shares list")
        guard data.isAtEnd else {
            throw WireFormatError("The client_shares list is followed by \(WireFormatError.count(data.remaining, "extra byte")) inside the key_share extension.")
        }
        var groups: [UInt16] = []
        while !shares.isAtEnd {
            let group = try shares.readUInt16("a key share group")
            let keyExchange = try shares.readVector16("the key_exchange of group 0x\(String(group, radix: 16))")
            guard keyExchange.remaining > 0 else {
                throw WireFormatError("The key share for group 0x\(String(group, radix: 16)) is empty, which RFC 8446 §4.2.8 forbids.")
            }
            groups.append(group)
        }
        return groups
    }
}
