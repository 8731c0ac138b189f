import FlowStore
import FlowTerms
import Foundation
import HTTPReading
import TVHome

/// How `tv request ID` shows one exchange: what was read on the data path (method, URL, status,
/// sizes, timing, flags), then — when content was kept for its flow — its recorded request and
/// response with headers and bodies (decoded; JSON pretty-printed; binary as a hex dump), else
/// one sentence saying what is kept without content keeping.
public struct RequestDetailPresentation: Sendable {
    public let exchange: ExchangeRecord
    /// The recorded messages, nil when no content was kept (or could not be matched).
    public let recorded: HTTPExchange?
    /// Bodies whole (`tv request --full`); else previews, as `tv turns` shows them (a trial's
    /// 200 MiB gzip body printed 89 MB of hex).
    public let full: Bool
    /// The instance whose shared row this is (`tv request --store`): its query string and
    /// content stay on that machine, whatever its content keeping was.
    public let sharedFrom: InstanceIdentity?
    /// Where reading the flow's kept turns as HTTP stopped, per side, when it did: a response
    /// that is missing for that reason says it (it read "no response was recorded" where the
    /// client had a whole 200 with a 100 KB header: a trial), from the server's side first (a
    /// trial's missing responses were blamed on the client's side, stopped later, at its
    /// upload, than the server's).
    public var stoppedReading: [HTTPConversation.ReadingProblem]
    /// The flow has kept content (its turns read as HTTP), whether or not this request is in it.
    public var flowContentKept = false
    /// The sides of the flow whose recording stopped at a limit (`HTTPConversation.recordingStopped`).
    public var recordingStopped: [HTTPConversation.RecordingStop] = []
    /// Why no recorded exchange is shown, as decided from the flow's kept content
    /// (`RequestContentAbsence.of`); nil: from `flowContentKept` and `stoppedReading` alone.
    public var contentAbsence: RequestContentAbsence?
    /// Where the request was sent when its URL names another server (a forged Host, curl's
    /// `--connect-to`); nil when the URL names it, or the flow is unknown.
    public var destination: RequestDestination?

    public init(exchange: ExchangeRecord, recorded: HTTPExchange?, full: Bool = false, sharedFrom: InstanceIdentity? = nil,
                stoppedReading: [HTTPConversation.ReadingProblem] = []) {
        self.exchange = exchange
        self.recorded = recorded
        self.full = full
        self.sharedFrom = sharedFrom
        self.stoppedReading = stoppedReading
    }

    /// Where reading stopped on `side`, else on the other side (nil: it did not stop).
    func stopped(preferring side: Direction) -> HTTPConversation.ReadingProblem? {
        stoppedReading.first { $0.direction == side } ?? stoppedReading.first
    }

    /// Said where the response is missing.
    func missingResponse() -> String {
        // tv's own answer (a 502, a refused head's 400) is never in the kept turns: it was not
        // said by the server (a re-check read the budget blamed for it).
        if exchange.state == .answered, let status = exchange.status {
            return "  (the response, status \(status), was tv's own answer, which is not kept with what the client and server said; the flow's error says why tv answered)"
        }
        if exchange.state == .answered {
            return "  (no response: the request was " + ExchangeState.refusedSentence + "; the flow's error says why tv refused it)"
        }
        // A response still coming is read once its turn ends (a trial's streaming response was
        // said to be over its budget, and was whole a minute later).
        if exchange.state == .open, stoppedReading.isEmpty {
            return "  (the response has not ended yet; what is kept of it is shown once it has)"
        }
        guard let problem = stopped(preferring: .serverToClient) else {
            // The row read a response the kept turns lack: its direction's budget ran out first
            // (a trial's h1 request past 1 MiB of responses said only "no response was recorded").
            let stop = recordingStopped.first { $0.direction == .serverToClient }
            guard let status = exchange.status else { return HTTPPresentation.notRecorded(.serverToClient, stop: stop) }
            // The side's cut is known from its turns: said exactly (a trial read "the budget ran
            // out …, or … expired or was deleted" where `tv turns` named the limit).
            if let stop {
                return "  (the response, status \(status), was not kept: the server-to-client side stopped being recorded after turn \(stop.turn), as "
                    + TurnsPresentation.limitWords(stop.limit) + "; the status and sizes above are its row's)"
            }
            return "  (the response, status \(status), was not kept: its direction's recording budget ran out before it, or what was kept of it expired or was deleted; the status and sizes above are its row's)"
        }
        let side = problem.direction == .serverToClient ? "from the server" : "from the client"
        return "  (no response was read: reading this connection as HTTP stopped at turn \(problem.turn) \(side): "
            + TerminalText.line(problem.reason) + " `tv turns \(exchange.flowID)` shows every byte that was kept.)"
    }

    /// What tv keeps of a request without content keeping, and what only with it (also in the
    /// setup and inspect texts).
    public static let keptWithoutContent = "Without content keeping tv keeps each request's method, URL path (without its query string), status, body sizes and timing; headers, bodies and query strings are content, kept only while content keeping is on (`tv settings set content.keep on`)."

    /// Why no content is shown for the request, nil when its messages were kept or the row is a
    /// shared one (its content stays on its machine: no advice about keeping it here). Content
    /// kept for the flow without this request is not "without content keeping" (a trial's
    /// content.keep was on all along: the budget ran out).
    public var absence: String? {
        guard recorded == nil, sharedFrom == nil else { return nil }
        let why = contentAbsence ?? (flowContentKept ? stopped(preferring: .clientToServer).map(RequestContentAbsence.readingStopped) ?? .pastKept : .noneKept)
        return why.sentence(flowID: exchange.flowID)
    }

    /// Why a request has no kept headers or bodies when its connection has none either: any of
    /// the three (a trial's content was deleted with `tv content delete` while keeping was on,
    /// and the advice to turn keeping on was all it read).
    public static let noneKept = "No headers or bodies are kept for this request's connection: content keeping was off when it was made (or inspection, for TLS), or what was kept has expired or was deleted (`tv content delete`)."

    /// Why the response of a request with kept content is not shown (`missingResponse`, as one
    /// sentence); nil when it is, or when no content was kept.
    public var responseAbsence: String? {
        guard let recorded, recorded.response == nil else { return nil }
        var text = missingResponse().trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("(") && text.hasSuffix(")") { text = String(text.dropFirst().dropLast()) }
        return text.prefix(1).uppercased() + text.dropFirst() + (text.hasSuffix(".") ? "" : ".")
    }

    /// The facts lines (no content).
    public func factLines() -> [String] {
        let e = exchange
        var out = ["Request \(e.id) — \(TerminalText.line(e.method)) \(RequestListPresentation.url(e))"]
        var where_ = "  flow \(e.flowID), exchange \(e.sequence) of it"
        if let stream = e.streamID { where_ += ", stream \(stream)" }
        out.append(where_ + ", \(TerminalText.line(e.httpVersion))")
        if let destination { out.append(destination.sentence) }
        var status = "  status " + (e.status.map(String.init) ?? "none")
        if let reason = e.reason, !reason.isEmpty { status += " " + TerminalText.line(reason) }
        switch e.state {
        case .open: status += " — still open"
        case .complete: status += " — complete"
        case .incomplete: status += " — " + ExchangeState.incompleteSentence
        case .cancelled: status += " — " + ExchangeState.cancelledSentence
        case .answered:
            // A shared row's flow is that instance's: this data folder's flow of the id is
            // another connection (a trial's hint named one).
            let command = sharedFrom.map { "tv flow \(e.flowID) --store URL --instance \(TerminalText.line(String($0.id.prefix(8))))" } ?? "tv flow \(e.flowID)"
            status += e.status == nil ? " — \(ExchangeState.refusedSentence) (`\(command)` says why)"
                : " — answered by tv, not the server (`\(command)` says why)"
        }
        out.append(status)
        out.append("  request body \(Units.bytes(e.requestBodyBytes))" + asSent(e.requestBodyBytes, e.requestWireBytes))
        if let body = e.responseBodyBytes {
            var line = "  response body \(Units.bytes(body))" + asSent(body, e.responseWireBytes ?? body)
            if let type = e.contentType { line += ", " + TerminalText.line(type) }
            if let encoding = e.contentEncoding { line += ", " + TerminalText.line(encoding) }
            out.append(line)
        }
        var timing = "  started \(Units.utcMillis(e.requestTime))"
        if let sent = e.requestEndTime, sent > e.requestTime {
            timing += "; request sent in \(Units.duration(microseconds: sent - e.requestTime))"
        }
        if let first = e.responseTime { timing += "; first response byte after \(Units.duration(microseconds: max(0, first - e.requestTime)))" }
        if let duration = e.duration { timing += "; ended after \(Units.duration(microseconds: duration))" }
        out.append(timing)
        if e.upgrade {
            out.append(recorded?.webSocket != nil ? "  switched protocols to WebSocket; its messages follow the response"
                       : "  switched protocols (upgrade); what followed is not read as HTTP")
        }
        if e.connect { out.append("  CONNECT: a tunnel was asked for") }
        if let instance = sharedFrom {
            out.append("  the query string, headers and bodies never travel to the shared store; if kept, they are in the data folder of \(TerminalText.line(instance.machine)) (flow \(e.flowID) there)")
        } else if e.queryRemoved {
            out.append("  the query string was not kept (content keeping was off, or the content has expired or was deleted)")
        }
        return out
    }

    private func asSent(_ body: Int64, _ wire: Int64) -> String {
        guard wire != body else { return "" }
        // Sizes that round alike are said in bytes (a trial read "50.0 KiB (50.0 KiB as sent)").
        if Units.bytes(wire) == Units.bytes(body) { return " (\(ByteWords.grouped(body)) B; \(ByteWords.grouped(wire)) B as sent)" }
        return " (\(Units.bytes(wire)) as sent)"
    }

    /// Hands every line to `emit`: the facts, then the recorded messages or why there are none.
    public func write(reader: BoundedBodyReader, _ emit: (String) -> Void) {
        factLines().forEach(emit)
        if let instance = sharedFrom {
            // Under the title, where the flow's own view says it (it came above the title).
            emit("  instance     " + SharedInstancePresentation.sentence(instance))
        }
        emit("")
        guard let recorded else {
            if let absence { emit(absence) }
            return
        }
        let http = HTTPPresentation(flowID: exchange.flowID, flow: nil, result: .conversation(HTTPConversation(version: exchange.httpVersion)), full: full)
        if let request = recorded.request { writeMessage(request, .clientToServer, http, reader, emit) } else {
            emit(HTTPPresentation.notRecorded(.clientToServer, stop: recordingStopped.first { $0.direction == .clientToServer }))
        }
        for interim in recorded.interim { writeMessage(interim, .serverToClient, http, reader, emit) }
        if let response = recorded.response { writeMessage(response, .serverToClient, http, reader, emit) } else { emit(missingResponse()) }
        if let webSocket = recorded.webSocket { WebSocketPresentation.lines(webSocket, full: full).forEach(emit) }
    }

    /// Lines of a JSON body shown without `--full`: at most 100 (a 57 KB body printed 27,025
    /// lines), from at most `BytePreview.textCap` bytes of it, as much as a text preview shows.
    static let jsonLineCap = 100

    /// A message as `tv turns --http` shows it (`--full`: whole), except that a JSON body of at
    /// most 64 KiB that reads as text (`PrintableText`, the rule `--json` and tv web follow) is
    /// re-indented (`JSONIndentation`: its lines read back as the JSON sent, so they are not
    /// escaped again); without `--full` a preview of it, its cut said as a text preview's is.
    private func writeMessage(_ message: HTTPMessage, _ direction: Direction, _ http: HTTPPresentation,
                              _ reader: BoundedBodyReader, _ emit: (String) -> Void) {
        let type = message.headers.first("content-type")?.lowercased() ?? ""
        if type.contains("json"), message.body.framing != "none" {
            let reading = reader.measure(message.body, keeping: 65_536)
            if reading.printable, reading.size == reading.head.count,
               let pretty = full ? JSONIndentation.indented(reading.head)
                   : JSONIndentation.indented(reading.head, byteLimit: BytePreview.textCap, lineLimit: RequestDetailPresentation.jsonLineCap) {
                http.messageLines(message, direction: direction).forEach(emit)
                emit("    body: \(Units.grouped(Int64(reading.size))) bytes of JSON" + (reading.decoded ? ", decoded" : ""))
                pretty.lines.forEach { emit("      " + $0) }
                if pretty.shownBytes < reading.size {
                    emit("      … showing \(Units.grouped(Int64(pretty.shownBytes))) of \(Units.grouped(Int64(reading.size))) bytes; --full prints all that was kept.")
                }
                return
            }
        }
        http.writeMessage(message, direction: direction, reader: reader, emit)
    }

    /// The exchange as JSON, handed to `emit` in pieces: every column, `sentTo` (`host:port`
    /// where the request went when its URL names another server, else null), and `content` (the
    /// recorded request and response with headers and decoded bodies, as `tv turns --http
    /// --json` shows them; null when no content was kept), `absence` (why not, the sentence
    /// `tv request` prints; null when it was, or for a shared row), `responseAbsence` (why the
    /// kept content holds no response: tv's own answer, a response still coming, a budget).
    public func writeJSON(reader: BoundedBodyReader, _ emit: (String) -> Void) {
        guard case var .object(fields) = RequestListPresentation.json(exchange) else { return }
        let http = HTTPPresentation(flowID: exchange.flowID, flow: nil, result: .conversation(HTTPConversation(version: exchange.httpVersion)), full: true)
        var splicer = JSONBodySplicer()
        // `host:port` (IPv6 in brackets) where the request went when its URL names another server.
        fields.append(("sentTo", destination.map { .string($0.connection.description) } ?? .null))
        fields.append(("content", recorded.map { http.exchangeJSON($0, reader: reader, splicer: &splicer) } ?? .null))
        fields.append(("absence", absence.map { .string($0) } ?? .null))
        fields.append(("responseAbsence", responseAbsence.map { .string($0) } ?? .null))
        // Where reading the kept turns as HTTP stopped (nil: it did not).
        // The side that explains what is missing: the client's for a request not kept, else the server's.
        fields.append(("readingStopped", stopped(preferring: recorded == nil ? .clientToServer : .serverToClient).map { problem in
            .object([("turn", .int(Int64(problem.turn))), ("direction", .string(problem.direction.rawValue)), ("reason", .string(problem.reason))])
        } ?? .null))
        splicer.write(JSONValue.object(fields).serialized(pretty: true), reader: reader, to: emit)
    }
}
