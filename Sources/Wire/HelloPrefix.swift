/// The opening fields a ClientHello and a ServerHello share, read from a complete handshake
/// message: the 4-byte handshake header, then legacy_version (2 bytes), random (32 bytes) and the
/// legacy session id (a vector of at most 32 bytes) (RFC 8446 §4.1.2 and §4.1.3; RFC 5246
/// §7.4.1.2 and §7.4.1.3 for TLS 1.2). `body` is left just after the session id.
struct HelloPrefix {
    /// The rest of the message body, after the session id.
    var body: ByteCursor
    /// The body's length from the handshake header, in bytes (the message is 4 bytes longer).
    let bodyLength: Int
    let legacyVersion: UInt16
    /// 32 bytes.
    let random: [UInt8]
    /// 0–32 bytes.
    let sessionIDLength: Int

    /// - Parameters:
    ///   - message: the whole handshake message (header and body).
    ///   - hello: "ClientHello" or "ServerHello", for error sentences.
    ///   - sessionIDField: the session id's name in the RFC ("legacy_session_id" in a
    ///     ClientHello, "legacy_session_id_echo" in a ServerHello).
    ///   - section: the RFC 8446 section that bounds it ("4.1.2" or "4.1.3").
    /// - Throws: `WireFormatError` when a field does not fit or the session id is over 32 bytes.
    init(_ message: UnsafeBufferPointer<UInt8>, hello: String, sessionIDField: String, section: String) throws(WireFormatError) {
        var cursor = ByteCursor(message)
        _ = try cursor.readUInt8("the handshake type")
        bodyLength = try cursor.readUInt24("the handshake length")
        body = try cursor.subCursor(bodyLength, "the \(hello) body")
        legacyVersion = try body.readUInt16("the legacy_version")
        random = try body.readBytes(32, "the random")
        let sessionID = try body.readVector8("the \(sessionIDField)")
        guard sessionID.remaining <= 32 else {
            throw WireFormatError("The \(sessionIDField) is \(sessionID.remaining) bytes long, more than the 32 RFC 8446 §\(section) allows.")
        }
        sessionIDLength = sessionID.remaining
    }
}

/// The extensions block that ends a ClientHello or a ServerHello (RFC 8446 §4.1.2, §4.1.3, §4.2),
/// read one extension at a time; each type may appear once (RFC 8446 §4.2).
struct HelloExtensions {
    private var block: ByteCursor
    /// The extension types read so far, in wire order.
    private(set) var types: [UInt16] = []

    /// Reads the block from `body`, which must end with it; nil when `body` is already at its end
    /// (a TLS 1.2 hello may end after its compression method(s), RFC 5246 §7.4.1.2, §7.4.1.3).
    /// - Parameter hello: "ClientHello" or "ServerHello", for error sentences.
    /// - Throws: `WireFormatError` when the block does not fit or bytes follow it.
    init?(_ body: inout ByteCursor, hello: String) throws(WireFormatError) {
        guard !body.isAtEnd else { return nil }
        block = try body.readVector16("the extensions block")
        guard body.isAtEnd else {
            throw WireFormatError("The extensions block is followed by \(WireFormatError.count(body.remaining, "extra byte")) inside the \(hello).")
        }
    }

    /// The next extension's type and data, nil at the end of the block.
    /// - Throws: `WireFormatError` when an extension does not fit or its type appeared before.
    mutating func next() throws(WireFormatError) -> (type: UInt16, data: ByteCursor)? {
        guard !block.isAtEnd else { return nil }
        let type = try block.readUInt16("an extension type")
        let data = try block.readVector16("the \(TLSExtensionType.describe(type)) extension")
        if types.contains(type) {
            throw WireFormatError("The \(TLSExtensionType.describe(type)) extension appears twice, which RFC 8446 §4.2 forbids.")
        }
        types.append(type)
        return (type, data)
    }
}
