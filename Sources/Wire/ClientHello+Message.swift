extension ClientHello {
    /// The `encrypted_client_hello` extension (draft-ietf-tls-esni §5, code point 0xfe0d): a
    /// client with ECH sends the real ClientHello encrypted inside it, under an outer one whose
    /// server_name is the public name. Browsers also send it as GREASE (§6.2) without ECH.
    public static let encryptedClientHelloExtension: UInt16 = 0xFE0D

    /// Reads a ClientHello that arrives as a bare handshake message (4-byte header then body,
    /// no TLS record layer), as QUIC's CRYPTO frames carry it (RFC 9001 §4).
    /// - Throws: `WireFormatError` when the message is not a well-formed ClientHello (RFC 8446
    ///   §4.1.2).
    public init(message: [UInt8]) throws(WireFormatError) {
        guard message.count >= 4, message[0] == 1 else {
            throw WireFormatError("The handshake message is not a ClientHello (RFC 8446 §4).")
        }
        let declared = Int(message[1]) << 16 | Int(message[2]) << 8 | Int(message[3])
        guard declared == message.count - 4 else {
            throw WireFormatError("The ClientHello declares \(declared) bytes but \(message.count - 4) were given (RFC 8446 §4).")
        }
        self = try message.withUnsafeBufferPointer { buffer throws(WireFormatError) in try ClientHello(handshakeMessage: buffer) }
    }

    /// Whether the hello carries an `encrypted_client_hello` extension: its server_name is then
    /// the outer (public) name of an ECH handshake, or the real one if the extension is GREASE.
    public var carriesEncryptedClientHello: Bool { extensionTypes.contains(Self.encryptedClientHelloExtension) }
}
