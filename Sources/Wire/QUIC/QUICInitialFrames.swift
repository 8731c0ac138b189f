/// A CRYPTO frame (RFC 9000 §19.6): `data` belongs at `offset` of its encryption level's stream.
public struct QUICCryptoFrame: Sendable, Hashable {
    /// Byte offset of `data` in the stream of its encryption level.
    public var offset: UInt64
    /// The stream bytes the frame carries.
    public var data: [UInt8]

    /// A frame carrying `data` at `offset`.
    public init(offset: UInt64, data: [UInt8]) {
        self.offset = offset
        self.data = data
    }
}

/// The frames of a decrypted Initial packet's payload (RFC 9000 §12.4 lists what an Initial may
/// carry: PADDING, PING, ACK, CRYPTO, CONNECTION_CLOSE of type 0x1c). Only the CRYPTO frames are
/// kept; the others are walked over.
public enum QUICInitialFrames {
    /// The CRYPTO frames of `payload`, in the order sent.
    /// - Throws: `WireFormatError` naming the RFC section when a frame is cut short, a CRYPTO
    ///   frame reaches past 2^62 − 1, or a frame type is not allowed in an Initial packet.
    public static func cryptoFrames(in payload: UnsafeRawBufferPointer) throws(WireFormatError) -> [QUICCryptoFrame] {
        var cursor = ByteCursor(payload.assumingMemoryBound(to: UInt8.self))
        var out: [QUICCryptoFrame] = []
        while !cursor.isAtEnd {
            let type = try cursor.readQUICVarint("a frame type")
            switch type {
            case 0x00, 0x01:  // PADDING (§19.1), PING (§19.2)
                continue
            case 0x02, 0x03:  // ACK (§19.3)
                _ = try cursor.readQUICVarint("the Largest Acknowledged of an ACK frame")
                _ = try cursor.readQUICVarint("the ACK Delay of an ACK frame")
                let ranges = try cursor.readQUICVarint("the ACK Range Count of an ACK frame")
                _ = try cursor.readQUICVarint("the First ACK Range of an ACK frame")
                // Each range takes at least 2 bytes: a count past what remains is malformed.
                guard ranges <= UInt64(cursor.remaining / 2) else {
                    throw WireFormatError("An ACK frame declares \(ranges) ranges, more than its \(cursor.remaining) remaining bytes can hold (RFC 9000 §19.3).")
                }
                for _ in 0..<ranges {
                    _ = try cursor.readQUICVarint("the Gap of an ACK range")
                    _ = try cursor.readQUICVarint("the ACK Range Length of an ACK range")
                }
                if type == 0x03 {
                    for field in ["ECT0", "ECT1", "ECN-CE"] { _ = try cursor.readQUICVarint("the \(field) Count of an ACK frame") }
                }
            case 0x06:  // CRYPTO (§19.6)
                let offset = try cursor.readQUICVarint("the Offset of a CRYPTO frame")
                let length = try cursor.readQUICVarint("the Length of a CRYPTO frame")
                guard length <= UInt64(cursor.remaining) else {
                    throw WireFormatError("A CRYPTO frame declares \(length) bytes but only \(cursor.remaining) remain in the packet (RFC 9000 §19.6).")
                }
                guard offset + length <= QUICVarint.maximum else {
                    throw WireFormatError("A CRYPTO frame reaches past offset 2^62 − 1, which RFC 9000 §19.6 forbids.")
                }
                out.append(QUICCryptoFrame(offset: offset, data: try cursor.readBytes(Int(length), "the data of a CRYPTO frame")))
            case 0x1C:  // CONNECTION_CLOSE (§19.19)
                _ = try cursor.readQUICVarint("the Error Code of a CONNECTION_CLOSE frame")
                _ = try cursor.readQUICVarint("the Frame Type of a CONNECTION_CLOSE frame")
                let reason = try cursor.readQUICVarint("the Reason Phrase Length of a CONNECTION_CLOSE frame")
                guard reason <= UInt64(cursor.remaining) else {
                    throw WireFormatError("A CONNECTION_CLOSE frame's reason declares \(reason) bytes but only \(cursor.remaining) remain (RFC 9000 §19.19).")
                }
                try cursor.skip(Int(reason), "the Reason Phrase of a CONNECTION_CLOSE frame")
            default:
                throw WireFormatError("An Initial packet carries a frame of type 0x\(String(type, radix: 16)), which RFC 9000 §12.4 does not allow there.")
            }
        }
        return out
    }
}
