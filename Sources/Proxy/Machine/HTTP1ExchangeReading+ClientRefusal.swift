import FlowTerms
import Wire

/// The client's bytes `HTTP1ExchangeReading` refuses (`ExchangeRefusal`), and tv's answer in
/// their place: at once when no earlier request waits for its response, else once those
/// responses have gone on (`ExchangeRefusal.awaitsResponses`, `held`), the requests before the
/// refused one going on and being answered as ever.
extension HTTP1ExchangeReading {
    /// A request head that is not forwarded (`ExchangeReader.Stop.refused`): its line (and Host,
    /// when it could be read), if salvaged, as a row; tv's `status` answers it (`refuseClient`:
    /// 400, or 431 / 414 for a head past tv's limit). `start`: where it began in this burst
    /// (nil: in an earlier one, whose bytes the driver held back).
    func refuseRequestHead(_ line: MalformedRequestLine?, host: String?, reason: String, status: Int = 400, from start: Int?, at now: Int64,
                                   emit: (ExchangeRecord) -> Void) -> ExchangeReader.Stop? {
        var record: ExchangeRecord?
        if let line {
            sequence += 1
            let target = ExchangeTarget(line.target, keepsQuery: settings.keepsQuery)
            record = ExchangeRecord(
                flowID: settings.flowID, sequence: sequence, httpVersion: line.version, method: line.method,
                scheme: settings.target?.scheme ?? target.scheme ?? settings.scheme,
                authority: target.authority ?? host ?? settings.target?.authority,
                path: target.path, queryRemoved: target.queryRemoved, requestTime: startedAt, connect: line.method == "CONNECT")
        }
        return refuseClient(.requestUnreadable(reason), row: record, from: start, answer: .status(status), at: now, emit: emit)
    }

    /// The body of the last request broke its chunked framing or went past tv's bound: not
    /// forwarded. Forwarded, the bytes after it reached the server unread (a trial's
    /// `10000000000000002`, which a 64-bit server reads as 2). Begun in this burst (`start`),
    /// none of the request went on: refused whole, as a head is (`refuseClient`). Begun in an
    /// earlier one, its head reached the server: tv's 400 when it is the only request open and
    /// no byte of its response came (its row reads so), else the connection is reset (an answer
    /// would be read as an earlier request's, and the server waits for the rest of this body).
    func refuseRequestBody(_ problem: ChunkedBodyProblem, from start: Int?, at now: Int64, emit: (ExchangeRecord) -> Void) -> ExchangeReader.Stop? {
        let failure = ConnectionFailure.chunkedBodyRefused(.client, problem)
        if let start {
            requestBody = nil
            return refuseClient(failure, row: pending.removeLast().record, told: true, from: start, answer: .status(400), at: now, emit: emit)
        }
        guard pending.count == 1, pending[0].record.responseTime == nil, !pending[0].responseDone,
              !readingResponseHead, !readingResponseBody else {
            return .refused(ExchangeRefusal(failure: failure, answer: .reset))
        }
        var record = pending.removeLast().record
        requestBody = nil
        Self.answeredByTV(&record, status: 400, at: now)
        emit(record)
        return .refused(ExchangeRefusal(failure: failure, answer: .status(400)))
    }

    /// The client's bytes from `start` on (where the refused request begins in this burst; nil:
    /// it began in an earlier one, and the burst is held back whole) are not forwarded, and
    /// `answer` takes their place. When no earlier request waits for its response, at once:
    /// the row of the refused request (`row`, when it has one) ends answered by tv. Else what
    /// came before `start` goes on, and so do the responses to it (a trial's pipelined
    /// `GET /first` before a `G\x01T /second` never reached nginx, and its client got a bare
    /// close): the row is told open, the client is read no more, and the answer waits until
    /// those responses have all gone on (`held`, `releaseHold`), where it can only be read as
    /// the refused request's (RFC 9112 §9.3.2: responses in the order of the requests).
    /// `told`: the row was told open already (its head was read whole).
    func refuseClient(_ failure: ConnectionFailure, row: ExchangeRecord?, told: Bool = false, from start: Int?, answer: ExchangeRefusal.Answer,
                              at now: Int64, emit: (ExchangeRecord) -> Void) -> ExchangeReader.Stop? {
        var refusal = ExchangeRefusal(failure: failure, answer: answer, passing: start ?? 0)
        guard pending.isEmpty else {
            refusal.awaitsResponses = true
            held = refusal
            holdToTell = refusal
            requestHead = nil
            requestBody = nil
            if let row {
                heldRecord = row
                if !told { emit(row) }
            }
            return nil
        }
        if var row {
            if case .status(let status) = answer { Self.answeredByTV(&row, status: status, at: now) } else { Self.refusedUnanswered(&row, at: now) }
            emit(row)
        }
        return .refused(refusal)
    }

    /// Every response the held refusal waited for went on (`held`): what came of the server's
    /// burst up to `offset` goes on, and the refusal's answer comes now, its row ending with it.
    func releaseHold(at offset: Int, at now: Int64, emit: (ExchangeRecord) -> Void) -> ExchangeReader.Stop {
        var refusal = held!
        held = nil
        holdToTell = nil
        refusal.awaitsResponses = false
        refusal.passing = offset
        if var row = heldRecord {
            heldRecord = nil
            if case .status(let status) = refusal.answer { Self.answeredByTV(&row, status: status, at: now) } else { Self.refusedUnanswered(&row, at: now) }
            emit(row)
        }
        return .refused(refusal)
    }

    /// tv answers the request waiting for its response itself and closes (a 504 for a silent
    /// server): the held refusal's answer will never come, and its row ends refused, unanswered,
    /// now (read as the held answer's, it would have said a 400 tv never sent).
    func abandonHold(at now: Int64, emit: (ExchangeRecord) -> Void) {
        held = nil
        holdToTell = nil
        guard var row = heldRecord else { return }
        heldRecord = nil
        Self.refusedUnanswered(&row, at: now)
        emit(row)
    }

    /// `record` as refused by tv and never answered (the connection ended before its answer
    /// could come): `answered` with no status, as the views say it ("refused by tv"); it never
    /// reached the server, so it is not `incomplete` (a trial's 256 rows of pipelined requests
    /// tv never sent said "incomplete").
    static func refusedUnanswered(_ record: inout ExchangeRecord, at now: Int64) {
        record.state = .answered
        record.status = nil
        record.reason = nil
        record.responseTime = nil
        record.endTime = max(now, record.requestTime)
    }

    /// `record` as answered by tv itself with `status` at `now` (`ExchangeState.answered`).
    static func answeredByTV(_ record: inout ExchangeRecord, status: Int, at now: Int64) {
        record.state = .answered
        record.status = status
        record.reason = HTTPReasonPhrase.of(status)
        if record.responseTime == nil { record.responseTime = now }
        record.endTime = now
    }
}
