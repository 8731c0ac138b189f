import FlowTerms
import TVHome

/// A HAR 1.2 entry (http://www.softwareishard.com/blog/har-12-spec/#entries) from one exchange
/// row, for a flow whose content was not kept: what the row holds and nothing more. Method, URL
/// (the path as kept: without its query when content was not kept, and the entry's `comment`
/// says so), status and reason, HTTP version, body sizes as the row counted them (transfer coding
/// removed, content coding still applied: HAR's `bodySize`; `content.size`, the decoded length, is
/// the same number without a content coding, and -1 with one, said in its `comment` and the
/// entry's: the row does not know it), `headersSize` -1,
/// no headers, cookies, query or bodies (content). Timings from the row's times in milliseconds:
/// `send` 0 (the row has no time for the request's last byte, so `wait` runs from its first),
/// `wait` from the request's first byte to the response's first, `receive` from there to the
/// end; 0 where the row does not tell (HAR 1.2 requires the three, non-negative; a trial's
/// validator refused the -1 written before). `_tv` (a
/// custom field, HAR §custom fields) names the request id `tv request ID` reads and its state.
public enum HARRowEntry {
    /// Why an entry is written from its row.
    public enum Source: Sendable, Equatable {
        /// No content is kept for the flow: never kept, or deleted since (`tv content delete`, expiry).
        case contentNotKept
        /// Content was kept, but the flow's recording budget ran out before this request.
        case requestNotKept
        /// Content was kept, but its bytes cannot be read (its segment file was deleted, moved
        /// or cut): said as that, not as content that was never kept (a trial).
        case contentUnreadable
        /// Made before what is kept of its flow begins: its bytes went with the deleted start.
        case contentDeleted(DeletedStart)
        /// Kept after a deleted start, in turns that cannot be read from the middle (`http2`:
        /// HTTP/2, whose header compression state went with the start).
        case unreadableAfterDeletion(DeletedStart, http2: Bool)

        /// The comment's first part: where the entry comes from and why.
        public var sentence: String {
            switch self {
            case .contentNotKept: return "from the exchange row: no content is kept for its connection (never kept, or deleted since), so no headers, cookies or bodies"
            case .requestNotKept: return "from the exchange row: the flow's recording budget ran out before this request, so no headers, cookies or bodies"
            case .contentUnreadable:
                return "from the exchange row: the kept content cannot be read (its segment file is gone or cut), so no headers, cookies or bodies"
            case let .contentDeleted(deleted):
                return "from the exchange row: it was made before what is kept of its connection begins — \(deleted.clause) — so no headers, cookies or bodies"
            case let .unreadableAfterDeletion(deleted, http2):
                var reason = deleted.unreadable(http2: http2)
                if reason.hasSuffix(".") { reason.removeLast() }
                return "from the exchange row, its bytes kept but not readable: " + reason.prefix(1).lowercased() + reason.dropFirst()
                    + "; no headers, cookies or bodies"
            }
        }

        /// Which count of the log's comment the entry falls in.
        public var tally: Tally {
            switch self {
            case .contentNotKept: return .notKept
            case .requestNotKept: return .pastBudget
            case .contentUnreadable: return .unreadable
            case .contentDeleted, .unreadableAfterDeletion: return .deleted
            }
        }
    }

    /// The counts of entries from rows the log's comment gives (`logNotes`).
    public enum Tally: Sendable, Equatable {
        case notKept, unreadable, pastBudget, deleted
    }

    /// The entry for `row` of `flow` (`flow.rowsSource` says why it is from the row).
    public static func entry(_ row: ExchangeRecord, flow: HARFlow) -> JSONValue {
        let timing = timings(row)
        let micros = timingMicros(row)
        let version = harVersion(row.httpVersion)
        var fields: [(String, JSONValue)] = [
            ("startedDateTime", .string(HARExport.isoDate(row.requestTime))),
            ("time", .double(milliseconds(micros.send + micros.wait + micros.receive))),
            ("request", .object([
                ("method", .string(row.method)),
                ("url", .string(url(row, flow: flow))),
                ("httpVersion", .string(version)),
                ("cookies", .array([])), ("headers", .array([])), ("queryString", .array([])),
                ("headersSize", .int(-1)),
                ("bodySize", .int(row.requestBodyBytes)),
            ])),
            ("response", response(row, version: version)),
            ("cache", .object([])),
            ("timings", .object([("send", .double(timing.send)), ("wait", .double(timing.wait)), ("receive", .double(timing.receive))])),
            ("serverIPAddress", .string(flow.serverAddress)),
            ("connection", .string(String(flow.id))),
            ("comment", .string(comment(row, source: flow.source(of: row)))),
            ("_tv", .object([("request", .int(row.id)), ("state", .string(row.state.rawValue))])),
        ]
        if let program = flow.program { fields.append(("_program", program)) }
        return .object(fields)
    }

    /// The log comment's parts for `notKept` entries from the rows of flows whose content was
    /// not kept, `unreadable` from rows of flows whose kept content cannot be read,
    /// `pastBudget` from rows of requests past a flow's recording budget, and `deleted` from
    /// rows whose content went with the deleted start of their flow's.
    public static func logNotes(notKept: Int, unreadable: Int = 0, pastBudget: Int, deleted: Int = 0) -> [String] {
        var notes: [String] = []
        if notKept > 0 { notes.append("\(notKept) from exchange rows alone (no content kept: no headers, bodies or query strings)") }
        if unreadable > 0 {
            notes.append("\(unreadable) from exchange rows alone (the kept content cannot be read: its segment file is gone or cut)")
        }
        if pastBudget > 0 {
            notes.append("\(pastBudget) from exchange rows alone (requests past their flow's recording budget: no headers or bodies)")
        }
        if deleted > 0 {
            notes.append("\(deleted) from exchange rows alone (the start of their connection's kept content was deleted, and with it their own or what reading the rest needs: no headers or bodies)")
        }
        return notes
    }


    /// `send`, `wait`, `receive` in milliseconds; 0 where the row does not tell. `send` runs
    /// from the request's first byte to its last (`requestEndTime`), or to the response's first
    /// when that came sooner (an early answer), so the three follow one another as HAR 1.2 has
    /// them; a row without its request's end (written before migration 27, or a request that
    /// never ended) sends in 0 (an upload was counted as the server's wait: a trial). Without a
    /// response, the time from the request's end to the exchange's end was spent waiting for one.
    public static func timings(_ row: ExchangeRecord) -> (send: Double, wait: Double, receive: Double) {
        let micros = timingMicros(row)
        return (milliseconds(micros.send), milliseconds(micros.wait), milliseconds(micros.receive))
    }

    /// `timings` in µs.
    static func timingMicros(_ row: ExchangeRecord) -> (send: Int64, wait: Int64, receive: Int64) {
        let end = row.endTime ?? row.responseTime ?? row.requestEndTime ?? row.requestTime
        var sent = min(max(row.requestEndTime ?? row.requestTime, row.requestTime), end)
        if let first = row.responseTime { sent = min(sent, max(first, row.requestTime)) }
        let send = sent - row.requestTime
        guard let first = row.responseTime else { return (send, max(0, end - sent), 0) }
        return (send, max(0, first - sent), max(0, end - first))
    }

    /// The absolute URL: the row's scheme and authority (else the flow's), then its path as kept;
    /// a CONNECT's authority-form target after the scheme.
    public static func url(_ row: ExchangeRecord, flow: HARFlow) -> String {
        let scheme = row.scheme ?? flow.scheme
        if row.connect { return scheme + "://" + row.path }
        let authority = row.authority ?? flow.authority(scheme: scheme)
        return scheme + "://" + authority + (row.path.hasPrefix("/") ? row.path : "/" + row.path)
    }

    /// What the entry is made of and where it stands, in one line.
    public static func comment(_ row: ExchangeRecord, source: Source = .contentNotKept) -> String {
        var notes = [source.sentence]
        if row.queryRemoved { notes.append("the query string was not kept, so the URL ends at the path") }
        if let stream = row.streamID { notes.append("HTTP/2 stream \(stream)") }
        if row.upgrade { notes.append("switched protocols") }
        switch row.state {
        case .complete: break
        case .open: notes.append("still open when exported")
        case .incomplete: notes.append(ExchangeState.incompleteSentence)
        case .answered where row.status == nil: notes.append(ExchangeState.refusedSentence + " (`tv flow \(row.flowID)` says why)")
        case .cancelled: notes.append(ExchangeState.cancelledSentence)
        case .answered: notes.append("answered by tv in the server's place (`tv flow \(row.flowID)` says why)")
        }
        if row.status == nil, row.state != .answered { notes.append("no response was read") }
        if let clause = unknownSizeClause(row) { notes.append(clause) }
        return notes.joined(separator: "; ")
    }

    static func response(_ row: ExchangeRecord, version: String) -> JSONValue {
        guard let status = row.status else {
            return .object([
                ("status", .int(0)), ("statusText", .string("")), ("httpVersion", .string("")),
                ("cookies", .array([])), ("headers", .array([])),
                ("content", .object([("size", .int(0)), ("mimeType", .string(""))])),
                ("redirectURL", .string("")), ("headersSize", .int(-1)), ("bodySize", .int(-1)),
            ])
        }
        var content: [(String, JSONValue)] = [("size", .int(decodedSize(row) ?? -1)), ("mimeType", .string(row.contentType ?? ""))]
        if let note = codedSizeNote(row) { content.append(("comment", .string(note))) }
        var fields: [(String, JSONValue)] = [
            ("status", .int(Int64(status))),
            ("statusText", .string(row.reason ?? "")),
            ("httpVersion", .string(version)),
            ("cookies", .array([])), ("headers", .array([])),
            ("content", .object(content)),
            ("redirectURL", .string("")),
            ("headersSize", .int(-1)),
            ("bodySize", .int(row.responseBodyBytes ?? -1)),
        ]
        if row.state == .answered { fields.append(("comment", .string(answeredNote(row)))) }
        return .object(fields)
    }

    /// The response body's decoded length, HAR 1.2's `content.size`, where the row knows it: the
    /// body as the row counted it (transfer coding removed) when no content coding was applied,
    /// or when there was no body to decode; nil when a content coding was (the row counts the
    /// bytes as sent, and the exchange reader does not decode on the data path: a trial's
    /// big.json read `content.size` 4,150, its br-coded length, where Chromium decoded 251,790).
    public static func decodedSize(_ row: ExchangeRecord) -> Int64? {
        let size = row.responseBodyBytes ?? 0
        return size > 0 && contentCoded(row) ? nil : size
    }

    /// Whether the row's response names a content coding other than `identity` (RFC 9110 §8.4.1).
    static func contentCoded(_ row: ExchangeRecord) -> Bool {
        guard let coding = row.contentEncoding, !coding.isEmpty else { return false }
        return coding.lowercased() != "identity"
    }

    /// `content.comment` of a coded body whose decoded size the row does not know (nil otherwise).
    public static func codedSizeNote(_ row: ExchangeRecord) -> String? {
        guard decodedSize(row) == nil, let coding = row.contentEncoding, let sent = row.responseBodyBytes else { return nil }
        return "the decoded size is not known (size -1): the row counts the body as sent, \(sent) bytes still \(coding)-coded (bodySize); "
            + "only kept content is decoded"
    }

    /// The entry comment's clause for a coded response whose decoded size the row does not know.
    public static func unknownSizeClause(_ row: ExchangeRecord) -> String? {
        guard row.status != nil, let coding = row.contentEncoding, decodedSize(row) == nil else { return nil }
        return "the response body was \(coding)-coded and its decoded size is not known, so content.size is -1"
    }

    /// `response.comment` of tv's own answer (a 502 when the server could not be reached or
    /// answered unreadably, a 400, a 504): its status and sizes are the row's, read from what tv
    /// wrote; its headers and body are not kept with what the client and server said.
    static func answeredNote(_ row: ExchangeRecord) -> String {
        "tv's own answer, not the server's: its headers and body are not kept (its body was a sentence saying why, "
            + "which `tv flow \(row.flowID)` gives as the connection's error)"
    }

    /// HAR writes HTTP/2 as `HTTP/2.0` (as the entries from content do).
    static func harVersion(_ version: String) -> String { version == "HTTP/2" ? "HTTP/2.0" : version }

    static func milliseconds(_ microseconds: Int64) -> Double { Double(max(0, microseconds)) / 1_000 }
}
