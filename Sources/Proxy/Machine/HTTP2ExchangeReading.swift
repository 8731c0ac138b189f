import FlowTerms
import Wire

/// The HTTP/2 half of `ExchangeReader`: each direction's frames through `HTTP2FrameScanner`,
/// header blocks through that direction's HPACK inflater (nghttp2's; RFC 7541), one exchange
/// per client-opened stream (RFC 9113 §8.1). A stream's exchange ends when both sides sent
/// END_STREAM (complete), when the server reset it with NO_ERROR after its whole response
/// (complete: §8.1's early answer), when the client reset it otherwise (cancelled), or when the
/// server did (incomplete). A stream the
/// server pushes (PUSH_PROMISE, §8.4) is an exchange too, its request the promise's fields (its
/// row's stream id even): the client received the response, and the rows left it out while
/// `tv turns --http` showed it (a trial).
///
/// At most `Settings.maxOpen` streams are followed at once. At that bound a stream whose whole
/// response came is let go, told as `end` tells it (complete: the client has its answer), to make
/// room; when none has, the new stream is read without a row, its header block decoded so HPACK
/// stays in step, and counted (`streamsLeftOut`); streams after it get rows once there is room.
/// Reading stopped there before ("More than 256 streams were open at once"), and a client that
/// held 300 streams open against a server that set no limit sent 3 more requests with no row and
/// no count (a hostile-input trial).
///
/// A stream the client resets before its response head came stays followed a while for the
/// head a server sends anyway (a rapid reset: HEADERS then RST_STREAM, and nginx answered each
/// 200): it ends `cancelled` with the server's status when the head comes, or without one when
/// the server resets it, when room is needed (such streams are let go first), at `settle` once
/// `cancelledWaitMicros` passed, or when the connection ends. Its sizes are what came before the
/// reset: the client ignores the frames it receives on a stream after resetting it (RFC 9113
/// §5.1), so a head in flight gives the row the server's status and nothing more.
final class HTTP2ExchangeReading {
    struct Stream {
        var record: ExchangeRecord
        var requestDone: Bool
        var responseDone = false
        var finalSeen = false
        /// When the client reset the stream before its response head came (nil: it did not).
        var cancelledAt: Int64?
    }

    /// How long a stream the client reset waits for its response head (µs): 1 s. The trial's
    /// nginx answered a rapid reset's streams within milliseconds; a browser's cancelled request
    /// whose server says nothing more reads open that long at most (`ExchangeReader.settle`).
    static let cancelledWaitMicros: Int64 = 1_000_000

    private let settings: ExchangeReader.Settings
    private var clientFrames = HTTP2FrameScanner.relayed(expectingPreface: true)
    private var serverFrames = HTTP2FrameScanner.relayed(expectingPreface: false)
    /// Decoders of the client's and the server's header blocks (nil: nghttp2 could not make one).
    private let requestHeaders: HPACKInflater?
    private let responseHeaders: HPACKInflater?
    private var streams: [UInt32: Stream] = [:]
    /// Streams whose final response head came in the burst being read.
    private var headed: [UInt32] = []
    private var sequence = 0
    /// tv could not start an HPACK decoder: the reading stops, the bytes go on.
    private var failure: String?
    /// The first connection error met while handling a frame (an HPACK failure, a flood), with
    /// where its bytes begin in the burst (`HTTP2FrameScanner.failureStart`'s terms).
    var connectionError: (sentBy: ConnectionFailure.Side, kind: HTTP2ConnectionError.Kind, code: UInt32, start: Int?)?
    /// Frames that carry no request or response, counted per side (`HTTP2FloodPolicy`).
    var floods = HTTP2FloodPolicy()
    /// The highest stream the server promised (PUSH_PROMISE).
    var highestPromised: UInt32 = 0
    /// The first GOAWAY with an error code, either side's, until taken (`takeGoAway`).
    private var goaway: HTTP2GoAway?
    private var goawayTaken = false
    /// The first malformed request read (`HTTP2MalformedRequest`), until taken (`takeMalformed`).
    private var malformed: HTTP2MalformedRequest?
    private var malformedTaken = false
    /// The highest stream id the client opened a stream with: a new stream's id is higher than
    /// every one before it (RFC 9113 §5.1.1), so a client header block on an id at or below it
    /// that is not open is the trailers of a stream let go or left out (or breaks the rules) and
    /// opens no exchange.
    var highestClientStream: UInt32 = 0
    /// Streams opened while `Settings.maxOpen` were followed and none could be let go: read
    /// without a row, counted.
    private(set) var streamsLeftOut = 0
    /// Streams followed whose whole response came while their request goes on: the ones let go
    /// when the bound is reached and no cancelled stream waits.
    private var answeredOpen = 0
    /// Streams the client reset that wait for their response head: the first let go.
    private(set) var cancelledWaiting = 0
    /// A stream was let go or left out while it may still be open: the reader no longer knows
    /// when every stream has ended (`isBetweenExchanges`).
    private var untracked = false

    /// The first malformed request read, once (nil: none, or already taken).
    func takeMalformed() -> HTTP2MalformedRequest? {
        guard let malformed, !malformedTaken else { return nil }
        malformedTaken = true
        return malformed
    }

    /// The first GOAWAY with an error code read, once (nil: none, or already taken).
    func takeGoAway() -> HTTP2GoAway? {
        guard let goaway, !goawayTaken else { return nil }
        goawayTaken = true
        return goaway
    }

    init(_ settings: ExchangeReader.Settings) {
        self.settings = settings
        requestHeaders = try? HPACKInflater()
        responseHeaders = try? HPACKInflater()
    }

    /// No stream is open (every exchange read so far has ended); false for the rest of the
    /// connection once a stream was let go or left out at `Settings.maxOpen` (its end is not
    /// followed: tv's stop resets such a connection rather than close it between exchanges).
    var isBetweenExchanges: Bool { streams.isEmpty && !untracked }

    /// Where, in the server's last burst, an RST_STREAM(NO_ERROR) after its stream's whole
    /// response began; the relay writes the burst in two records there (`takeSplit`).
    private var splitBefore: Int?

    /// The offset to write the server's last burst apart at, once: an early answer's
    /// RST_STREAM(NO_ERROR) goes in a record of its own after the response. Coalesced with the
    /// response into one record (tv's relay joins what it reads together), Debian 12's curl
    /// (7.88, nghttp2 1.52) failed the upload with "Stream error in the HTTP/2 framing layer"
    /// where it showed nginx's 413 directly; nginx sends the reset in a record of its own (a
    /// trial, tshark).
    func takeSplit() -> Int? {
        defer { splitBefore = nil }
        return splitBefore
    }

    /// Every stream open, as it stands (sizes so far), by stream id (the order they opened).
    func eachOpen(_ emit: (ExchangeRecord) -> Void) {
        for id in streams.keys.sorted() { emit(streams[id]!.record) }
    }

    /// Reads one burst; returns why reading must stop, if it must.
    func feed(_ bytes: UnsafeRawBufferPointer, _ direction: Direction, at now: Int64, emit: (ExchangeRecord) -> Void) -> ExchangeReader.Stop? {
        if direction == .clientToServer {
            clientFrames.feed(bytes) { event, start in client(event, start, at: now, emit: emit) }
            // Read as HTTP/2 only where it is known to be (ALPN h2, or the preface came): bytes
            // that break its rules are refused, from the first byte on (`HTTP2ConnectionError`).
            // An error met while handling a frame came before any the scanner met after it.
            if let stop = connectionStop() { return stop }
            if let reason = clientFrames.failure {
                return refusal(.client, .malformed(reason), code: clientFrames.failureCode, start: clientFrames.failureStart)
            }
        } else {
            headed.removeAll(keepingCapacity: true)
            serverFrames.feed(bytes) { event, start in server(event, start, at: now, emit: emit) }
            if let stop = connectionStop() { return stop }
            if let reason = serverFrames.failure {
                return refusal(.server, .malformed(reason), code: serverFrames.failureCode, start: serverFrames.failureStart)
            }
            // A final response head whose stream goes on past this burst is told once now, so its
            // row shows the status while the body streams (HTTP/1 does the same); a response
            // whole within the burst is told once, at its end, as before.
            for id in headed { if let stream = streams[id], !stream.responseDone { emit(stream.record) } }
        }
        return failure.map { .malformed($0) }
    }

    private func client(_ event: HTTP2FrameScanner.Event, _ start: Int?, at now: Int64, emit: (ExchangeRecord) -> Void) {
        guard failure == nil, connectionError == nil else { return }
        guard count(event, from: .client, start) else { return }
        switch event {
        case let .headerBlock(id, endStream, _, block):
            var fields = HTTP2RequestFields()
            guard decode(block, with: requestHeaders, from: .client, start, into: { fields.take($0, $1, admitted: $2) }) else { return }
            if let index = streams.index(forKey: id) {
                // Trailers (RFC 9113 §8.1).
                if endStream {
                    streams.values[index].requestDone = true
                    streams.values[index].record.requestEndTime = now
                    finishIfDone(index, at: now, emit: emit)
                }
                return
            }
            guard id > highestClientStream else { return }
            highestClientStream = id
            fields.finish()
            if let rule = fields.broken, malformed == nil { malformed = HTTP2MalformedRequest(streamID: id, rule: rule) }
            guard makeRoom(at: now, emit: emit) else {
                streamsLeftOut += 1
                return
            }
            open(id, fields, requestEnded: endStream, at: now, emit: emit)
        case let .data(id, count, endStream):
            guard let index = streams.index(forKey: id) else { return }
            streams.values[index].record.requestBodyBytes += Int64(count)
            streams.values[index].record.requestWireBytes += Int64(count)
            if endStream {
                streams.values[index].requestDone = true
                streams.values[index].record.requestEndTime = now
                finishIfDone(index, at: now, emit: emit)
            }
        case let .reset(id, code, _):
            // The client stops a stream whose whole response it has (NO_ERROR or CANCEL: curl
            // cancels its upload once nginx's early 413 is in): the exchange is complete, its
            // request body what was sent before (a full suite read one such 413 "cut").
            guard let index = streams.index(forKey: id) else { return }
            if code == 0 || code == 8, streams.values[index].responseDone {
                streams.values[index].requestDone = true
                finishIfDone(index, at: now, emit: emit)
                return
            }
            cancel(index, at: now, emit: emit)
        case let .settings(size, frameSize):
            // The client's table size bounds the server's encoder (RFC 9113 §6.5.2); only a
            // larger bound is applied at once (a smaller one takes effect after the ACK).
            if let size, size > 4_096 { responseHeaders?.setMaximumTableSize(size) }
            // So does its frame size the server's frames (the largest said: a smaller one holds
            // only once the server has read it).
            if let frameSize { serverFrames.maxFrameSize = max(serverFrames.maxFrameSize ?? 0, frameSize) }
        case .ping, .inert:
            break
        case let .goaway(last, code, debug):
            if goaway == nil { goaway = HTTP2GoAway(.clientToServer, lastStreamID: last, errorCode: code, debug: debug) }
        }
    }

    private func server(_ event: HTTP2FrameScanner.Event, _ start: Int?, at now: Int64, emit: (ExchangeRecord) -> Void) {
        guard failure == nil, connectionError == nil else { return }
        guard count(event, from: .server, start) else { return }
        switch event {
        case let .headerBlock(_, _, promised?, block):
            // The promised request, in the server's header table.
            var fields = HTTP2RequestFields()
            guard decode(block, with: responseHeaders, from: .server, start, into: { fields.take($0, $1, admitted: $2) }) else { return }
            highestPromised = max(highestPromised, promised)
            guard streams[promised] == nil else { return }
            guard makeRoom(at: now, emit: emit) else {
                streamsLeftOut += 1
                return
            }
            open(promised, fields, requestEnded: true, at: now, emit: emit)
        case let .headerBlock(id, endStream, nil, block):
            var fields = HTTP2ResponseFields()
            guard decode(block, with: responseHeaders, from: .server, start, into: { if $2 { fields.take($0, $1) } }) else { return }
            guard let index = streams.index(forKey: id) else { return }
            // In place (`values[index]`): reading `streams[id]` copies the whole record each time.
            let final = streams.values[index].finalSeen
            answer(&streams.values[index], fields, at: now)
            if streams.values[index].cancelledAt != nil {
                // The head the client gave up waiting for: its status is the row's.
                if streams.values[index].finalSeen { emit(close(index, .cancelled, at: now)) }
                return
            }
            if !final, streams.values[index].finalSeen, !endStream { headed.append(id) }
            if endStream {
                responseEnded(index)
                finishIfDone(index, at: now, emit: emit)
            }
        case let .data(id, count, endStream):
            guard let index = streams.index(forKey: id) else { return }
            streams.values[index].record.responseBodyBytes = (streams.values[index].record.responseBodyBytes ?? 0) + Int64(count)
            streams.values[index].record.responseWireBytes = (streams.values[index].record.responseWireBytes ?? 0) + Int64(count)
            if endStream {
                responseEnded(index)
                finishIfDone(index, at: now, emit: emit)
            }
        case let .reset(id, code, start):
            // A complete response, then NO_ERROR: the server needs no more of the request and
            // asks the client to stop sending it (RFC 9113 §8.1), as nginx does after answering a
            // POST whose body it did not read. The exchange is complete, its request body what
            // the client sent before; it was said cut, with the response whole (a trial).
            if code == 0, let index = streams.index(forKey: id), streams.values[index].responseDone {
                streams.values[index].requestDone = true
                finishIfDone(index, at: now, emit: emit)
                // Sent apart from the response before it, as the server sent it (`takeSplit`).
                if let start, start > 0, splitBefore == nil { splitBefore = start }
                return
            }
            reset(id, at: now, emit: emit)
        case let .settings(size, frameSize):
            if let size, size > 4_096 { requestHeaders?.setMaximumTableSize(size) }
            if let frameSize { clientFrames.maxFrameSize = max(clientFrames.maxFrameSize ?? 0, frameSize) }
        case .ping, .inert:
            break
        case let .goaway(last, code, debug):
            if goaway == nil { goaway = HTTP2GoAway(.serverToClient, lastStreamID: last, errorCode: code, debug: debug) }
        }
    }

    /// Whether a new stream can be followed: fewer than `Settings.maxOpen` are, or one whose
    /// whole response came can be let go (the first opened of them), told as `end` tells it:
    /// complete, the client had its answer; its request's later bytes go uncounted.
    private func makeRoom(at now: Int64, emit: (ExchangeRecord) -> Void) -> Bool {
        guard streams.count >= settings.maxOpen else { return true }
        // A cancelled stream goes first, told without the head it waited for; it needs no
        // following after (the client is done with it).
        if cancelledWaiting > 0, let oldest = oldest(where: { $0.cancelledAt != nil }) {
            emit(close(oldest, .cancelled, at: now))
            return true
        }
        untracked = true
        guard answeredOpen > 0, let oldest = oldest(where: \.responseDone) else { return false }
        emit(close(oldest, .complete, at: now))
        return true
    }

    /// The first opened of the streams that `matches` (a scan of at most `Settings.maxOpen`).
    private func oldest(where matches: (Stream) -> Bool) -> Dictionary<UInt32, Stream>.Index? {
        var oldest: Dictionary<UInt32, Stream>.Index?
        var index = streams.startIndex
        while index != streams.endIndex {
            if matches(streams.values[index]),
               oldest.map({ streams.values[index].record.sequence < streams.values[$0].record.sequence }) ?? true { oldest = index }
            index = streams.index(after: index)
        }
        return oldest
    }

    /// The client reset the stream at `index` (not after its whole response with NO_ERROR or
    /// CANCEL, which completes it): told `cancelled` at once when its response head came,
    /// else kept for the head a server may send anyway.
    private func cancel(_ index: Dictionary<UInt32, Stream>.Index, at now: Int64, emit: (ExchangeRecord) -> Void) {
        guard streams.values[index].cancelledAt == nil else { return }
        if streams.values[index].finalSeen || streams.values[index].responseDone {
            emit(close(index, .cancelled, at: now))
            return
        }
        streams.values[index].cancelledAt = now
        cancelledWaiting += 1
    }

    /// Forgets the stream at `index`, its record ended `state` at `now` (a cancelled stream
    /// without its response head ends when the client reset it).
    private func close(_ index: Dictionary<UInt32, Stream>.Index, _ state: ExchangeState, at now: Int64) -> ExchangeRecord {
        let stream = streams.remove(at: index).value
        if stream.responseDone { answeredOpen -= 1 }
        if stream.cancelledAt != nil { cancelledWaiting -= 1 }
        var record = stream.record
        record.state = stream.cancelledAt != nil ? .cancelled : state
        record.endTime = stream.cancelledAt.map { stream.finalSeen ? max($0, now) : $0 } ?? now
        return record
    }

    /// Ends the cancelled streams whose wait for their response head is over at `now`, in the
    /// order they opened.
    func settle(at now: Int64, emit: (ExchangeRecord) -> Void) {
        guard cancelledWaiting > 0 else { return }
        let due = streams.filter { $0.value.cancelledAt.map { now - $0 >= Self.cancelledWaitMicros } ?? false }
            .sorted { $0.value.record.sequence < $1.value.record.sequence }.map(\.key)
        for id in due { emit(close(streams.index(forKey: id)!, .cancelled, at: now)) }
    }

    /// The response on the stream at `index` ended (END_STREAM).
    private func responseEnded(_ index: Dictionary<UInt32, Stream>.Index) {
        guard !streams.values[index].responseDone else { return }
        streams.values[index].responseDone = true
        answeredOpen += 1
    }

    /// A new exchange on stream `id` from its request fields (the client's HEADERS, or the
    /// server's PUSH_PROMISE, whose request has ended as it is promised).
    private func open(_ id: UInt32, _ fields: HTTP2RequestFields, requestEnded: Bool, at now: Int64, emit: (ExchangeRecord) -> Void) {
        sequence += 1
        let method = fields.method ?? ""
        let target = ExchangeTarget(fields.path ?? (method == "CONNECT" ? fields.authority ?? "" : ""), keepsQuery: settings.keepsQuery)
        let record = ExchangeRecord(
            flowID: settings.flowID, sequence: sequence, streamID: Int64(id), httpVersion: "HTTP/2", method: method,
            scheme: settings.target?.scheme ?? fields.scheme ?? settings.scheme,
            authority: fields.authority ?? fields.host ?? settings.target?.authority, path: target.path,
            queryRemoved: target.queryRemoved, requestTime: now, upgrade: fields.protocolName,
            connect: method == "CONNECT", requestEndTime: requestEnded ? now : nil)
        streams[id] = Stream(record: record, requestDone: requestEnded)
        emit(record)
    }

    /// Decodes one header block, whole (the table must follow it), handing `take` each field and
    /// whether it is within one block's room of `HeaderListLimits.standard`, as the readers of
    /// kept turns keep them (the rest would never be shown there either, and are not copied);
    /// false (and `failure` set) when it cannot be decoded.
    ///
    /// The trial's HPACK bomb (60,000 one-byte references to a 4,000-byte field, 240 MB decoded)
    /// left tv at 33 MB: nghttp2 hands a referenced table entry without a copy, and `take` copies
    /// only the few fields a row keeps, once each (a repeated one keeps its first), so memory
    /// stays one field's. The room bounds the copying too: each of 60,000 `:path` references was
    /// a 4,000-byte string.
    /// A block HPACK cannot decode is a COMPRESSION_ERROR from `side` (RFC 9113 §4.3), its bytes
    /// from `start` on (its first frame) refused.
    private func decode(_ block: UnsafeRawBufferPointer, with inflater: HPACKInflater?, from side: ConnectionFailure.Side, _ start: Int?,
                        into take: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, Bool) -> Void) -> Bool {
        guard let inflater else {
            failure = "tv could not start an HPACK decoder."
            return false
        }
        var room = HeaderBlockAdmission(limits: .standard)
        do throws(HPACKError) {
            try inflater.decode(block) { name, value in
                take(name, value, room.admit(name: name.count, value: value.count))
            }
            return true
        } catch {
            connectionError = (side, .malformed("A header block HPACK cannot decode (RFC 7541: \(error.reason); RFC 9113 §4.3)."), 0x9, start)
            return false
        }
    }

    /// A response header block's facts on its stream: the first byte's time, and the final
    /// status (1xx other than 101 are interim, RFC 9110 §15.2) with its content type and coding.
    private func answer(_ stream: inout Stream, _ fields: HTTP2ResponseFields, at now: Int64) {
        // The final response's first byte is the response's (an interim 100's booked an upload
        // as receiving: a trial, over HTTP/1).
        if let status = fields.status, !stream.finalSeen, status >= 200 || status == 101 {
            stream.record.responseTime = now
            stream.finalSeen = true
            stream.record.status = status
            stream.record.contentType = fields.contentType
            stream.record.contentEncoding = fields.contentEncoding
            stream.record.responseBodyBytes = 0
            stream.record.responseWireBytes = 0
        }
    }

    /// The followed stream `id`'s index (nil: not followed).
    func streamIndex(_ id: UInt32) -> Dictionary<UInt32, Stream>.Index? { streams.index(forKey: id) }

    /// Whether the response on the stream at `index` ended.
    func streamResponseDone(_ index: Dictionary<UInt32, Stream>.Index) -> Bool { streams.values[index].responseDone }

    /// Emits the stream at `index` as complete, and forgets it, once both directions ended.
    private func finishIfDone(_ index: Dictionary<UInt32, Stream>.Index, at now: Int64, emit: (ExchangeRecord) -> Void) {
        guard streams.values[index].requestDone && streams.values[index].responseDone else { return }
        floods.exchangeCompleted()
        emit(close(index, .complete, at: now))
    }

    /// The server reset stream `id`: incomplete (cancelled, when the client had reset it first).
    private func reset(_ id: UInt32, at now: Int64, emit: (ExchangeRecord) -> Void) {
        guard let index = streams.index(forKey: id) else { return }
        emit(close(index, .incomplete, at: now))
    }

    /// Ends every stream still open, in the order they were opened: incomplete, but for one
    /// whose whole response came (the client had its answer; its upload stopped with the
    /// connection, as it may once a server answers early, RFC 9113 §8.1: a full suite read one
    /// nginx 413 "cut" when curl closed the connection rather than cancelling the stream), and
    /// one the client reset, cancelled when it did.
    func end(at now: Int64, emit: (ExchangeRecord) -> Void) {
        for stream in streams.values.sorted(by: { $0.record.sequence < $1.record.sequence }) {
            var record = stream.record
            record.state = stream.cancelledAt != nil ? .cancelled : stream.responseDone ? .complete : .incomplete
            record.endTime = stream.cancelledAt ?? now
            emit(record)
        }
        streams.removeAll()
        answeredOpen = 0
        cancelledWaiting = 0
    }
}
