import FlowTerms
import Foundation
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/) from the same reading `tv turns
/// --http` shows: one entry per exchange that has a request. Bodies are what was kept — a body
/// the recording budget cut is written as far as it goes, and the entry's `comment` says so —
/// decoded through one `BoundedBodyReader`, within its limits (the content's `comment` says a
/// cut), and streamed into the output one body at a time. The log's `comment`, written last,
/// carries the counts. A flow whose content was not kept is written from its exchange rows
/// (`HARRowEntry`): method, URL, status, sizes and times, no headers or bodies.
public enum HARExport {
    /// Writes the whole HAR document for `flows` to `out` piece by piece, entries ordered by
    /// start time, bodies read through `reader`.
    /// - Parameter notes: more parts of the log's comment, after the counts (the flows whose
    ///   requests were counted without rows).
    public static func write(_ flows: [HARFlow], creatorVersion: String, pretty: Bool = true, notes: [String] = [],
                             reader: BoundedBodyReader = BoundedBodyReader(), to out: (String) -> Void) {
        var splicer = JSONBodySplicer()
        let document = document(flows, creatorVersion: creatorVersion, notes: notes, reader: reader, splicer: &splicer)
        splicer.write(document.serialized(pretty: pretty), reader: reader, to: out)
    }

    /// The whole document as one string (for small exports and tests; `write` streams).
    public static func text(_ flows: [HARFlow], creatorVersion: String, pretty: Bool = false) -> String {
        var text = ""
        write(flows, creatorVersion: creatorVersion, pretty: pretty) { text += $0 }
        return text
    }

    /// The document with a placeholder of `splicer` where each body goes.
    static func document(_ flows: [HARFlow], creatorVersion: String, notes: [String] = [], reader: BoundedBodyReader,
                         splicer: inout JSONBodySplicer) -> JSONValue {
        var entries: [(Int64, JSONValue)] = []
        var cut = 0
        var skipped = 0
        var fromRows = 0
        var unreadable = 0
        var pastBudget = 0
        var deleted = 0
        for flow in flows {
            for (position, exchange) in flow.conversation.exchanges.enumerated() {
                guard let request = exchange.request else {
                    skipped += 1
                    continue
                }
                if !(request.body.completeness.isComplete && (exchange.response?.body.completeness.isComplete ?? true)) { cut += 1 }
                entries.append((flow.startTime + request.offset, entry(exchange, request: request, flow: flow,
                                                                     version: flow.conversation.version, row: flow.row(at: position),
                                                                     reader: reader, splicer: &splicer)))
            }
            for row in flow.rows {
                entries.append((row.requestTime, HARRowEntry.entry(row, flow: flow)))
                switch flow.source(of: row).tally {
                case .notKept: fromRows += 1
                case .unreadable: unreadable += 1
                case .pastBudget: pastBudget += 1
                case .deleted: deleted += 1
                }
            }
        }
        entries.sort { $0.0 < $1.0 }
        var comment = "\(entries.count) entr\(entries.count == 1 ? "y" : "ies") from \(flows.count) flow\(flows.count == 1 ? "" : "s")"
        if cut > 0 { comment += "; \(cut) with a body that is not complete (cut by a recording limit, or not all recorded)" }
        for note in HARRowEntry.logNotes(notKept: fromRows, unreadable: unreadable, pastBudget: pastBudget, deleted: deleted) { comment += "; " + note }
        if skipped > 0 { comment += "; \(skipped) response\(skipped == 1 ? "" : "s") without a recorded request left out" }
        for note in notes { comment += "; " + note }
        return .object([("log", .object([
            ("version", .string("1.2")),
            ("creator", .object([("name", .string("TunnelVision")), ("version", .string(creatorVersion))])),
            ("pages", .array([])),
            ("entries", .array(entries.map(\.1))),
            ("comment", .string(comment)),
        ]))])
    }

    /// - Parameter row: the exchange's row (`HARFlow.exchangeRows`), when there is one: its
    ///   times are the data path's, read per burst, where the turns' offsets share a loop turn's
    ///   clock (a fast local exchange read 0 ms); a response the content lacks, and the sizes of
    ///   bodies it cut, come from it.
    static func entry(_ exchange: HTTPExchange, request: HTTPMessage, flow: HARFlow, version: String, row: ExchangeRecord? = nil,
                      reader: BoundedBodyReader, splicer: inout JSONBodySplicer) -> JSONValue {
        let response = exchange.response
        // In µs, made milliseconds once: sums of milliseconds carried binary noise (43.138999999999996).
        var send = max(0, request.lastOffset - request.offset)
        var wait = response.map { max(0, $0.offset - request.lastOffset) } ?? 0
        var receive = response.map { max(0, $0.lastOffset - $0.offset) } ?? 0
        if let row, row.responseTime != nil || response == nil { (send, wait, receive) = HARRowEntry.timingMicros(row) }
        var requestFields = requestJSON(request, flow: flow, version: version, reader: reader, splicer: &splicer)
        if let row, !request.body.completeness.isComplete { requestFields = replacing("bodySize", with: .int(row.requestBodyBytes), in: requestFields) }
        let responseFields: JSONValue
        var missing: String?
        if let response {
            var fields = responseJSON(response, version: version, reader: reader, splicer: &splicer,
                                      receivedAt: flow.startTime + response.offset)
            if let row, !response.body.completeness.isComplete, let sent = row.responseBodyBytes {
                fields = replacing("bodySize", with: .int(sent), in: fields)
                // HAR's content.size is the whole body's length; of a cut body without a content
                // coding that is what was sent (its text holds what was kept, and says so).
                if case .object(let parts) = fields, let content = parts.first(where: { $0.0 == "content" })?.1 {
                    if row.contentEncoding == nil {
                        fields = replacing("content", with: replacing("size", with: .int(sent), in: content), in: fields)
                    } else {
                        // A coded body's whole decoded length is not known: its size is the kept
                        // part's, said so (a trial read a cut gzip body's 157,344 beside a plain
                        // cut body's whole 5,242,880 without a word).
                        fields = replacing("content", with: Self.noting(
                            "the body was cut (recording budget): size is the decoded length of the kept part; the whole body was \(sent) bytes as sent (bodySize)",
                            in: content), in: fields)
                    }
                }
            }
            responseFields = fields
        } else if let row, row.status != nil {
            responseFields = HARRowEntry.response(row, version: HARRowEntry.harVersion(row.httpVersion))
            missing = row.state == .answered
                ? "answered by tv in the server's place (`tv flow \(row.flowID)` says why); its status and sizes are from the request row"
                : "no response was recorded (the recording budget ran out, or not all was recorded); its status and sizes are from the request row"
            // The row counts a coded body as sent: its decoded size (content.size) is not known.
            if let clause = HARRowEntry.unknownSizeClause(row) { missing! += "; " + clause }
        } else {
            responseFields = responseJSON(nil, version: version, reader: reader, splicer: &splicer)
            missing = "no response was recorded"
        }
        var fields: [(String, JSONValue)] = [
            ("startedDateTime", .string(isoDate(flow.startTime + request.offset))),
            ("time", .double(HARRowEntry.milliseconds(send + wait + receive))),
            ("request", requestFields),
            ("response", responseFields),
            ("cache", .object([])),
            ("timings", .object([("send", .double(HARRowEntry.milliseconds(send))), ("wait", .double(HARRowEntry.milliseconds(wait))),
                                 ("receive", .double(HARRowEntry.milliseconds(receive)))])),
            ("serverIPAddress", .string(flow.serverAddress)),
            ("connection", .string(String(flow.id))),
        ]
        if let program = flow.program { fields.append(("_program", program)) }
        if let webSocket = exchange.webSocket { fields += webSocketFields(webSocket, flow: flow) }
        var notes: [String] = []
        if let webSocket = exchange.webSocket, let note = webSocketNote(webSocket) { notes.append(note) }
        if let id = exchange.streamID { notes.append("HTTP/2 stream \(id)\(exchange.pushed ? " (server push)" : "")") }
        if let reset = exchange.resetBy { notes.append("reset by \(reset)") }
        if let note = completenessNote(request.body, what: "request") { notes.append(note) }
        if let response, let note = completenessNote(response.body, what: "response") { notes.append(note) }
        if let missing { notes.append(missing) }
        // HTTP/2 header fields left out past `HeaderListLimits` (headers holds the rest).
        for (what, message) in [("request", Optional(request)), ("response", response)] {
            guard let message else { continue }
            for sentence in [message.headersLeftOut?.sentence(), message.trailersLeftOut?.sentence(trailers: true)].compactMap({ $0 }) {
                notes.append(what + ": " + String(sentence.dropLast()))
            }
        }
        // The row's word too, when a budget's cut also hid that the exchange never ended (kept
        // content said only "cut by the recording budget": a trial).
        if row?.state == .incomplete { notes.append(ExchangeState.incompleteSentence) }
        if row?.state == .cancelled { notes.append(ExchangeState.cancelledSentence) }
        if !notes.isEmpty { fields.append(("comment", .string(notes.joined(separator: "; ")))) }
        return .object(fields)
    }

    /// A WebSocket's messages as Chrome's HAR writes them (DevTools' `HARWriter`, from the
    /// frames CDP's `Network.webSocketFrameSent`/`Received` report): `_resourceType`
    /// `websocket`, and `_webSocketMessages`, each with `type` `send` (the client's) or
    /// `receive`, `time` in seconds since the epoch, `opcode` 1 or 2, and `data` — text as it
    /// is, binary in base64. Chrome lists data messages only (a trial's HAR held its three sent
    /// and four received, no close), and mitmproxy's HAR the same, so close, ping and pong are
    /// left out here too.
    static func webSocketFields(_ webSocket: WebSocketConversation, flow: HARFlow) -> [(String, JSONValue)] {
        let messages: [JSONValue] = webSocket.messages.compactMap { message in
            let data: String
            switch message.opcode {
            case .text: data = String(decoding: message.data, as: UTF8.self)
            case .binary: data = Data(message.data).base64EncodedString()
            default: return nil
            }
            return .object([
                ("type", .string(message.direction == .clientToServer ? "send" : "receive")),
                ("time", .double(Double(flow.startTime + message.offset) / 1_000_000)),
                ("opcode", .int(Int64(message.opcode.rawValue))),
                ("data", .string(data)),
            ])
        }
        return [("_resourceType", .string("websocket")), ("_webSocketMessages", .array(messages))]
    }

    /// The entry's note on WebSocket messages that are not whole, or where reading stopped.
    static func webSocketNote(_ webSocket: WebSocketConversation) -> String? {
        let cut = webSocket.messages.filter { $0.cut != nil && ($0.opcode == .text || $0.opcode == .binary) }.count
        var parts: [String] = []
        if cut > 0 { parts.append("\(cut) WebSocket message\(cut == 1 ? " is" : "s are") not whole (`tv request` says why)") }
        parts += webSocket.problems.map { "WebSocket reading stopped at turn \($0.turn): \($0.reason)" }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// `object` with `key`'s value replaced (the field keeps its place).
    /// `object` with `note` as its `comment` (after any comment it has).
    static func noting(_ note: String, in object: JSONValue) -> JSONValue {
        guard case .object(var fields) = object else { return object }
        if let index = fields.firstIndex(where: { $0.0 == "comment" }), case .string(let said) = fields[index].1 {
            fields[index].1 = .string(said + " " + note)
        } else {
            fields.append(("comment", .string(note)))
        }
        return .object(fields)
    }

    static func replacing(_ key: String, with value: JSONValue, in object: JSONValue) -> JSONValue {
        guard case .object(let fields) = object else { return object }
        return .object(fields.map { $0.0 == key ? (key, value) : $0 })
    }

    static func requestJSON(_ message: HTTPMessage, flow: HARFlow, version: String,
                            reader: BoundedBodyReader, splicer: inout JSONBodySplicer) -> JSONValue {
        let h2 = version == "HTTP/2"
        let parts = message.startLine.split(separator: " ")
        let (method, url, target) = methodURLAndTarget(message, flow: flow, version: version)
        var fields: [(String, JSONValue)] = [
            ("method", .string(method)),
            ("url", .string(url)),
            ("httpVersion", .string(h2 ? "HTTP/2.0" : parts.last.map(String.init) ?? version)),
            ("cookies", .array(cookies(message.headers.all("cookie")))),
            ("headers", headersJSON(message.headers)),
            ("queryString", .array(query(target))),
        ]
        let reading = reader.measure(message.body, keeping: 0)
        if reading.size > 0 {
            var post: [(String, JSONValue)] = [("mimeType", .string(message.headers.first("content-type") ?? ""))]
            // HAR 1.2 has no `encoding` in postData (only in content); custom fields start with
            // an underscore, so a binary request body's base64 is said as `_encoding`.
            post += bodyText(message.body, reading, splicer: &splicer, encodingKey: "_encoding")
            if let note = reading.note { post.append(("comment", .string(note))) }
            fields.append(("postData", .object(post)))
        }
        fields.append(("headersSize", .int(h2 ? -1 : Int64(message.headSize))))
        fields.append(("bodySize", .int(Int64(message.body.transferred.count))))
        return .object(fields)
    }

    /// A request's method and absolute URL as the HAR entry writes them (HTTP/2 from its
    /// pseudo-headers; a relative target completed from Host, else the flow's name and port).
    public static func methodAndURL(_ message: HTTPMessage, flow: HARFlow, version: String) -> (method: String, url: String) {
        let (method, url, _) = methodURLAndTarget(message, flow: flow, version: version)
        return (method, url)
    }

    static func methodURLAndTarget(_ message: HTTPMessage, flow: HARFlow, version: String) -> (String, String, String) {
        let h2 = version == "HTTP/2"
        let parts = message.startLine.split(separator: " ")
        let method = h2 ? (message.headers.first(":method") ?? "") : parts.first.map(String.init) ?? ""
        let target = h2 ? (message.headers.first(":path") ?? "/") : parts.count > 1 ? String(parts[1]) : "/"
        if target.hasPrefix("http://") || target.hasPrefix("https://") { return (method, target, target) }
        let scheme = h2 ? (message.headers.first(":scheme") ?? flow.scheme) : flow.scheme
        let authority = (h2 ? message.headers.first(":authority") : message.headers.first("Host")) ?? flow.authority(scheme: scheme)
        return (method, scheme + "://" + authority + (target.hasPrefix("/") ? target : "/" + target), target)
    }

    /// A response's status code (HTTP/2's `:status`, else the status line's; 0 when unreadable).
    public static func status(_ message: HTTPMessage, version: String) -> Int64 {
        let parts = message.startLine.split(separator: " ", maxSplits: 2)
        return Int64(version == "HTTP/2" ? (message.headers.first(":status") ?? "0") : parts.count > 1 ? String(parts[1]) : "0") ?? 0
    }

    /// - Parameter receivedAt: when the response came (µs since the epoch): a cookie's Max-Age
    ///   counts from it.
    static func responseJSON(_ message: HTTPMessage?, version: String, reader: BoundedBodyReader,
                             splicer: inout JSONBodySplicer, receivedAt: Int64? = nil) -> JSONValue {
        guard let message else {
            return .object([
                ("status", .int(0)), ("statusText", .string("")), ("httpVersion", .string("")),
                ("cookies", .array([])), ("headers", .array([])),
                ("content", .object([("size", .int(0)), ("mimeType", .string(""))])),
                ("redirectURL", .string("")), ("headersSize", .int(-1)), ("bodySize", .int(-1)),
            ])
        }
        let h2 = version == "HTTP/2"
        let parts = message.startLine.split(separator: " ", maxSplits: 2)
        let code = HARExport.status(message, version: version)
        let reading = reader.measure(message.body, keeping: 0)
        var contentFields: [(String, JSONValue)] = [("size", .int(Int64(reading.size)))]
        if reading.decoded, message.body.completeness.isComplete {
            // HAR 1.2 §content: "number of bytes saved" by the coding (decoded minus as sent);
            // of a cut body neither is known (a trial's 50 MiB bomb read 16 MiB "saved").
            contentFields.append(("compression", .int(Int64(reading.size - message.body.transferred.count))))
        }
        contentFields.append(("mimeType", .string(message.headers.first("content-type") ?? "")))
        if reading.size > 0 { contentFields += bodyText(message.body, reading, splicer: &splicer) }
        if let note = reading.note { contentFields.append(("comment", .string(note))) }
        return .object([
            ("status", .int(code)),
            ("statusText", .string(h2 ? "" : parts.count > 2 ? String(parts[2]) : "")),
            ("httpVersion", .string(h2 ? "HTTP/2.0" : parts.first.map(String.init) ?? version)),
            ("cookies", .array(setCookies(message.headers.all("set-cookie"), receivedAt: receivedAt))),
            ("headers", headersJSON(message.headers)),
            ("content", .object(contentFields)),
            ("redirectURL", .string(message.headers.first("location") ?? "")),
            ("headersSize", .int(h2 ? -1 : Int64(message.headSize))),
            ("bodySize", .int(Int64(message.body.transferred.count))),
        ])
    }

    /// `text` (and `encodingKey`: base64 when the body is not text), its value left to `splicer`.
    static func bodyText(_ body: HTTPBody, _ reading: BodyReading, splicer: inout JSONBodySplicer,
                         encodingKey: String = "encoding") -> [(String, JSONValue)] {
        if reading.printable { return [("text", splicer.placeholder(body, reading, form: .text))] }
        return [("text", splicer.placeholder(body, reading, form: .base64)), (encodingKey, .string("base64"))]
    }

    static func completenessNote(_ body: HTTPBody, what: String) -> String? {
        switch body.completeness {
        case .complete: return nil
        case let .cutByBudget(kept, expected):
            return "\(what) body cut by a recording limit: \(kept) bytes kept" + (expected.map { " of \($0)" } ?? "")
        case let .missingBytes(kept):
            return "\(what) body has bytes missing (the recording queue was full); \(kept) bytes kept"
        case let .endedEarly(kept, expected):
            return "\(what) body ended early: \(kept) bytes" + (expected.map { " of \($0)" } ?? "")
        case let .reset(code):
            return "\(what) body ended by RST_STREAM \(code)"
        }
    }

    static func headersJSON(_ headers: [HTTPHeader]) -> JSONValue {
        .array(headers.map { .object([("name", .string($0.name)), ("value", .string($0.value))]) })
    }

    static func query(_ target: String) -> [JSONValue] {
        guard let mark = target.firstIndex(of: "?") else { return [] }
        let query = target[target.index(after: mark)...].split(separator: "#", maxSplits: 1).first ?? ""
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (s: Substring) in String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s) }
            return .object([("name", .string(decode(parts[0]))), ("value", .string(parts.count > 1 ? decode(parts[1]) : ""))])
        }
    }

    static func cookies(_ values: [String]) -> [JSONValue] {
        values.flatMap { $0.split(separator: ";") }.compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            return .object([("name", .string(name)), ("value", .string(parts.count > 1 ? String(parts[1]) : ""))])
        }
    }

    /// Set-Cookie values as HAR cookies: name, value, path, domain, `expires` in ISO 8601 (HAR
    /// 1.2 §cookies: the HTTP-date was copied as sent, and Max-Age dropped: a trial), from
    /// Max-Age counted from `receivedAt` when it is there (it wins over Expires, RFC 6265 §5.3),
    /// else from Expires when it reads as an HTTP-date; httpOnly, secure.
    static func setCookies(_ values: [String], receivedAt: Int64? = nil) -> [JSONValue] {
        values.compactMap { value in
            let attributes = value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = attributes.first, let equals = first.firstIndex(of: "=") else { return nil }
            var fields: [(String, JSONValue)] = [("name", .string(String(first[..<equals]))),
                                                 ("value", .string(String(first[first.index(after: equals)...])))]
            var expires: Int64?
            var maxAge: Int64?
            for attribute in attributes.dropFirst() {
                let parts = attribute.split(separator: "=", maxSplits: 1)
                let text = parts.count > 1 ? String(parts[1]) : ""
                switch parts.first?.lowercased() {
                case "path"?: fields.append(("path", .string(text)))
                case "domain"?: fields.append(("domain", .string(text)))
                case "expires"?: expires = httpDate(text)
                case "max-age"?: maxAge = Int64(text)
                case "httponly"?: fields.append(("httpOnly", .bool(true)))
                case "secure"?: fields.append(("secure", .bool(true)))
                default: break
                }
            }
            if let maxAge, let receivedAt {
                // Zero or less: expired at once (RFC 6265 §5.2.2).
                let seconds = max(0, min(maxAge, 400 * 86_400 * 100))
                fields.append(("expires", .string(isoDate(receivedAt + seconds * 1_000_000))))
            } else if let expires {
                fields.append(("expires", .string(isoDate(expires))))
            }
            return .object(fields)
        }
    }

    /// An HTTP-date (RFC 9110 §5.6.7: IMF-fixdate, the obsolete RFC 850 and asctime forms, and
    /// the dashed form cookies use) in µs since the epoch; nil when it is none of them.
    static func httpDate(_ text: String) -> Int64? {
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        var words = text.replacingOccurrences(of: "-", with: " ").split(separator: " ").map(String.init)
        guard !words.isEmpty else { return nil }
        let day, month, year, clock: String
        if words[0].hasSuffix(",") {
            // IMF-fixdate, RFC 850 and the dashed form: [weekday,] DD Mon YYYY|YY HH:MM:SS GMT
            words.removeFirst()
            guard words.count == 5, words[4].uppercased() == "GMT" else { return nil }
            (day, month, year, clock) = (words[0], words[1], words[2], words[3])
        } else {
            // asctime: Wkd Mon D HH:MM:SS YYYY
            guard words.count == 5 else { return nil }
            (day, month, year, clock) = (words[2], words[1], words[4], words[3])
        }
        let time = clock.split(separator: ":").compactMap { Int32($0) }
        guard let d = Int32(day), (1...31).contains(d), var y = Int32(year), time.count == 3,
              let m = months.firstIndex(of: String(month.prefix(3)).lowercased()),
              time[0] < 24, time[1] < 60, time[2] < 61 else { return nil }
        // A two-digit year: 70–99 are 1900s, 0–69 2000s (RFC 6265 §5.1.1).
        if year.count == 2 { y += y >= 70 ? 1_900 : 2_000 }
        var parts = tm()
        parts.tm_year = y - 1_900
        parts.tm_mon = Int32(m)
        parts.tm_mday = d
        parts.tm_hour = time[0]
        parts.tm_min = time[1]
        parts.tm_sec = time[2]
        return Int64(timegm(&parts)) * 1_000_000
    }

    /// ISO 8601 with milliseconds in UTC, as HAR writes times: `2025-11-30T03:05:00.123Z`.
    static func isoDate(_ microseconds: Int64) -> String {
        var seconds = time_t(microseconds / 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let ms = Int((microseconds % 1_000_000) / 1_000)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), ms)
    }
}
