/// One packet at the start of a UDP datagram from a QUIC client, as far as its header can be read
/// without keys (RFC 9000 §17.2, RFC 8999 §5.1). Header protection still covers the low bits of
/// the first byte and the packet number; `QUICLongHeaderParser` only finds where they are.
public enum QUICPacketStart: Sendable, Hashable {
    /// An Initial packet of a known version.
    case initial(QUICInitialHeader)
    /// Another long-header packet of a known version (0-RTT, Handshake) whose Length field gives
    /// its size: `length` bytes from the datagram's start, header included.
    case otherLongHeader(version: QUICVersion, length: Int)
    /// A packet that runs to the end of the datagram and that tv does not read: a short header
    /// (1-RTT), a Retry, or a long header of an unknown version (RFC 8999 §5.1: only its
    /// connection IDs are version independent).
    case unread
}

/// The clear part of an Initial packet's long header (RFC 9000 §17.2.2).
public struct QUICInitialHeader: Sendable, Hashable {
    /// v1 or v2 (the Initial keys and type bits depend on it).
    public var version: QUICVersion
    /// Destination Connection ID, 0…20 bytes: the client's first Initial's one keys the Initial
    /// secrets (RFC 9001 §5.2).
    public var destinationConnectionID: [UInt8]
    /// Source Connection ID, 0…20 bytes.
    public var sourceConnectionID: [UInt8]
    /// Bytes of the Token field (non-zero after a Retry or with a NEW_TOKEN token).
    public var tokenLength: Int
    /// Offset of the (protected) Packet Number field from the packet's first byte.
    public var packetNumberOffset: Int
    /// The whole packet's size in the datagram: header, packet number and protected payload
    /// (its AEAD tag included), i.e. `packetNumberOffset` + the Length field.
    public var packetLength: Int

    /// The header's fields as parsed (for tests and tools).
    public init(version: QUICVersion, destinationConnectionID: [UInt8], sourceConnectionID: [UInt8], tokenLength: Int,
                packetNumberOffset: Int, packetLength: Int) {
        self.version = version
        self.destinationConnectionID = destinationConnectionID
        self.sourceConnectionID = sourceConnectionID
        self.tokenLength = tokenLength
        self.packetNumberOffset = packetNumberOffset
        self.packetLength = packetLength
    }
}

/// Reads the header of the packet at the start of a client datagram (RFC 9000 §17.2, §12.2:
/// several packets may be coalesced in one datagram, each long header sized by its Length).
public enum QUICLongHeaderParser {
    /// The longest connection ID versions 1 and 2 allow (RFC 9000 §17.2).
    public static let maximumConnectionIDLength = 20

    /// Whether `datagram` starts like a client's QUIC Initial: the long-header and fixed bits set,
    /// a known version, the Initial packet type, and at least the 1,200 bytes a client's Initial
    /// datagram must have (RFC 9000 §14.1). A quick look, for deciding whether to read a flow.
    public static func looksLikeClientInitial(_ datagram: UnsafeRawBufferPointer) -> Bool {
        guard datagram.count >= 1_200, datagram[0] & 0xC0 == 0xC0 else { return false }
        let version = QUICVersion(rawValue: UInt32(datagram[1]) << 24 | UInt32(datagram[2]) << 16 | UInt32(datagram[3]) << 8 | UInt32(datagram[4]))
        return version.isKnown && (datagram[0] >> 4) & 0b11 == version.initialType
    }

    /// The packet at the start of `bytes` (the rest of a datagram).
    /// - Throws: `WireFormatError` (one sentence naming the RFC section) when a known version's
    ///   long header is cut short, a connection ID is longer than 20 bytes, or the Length field
    ///   runs past the datagram.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(WireFormatError) -> QUICPacketStart {
        var cursor = ByteCursor(bytes.assumingMemoryBound(to: UInt8.self))
        let first = try cursor.readUInt8("the first byte of a QUIC packet")
        guard first & 0x80 != 0 else { return .unread }  // short header: to the datagram's end
        let raw = UInt32(try cursor.readUInt16("the QUIC version")) << 16 | UInt32(try cursor.readUInt16("the QUIC version"))
        let version = QUICVersion(rawValue: raw)
        guard version.isKnown else { return .unread }
        guard first & 0x40 != 0 else {
            throw WireFormatError("The fixed bit of a QUIC \(version) long header is 0, which RFC 9000 §17.2 forbids.")
        }
        let destination = try connectionID(&cursor, "Destination")
        let source = try connectionID(&cursor, "Source")
        let type = (first >> 4) & 0b11
        if type == version.retryType { return .unread }
        var tokenLength = 0
        if type == version.initialType {
            let declared = try cursor.readQUICVarint("the Token Length of a QUIC Initial")
            guard declared <= UInt64(cursor.remaining) else {
                throw WireFormatError("The Token of a QUIC Initial declares \(declared) bytes but only \(cursor.remaining) remain in the datagram (RFC 9000 §17.2.2).")
            }
            tokenLength = Int(declared)
            try cursor.skip(tokenLength, "the Token of a QUIC Initial")
        }
        let length = try cursor.readQUICVarint("the Length of a QUIC long header")
        guard length <= UInt64(cursor.remaining) else {
            throw WireFormatError("A QUIC \(version) long header's Length is \(length) bytes but only \(cursor.remaining) remain in the datagram (RFC 9000 §17.2).")
        }
        let total = cursor.position + Int(length)
        guard type == version.initialType else { return .otherLongHeader(version: version, length: total) }
        return .initial(QUICInitialHeader(version: version, destinationConnectionID: destination, sourceConnectionID: source,
                                          tokenLength: tokenLength, packetNumberOffset: cursor.position, packetLength: total))
    }

    private static func connectionID(_ cursor: inout ByteCursor, _ which: String) throws(WireFormatError) -> [UInt8] {
        let length = Int(try cursor.readUInt8("the \(which) Connection ID Length"))
        guard length <= maximumConnectionIDLength else {
            throw WireFormatError("The \(which) Connection ID is \(length) bytes long, more than the 20 RFC 9000 §17.2 allows.")
        }
        return try cursor.readBytes(length, "the \(which) Connection ID")
    }
}
