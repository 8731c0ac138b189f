import FlowStore
import Foundation
import HTTPReading
import Recording
import TVHome
import FlowTerms

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
        var out: [String] = []
        write(reader: BoundedBodyReader()) { out.append($0) }
        return out
    }

    /// Hands the lines to `emit` one at a time, bodies decoded through `reader` one after the
    /// other and streamed (with `full`, a body's lines come while it is being decoded), so no
    /// more than a piece of one decoded body is held.
    public func write(reader: BoundedBodyReader, _ emit: (String) -> Void) {
        let title = TurnsPresentation.title(flowID: flowID, flow: flow)
        guard case let .conversation(c) = result else {
            emit(title)
            if let reason = result.notHTTPReason { emit("Not read as HTTP: \(TerminalText.line(reason)) The plain view follows.") }
            return
        }
        emit(title + " — read as \(TerminalText.line(c.version)), \(c.exchanges.count) exchange\(c.exchanges.count == 1 ? "" : "s")")
        // Connection lines and exchanges in the order of the turns they started in; a turn's
        // connection frames before the messages that start in it.
        var items: [(turn: Int, rank: Int, line: String?)] = []
        for (index, line) in c.connectionLines.enumerated() {
            items.append((line.turn, index, "turn \(line.turn)  \(DirectionWords.label(line.direction))  \(TerminalText.line(line.text))"))
        }
        for (index, exchange) in c.exchanges.enumerated() {
            let turn = exchange.request?.turn ?? exchange.response?.turn ?? 0
            items.append((turn, c.connectionLines.count + index, nil))
        }
        items.sort { ($0.turn, $0.rank) < ($1.turn, $1.rank) }
        if !c.connectionLines.isEmpty { emit("") }
        for item in items {
            if let line = item.line {
                emit(line)
            } else {
                let index = item.rank - c.connectionLines.count
                emit("")
                writeExchange(c.exchanges[index], index: index + 1, reader: reader, emit)
            }
        }
        if !c.notes.isEmpty || !c.problems.isEmpty { emit("") }
        for note in c.notes { emit(TerminalText.line(note)) }
        for problem in c.problems {
            emit("Reading stopped at turn \(problem.turn) \(DirectionWords.label(problem.direction)): \(TerminalText.line(problem.reason))")
        }
        if !c.problems.isEmpty { emit("The plain view (tv turns \(flowID)) shows every byte that was kept.") }
    }

    func writeExchange(_ exchange: HTTPExchange, index: Int, reader: BoundedBodyReader, _ emit: (String) -> Void) {
        var heading = "#\(index)"
        if let id = exchange.streamID { heading += "  stream \(id)" + (exchange.pushed ? " (pushed by the server)" : "") }
        if let reset = exchange.resetBy { heading += "  reset (\(TerminalText.line(reset)))" }
        emit(heading)
        if let request = exchange.request {
            writeMessage(request, direction: .clientToServer, reader: reader, emit)
        } else {
            emit(Self.notRecorded(.clientToServer, stop: recordingStopped(.clientToServer)))
        }
        for interim in exchange.interim { writeMessage(interim, direction: .serverToClient, reader: reader, emit) }
        if let response = exchange.response {
            writeMessage(response, direction: .serverToClient, reader: reader, emit)
        } else {
            emit(Self.notRecorded(.serverToClient, stop: recordingStopped(.serverToClient)))
        }
        if let webSocket = exchange.webSocket { WebSocketPresentation.lines(webSocket, full: full).forEach(emit) }
    }

    /// Where `direction`'s recording stopped at a limit in the conversation shown, if it did.
    func recordingStopped(_ direction: Direction) -> HTTPConversation.RecordingStop? {
        guard case let .conversation(c) = result else { return nil }
        return c.recordingStopped(direction)
    }

    /// The line where a request (`.clientToServer`) or response is missing: why, when its side's
    /// recording had stopped at a limit before it.
    static func notRecorded(_ direction: Direction, stop: HTTPConversation.RecordingStop?) -> String {
        let message = direction == .clientToServer ? "request" : "response"
        guard let stop else { return "  (no \(message) was recorded)" }
        let side = DirectionWords.words(direction).replacingOccurrences(of: " ", with: "-")
        return "  (no \(message) was recorded: the \(side) side stopped being recorded after turn \(stop.turn), as "
            + TurnsPresentation.limitWords(stop.limit) + ")"
    }

    func writeMessage(_ message: HTTPMessage, direction: Direction, reader: BoundedBodyReader, _ emit: (String) -> Void) {
        messageLines(message, direction: direction).forEach(emit)
        let body = message.body
        if body.framing != "none" {
            // The preview needs the first textCap bytes; --full keeps up to 64 KiB, so a body that
            // short is decoded once, and a longer one is decoded again as it is printed.
            let reading = reader.measure(body, keeping: full ? 65_536 : BytePreview.textCap)
            var about = "    body: \(Units.grouped(Int64(reading.size))) bytes"
            if reading.decoded {
                // Of a cut body, what was kept as sent, not the whole (a trial read 65,262 as
                // what the server sent; 106,774 were).
                let kept = body.completeness.isComplete ? "bytes as sent" : "bytes kept as sent"
                about += ", decoded from \(body.encodings.map(TerminalText.line).joined(separator: ", ")) (\(Units.grouped(Int64(body.transferred.count))) \(kept))"
            }
            about += ", \(TerminalText.line(body.framing))"
            emit(about)
            if full {
                var writer = BytePreview.LineWriter(printable: reading.printable, indent: "      ")
                reader.stream(body, reading) { writer.take($0, emit: emit) }
                writer.finish(emit: emit)
            } else {
                BytePreview.preview(head: reading.head, size: reading.size, printable: reading.printable, indent: "      ").forEach(emit)
            }
            if let note = reading.note { emit("    " + TerminalText.line(note)) }
            if let sentence = HTTPPresentation.completeness(body.completeness) { emit("    " + sentence) }
        }
        for trailer in message.trailers { emit("    trailer \(TerminalText.line(trailer.name)): \(TerminalText.line(trailer.value))") }
        if let cut = message.trailersLeftOut { emit("    " + cut.sentence(trailers: true)) }
    }

    /// The start line and headers of `message`, as printed above its body.
    func messageLines(_ message: HTTPMessage, direction: Direction) -> [String] {
        // A message over several turns (a request's body after a 100 Continue) names them all:
        // its body is not in its first turn (a trial's `tv turns --turn 1` held no body).
        let turns = message.lastTurn == message.turn ? "turn \(message.turn)" : "turns \(message.turn)–\(message.lastTurn)"
        var out = ["  \(DirectionWords.label(direction))  \(turns)  at \(Units.offsetSeconds(message.offset))",
                   "    " + TerminalText.line(message.startLine)]
        for header in message.headers where !(header.name.hasPrefix(":")) {
            out.append("    \(TerminalText.line(header.name)): \(TerminalText.line(header.value))")
        }
        if let cut = message.headersLeftOut { out.append("    " + cut.sentence()) }
        return out
    }

    /// A sentence for a body that is not all there, or nil when it is.
    public static func completeness(_ completeness: BodyCompleteness) -> String? {
        switch completeness {
        case .complete:
            return nil
        case let .cutByBudget(kept, expected):
            // A limit, not "the budget": a turn keeps at most 64 KiB whatever the flow's budget
            // says, and the turn's own line says which one cut (a trial read the budget blamed
            // for the turn's cap).
            return "Cut by a recording limit: \(Units.grouped(Int64(kept)))" + (expected.map { " of \(Units.grouped(Int64($0)))" } ?? "")
                + " body bytes were kept."
        case let .missingBytes(kept):
            return "Bytes are missing after the first \(Units.grouped(Int64(kept))): the recording queue was full."
        case let .endedEarly(kept, expected):
            // Not a recording limit (those are said above): the connection's bytes end here, so it
            // closed or broke first (a trial's GOAWAY-ended stream read as the recording's end).
            return "The connection ended before the body did: \(Units.grouped(Int64(kept)))" + (expected.map { " of \(Units.grouped(Int64($0)))" } ?? "")
                + " bytes came."
        case let .reset(code):
            return "The stream was reset (\(code)) before the body ended."
        }
    }

    /// The reading as JSON for `--http --json` (bodies as text when printable, else base64),
    /// handed to `emit` in pieces: bodies are decoded through `reader` and streamed into it.
    public func writeJSON(reader: BoundedBodyReader, _ emit: (String) -> Void) {
        var splicer = JSONBodySplicer()
        let document = json(reader: reader, splicer: &splicer)
        splicer.write(document.serialized(pretty: true), reader: reader, to: emit)
    }

    /// The document `writeJSON` writes, with a placeholder of `splicer` where each body goes.
    func json(reader: BoundedBodyReader, splicer: inout JSONBodySplicer) -> JSONValue {
        switch result {
        case .notHTTP, .startDeleted:
            return .object([("flow", .int(flowID)), ("http", .null), ("reason", .string(result.notHTTPReason ?? ""))])
        case let .conversation(c):
            return .object([
                ("flow", .int(flowID)),
                ("version", .string(c.version)),
                ("exchanges", .array(c.exchanges.map { exchangeJSON($0, reader: reader, splicer: &splicer) })),
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

    func exchangeJSON(_ exchange: HTTPExchange, reader: BoundedBodyReader, splicer: inout JSONBodySplicer) -> JSONValue {
        .object([
            ("stream", exchange.streamID.map { .int(Int64($0)) } ?? .null),
            ("pushed", .bool(exchange.pushed)),
            ("resetBy", exchange.resetBy.map { .string($0) } ?? .null),
            ("request", exchange.request.map { messageJSON($0, reader: reader, splicer: &splicer) } ?? .null),
            ("interim", .array(exchange.interim.map { messageJSON($0, reader: reader, splicer: &splicer) })),
            ("response", exchange.response.map { messageJSON($0, reader: reader, splicer: &splicer) } ?? .null),
            // The WebSocket messages after a 101 (`WebSocketPresentation.json`), else null.
            ("webSocket", exchange.webSocket.map(WebSocketPresentation.json) ?? .null),
        ])
    }

    func messageJSON(_ message: HTTPMessage, reader: BoundedBodyReader, splicer: inout JSONBodySplicer) -> JSONValue {
        let reading = reader.measure(message.body, keeping: 0)
        var body: [(String, JSONValue)] = [
            ("framing", .string(message.body.framing)),
            ("encodings", .array(message.body.encodings.map { .string($0) })),
            ("transferredBytes", .int(Int64(message.body.transferred.count))),
            ("decoded", .bool(reading.decoded)),
        ]
        if reading.printable && reading.cutCharacter == 0 {
            body.append(("text", splicer.placeholder(message.body, reading, form: .text)))
        } else {
            body.append(("base64", splicer.placeholder(message.body, reading, form: .base64)))
        }
        body.append(("complete", .bool(message.body.completeness.isComplete)))
        body.append(("completeness", HTTPPresentation.completeness(message.body.completeness).map { .string($0) } ?? .null))
        body.append(("note", reading.note.map { .string($0) } ?? .null))
        return .object([
            ("startLine", .string(message.startLine)),
            ("headers", .array(message.headers.map { .array([.string($0.name), .string($0.value)]) })),
            ("trailers", .array(message.trailers.map { .array([.string($0.name), .string($0.value)]) })),
            // HTTP/2 fields left out past `HeaderListLimits` (the sentence), else null.
            ("headersLeftOut", message.headersLeftOut.map { .string($0.sentence()) } ?? .null),
            ("trailersLeftOut", message.trailersLeftOut.map { .string($0.sentence(trailers: true)) } ?? .null),
            ("turn", .int(Int64(message.turn))),
            ("startOffset", .int(message.offset)),
            ("body", .object(body)),
        ])
    }
}
