import FlowTerms
import TVHome

/// Reads the bytes after a 101 that switched to WebSocket (RFC 6455 §4.2.2) as frames, side by
/// side: the client's from where its request ended, the server's from where the 101 ended.
///
/// Each side is one `Side`: frames read in turn (`WebSocketFrameParser`), client frames
/// unmasked, fragments joined into messages up to `messageCap` bytes (§5.4), control frames
/// handed out as they come (§5.5), and compressed messages inflated (`WebSocketInflater`) within
/// one `DecodingBudget` for the connection: a message inflates to at most its rule's limit (1,000
/// times its compressed size, at least 64 KiB, at most 16 MiB), the connection to 64 MiB.
///
/// A side stops at the first thing that is not a frame (said with the RFC section it breaks),
/// where its recording stopped (the flow budget, lost bytes), or at the end. A turn the turn limit
/// cut ends the message it was in (said cut) and reading resumes at the side's next turn kept —
/// a sender's next write, after the other side spoke, starts a frame — where, with context
/// takeover, compressed messages can no longer be inflated: the window went with the cut bytes.
enum WebSocketReader {
    /// The most payload bytes one message keeps before inflating (a message is cut there).
    static let messageCap = 16 * 1_048_576

    /// Reads `client` from `clientStart` and `server` from `serverStart`.
    static func read(client: SideStream, from clientStart: Int, server: SideStream, from serverStart: Int,
                     deflate: PerMessageDeflate?, budget: DecodingBudget = .standard) -> WebSocketConversation {
        var conversation = WebSocketConversation(deflate: deflate)
        var budget = budget
        var items: [(turn: Int, side: Int, index: Int, message: WebSocketMessage)] = []
        for (number, (stream, start)) in [(client, clientStart), (server, serverStart)].enumerated() {
            var side = Side(stream: stream, position: start, deflate: deflate)
            side.read(budget: &budget, into: &conversation)
            items += side.messages.enumerated().map { (turn: $0.element.turn, side: number, index: $0.offset, message: $0.element) }
        }
        // Turn numbers run across both sides in time order; within a turn, one side's order.
        items.sort { ($0.turn, $0.side, $0.index) < ($1.turn, $1.side, $1.index) }
        conversation.messages = items.map(\.message)
        return conversation
    }

    /// A message whose frames are being joined.
    private struct Pending {
        var opcode: WebSocketOpcode
        var compressed: Bool
        var payload: [UInt8]
        var wireSize: Int
        var turn: Int
        var offset: Int64
        /// Bytes past `messageCap` were left out.
        var overCap = false
    }

    private struct Side {
        let stream: SideStream
        var position: Int
        let deflate: PerMessageDeflate?
        let fromClient: Bool
        var messages: [WebSocketMessage] = []
        var pending: Pending?
        var inflater: WebSocketInflater?
        /// Why compressed messages of this side can no longer be inflated, once they cannot.
        var inflaterLost: String?

        init(stream: SideStream, position: Int, deflate: PerMessageDeflate?) {
            self.stream = stream
            self.position = position
            self.deflate = deflate
            fromClient = stream.direction == .clientToServer
            if let deflate { inflater = WebSocketInflater(resetsPerMessage: deflate.noContextTakeover(fromClient: fromClient)) }
        }

        var who: String { fromClient ? "client" : "server" }

        mutating func read(budget: inout DecodingBudget, into conversation: inout WebSocketConversation) {
            let bytes = stream.bytes
            while position < bytes.count {
                let segment = stream.segment(at: position)
                let result = WebSocketFrameParser.parse(bytes, at: position, end: segment.end, fromClient: fromClient,
                                                        rsv1Allowed: deflate != nil)
                switch result {
                case let .frame(frame, next):
                    if let error = take(frame, at: position, budget: &budget) {
                        stop(at: position, error.sentence + " Reading the \(who)'s frames stops here.", into: &conversation)
                        return
                    }
                    position = next
                    if let cut = segment.cut, position == cut.end, position < bytes.count {
                        resume(after: cut, budget: &budget, into: &conversation)
                    }
                case let .needsMore(header, expected):
                    guard let cut = segment.cut, cut.end < bytes.count else {
                        // The stream ends inside this frame.
                        endInside(header, expected: expected, at: position, turnCut: segment.cut?.turn, budget: &budget, into: &conversation)
                        return
                    }
                    if let header {
                        _ = take(header, at: position, budget: &budget, cutBy: cutSentence(cut.turn))
                    }
                    position = cut.end
                    resume(after: cut, budget: &budget, into: &conversation)
                case let .malformed(error):
                    stop(at: position, "The bytes here are not a WebSocket frame: " + error.sentence
                         + " Reading the \(who)'s frames stops here.", into: &conversation)
                    return
                }
            }
            endOfStream(budget: &budget, into: &conversation)
        }

        /// "Cut: turn N kept at most 64 KiB." for a message the turn limit cut.
        func cutSentence(_ turn: Int) -> String {
            "Cut: turn \(turn) kept at most 64 KiB, and the rest of this message was not kept."
        }

        /// After a turn the turn limit cut: a message still being joined was cut, and with
        /// context takeover the window is lost (the cut bytes fed it).
        mutating func resume(after cut: SideStream.TurnCut, budget: inout DecodingBudget, into conversation: inout WebSocketConversation) {
            if pending != nil { finish(cut: cutSentence(cut.turn), budget: &budget) }
            if let deflate, !deflate.noContextTakeover(fromClient: fromClient), inflaterLost == nil {
                inflaterLost = "Not inflated: the \(who)'s turn \(cut.turn) was cut, and what it lost fed the compression window this message refers back to (RFC 7692 §7.2.2: context takeover)."
            }
            let next = stream.turn(at: cut.end).turn
            conversation.notes.append("The \(who)'s turn \(cut.turn) was cut at 64 KiB; reading its frames resumes at its next turn kept, \(next).")
        }

        /// Handles one whole frame (or a cut one's kept part, `cutBy` saying so); returns the
        /// error that ends reading, if the frame breaks the rules of those around it.
        mutating func take(_ frame: WebSocketFrame, at position: Int, budget: inout DecodingBudget, cutBy: String? = nil) -> WebSocketFrameError? {
            let (turn, offset) = stream.turn(at: position)
            let direction = stream.direction
            if frame.opcode.isControl {
                // RFC 7692 §6.1: control frames are never compressed.
                if frame.rsv1 { return .reservedBits(0x40) }
                if frame.opcode == .close && frame.payload.count == 1 && cutBy == nil { return .closeBodyOneByte }
                messages.append(WebSocketMessage(direction: direction, opcode: frame.opcode, turn: turn, offset: offset,
                                                 data: frame.payload, cut: cutBy))
                return nil
            }
            if frame.opcode == .continuation {
                guard pending != nil else { return .continuationWithoutStart }
                // RFC 7692 §6.1: RSV1 only on a message's first frame.
                if frame.rsv1 { return .reservedBits(0x40) }
            } else {
                if pending != nil { return .messageInsideFragmented(frame.opcode) }
                pending = Pending(opcode: frame.opcode, compressed: frame.rsv1, payload: [], wireSize: 0, turn: turn, offset: offset)
            }
            let room = max(0, messageCap - pending!.payload.count)
            pending!.payload += frame.payload.prefix(room)
            if frame.payload.count > room { pending!.overCap = true }
            pending!.wireSize += frame.payload.count
            if let cutBy {
                finish(cut: cutBy, budget: &budget)
            } else if frame.fin {
                finish(cut: nil, budget: &budget)
            }
            return nil
        }

        /// Hands out the pending message: inflated when compressed, with why it is not whole.
        mutating func finish(cut: String?, budget: inout DecodingBudget) {
            guard let message = pending else { return }
            pending = nil
            var cut = cut
            if message.overCap && cut == nil {
                cut = "Cut: tv keeps at most \(ByteWords.binary(Int64(WebSocketReader.messageCap))) of one message; \(ByteWords.bytes(message.wireSize)) came."
            }
            var data = message.payload
            if message.compressed {
                (data, cut) = inflate(message.payload, cut: cut, budget: &budget)
            }
            messages.append(WebSocketMessage(direction: stream.direction, opcode: message.opcode, turn: message.turn,
                                             offset: message.offset, data: data, wireSize: message.wireSize,
                                             compressed: message.compressed, cut: cut))
        }

        /// A compressed message's payload inflated, and why what comes out is not all of it.
        mutating func inflate(_ payload: [UInt8], cut: String?, budget: inout DecodingBudget) -> ([UInt8], String?) {
            if let inflaterLost { return ([], inflaterLost) }
            guard let inflater else {
                inflaterLost = "Not inflated: zlib could not start."
                return ([], inflaterLost)
            }
            let limit = budget.limit(kept: payload.count)
            let inflated = inflater.inflate(payload, whole: cut == nil, keep: limit.bytes, work: budget.remaining)
            budget.spend(inflated.decoded)
            let decodingCut = DecodingCut(limit: limit, codings: ["permessage-deflate"], kept: payload.count, budget: budget)
            switch inflated.outcome {
            case .complete:
                return (inflated.data, cut)
            case .keptPart:
                return (inflated.data, [cut, decodingCut.sentence].compactMap { $0 }.joined(separator: " "))
            case .workSpent:
                let spent = "this connection's messages decode to at most \(ByteWords.binary(Int64(budget.commandCap))) in all, and the window is lost from here on"
                inflaterLost = "Not inflated: \(spent)."
                return (inflated.data, "Inflating stopped: \(spent); shown: the first \(ByteWords.bytes(inflated.data.count)).")
            case let .failed(reason):
                inflaterLost = "Not inflated: an earlier message of the \(who) could not be inflated, and this one refers back to it."
                return (inflated.data, "Inflating failed (\(reason)) after \(ByteWords.bytes(inflated.data.count)); the message is not valid DEFLATE (RFC 7692 §7.2.2).")
            }
        }

        /// The stream ends inside a frame: what is kept of it, and why no more is.
        mutating func endInside(_ header: WebSocketFrame?, expected: Int?, at position: Int, turnCut: Int?,
                                budget: inout DecodingBudget, into conversation: inout WebSocketConversation) {
            let why: String
            switch stream.end {
            case .complete where turnCut != nil:
                why = "turn \(turnCut!) kept at most 64 KiB, and the side's recording ends there."
            case let .cut(turn): why = "the recording budget stopped the \(who)'s side in turn \(turn)."
            case let .gap(turn): why = "the \(who)'s turn \(turn) lost bytes while recording (the recording queue was full), and nothing after it is read."
            case .complete:
                let kept = header.map { ByteWords.bytes($0.payload.count) + " of " + ByteWords.bytes(expected ?? 0) + " payload" }
                    ?? ByteWords.bytes(stream.bytes.count - position) + " of a frame header"
                why = "the connection's recording ends inside this frame (\(kept))."
            }
            guard let header else {
                if pending != nil { finish(cut: "Cut: " + why, budget: &budget) }
                stop(at: position, "A frame header is cut: " + why, into: &conversation)
                return
            }
            _ = take(header, at: position, budget: &budget, cutBy: "Cut: " + why)
            if stream.end != .complete { stop(at: position, "The last message is cut: " + why, into: &conversation) }
        }

        /// The stream ended between frames: a fragmented message not finished is cut, and a
        /// recording stop is said.
        mutating func endOfStream(budget: inout DecodingBudget, into conversation: inout WebSocketConversation) {
            var why: String?
            switch stream.end {
            case let .cut(turn): why = "The recording budget stopped the \(who)'s side in turn \(turn); nothing after it was recorded."
            case let .gap(turn): why = "Reading stops here: the \(who)'s turn \(turn) lost bytes while recording (the recording queue was full)."
            case .complete: break
            }
            if pending != nil {
                finish(cut: why.map { "Cut: " + $0 } ?? "Cut: the connection's recording ends before the message's last frame.", budget: &budget)
            }
            if let why { stop(at: position, why, into: &conversation) }
        }

        func stop(at position: Int, _ reason: String, into conversation: inout WebSocketConversation) {
            let turn = position >= stream.bytes.count ? stream.lastTurn : stream.turn(at: position).turn
            conversation.problems.append(.init(direction: stream.direction, turn: turn, reason: reason))
        }
    }
}
