import FlowTerms

/// One WebSocket message read from the turns after a 101 (RFC 6455 §5.4, §5.5): a whole text or
/// binary message (its fragments joined, inflated when permessage-deflate compressed it), or a
/// close, ping or pong frame.
public struct WebSocketMessage: Sendable, Equatable {
    /// Who sent it: `.clientToServer` is Chrome's HAR `send`.
    public var direction: Direction
    /// `text`, `binary`, `close`, `ping` or `pong` (never `continuation`: fragments are joined).
    public var opcode: WebSocketOpcode
    /// The turn its first frame starts in.
    public var turn: Int
    /// When that turn started: µs since the flow's first byte.
    public var offset: Int64
    /// The payload as the application sent it: unmasked, fragments joined, inflated. Text is
    /// UTF-8 (§5.6); a close frame's body is its 2-byte code and UTF-8 reason (§5.5.1).
    public var data: [UInt8]
    /// Bytes of payload on the wire (after compression, before unmasking), all frames.
    public var wireSize: Int
    /// permessage-deflate compressed it (RSV1 on its first frame, RFC 7692 §6).
    public var compressed: Bool
    /// One sentence when `data` is not the whole message (cut by a recording limit, not
    /// inflated, decoding stopped); nil when it is.
    public var cut: String?

    public init(direction: Direction, opcode: WebSocketOpcode, turn: Int, offset: Int64, data: [UInt8],
                wireSize: Int? = nil, compressed: Bool = false, cut: String? = nil) {
        self.direction = direction
        self.opcode = opcode
        self.turn = turn
        self.offset = offset
        self.data = data
        self.wireSize = wireSize ?? data.count
        self.compressed = compressed
        self.cut = cut
    }

    /// A close frame's status code (§7.4), nil when it has none or is not a close.
    public var closeCode: UInt16? {
        guard opcode == .close, data.count >= 2 else { return nil }
        return UInt16(data[0]) << 8 | UInt16(data[1])
    }

    /// A close frame's reason (§5.5.1), empty when it has none.
    public var closeReason: String {
        guard opcode == .close, data.count > 2 else { return "" }
        return String(decoding: data[2...], as: UTF8.self)
    }

    /// A text message's text (invalid UTF-8 replaced with U+FFFD), nil for other opcodes.
    public var text: String? {
        opcode == .text ? String(decoding: data, as: UTF8.self) : nil
    }
}

/// The WebSocket messages of a connection that switched to WebSocket with a 101 (RFC 6455 §4),
/// both directions in the order of their turns, and where reading a side stopped and why.
public struct WebSocketConversation: Sendable, Equatable {
    /// permessage-deflate as the 101 accepted it, nil when it did not.
    public var deflate: PerMessageDeflate?
    /// The messages, in the order their turns came (each side's own in the order sent).
    public var messages: [WebSocketMessage]
    /// Where reading a side stopped before the recording did, or where the recording stopped
    /// it, one sentence each.
    public var problems: [HTTPConversation.ReadingProblem]
    /// Things said about the reading that are not stops (reading resumed after a cut turn).
    public var notes: [String]

    public init(deflate: PerMessageDeflate? = nil, messages: [WebSocketMessage] = [],
                problems: [HTTPConversation.ReadingProblem] = [], notes: [String] = []) {
        self.deflate = deflate
        self.messages = messages
        self.problems = problems
        self.notes = notes
    }
}
