/// The facts a proxy needs from the server's first handshake message, a ServerHello or a
/// HelloRetryRequest (RFC 8446 §4.1.3, §4.1.4; TLS 1.2: RFC 5246 §7.4.1.3). Produced by
/// `ServerHelloParser`.
public struct ServerHello: Sendable, Hashable {
    /// The `random` that marks a HelloRetryRequest: SHA-256 of "HelloRetryRequest"
    /// (RFC 8446 §4.1.3), 32 bytes.
    public static let helloRetryRequestRandom: [UInt8] = [
        0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
        0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
    ]

    /// `legacy_version`: the negotiated version up to TLS 1.2; `0x0303` in TLS 1.3 (RFC 8446 §4.1.3).
    public var legacyVersion: UInt16
    /// The 32-byte server `random`.
    public var random: [UInt8]
    /// Length in bytes of the echoed `legacy_session_id`, 0...32.
    public var sessionIDLength: Int
    /// The selected `cipher_suite`, e.g. `0x1302` (TLS_AES_256_GCM_SHA384).
    public var cipherSuite: UInt16
    /// `legacy_compression_method`, 0 in every sane handshake.
    public var compressionMethod: UInt8
    /// `selected_version` from supported_versions (type 43, RFC 8446 §4.2.1), present in TLS 1.3
    /// (`0x0304`); nil when the server did not send the extension (TLS 1.2 and older).
    public var selectedVersion: UInt16?
    /// The one protocol the server selected through ALPN (type 16, RFC 7301 §3.1), as raw bytes.
    /// Only TLS 1.2 servers send it here; TLS 1.3 moves it to the encrypted EncryptedExtensions.
    public var alpnProtocolID: [UInt8]?
    /// The key_share group (type 51, RFC 8446 §4.2.8): the server's share in a ServerHello, the
    /// `selected_group` the client must retry with in a HelloRetryRequest; nil when absent.
    public var keyShareGroup: UInt16?
    /// Whether `random` is the HelloRetryRequest marker (RFC 8446 §4.1.3): the server wants a
    /// second ClientHello and this is not yet the real ServerHello.
    public var isHelloRetryRequest: Bool
    /// Every extension type in the order sent.
    public var extensionTypes: [UInt16]
    /// Size of the whole handshake message in bytes, its 4-byte header included.
    public var handshakeLength: Int

    /// Memberwise initialiser, for tests and for building values by hand.
    public init(
        legacyVersion: UInt16, random: [UInt8], sessionIDLength: Int, cipherSuite: UInt16,
        compressionMethod: UInt8, selectedVersion: UInt16?, alpnProtocolID: [UInt8]?,
        keyShareGroup: UInt16?, isHelloRetryRequest: Bool, extensionTypes: [UInt16], handshakeLength: Int
    ) {
        self.legacyVersion = legacyVersion
        self.random = random
        self.sessionIDLength = sessionIDLength
        self.cipherSuite = cipherSuite
        self.compressionMethod = compressionMethod
        self.selectedVersion = selectedVersion
        self.alpnProtocolID = alpnProtocolID
        self.keyShareGroup = keyShareGroup
        self.isHelloRetryRequest = isHelloRetryRequest
        self.extensionTypes = extensionTypes
        self.handshakeLength = handshakeLength
    }

    /// The version the server chose: `selectedVersion` when present, else `legacyVersion`
    /// (RFC 8446 §4.2.1).
    public var negotiatedVersion: UInt16 { selectedVersion ?? legacyVersion }

    /// `alpnProtocolID` decoded as UTF-8 (invalid bytes become U+FFFD), e.g. "h2".
    public var alpnProtocol: String? { alpnProtocolID.map { String(decoding: $0, as: UTF8.self) } }
}

extension ServerHello {
    /// Decodes a complete handshake message (4-byte header then body) of type server_hello.
    ///
    /// Every vector must fit its container, the extensions block must end the message exactly and
    /// an extension type may appear once (RFC 8446 §4.1.3, §4.2).
    init(handshakeMessage: UnsafeBufferPointer<UInt8>) throws(WireFormatError) {
        let prefix = try HelloPrefix(handshakeMessage, hello: "ServerHello", sessionIDField: "legacy_session_id_echo", section: "4.1.3")
        var body = prefix.body
        let length = prefix.bodyLength
        legacyVersion = prefix.legacyVersion
        random = prefix.random
        sessionIDLength = prefix.sessionIDLength
        cipherSuite = try body.readUInt16("the cipher_suite")
        compressionMethod = try body.readUInt8("the legacy_compression_method")
        isHelloRetryRequest = random == Self.helloRetryRequestRandom
        selectedVersion = nil
        alpnProtocolID = nil
        keyShareGroup = nil
        extensionTypes = []
        handshakeLength = length + 4

        // A TLS 1.2 ServerHello may end right after the compression method (RFC 5246 §7.4.1.3).
        guard var extensions = try HelloExtensions(&body, hello: "ServerHello") else { return }
        while let (type, found) = try extensions.next() {
            var data = found
            switch type {
            case TLSExtensionType.supportedVersions:
                // ServerHello form: a single ProtocolVersion selected_version (RFC 8446 §4.2.1).
                guard data.remaining == 2 else {
                    throw WireFormatError("The server's supported_versions extension is \(data.remaining) bytes long, but it must hold exactly one 2-byte version.")
                }
                selectedVersion = try data.readUInt16("the selected_version")
            case TLSExtensionType.applicationLayerProtocolNegotiation:
                alpnProtocolID = try ALPNList.read(&data, exactlyOne: true).first
            case TLSExtensionType.keyShare:
                keyShareGroup = try data.readUInt16("the key_share group")
                if isHelloRetryRequest {
                    // KeyShareHelloRetryRequest: just selected_group (RFC 8446 §4.2.8).
                    guard data.isAtEnd else {
                        throw WireFormatError("The HelloRetryRequest key_share holds \(data.remaining) bytes after selected_group, but it must hold only the group.")
                    }
                } else {
                    let keyExchange = try data.readVector16("the server key_exchange")
                    guard keyExchange.remaining > 0, data.isAtEnd else {
                        throw WireFormatError("The server key_share must hold one group and a non-empty key_exchange and nothing else (RFC 8446 §4.2.8).")
                    }
                }
            default:
                break
            }
        }
        extensionTypes = extensions.types
    }
}
