import Foundation
import HTTPReading
import TVHome

/// How `tv turns --http` and `tv request` show the WebSocket messages read after a 101: one
/// line per message (turn, direction, time, opcode, size; a close's code and reason), then its
/// payload as a body is drawn (`BytePreview`: text as text, binary as a hex dump), and a sentence
/// when it is not whole. Without `--full` at most `messageCap` messages and each payload's
/// preview; the cut is said. `json` is what `--json` carries of them.
public enum WebSocketPresentation {
    /// Messages listed without `--full`.
    public static let messageCap = 100

    /// The lines for `webSocket`, each message under a heading, indented as an exchange's body.
    public static func lines(_ webSocket: WebSocketConversation, full: Bool) -> [String] {
        let count = webSocket.messages.count
        var heading = "  WebSocket: \(count) message\(count == 1 ? "" : "s")"
        if let deflate = webSocket.deflate { heading += ", " + deflateWords(deflate) }
        var out = [heading]
        let shown = full ? webSocket.messages[...] : webSocket.messages.prefix(messageCap)
        for message in shown {
            out.append("    " + messageLine(message))
            if message.opcode != .close {
                out += BytePreview.lines(message.data, full: full, indent: "      ")
            }
            if let cut = message.cut { out.append("      " + TerminalText.line(cut)) }
        }
        if shown.count < count {
            out.append("    … showing \(Units.grouped(Int64(shown.count))) of \(Units.grouped(Int64(count))) messages; --full lists them all.")
        }
        for note in webSocket.notes { out.append("    " + TerminalText.line(note)) }
        for problem in webSocket.problems {
            out.append("    Reading stopped at turn \(problem.turn) \(DirectionWords.label(problem.direction)): \(TerminalText.line(problem.reason))")
        }
        return out
    }

    /// `turn 5  → client to server  at 0.694 s  text, 8 bytes (6 compressed)`; a close adds its
    /// code and reason.
    static func messageLine(_ message: WebSocketMessage) -> String {
        var line = "turn \(message.turn)  \(DirectionWords.label(message.direction))  at \(Units.offsetSeconds(message.offset))  \(message.opcode.name)"
        if message.opcode == .close {
            if let code = message.closeCode {
                line += ", code \(code)"
                if !message.closeReason.isEmpty { line += ", reason \u{201C}\(TerminalText.line(message.closeReason))\u{201D}" }
            } else {
                line += ", no code"
            }
            return line
        }
        if message.compressed && message.data.isEmpty && message.cut != nil {
            return line + ", \(Units.grouped(Int64(message.wireSize))) bytes compressed, not inflated"
        }
        line += ", \(Units.grouped(Int64(message.data.count))) byte\(message.data.count == 1 ? "" : "s")"
        if message.compressed { line += " (\(Units.grouped(Int64(message.wireSize))) compressed)" }
        return line
    }

    /// `permessage-deflate` and the parameters the server accepted.
    static func deflateWords(_ deflate: PerMessageDeflate) -> String {
        var words = ["permessage-deflate"]
        if deflate.serverNoContextTakeover { words.append("server_no_context_takeover") }
        if deflate.clientNoContextTakeover { words.append("client_no_context_takeover") }
        if let bits = deflate.serverMaxWindowBits { words.append("server_max_window_bits=\(bits)") }
        if let bits = deflate.clientMaxWindowBits { words.append("client_max_window_bits=\(bits)") }
        return words.joined(separator: "; ")
    }

    /// The messages as JSON: each one's direction, turn, `startOffset` (µs since the flow's
    /// first byte), `opcode` (RFC 6455's number) and `type` (its name), `text` for text (and a
    /// close's reason) else `base64`, `size` (payload bytes shown), `wireSize`, `compressed`,
    /// a close's `closeCode`, and `cut` (why it is not whole, else null); then where reading
    /// stopped and the notes.
    public static func json(_ webSocket: WebSocketConversation) -> JSONValue {
        .object([
            ("extensions", webSocket.deflate.map { .string(deflateWords($0)) } ?? .null),
            ("messages", .array(webSocket.messages.map(messageJSON))),
            ("problems", .array(webSocket.problems.map { problem in
                .object([("direction", .string(problem.direction.rawValue)), ("turn", .int(Int64(problem.turn))),
                         ("reason", .string(problem.reason))])
            })),
            ("notes", .array(webSocket.notes.map { .string($0) })),
        ])
    }

    static func messageJSON(_ message: WebSocketMessage) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("direction", .string(message.direction.rawValue)),
            ("turn", .int(Int64(message.turn))),
            ("startOffset", .int(message.offset)),
            ("opcode", .int(Int64(message.opcode.rawValue))),
            ("type", .string(message.opcode.name)),
        ]
        if message.opcode == .close {
            fields.append(("closeCode", message.closeCode.map { .int(Int64($0)) } ?? .null))
            fields.append(("text", .string(message.closeReason)))
        } else if let text = message.text {
            fields.append(("text", .string(text)))
        } else {
            fields.append(("base64", .string(Data(message.data).base64EncodedString())))
        }
        fields += [
            ("size", .int(Int64(message.data.count))),
            ("wireSize", .int(Int64(message.wireSize))),
            ("compressed", .bool(message.compressed)),
            ("cut", message.cut.map { .string($0) } ?? .null),
        ]
        return .object(fields)
    }
}
