import FlowTerms
import Wire

/// The HTTP/1 half of `ExchangeReader`: request heads from the client, response heads from the
/// server (read by `Wire`'s lean `HTTP1HeadScanner`: only what the row keeps becomes a string),
/// each body walked to its end by its framing (RFC 9112 §6.3; `HTTPBodyScanner`, the plain path's
/// rule too) without being copied. Pipelined requests wait in order for their responses; interim
/// 1xx responses (100 Continue, 103) are skipped; a 101 that answers the request's Upgrade
/// (`SwitchingProtocols`; another is refused) or a 2xx to CONNECT ends reading (what follows is
/// not HTTP). Bytes it cannot follow are refused (`ExchangeRefusal`): nothing of the connection
/// passes unread after them. A head part way at a burst's end is said (`heldHeadStart`) for the
/// driver to hold back until it is whole; one past tv's limit is refused as the plain path
/// refuses it (431 or 414; 502 for a response).
final class HTTP1ExchangeReading {
    // The state below that is not private is read and written by this class's own files only
    // (`+ClientRefusal`: the client's bytes it refuses, and the answer that waits).

    /// One exchange whose request or response has not ended yet.
    struct Pending {
        var record: ExchangeRecord
        var requestDone: Bool
        var responseDone = false
        /// The response runs until the server closes (RFC 9112 §6.3 rule 8).
        var untilClose = false
        /// The request's Upgrade and Sec-WebSocket-Key, which a 101 must answer
        /// (`SwitchingProtocols`); nil without them (the usual request).
        var upgrade: String? = nil
        var webSocketKey: String? = nil
    }

    let settings: ExchangeReader.Settings
    var pending: [Pending] = []
    /// Requests read on the connection so far (the last exchange's number).
    var sequence: Int
    var requestHead: HTTP1HeadScanner?
    var requestBody: HTTPBodyScanner?
    private var responseHead: HTTP1HeadScanner?
    private var responseBody: HTTPBodyScanner?
    /// Where the response being read began in the server's burst being read (nil: in an earlier
    /// burst, so part of it reached the client): a response refused before any of it went on is
    /// answered by tv's 502 in its place; one part way is cut.
    private var responseStart: Int?
    /// The client's bytes refused while earlier requests wait for their responses
    /// (`ExchangeRefusal.awaitsResponses`): the server's bytes are read on until those have all
    /// gone on (`releaseHold`); the client's are not read. Nil otherwise.
    var held: ExchangeRefusal?
    /// `held`, until the driver took it (`takeHold`).
    var holdToTell: ExchangeRefusal?
    /// The refused request's row while its answer waits (`held`): told open when refused, ended
    /// by tv's answer, or as refused and never answered when the reading ends first (`end`).
    var heldRecord: ExchangeRecord?

    /// - Parameter sequence: the exchanges a previous reader of the connection already read.
    init(_ settings: ExchangeReader.Settings, sequence: Int = 0) {
        self.settings = settings
        self.sequence = sequence
        pending.reserveCapacity(2)
    }

    /// A request head ended in the last burst and its body is still to come (`takeBodyWait`).
    private var bodyWaitAfterHead = false
    /// A body that was still to come when the last burst began ended in it.
    private var bodyEndedAfterWait = false

    /// Whether, since the last call (then cleared), a request head ended with its body still to
    /// come, or a body that had been waited for ended: the client may hold what it sends next
    /// until what it sent is acknowledged (Nagle's algorithm, RFC 896, against the receiver's
    /// delayed ACK, RFC 1122 §4.2.3.2): the body after its head, or the next request after a
    /// body whose response came first (a server that answers before reading the body sends no
    /// data after it for the ACK to ride on; a re-check saw every second POST take 42 ms).
    func takeBodyWait() -> Bool {
        defer {
            bodyWaitAfterHead = false
            bodyEndedAfterWait = false
        }
        return (bodyWaitAfterHead && requestBody != nil) || bodyEndedAfterWait
    }

    /// No exchange is open and no head or body is half read: nothing would be lost with the reader.
    var isBetweenExchanges: Bool {
        held == nil && pending.isEmpty && requestHead == nil && requestBody == nil && responseHead == nil && responseBody == nil
    }

    /// When the request head part way began (`ExchangeReader.requestHeadStartedAt`; a pattern:
    /// `!= nil` would compare).
    var requestHeadStartedAt: Int64? {
        if case .some = requestHead { return startedAt }
        return nil
    }

    /// No exchange is open and no response is part way: an answer of tv's now is the head's
    /// being read (`ExchangeReader.requestHeadAnswerable`).
    var isIdleButForHead: Bool {
        pending.isEmpty && !readingResponseHead && !readingResponseBody
    }

    /// The oldest open exchange's request is whole and no byte of a response has come for it
    /// (no head part way): `ExchangeReader.awaitsResponse`.
    var awaitsResponse: Bool {
        guard let first = pending.first else { return false }
        return first.requestDone && !first.responseDone && responseHead == nil && responseBody == nil
    }

    /// Every exchange read and not yet told ended, as it stands (sizes so far).
    func eachOpen(_ emit: (ExchangeRecord) -> Void) {
        for entry in pending { emit(entry.record) }
    }

    /// The client's bytes this reader refused while earlier requests wait for their responses
    /// (`ExchangeRefusal.awaitsResponses`), once: the driver passes on what came before them
    /// and holds the rest; the reading goes on with the server's bytes.
    func takeHold() -> ExchangeRefusal? {
        defer { holdToTell = nil }
        return holdToTell
    }

    /// Reads one burst; returns why reading must stop, if it must.
    func feed(_ bytes: UnsafeRawBufferPointer, _ direction: Direction, at now: Int64, emit: (ExchangeRecord) -> Void) -> ExchangeReader.Stop? {
        direction == .clientToServer ? client(bytes, at: now, emit: emit) : server(bytes, at: now, emit: emit)
    }

    /// Where the head part way at the end of the last burst read began in it (0: in an earlier
    /// burst), which the driver holds back until the head is whole (`ExchangeReader.heldHeadStart`);
    /// nil when no head is part way, or the client's is one tv cannot yet know is HTTP (the
    /// connection's first bytes where `knowsHTTP` is false, before a whole request line:
    /// another protocol's first line, held, could wait for an answer forever).
    private(set) var heldHeadStart: Int?

    /// A head is part way `direction` and held (`heldHeadStart`).
    func holdsHead(_ direction: Direction) -> Bool {
        if direction == .serverToClient { return readingResponseHead }
        guard case .some = requestHead, held == nil else { return false }
        return knowsRequestIsHTTP
    }

    /// The client's head part way is HTTP: tv knew the stream is, a request came before, or
    /// its first line is a whole request line (`HTTP1HeadScanner.startsWithRequestLine`).
    private var knowsRequestIsHTTP: Bool {
        sequence > 0 || settings.knowsHTTP || requestHead?.startsWithRequestLine == true
    }

    /// Notes where the head part way began in the burst (`heldHeadStart`; nil: in an earlier one).
    private func holdFrom(_ start: Int?, reading direction: Direction) {
        if direction == .clientToServer, !knowsRequestIsHTTP { return }
        heldHeadStart = start ?? 0
    }

    private func client(_ bytes: UnsafeRawBufferPointer, at now: Int64, emit: (ExchangeRecord) -> Void) -> ExchangeReader.Stop? {
        heldHeadStart = nil
        // Refused already: nothing more of the client's is read (the driver holds it back).
        guard held == nil else { return nil }
        var offset = 0
        // Where the request being read began in this burst; nil while it is one begun in an
        // earlier burst (part of it went on).
        var requestStart: Int?
        // A pattern, not `!= nil` (see below).
        var waitedFor = false
        if case .some = requestBody { waitedFor = true }
        while offset < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            // A pattern, not `!= nil`: the scanner is Equatable, and that `!=` copies both sides.
            if case var body? = requestBody {
                let (wire, content) = body.consumeCounting(rest)
                offset += wire
                let last = pending.count - 1
                pending[last].record.requestWireBytes += Int64(wire)
                pending[last].record.requestBodyBytes += Int64(content)
                if let problem = body.failure { return refuseRequestBody(problem, from: requestStart, at: now, emit: emit) }
                if body.isDone {
                    requestBody = nil
                    if waitedFor { bodyEndedAfterWait = true }
                    waitedFor = false
                    pending[last].requestDone = true
                    pending[last].record.requestEndTime = now
                    finishReady(at: now, emit: emit)
                } else {
                    requestBody = body
                }
                continue
            }
            if requestHead == nil {
                // More waiting than tv follows: the ones it follows go on and are answered, then
                // the connection closes (nothing is owed: the rest were never read).
                guard pending.count < settings.maxOpen else {
                    return refuseClient(.pipelinedPastLimit(settings.maxOpen), row: nil, from: offset, answer: .close, at: now, emit: emit)
                }
                requestHead = HTTP1HeadScanner(.request)
                startedAt = now
                requestStart = offset
            }
            let gathered = requestHead!.gathered
            let (result, consumed) = requestHead!.consumeHead(rest)
            offset += consumed
            switch result {
            case .needMoreData:
                holdFrom(requestStart, reading: .clientToServer)
                return nil
            case .malformed, .tooLong:
                // A request that broke the rules is not forwarded (`.refused`), with a row when
                // its line can be salvaged; tv answers 400, or for a head past tv's one limit
                // what the plain path answers it (431, 414 for its request line:
                // `HTTP1HeadParser.tooLongRequestRefusal`). The connection's first bytes that
                // never looked like a request are another protocol, relayed unread, where tv
                // cannot know the stream is HTTP; where it can (`knowsHTTP`), they are a broken
                // request like any other (as nginx answers them: 400 and the close).
                let (status, reason): (Int, String)
                switch result {
                case let .tooLong(limit, inStartLine): (status, reason) = HTTP1HeadParser.tooLongRequestRefusal(limit, inStartLine: inStartLine)
                case .malformed(let why): (status, reason) = (400, why)
                default: return nil
                }
                let start = gathered.isEmpty ? Array(rest.prefix(MalformedRequestLine.maxLine)) : Array(gathered.prefix(MalformedRequestLine.maxLine)) + rest.prefix(MalformedRequestLine.maxLine)
                let line = start.withUnsafeBytes { MalformedRequestLine($0) }
                if line == nil, sequence == 0, !settings.knowsHTTP {
                    return .notHTTP(NotHTTPStart(.client, first: Array(start.prefix(NotHTTPStart.shown)), more: start.count > NotHTTPStart.shown))
                }
                return refuseRequestHead(line, host: nil, reason: reason, status: status, from: requestStart, at: now, emit: emit)
            case .request(let head):
                requestHead = nil
                // Framing a strict server reads otherwise: the same (`.refused`).
                if let refusal = head.framingRefusal {
                    let version = head.version == .http11 ? "HTTP/1.1" : head.version.description
                    return refuseRequestHead(MalformedRequestLine(method: head.method, target: head.target, version: version),
                                             host: head.host, reason: refusal, from: requestStart, at: now, emit: emit)
                }
                start(head, at: now, emit: emit)
            case .response:
                return refuseRequestHead(nil, host: nil, reason: "A status line where a request line belongs (RFC 9112 §3).", from: requestStart, at: now, emit: emit)
            }
        }
        return nil
    }

    /// When the head being read began (µs).
    var startedAt: Int64 = 0
    private var responseStartedAt: Int64 = 0

    private func start(_ head: HTTP1RequestSummary, at now: Int64, emit: (ExchangeRecord) -> Void) {
        sequence += 1
        let target = ExchangeTarget(head.target, keepsQuery: settings.keepsQuery)
        var record = ExchangeRecord(
            flowID: settings.flowID, sequence: sequence, httpVersion: head.version == .http11 ? "HTTP/1.1" : head.version.description, method: head.method,
            scheme: settings.target?.scheme ?? target.scheme ?? settings.scheme, authority: target.authority ?? head.host ?? settings.target?.authority,
            path: target.path, queryRemoved: target.queryRemoved, requestTime: startedAt, connect: head.method == "CONNECT")
        // Content-Length: 0 is no body either.
        let body = HTTPBodyScanner(head.framing)
        // No body (or Content-Length: 0): the request ends with its head.
        if body.isDone { record.requestEndTime = now }
        pending.append(Pending(record: record, requestDone: body.isDone, upgrade: head.upgrade, webSocketKey: head.webSocketKey))
        emit(record)
        if !body.isDone {
            requestBody = body
            bodyWaitAfterHead = true
        }
    }

    /// A final response head whose body was still to come ended in the burst being read.
    private var headAwaitingBody = false

    /// Reads one burst of the server's; a final response head read in it whose body goes on
    /// past it is told once the burst is read (its row shows the status while the body
    /// streams: a trial's Server-Sent Events read "status none — still open" for seconds). A
    /// whole small response, head and body in one burst, is told once, as before.
    private func server(_ bytes: UnsafeRawBufferPointer, at now: Int64, emit: (ExchangeRecord) -> Void) -> ExchangeReader.Stop? {
        headAwaitingBody = false
        // A head part way at the burst's start was held back whole (`heldHeadStart`): none of
        // its response reached the client.
        responseStart = readingResponseHead ? 0 : nil
        heldHeadStart = nil
        let stop = readServer(bytes, at: now, emit: emit)
        if stop == nil, headAwaitingBody, readingResponseBody, let open = pending.first(where: { !$0.responseDone }) { emit(open.record) }
        return stop
    }

    private func readServer(_ bytes: UnsafeRawBufferPointer, at now: Int64, emit: (ExchangeRecord) -> Void) -> ExchangeReader.Stop? {
        var offset = 0
        while offset < bytes.count {
            // The responses a held refusal waited for all went on: its answer comes next.
            if held != nil, pending.isEmpty { return releaseHold(at: offset, at: now, emit: emit) }
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            guard let index = pending.firstIndex(where: { !$0.responseDone }) else {
                // The server spoke first: another protocol, unless tv knows the stream is HTTP
                // (then these are bytes no request asked for, below).
                if sequence == 0, !settings.knowsHTTP { return .notHTTP(NotHTTPStart(.server, rest)) }
                // Empty lines between responses are let go, as a client skips them (RFC 9112
                // §2.2); anything else answers no request. The client would take it for its next
                // request's response (response queue poisoning): the responses asked for go on,
                // these bytes do not, and the connection closes, as the plain path drops them and
                // closes its server leg. Read as the next request's, a trial's smuggled
                // `X-Smuggled: yes` response reached the client as its `GET /ok`'s and the row
                // said so, its response before its request.
                if rest.allSatisfy({ $0 == 0x0D || $0 == 0x0A }) { return nil }
                return .refused(ExchangeRefusal(failure: .responseUnasked(bytes: rest.count), answer: .close, passing: offset))
            }
            if case var body? = responseBody {
                let (wire, content) = body.consumeCounting(rest)
                offset += wire
                pending[index].record.responseWireBytes! += Int64(wire)
                pending[index].record.responseBodyBytes! += Int64(content)
                if let problem = body.failure { return refuseResponse(index, .chunkedBodyRefused(.server, problem), at: now, emit: emit) }
                if body.isDone {
                    responseBody = nil
                    pending[index].responseDone = true
                    pending[index].record.endTime = now
                    finishReady(at: now, emit: emit)
                } else {
                    responseBody = body
                }
                continue
            }
            if responseHead == nil {
                responseHead = HTTP1HeadScanner(.response, answering: pending[index].record.method)
                responseStartedAt = now
                if pending[index].record.responseTime == nil { pending[index].record.responseTime = now }
                // Where this head begins (after an interim response or the end of an earlier
                // response in the same burst, which go on).
                responseStart = offset
            }
            let (result, consumed) = responseHead!.consumeHead(rest)
            offset += consumed
            switch result {
            case .needMoreData:
                holdFrom(responseStart ?? 0, reading: .serverToClient)
                return nil
            case let .tooLong(limit, inStartLine):
                // Past tv's one head limit: the plain path's answer, tv's 502 (the head is held
                // until whole, so none of it reached the client).
                return refuseResponse(index, .responseUnreadable(HTTP1HeadParser.tooLongSentence(.response, limit, inStartLine: inStartLine)),
                                      at: now, emit: emit)
            case .malformed(let reason):
                // A head tv cannot read (a header name that is not a token, a bare CR, obs-fold,
                // a status line that is none) is not passed on: the client gets tv's 502 with the
                // reason, as the plain path answers and nginx does for "upstream sent invalid
                // header". Passed on, its row read "cut" with no status while the client got a
                // response (a trial).
                return refuseResponse(index, .responseUnreadable(reason), at: now, emit: emit)
            case .response(let head):
                responseHead = nil
                // Framing the client may read otherwise: the same.
                if let refusal = head.framingRefusal { return refuseResponse(index, .responseUnreadable(refusal), at: now, emit: emit) }
                if let stop = answer(index, head, at: now, emit: emit) { return stop }
            case .request:
                return refuseResponse(index, .responseUnreadable("A request line where a status line belongs (RFC 9112 §4)."), at: now, emit: emit)
            }
        }
        if held != nil, pending.isEmpty { return releaseHold(at: offset, at: now, emit: emit) }
        return nil
    }

    /// The response for `pending[index]` cannot be passed on: when none of it reached the client
    /// (it began in this burst), tv's 502 takes its place and ends its row `.answered`, the bytes
    /// before it going on; part way, the connection is cut and the row ends incomplete, as the
    /// plain path cuts a body it cannot delimit. The later exchanges end with the reading.
    private func refuseResponse(_ index: Int, _ failure: ConnectionFailure, at now: Int64, emit: (ExchangeRecord) -> Void) -> ExchangeReader.Stop {
        responseHead = nil
        responseBody = nil
        guard let start = responseStart else { return .refused(ExchangeRefusal(failure: failure, answer: .reset)) }
        var answered = pending.remove(at: index).record
        // Its own record: what was read of it was not passed on.
        answered.responseBodyBytes = nil
        answered.responseWireBytes = nil
        answered.contentType = nil
        answered.contentEncoding = nil
        answered.responseTime = nil
        Self.answeredByTV(&answered, status: 502, at: now)
        emit(answered)
        return .refused(ExchangeRefusal(failure: failure, answer: .status(502), passing: start))
    }

    /// A response head for `pending[index]`.
    private func answer(_ index: Int, _ head: HTTP1ResponseSummary, at now: Int64, emit: (ExchangeRecord) -> Void) -> ExchangeReader.Stop? {
        let code = head.code
        // Interim responses (RFC 9110 §15.2) precede the final one; 101 is final for the connection.
        // The response's first byte is the final response's: a 100 Continue's made an upload's
        // row read "first response byte after 200 µs" and its HAR book the upload as `receive`
        // (a trial).
        if code < 200 && code != 101 {
            pending[index].record.responseTime = nil
            return nil
        }
        // A 101 the request did not ask for (or a WebSocket accept its key does not call for)
        // would end the reading with bytes the client still reads as HTTP: refused, tv's 502 in
        // its place (RFC 9110 §15.2.2, RFC 6455 §4.1).
        if code == 101, let refusal = SwitchingProtocols.check(
            requestUpgrade: pending[index].upgrade, webSocketKey: pending[index].webSocketKey,
            upgrade: head.upgrade, webSocketAccept: head.webSocketAccept) {
            return refuseResponse(index, .switchRefused(refusal), at: now, emit: emit)
        }
        // One access to `pending` for the six fields (each `pending[i].x =` is one).
        let method = Self.takeResponse(head, into: &pending[index].record)
        if code == 101 || (method == "CONNECT" && (200 ..< 300).contains(code)) {
            // What follows is another protocol (RFC 9110 §7.8, §9.3.6): this exchange is complete.
            pending[index].record.upgrade = code == 101
            pending[index].record.state = .complete
            pending[index].record.endTime = now
            emit(pending[index].record)
            pending.remove(at: index)
            return .tunnel
        }
        let framing = head.framing
        let body = HTTPBodyScanner(framing)
        if body.isDone {
            // No body, or Content-Length: 0.
            pending[index].responseDone = true
            pending[index].record.endTime = now
            finishReady(at: now, emit: emit)
        } else {
            pending[index].untilClose = framing == .untilClose
            responseBody = body
            headAwaitingBody = true
        }
        return nil
    }

    /// Puts a final response head's fields in `record`; its method.
    private static func takeResponse(_ head: HTTP1ResponseSummary, into record: inout ExchangeRecord) -> String {
        record.status = head.code
        record.reason = head.reason
        record.contentType = head.contentType
        record.contentEncoding = head.contentEncoding
        record.responseBodyBytes = 0
        record.responseWireBytes = 0
        return record.method
    }

    /// Whether a response body is being walked (a pattern: the scanner's `!= nil` copies it).
    var readingResponseBody: Bool {
        if case .some = responseBody { return true }
        return false
    }

    /// Whether a response head is part way.
    var readingResponseHead: Bool {
        if case .some = responseHead { return true }
        return false
    }

    /// Emits and drops, in order, the exchanges at the front whose request and response ended.
    private func finishReady(at now: Int64, emit: (ExchangeRecord) -> Void) {
        // No binding of `pending.first`: out of the queue, the record is then this one's alone,
        // and its writes below do not copy its fields (`ExchangeRecord` is copy-on-write).
        while !pending.isEmpty, pending[0].requestDone && pending[0].responseDone {
            var record = pending.removeFirst().record
            record.state = .complete
            record.endTime = max(record.endTime ?? now, now)
            emit(record)
        }
    }

    /// Ends every exchange still open at `now`: a response delimited by the close whose request
    /// ended is complete; so is one whose whole final response came before any byte of its
    /// request's body, which the client then never sent (RFC 9110 §10.1.1: a 417 to
    /// `Expect: 100-continue`, or any early answer; a trial's 417 read "cut", and its end came
    /// before its response); anything else incomplete.
    func end(at now: Int64, emit: (ExchangeRecord) -> Void) {
        defer {
            // A refused request whose answer still waited: never sent, never answered.
            if var row = heldRecord {
                heldRecord = nil
                held = nil
                Self.refusedUnanswered(&row, at: now)
                emit(row)
            }
        }
        for entry in pending {
            var record = entry.record
            // The response is whole: done, or delimited by this close (a re-check's 417 without
            // Content-Length read "cut").
            let responseWhole = entry.responseDone || (entry.untilClose && readingResponseBody)
            let answeredBeforeBody = responseWhole && !entry.requestDone && record.requestBodyBytes == 0
            record.state = answeredBeforeBody || (entry.untilClose && entry.requestDone && readingResponseBody) ? .complete : .incomplete
            record.endTime = answeredBeforeBody && entry.responseDone ? (record.endTime ?? now) : now
            // Never before what it saw: the end's time was read when the leg's end was, which
            // can precede a burst of the same loop turn (a trial's reset read "first response
            // byte after 497 µs; ended after 458 µs").
            record.endTime = max(record.endTime ?? now, record.responseTime ?? record.requestTime, record.requestTime)
            emit(record)
        }
        pending.removeAll()
    }
}
