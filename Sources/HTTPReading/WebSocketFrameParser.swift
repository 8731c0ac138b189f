/// Reads one WebSocket frame (RFC 6455 §5.2) at a position in a side's bytes. Pure and bounded:
/// nothing is copied until the whole frame is there, whatever length its header declares (a
/// 64-bit length is only compared with the bytes at hand), and a cut frame's kept payload is
/// handed out unmasked for the reader to show as cut.
enum WebSocketFrameParser {
    /// What is at the position.
    enum Result: Equatable {
        /// A whole frame, and where the next one starts.
        case frame(WebSocketFrame, next: Int)
        /// The bytes end inside a frame. `header` is the frame's when it was all there, with the
        /// payload bytes kept (unmasked); `expected` is the payload length it declared.
        case needsMore(header: WebSocketFrame?, expected: Int?)
        /// The bytes are not a frame here.
        case malformed(WebSocketFrameError)
    }

    /// Reads the frame starting at `start` in `bytes[..<end]`.
    /// - Parameters:
    ///   - fromClient: the frames are the client's: each must be masked, the server's none (§5.1).
    ///   - rsv1Allowed: permessage-deflate was negotiated, so RSV1 marks a compressed message
    ///     (RFC 7692 §6); otherwise any RSV bit is an error.
    static func parse(_ bytes: [UInt8], at start: Int, end: Int, fromClient: Bool, rsv1Allowed: Bool) -> Result {
        guard end - start >= 2 else { return .needsMore(header: nil, expected: nil) }
        let first = bytes[start], second = bytes[start + 1]
        let rsv = first & 0x70
        if rsv & 0x30 != 0 || (rsv & 0x40 != 0 && !rsv1Allowed) { return .malformed(.reservedBits(rsv)) }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else { return .malformed(.reservedOpcode(first & 0x0F)) }
        let fin = first & 0x80 != 0
        let masked = second & 0x80 != 0
        if fromClient && !masked { return .malformed(.clientFrameUnmasked) }
        if !fromClient && masked { return .malformed(.serverFrameMasked) }
        var at = start + 2
        var length = Int(second & 0x7F)
        if length == 126 {
            guard end - at >= 2 else { return .needsMore(header: nil, expected: nil) }
            length = Int(bytes[at]) << 8 | Int(bytes[at + 1])
            at += 2
        } else if length == 127 {
            guard end - at >= 8 else { return .needsMore(header: nil, expected: nil) }
            if bytes[at] & 0x80 != 0 { return .malformed(.lengthTooLarge) }
            var value: UInt64 = 0
            for index in 0..<8 { value = value << 8 | UInt64(bytes[at + index]) }
            // Larger than any kept stream can hold: the frame can only be cut here.
            length = value > UInt64(Int.max / 2) ? Int.max / 2 : Int(value)
            at += 8
        }
        if opcode.isControl {
            if length > 125 { return .malformed(.controlTooLong(length)) }
            if !fin { return .malformed(.controlFragmented(opcode)) }
        }
        var key: [UInt8] = []
        if masked {
            guard end - at >= 4 else { return .needsMore(header: nil, expected: length) }
            key = Array(bytes[at..<(at + 4)])
            at += 4
        }
        let available = min(length, end - at)
        var payload = Array(bytes[at..<(at + available)])
        if masked {
            // §5.3: octet i is XORed with key octet i mod 4.
            for index in payload.indices { payload[index] ^= key[index & 3] }
        }
        let frame = WebSocketFrame(fin: fin, rsv1: rsv & 0x40 != 0, opcode: opcode, masked: masked, payload: payload)
        guard available == length else { return .needsMore(header: frame, expected: length) }
        return .frame(frame, next: at + length)
    }
}
