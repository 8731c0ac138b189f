/// A WebSocket frame's opcode (RFC 6455 §5.2, §11.8): 0x0 continuation, 0x1 text, 0x2 binary,
/// 0x8 close, 0x9 ping, 0xA pong; the others are reserved and end reading (`WebSocketFrameError`).
public enum WebSocketOpcode: UInt8, Sendable, Equatable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Close, ping and pong (the opcode's high bit set, §5.5).
    public var isControl: Bool { rawValue & 0x08 != 0 }

    /// `text`, `binary`, `close`, `ping`, `pong`, `continuation`: the word the views and JSON use.
    public var name: String {
        switch self {
        case .continuation: return "continuation"
        case .text: return "text"
        case .binary: return "binary"
        case .close: return "close"
        case .ping: return "ping"
        case .pong: return "pong"
        }
    }
}

/// One frame read from a side's bytes (RFC 6455 §5.2), its payload already unmasked.
struct WebSocketFrame: Equatable {
    var fin: Bool
    /// RSV1: with permessage-deflate, the first frame of a compressed message (RFC 7692 §6).
    var rsv1: Bool
    var opcode: WebSocketOpcode
    /// Whether the frame carried a masking key (every client frame must, no server frame may: §5.1).
    var masked: Bool
    /// The payload, unmasked (§5.3).
    var payload: [UInt8]
}

/// Why bytes are not a WebSocket frame, or break the rules of the frames around them: each kind
/// renders one sentence naming the RFC section it breaks (`sentence`).
enum WebSocketFrameError: Error, Equatable {
    /// RSV2 or RSV3 set, or RSV1 where no extension gave it a meaning (RFC 6455 §5.2; RFC 7692 §6).
    case reservedBits(UInt8)
    /// An opcode §5.2 reserves (0x3–0x7, 0xB–0xF).
    case reservedOpcode(UInt8)
    /// A 64-bit payload length with its most significant bit set (§5.2).
    case lengthTooLarge
    /// A control frame with more than 125 payload bytes (§5.5).
    case controlTooLong(Int)
    /// A control frame without FIN (§5.5).
    case controlFragmented(WebSocketOpcode)
    /// A frame from the client without a masking key (§5.1).
    case clientFrameUnmasked
    /// A frame from the server with a masking key (§5.1).
    case serverFrameMasked
    /// A continuation frame with no fragmented message begun (§5.4).
    case continuationWithoutStart
    /// A text or binary frame while a fragmented message was still going on (§5.4).
    case messageInsideFragmented(WebSocketOpcode)
    /// A close frame with a one-byte payload (§5.5.1: the body is empty or starts with a 2-byte code).
    case closeBodyOneByte

    /// One sentence, ending with a full stop.
    var sentence: String {
        switch self {
        case let .reservedBits(bits):
            return "The frame sets reserved bits (RSV \(bits >> 4 & 0x7)) that no negotiated extension defines (RFC 6455 §5.2, RFC 7692 §6)."
        case let .reservedOpcode(code):
            return "The frame's opcode 0x\(String(code, radix: 16, uppercase: true)) is reserved (RFC 6455 §5.2)."
        case .lengthTooLarge:
            return "The frame's 64-bit payload length has its most significant bit set (RFC 6455 §5.2)."
        case let .controlTooLong(length):
            return "A control frame carries \(length) payload bytes, more than the 125 allowed (RFC 6455 §5.5)."
        case let .controlFragmented(opcode):
            return "A \(opcode.name) frame is fragmented (FIN clear), which control frames may not be (RFC 6455 §5.5)."
        case .clientFrameUnmasked:
            return "A frame from the client is not masked, which every client frame must be (RFC 6455 §5.1)."
        case .serverFrameMasked:
            return "A frame from the server is masked, which no server frame may be (RFC 6455 §5.1)."
        case .continuationWithoutStart:
            return "A continuation frame comes without a fragmented message begun (RFC 6455 §5.4)."
        case let .messageInsideFragmented(opcode):
            return "A \(opcode.name) frame starts a new message while a fragmented one is not finished (RFC 6455 §5.4)."
        case .closeBodyOneByte:
            return "A close frame carries one byte, where its body is empty or starts with a 2-byte status code (RFC 6455 §5.5.1)."
        }
    }
}
