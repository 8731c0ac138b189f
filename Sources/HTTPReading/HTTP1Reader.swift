import Recording
import Wire

/// HTTP/1.x (RFC 9112) read from a flow's turns: the client side as a sequence of requests, the
/// server side as a sequence of responses, paired in order. Bodies are delimited by
/// Transfer-Encoding chunked (decoded), Content-Length, or — for responses only — the end of the
/// recording; the `Content-Encoding` codings are noted, for the view to undo.
///
/// Reading a side stops at the first thing it cannot read (said in `problems`), at a switch of
/// protocol (101, or a CONNECT tunnel), or where the recording of that side stopped. After a 101
/// to WebSocket the rest of both sides is read as WebSocket frames (`WebSocketReader`), on the
/// 101's exchange.
enum HTTP1Reader {
    private enum Framing: Equatable {
        case none
        case length(Int)
        case chunked
        case untilClose

        var name: String {
            switch self {
            case .none: return "none"
            case .length: return "content-length"
            case .chunked: return "chunked"
            case .untilClose: return "until close"
            }
        }
    }

    /// A message read from one side, and whether the side can go on after it.
    private struct Read {
        var message: HTTPMessage
        var next: Int
        var canContinue: Bool
    }

    /// A head read by Wire's `HTTP1HeadParser` (lenient), with its start line and fields as shown.
    private struct Head {
        var parsed: HTTP1Head
        var startLine: String
        var headers: [HTTPHeader]
        var size: Int
    }

    /// One side being read: its stream, the cursor, and whether it stopped.
    private struct Side {
        let stream: SideStream
        var position = 0
        var done = false
        init(_ stream: SideStream) { self.stream = stream }
        var atEnd: Bool { position >= stream.bytes.count }
    }

    static func read(_ turns: [RecordedTurn]) -> HTTPConversation {
        var client = Side(SideStream(turns, direction: .clientToServer))
        var server = Side(SideStream(turns, direction: .serverToClient))
        var conversation = HTTPConversation(version: "HTTP/1.1")
        var versionSet = false

        while true {
            var request: HTTPMessage?
            var method: String?
            if !client.done && !client.atEnd {
                if let read = readRequest(&client, into: &conversation) {
                    request = read.message
                    method = read.message.startLine.split(separator: " ").first.map(String.init)
                    if !versionSet, let version = read.message.startLine.split(separator: " ").last {
                        conversation.version = String(version)
                        versionSet = true
                    }
                    client.position = read.next
                    if !read.canContinue { client.done = true }
                }
            }
            var interim: [HTTPMessage] = []
            var response: HTTPMessage?
            while !server.done && !server.atEnd {
                guard let read = readResponse(&server, method: method, into: &conversation) else { break }
                server.position = read.next
                if !read.canContinue { server.done = true }
                let status = statusCode(read.message)
                if let status, status >= 100 && status < 200 && status != 101 {
                    interim.append(read.message)
                    continue
                }
                response = read.message
                break
            }
            if request == nil && response == nil && interim.isEmpty { break }
            conversation.exchanges.append(HTTPExchange(request: request, interim: interim, response: response))
            if let response, let note = switchNote(method: method, response: response) {
                if isWebSocket(response) {
                    // RFC 6455 §4.2.2: from here on each side speaks WebSocket frames.
                    let deflate = PerMessageDeflate.accepted(response.headers.all("Sec-WebSocket-Extensions"))
                    conversation.exchanges[conversation.exchanges.count - 1].webSocket = WebSocketReader.read(
                        client: client.stream, from: client.position, server: server.stream, from: server.position, deflate: deflate)
                    conversation.notes.append("The connection switched to WebSocket (101 Switching Protocols) in turn \(response.turn); its messages are read with that exchange.")
                    client.done = true
                    server.done = true
                } else {
                    conversation.notes.append(note)
                }
                break
            }
        }
        for side in [client, server] where !side.done && side.atEnd {
            switch side.stream.end {
            case let .gap(turn):
                conversation.problems.append(.init(direction: side.stream.direction, turn: turn,
                    reason: "Reading stops here: turn \(turn) lost bytes while recording (the recording queue was full)."))
            case let .cut(turn):
                conversation.problems.append(.init(direction: side.stream.direction, turn: turn,
                    reason: "The recording budget stopped this side in turn \(turn); nothing after it was recorded."))
            case .complete:
                break
            }
        }
        return conversation
    }

    private static func statusCode(_ message: HTTPMessage) -> Int? {
        let parts = message.startLine.split(separator: " ")
        return parts.count >= 2 ? Int(parts[1]) : nil
    }

    /// A 101 that switched to WebSocket (`Upgrade: websocket`, RFC 6455 §4.2.2).
    private static func isWebSocket(_ response: HTTPMessage) -> Bool {
        statusCode(response) == 101 && response.headers.all("Upgrade").contains { $0.lowercased().contains("websocket") }
    }

    /// A sentence when `response` ends HTTP/1 on this connection (RFC 9110 §15.2.2, §9.3.6).
    private static func switchNote(method: String?, response: HTTPMessage) -> String? {
        guard let status = statusCode(response) else { return nil }
        if status == 101 {
            let to = response.headers.first("Upgrade") ?? "another protocol"
            return "The connection switched to \(to) (101 Switching Protocols) in turn \(response.turn); what follows is not HTTP/1 and is shown in the plain view (tv turns without --http)."
        }
        if method == "CONNECT" && (200..<300).contains(status) {
            return "The connection became a tunnel (CONNECT answered \(status)) in turn \(response.turn); what follows is shown in the plain view."
        }
        return nil
    }

    private static func readRequest(_ side: inout Side, into conversation: inout HTTPConversation) -> Read? {
        guard let (head, headEnd) = readHead(&side, kind: .request, into: &conversation),
              let framing = framing(head, answering: nil, side: &side, into: &conversation) else { return nil }
        return readBody(&side, head: head, headEnd: headEnd, framing: framing, into: &conversation)
    }

    private static func readResponse(_ side: inout Side, method: String?, into conversation: inout HTTPConversation) -> Read? {
        guard let (head, headEnd) = readHead(&side, kind: .response, into: &conversation),
              let framing = framing(head, answering: method, side: &side, into: &conversation) else { return nil }
        return readBody(&side, head: head, headEnd: headEnd, framing: framing, into: &conversation)
    }

    /// Reads a head at the cursor; on failure records why and stops the side.
    private static func readHead(_ side: inout Side, kind: HTTP1HeadParser.Kind, into conversation: inout HTTPConversation) -> (Head, Int)? {
        let what = kind == .request ? "request" : "response"
        let segment = side.stream.segment(at: side.position)
        switch HTTP1HeadParser.parse(side.stream.bytes[side.position..<segment.end], kind: kind, leniency: .lenient) {
        case let .head(parsed):
            let head = Head(parsed: parsed, startLine: parsed.startLineText, headers: parsed.headers.map(HTTPHeader.init(recorded:)),
                            size: parsed.byteCount)
            return (head, side.position + parsed.byteCount)
        case .needMoreData:
            let reason = segment.cut.map { "The \(what) head is cut: turn \($0.turn) kept at most 64 KiB; this side cannot be read on." }
                ?? side.stream.endReason("The \(what) head")
                ?? "The recording ends inside a \(what) head (\(side.stream.bytes.count - side.position) bytes)."
            stop(&side, at: side.position, into: &conversation, reason)
            return nil
        case let .malformed(reason):
            stop(&side, at: side.position, into: &conversation, "The bytes here are not an HTTP/1 \(what): \(clause(reason)).")
            return nil
        case let .tooLong(limit, inStartLine):
            stop(&side, at: side.position, into: &conversation,
                 "The bytes here are not an HTTP/1 \(what): \(clause(HTTP1HeadParser.tooLongSentence(kind, limit, inStartLine: inStartLine))).")
            return nil
        }
    }

    /// How the body is delimited (RFC 9112 §6.3, read by Wire): nil (after recording a problem)
    /// when it cannot be.
    private static func framing(_ head: Head, answering method: String?, side: inout Side,
                                into conversation: inout HTTPConversation) -> Framing? {
        switch head.parsed.bodyFraming(leniency: .lenient, answering: method) {
        case .success(.none): return Framing.none
        case .success(.contentLength(let length)): return .length(length)
        case .success(.chunked): return .chunked
        case .success(.untilClose): return .untilClose
        case .failure(let error):
            stop(&side, at: side.position, into: &conversation, error.reason)
            return nil
        }
    }

    /// A parser's sentence as a clause to go after a colon: first letter lowercased, no full stop.
    private static func clause(_ sentence: String) -> String {
        guard let first = sentence.first else { return sentence }
        let body = sentence.hasSuffix(".") ? sentence.dropFirst().dropLast() : sentence.dropFirst()
        return first.lowercased() + body
    }

    private static func readBody(_ side: inout Side, head: Head, headEnd: Int, framing: Framing,
                                 into conversation: inout HTTPConversation) -> Read {
        let bytes = side.stream.bytes
        // A body runs to the end of its segment at most: past a turn the turn limit cut, the
        // side's next turn is the next message (HTTP/1 without pipelining: each response, and
        // each request, its own turn), where reading resumes.
        let segment = side.stream.segment(at: headEnd)
        let resumes = segment.cut != nil
        var transferred: [UInt8] = []
        var trailers: [HTTPHeader] = []
        var completeness = BodyCompleteness.complete
        var next = headEnd
        var canContinue = true
        switch framing {
        case .none:
            break
        case let .length(length):
            let available = min(length, segment.end - headEnd)
            transferred = Array(bytes[headEnd..<(headEnd + available)])
            next = headEnd + available
            if available < length {
                completeness = side.stream.shortfall(kept: available, expected: length, in: segment)
                canContinue = resumes
            }
        case .chunked:
            switch ChunkedBody.decode(bytes, from: headEnd, to: segment.end) {
            case let .complete(data, chunkTrailers, end):
                transferred = data
                trailers = chunkTrailers
                next = end
            case let .needsMore(data):
                transferred = data
                next = segment.end
                completeness = side.stream.shortfall(kept: data.count, expected: nil, in: segment)
                canContinue = resumes
            case let .invalid(data, position, reason):
                transferred = data
                next = bytes.count
                completeness = .endedEarly(kept: data.count, expected: nil)
                canContinue = false
                let turn = side.stream.turn(at: position).turn
                conversation.problems.append(.init(direction: side.stream.direction, turn: turn,
                    reason: "The chunked body cannot be read on: \(clause(reason)); reading this side stops here."))
            }
        case .untilClose:
            // Until the connection closes: no later message to resume at.
            transferred = Array(bytes[headEnd..<segment.end])
            next = bytes.count
            canContinue = false
            if side.stream.end != .complete || resumes {
                completeness = side.stream.shortfall(kept: transferred.count, expected: nil, in: segment)
            }
        }
        let codings = ContentDecoding.codings(head.headers.all("Content-Encoding"))
        let body = framing == .none ? HTTPBody.none : HTTPBody(framing: framing.name, transferred: transferred, encodings: codings,
                                                              completeness: completeness)
        let first = side.stream.turn(at: side.position)
        let last = side.stream.turn(at: max(side.position, next - 1))
        let message = HTTPMessage(startLine: head.startLine, headers: head.headers, trailers: trailers, body: body,
                                  turn: first.turn, offset: first.offset, lastTurn: last.turn, lastOffset: last.offset,
                                  headSize: head.size)
        return Read(message: message, next: next, canContinue: canContinue)
    }

    /// Records why reading `side` stops at `position`.
    private static func stop(_ side: inout Side, at position: Int, into conversation: inout HTTPConversation, _ reason: String) {
        side.done = true
        let turn = side.stream.turn(at: position).turn
        conversation.problems.append(.init(direction: side.stream.direction, turn: turn, reason: reason))
    }
}
