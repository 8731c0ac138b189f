import FlowStore
import Foundation
import HTTPReading
import Recording
import TVHome

/// How `tv turns FLOW --http` shows a flow read as HTTP: each exchange as its request and
/// response (start line, headers, body — decoded when it was content-coded), HTTP/2 connection
/// frames one line each, and where reading stopped and why. When the turns are not HTTP, the
/// reason comes first and the command falls back to the plain view. Everything the peers sent —
/// start lines, header names and values, `:path`, encodings, frame texts, reasons that quote
/// them — is escaped with `TerminalText.line`; bodies as `BytePreview` draws them.
public struct HTTPPresentation: Sendable {
    public let flowID: Int64
    public let flow: FlowRecord?
    public let result: HTTPReadResult
    public let full: Bool

    public init(flowID: Int64, flow: FlowRecord?, result: HTTPReadResult, full: Bool = false) {
        self.flowID = flowID
        self.flow = flow
        self.result = result
        self.full = full
    }

    /// The lines to print. For `.notHTTP` only the reason; the caller prints the plain view after.
    public func lines() -> [String] {
        let title = TurnsPresentation.title(flowID: flowID, flow: flow)
        guard case let .conversation(c) = result else {
            if case let .notHTTP(reason) = result { return [title, "Not read as HTTP: \(TerminalText.line(reason)) The plain view follows."] }
            return [title]
        }
        var out = [title + " — read as \(TerminalText.line(c.version)), \(c.exchanges.count) exchange\(c.exchanges.count == 1 ? "" : "s")"]
        // Connection lines and exchanges in the order of the turns they started in; a turn's
        // connection frames before the messages that start in it.
        var items: [(turn: Int, rank: Int, lines: [String])] = []
        for (index, line) in c.connectionLines.enumerated() {
            items.append((line.turn, index, ["turn \(line.turn)  \(DirectionWords.label(line.direction))  \(TerminalText.line(line.text))"]))
        }
        for (index, exchange) in c.exchanges.enumerated() {
            let turn = exchange.request?.turn ?? exchange.response?.turn ?? 0
            items.append((turn, c.connectionLines.count + index, [""] + exchangeLines(exchange, index: index + 1)))
        }
        items.sort { ($0.turn, $0.rank) < ($1.turn, $1.rank) }
        if !c.connectionLines.isEmpty { out.append("") }
        for item in items { out += item.lines }
        if !c.notes.isEmpty || !c.problems.isEmpty { out.append("") }
        for note in c.notes { out.append(TerminalText.line(note)) }
        for problem in c.problems {
            out.append("Reading stopped at turn \(problem.turn) \(DirectionWords.label(problem.direction)): \(TerminalText.line(problem.reason))")
        }
        if !c.problems.isEmpty { out.append("The plain view (tv turns \(flowID)) shows every byte that was kept.") }
        return out
    }

    func exchangeLines(_ exchange: HTTPExchange, index: Int) -> [String] {
        var heading = "#\(index)"
        if let id = exchange.streamID { heading += "  stream \(id)" + (exchange.pushed ? " (pushed by the server)" : "") }
        if let reset = exchange.resetBy { heading += "  reset (\(TerminalText.line(reset)))" }
        var out = [heading]
        if let request = exchange.request {
            out += messageLines(request, direction: .clientToServer)
        } else {
            out.append("  (no request was recorded)")
        }
        for interim in exchange.interim { out += messageLines(interim, direction: .serverToClient) }
        if let response = exchange.response {
            out += messageLines(response, direction: .serverToClient)
        } else {
            out.append("  (no response was recorded)")
        }
        return out
    }

    func messageLines(_ message: HTTPMessage, direction: Direction) -> [String] {
        var out = ["  \(DirectionWords.label(direction))  turn \(message.turn)  at \(Units.offsetSeconds(message.offset))",
                   "    " + TerminalText.line(message.startLine)]
        for header in message.headers where !(header.name.hasPrefix(":")) {
            out.append("    \(TerminalText.line(header.name)): \(TerminalText.line(header.value))")
        }
        let body = message.body
        if body.framing != "none" {
            let content = body.content
            var about = "    body: \(Units.grouped(Int64(content.count))) bytes"
            if body.decoded != nil {
                about += ", decoded from \(body.encodings.map(TerminalText.line).joined(separator: ", ")) (\(Units.grouped(Int64(body.transferred.count))) bytes as sent)"
            }
            about += ", \(TerminalText.line(body.framing))"
            out.append(about)
            out += BytePreview.lines(content, full: full, indent: "      ")
            if let note = body.decodingNote { out.append("    " + TerminalText.line(note)) }
            if let sentence = HTTPPresentation.completeness(body.completeness) { out.append("    " + sentence) }
        }
        for trailer in message.trailers { out.append("    trailer \(TerminalText.line(trailer.name)): \(TerminalText.line(trailer.value))") }
        return out
    }

    /// A sentence for a body that is not all there, or nil when it is.
    public static func completeness(_ completeness: BodyCompleteness) -> String? {
        switch completeness {
        case .complete:
            return nil
        case let .cutByBudget(kept, expected):
            return "Cut by the recording budget: \(Units.grouped(Int64(kept)))" + (expected.map { " of \(Units.grouped(Int64($0)))" } ?? "")
                + " body bytes were kept."
        case let .missingBytes(kept):
            return "Bytes are missing after the first \(Units.grouped(Int64(kept))): the recording queue was full."
        case let .endedEarly(kept, expected):
            return "The recording ends before the body does: \(Units.grouped(Int64(kept)))" + (expected.map { " of \(Units.grouped(Int64($0)))" } ?? "")
                + " bytes."
        case let .reset(code):
            return "The stream was reset (\(code)) before the body ended."
        }
    }

    /// The reading as JSON for `--http --json`: bodies as text when printable, else base64.
    public func json() -> JSONValue {
        switch result {
        case let .notHTTP(reason):
            return .object([("flow", .int(flowID)), ("http", .null), ("reason", .string(reason))])
        case let .conversation(c):
            return .object([
                ("flow", .int(flowID)),
                ("version", .string(c.version)),
                ("exchanges", .array(c.exchanges.map(exchangeJSON))),
                ("connectionFrames", .array(c.connectionLines.map { line in
                    .object([("direction", .string(line.direction.rawValue)), ("turn", .int(Int64(line.turn))),
                             ("startOffset", .int(line.offset)), ("text", .string(line.text))])
                })),
                ("problems", .array(c.problems.map { problem in
                    .object([("direction", .string(problem.direction.rawValue)), ("turn", .int(Int64(problem.turn))),
                             ("reason", .string(problem.reason))])
                })),
                ("notes", .array(c.notes.map { .string($0) })),
            ])
        }
    }

    func exchangeJSON(_ exchange: HTTPExchange) -> JSONValue {
        .object([
            ("stream", exchange.streamID.map { .int(Int64($0)) } ?? .null),
            ("pushed", .bool(exchange.pushed)),
            ("resetBy", exchange.resetBy.map { .string($0) } ?? .null),
            ("request", exchange.request.map(messageJSON) ?? .null),
            ("interim", .array(exchange.interim.map(messageJSON))),
            ("response", exchange.response.map(messageJSON) ?? .null),
        ])
    }

    func messageJSON(_ message: HTTPMessage) -> JSONValue {
        var body: [(String, JSONValue)] = [
            ("framing", .string(message.body.framing)),
            ("encodings", .array(message.body.encodings.map { .string($0) })),
            ("transferredBytes", .int(Int64(message.body.transferred.count))),
            ("decoded", .bool(message.body.decoded != nil)),
        ]
        let content = message.body.content
        if let text = PrintableText.text(content), text.utf8.count == content.count {
            body.append(("text", .string(text)))
        } else {
            body.append(("base64", .string(Data(content).base64EncodedString())))
        }
        body.append(("complete", .bool(message.body.completeness.isComplete)))
        body.append(("completeness", HTTPPresentation.completeness(message.body.completeness).map { .string($0) } ?? .null))
        body.append(("note", message.body.decodingNote.map { .string($0) } ?? .null))
        return .object([
            ("startLine", .string(message.startLine)),
            ("headers", .array(message.headers.map { .array([.string($0.name), .string($0.value)]) })),
            ("trailers", .array(message.trailers.map { .array([.string($0.name), .string($0.value)]) })),
            ("turn", .int(Int64(message.turn))),
            ("startOffset", .int(message.offset)),
            ("body", .object(body)),
        ])
    }
}
