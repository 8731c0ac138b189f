import Wire
import Foundation
import Recording
import FlowTerms

/// HTTP/2 (RFC 9113) read from a flow's turns: frames parsed per direction across turns, header
/// blocks decoded by one HPACK inflater per direction in the order they were sent, streams
/// gathered into request/response pairs with their bodies, and connection frames summarised in
/// one line each.
///
/// A side stops being read at the first thing that breaks its framing or its HPACK state (said in
/// `problems`), and where its recording stopped (budget cut, lost bytes).
final class HTTP2Reader {
    /// A request or response being assembled from frames.
    private struct Builder {
        var headers: [HTTPHeader]
        var trailers: [HTTPHeader] = []
        var body: [UInt8] = []
        var sawData = false
        var ended = false
        /// The recording left out some of the body (`HTTP2BodyLimit`: a DATA frame tv shortened).
        var shortened = false
        var turn: Int
        var offset: Int64
        var lastTurn: Int
        var lastOffset: Int64
        var headSize: Int
        /// Bytes of header fields kept of the message's blocks (`HeaderListLimits`' measure).
        var headerKept = 0
        /// Fields left out of its first block, and of its trailer blocks (`HeaderBlockAdmission`).
        var headersLeftOut: HeaderListCut?
        var trailersLeftOut: HeaderListCut?
    }

    private struct Stream {
        var request: Builder?
        var interim: [Builder] = []
        var response: Builder?
        var pushed = false
        var resetBy: String?
    }

    /// A header block waiting for its CONTINUATION frames (RFC 9113 §6.10).
    private struct PendingBlock {
        var streamID: UInt32
        var promised: UInt32?
        var endStream: Bool
        var fragments: [UInt8]
        var turn: Int
        var offset: Int64
    }

    private var parsers = [HTTP2FrameParser(), HTTP2FrameParser()]
    private var inflaters: [HPACKInflater?]
    private var stopped = [false, false]
    private var cutAt: [Int?] = [nil, nil]
    private var gapAt: [Int?] = [nil, nil]
    private var prefaceSeen = false
    private var pending: [PendingBlock?] = [nil, nil]
    private var streams: [UInt32: Stream] = [:]
    private var order: [UInt32] = []
    private var conversation = HTTPConversation(version: "HTTP/2")
    private var current = (turn: 0, offset: Int64(0))
    /// The reading's room for header fields: what a block keeps of its decoded fields.
    private var headerBudget: HeaderListBudget

    private init(headerLimits: HeaderListLimits) {
        inflaters = [try? HPACKInflater(), try? HPACKInflater()]
        headerBudget = HeaderListBudget(limits: headerLimits)
    }

    /// Reads `turns`, keeping of the header blocks' fields what `headerLimits` allow one reading.
    static func read(_ turns: [RecordedTurn], headerLimits: HeaderListLimits = .standard) -> HTTPConversation {
        let reader = HTTP2Reader(headerLimits: headerLimits)
        for turn in turns { reader.take(turn) }
        return reader.finish()
    }

    private func take(_ recorded: RecordedTurn) {
        let turn = recorded.turn
        let side = turn.direction == .clientToServer ? 0 : 1
        guard !stopped[side] else { return }
        if turn.incomplete {
            gapAt[side] = turn.number
            stop(side, turn: turn.number, "Reading this side stops here: turn \(turn.number) lost bytes while recording (the recording queue was full), so its frames cannot be found.")
            return
        }
        current = (turn.number, turn.startOffset)
        parsers[side].append(recorded.bytes)
        if side == 0 && !prefaceSeen {
            switch parsers[0].consumePreface() {
            case nil:
                break
            case true?:
                prefaceSeen = true
            case false?:
                stop(0, turn: turn.number, "The client side does not start with the HTTP/2 connection preface (RFC 9113 §3.4).")
                return
            }
        }
        if side == 1 || prefaceSeen {
            while !stopped[side], let frame = parsers[side].next() {
                handle(frame, side: side)
            }
        }
        if turn.truncated { cutAt[side] = turn.number }
    }

    private func direction(_ side: Int) -> Direction { side == 0 ? .clientToServer : .serverToClient }

    private func stop(_ side: Int, turn: Int, _ reason: String) {
        stopped[side] = true
        conversation.problems.append(.init(direction: direction(side), turn: turn, reason: reason))
    }

    private func line(_ side: Int, _ text: String) {
        conversation.connectionLines.append(.init(direction: direction(side), turn: current.turn, offset: current.offset, text: text))
    }

    private func stream(_ id: UInt32) -> Stream {
        if let stream = streams[id] { return stream }
        order.append(id)
        return Stream()
    }

    // MARK: frames

    private func handle(_ frame: HTTP2Frame, side: Int) {
        if let block = pending[side] {
            guard frame.knownType == .continuation, frame.streamID == block.streamID else {
                stop(side, turn: current.turn, "A header block on stream \(block.streamID) is followed by \(HTTP2FrameType.name(of: frame.type)) instead of CONTINUATION (RFC 9113 §6.10); this side cannot be read on.")
                return
            }
        }
        guard let type = frame.knownType else {
            line(side, "unknown frame \(HTTP2FrameType.name(of: frame.type)) on stream \(frame.streamID), \(frame.payload.count) bytes (ignored, RFC 9113 §5.5)")
            return
        }
        switch type {
        case .data: data(frame, side: side)
        case .headers: headers(frame, side: side)
        case .continuation: continuation(frame, side: side)
        case .pushPromise: pushPromise(frame, side: side)
        case .settings: settings(frame, side: side)
        case .ping: ping(frame, side: side)
        case .goaway: goaway(frame, side: side)
        case .windowUpdate: windowUpdate(frame, side: side)
        case .rstStream: rstStream(frame, side: side)
        case .priority: line(side, "PRIORITY stream \(frame.streamID)")
        }
    }

    /// The payload without padding (RFC 9113 §6.1), or nil after stopping the side.
    private func unpadded(_ frame: HTTP2Frame, side: Int) -> ArraySlice<UInt8>? {
        guard frame.has(HTTP2Flags.padded) else { return frame.payload[...] }
        guard let padLength = frame.payload.first.map(Int.init), padLength < frame.payload.count else {
            stop(side, turn: current.turn, "A padded \(HTTP2FrameType.name(of: frame.type)) frame on stream \(frame.streamID) has more padding than payload (RFC 9113 §6.1); this side cannot be read on.")
            return nil
        }
        return frame.payload[1..<(frame.payload.count - padLength)]
    }

    private func data(_ frame: HTTP2Frame, side: Int) {
        guard frame.streamID != 0 else {
            stop(side, turn: current.turn, "A DATA frame on stream 0 is a protocol error (RFC 9113 §6.1); this side cannot be read on.")
            return
        }
        guard let payload = unpadded(frame, side: side) else { return }
        var s = stream(frame.streamID)
        update(&s, side: side) { builder in
            builder.body += payload
            builder.sawData = true
            if frame.has(HTTP2BodyLimit.shortened) { builder.shortened = true }
            if frame.has(HTTP2Flags.endStream) { builder.ended = true }
        }
        streams[frame.streamID] = s
    }

    private func headers(_ frame: HTTP2Frame, side: Int) {
        guard frame.streamID != 0 else {
            stop(side, turn: current.turn, "A HEADERS frame on stream 0 is a protocol error (RFC 9113 §6.2); this side cannot be read on.")
            return
        }
        guard var payload = unpadded(frame, side: side) else { return }
        if frame.has(HTTP2Flags.priority) {
            guard payload.count >= 5 else {
                stop(side, turn: current.turn, "A HEADERS frame on stream \(frame.streamID) is too short for its priority fields (RFC 9113 §6.2); this side cannot be read on.")
                return
            }
            payload = payload.dropFirst(5)
        }
        let block = PendingBlock(streamID: frame.streamID, promised: nil, endStream: frame.has(HTTP2Flags.endStream),
                                 fragments: Array(payload), turn: current.turn, offset: current.offset)
        if frame.has(HTTP2Flags.endHeaders) { decode(block, side: side) } else { pending[side] = block }
    }

    private func continuation(_ frame: HTTP2Frame, side: Int) {
        guard var block = pending[side] else {
            stop(side, turn: current.turn, "A CONTINUATION frame on stream \(frame.streamID) follows no header block (RFC 9113 §6.10); this side cannot be read on.")
            return
        }
        block.fragments += frame.payload
        if frame.has(HTTP2Flags.endHeaders) {
            pending[side] = nil
            decode(block, side: side)
        } else {
            pending[side] = block
        }
    }

    private func pushPromise(_ frame: HTTP2Frame, side: Int) {
        guard side == 1 else {
            stop(side, turn: current.turn, "The client sent PUSH_PROMISE, which only servers may send (RFC 9113 §8.4); this side cannot be read on.")
            return
        }
        guard let payload = unpadded(frame, side: side) else { return }
        guard payload.count >= 4 else {
            stop(side, turn: current.turn, "A PUSH_PROMISE frame on stream \(frame.streamID) is too short (RFC 9113 §6.6); this side cannot be read on.")
            return
        }
        let promised = HTTP2FrameParser.streamID(Array(payload.prefix(4)), at: 0)
        let block = PendingBlock(streamID: frame.streamID, promised: promised, endStream: true,
                                 fragments: Array(payload.dropFirst(4)), turn: current.turn, offset: current.offset)
        if frame.has(HTTP2Flags.endHeaders) { decode(block, side: side) } else { pending[side] = block }
    }

    /// Decodes a complete header block with this side's inflater and files the fields, as many
    /// as `headerBudget` has room for (the rest are counted: `HeaderBlockAdmission`).
    private func decode(_ block: PendingBlock, side: Int) {
        guard let inflater = inflaters[side] else {
            stop(side, turn: block.turn, "tv could not start an HPACK decoder; this side cannot be read.")
            return
        }
        // The message a block adds to when it is not a message's first (trailers).
        let open = block.promised != nil ? nil : side == 0 ? streams[block.streamID]?.request : streams[block.streamID]?.response
        var admission: HeaderBlockAdmission?
        var status: Int?
        let fields: [HTTPHeader]
        do {
            fields = try inflater.decode(block.fragments) { name, value in
                let isStatus = side == 1 && Self.named(name, ":status")
                if admission == nil {
                    // Pseudo-header fields come first (RFC 9113 §8.3): a server's block that
                    // starts with :status starts a response; any other block adds to the open one.
                    admission = headerBudget.admission(messageKept: isStatus ? 0 : open?.headerKept ?? 0)
                }
                if isStatus, status == nil, value.count <= 20 { status = Int(String(decoding: value, as: UTF8.self)) }
                return admission!.admit(name: name.count, value: value.count)
            }.map { HTTPHeader($0.name, $0.value) }
        } catch {
            inflaters[side] = nil
            stop(side, turn: block.turn, "The header block on stream \(block.streamID) cannot be decoded (HPACK: \(error.reason)); this side cannot be read on, because each block depends on the ones before it.")
            return
        }
        if let admission { headerBudget.spend(admission) }
        let kept = admission?.kept ?? 0, leftOut = admission?.cut
        var builder = Builder(headers: fields, ended: block.endStream, turn: block.turn, offset: block.offset,
                              lastTurn: block.turn, lastOffset: block.offset, headSize: block.fragments.count)
        builder.headerKept = kept
        builder.headersLeftOut = leftOut
        if let promised = block.promised {
            var s = stream(promised)
            s.pushed = true
            s.request = builder
            streams[promised] = s
            return
        }
        var s = stream(block.streamID)
        if side == 0 {
            if var request = s.request {
                request.trailers += fields
                request.headerKept += kept
                request.trailersLeftOut = HeaderListCut.adding(leftOut, to: request.trailersLeftOut)
                request.ended = request.ended || block.endStream
                request.lastTurn = block.turn
                request.lastOffset = block.offset
                s.request = request
            } else {
                s.request = builder
            }
        } else if let status {
            if (100..<200).contains(status) { s.interim.append(builder) } else { s.response = builder }
        } else if var response = s.response {
            response.trailers += fields
            response.headerKept += kept
            response.trailersLeftOut = HeaderListCut.adding(leftOut, to: response.trailersLeftOut)
            response.ended = response.ended || block.endStream
            response.lastTurn = block.turn
            response.lastOffset = block.offset
            s.response = response
        } else {
            s.response = builder
        }
        streams[block.streamID] = s
    }

    /// Applies `body` to the message `side` is sending on `s` (the request for the client, the
    /// final response — or the last interim one — for the server).
    private func update(_ s: inout Stream, side: Int, _ body: (inout Builder) -> Void) {
        let empty = Builder(headers: [], turn: current.turn, offset: current.offset, lastTurn: current.turn,
                            lastOffset: current.offset, headSize: 0)
        if side == 0 {
            var request = s.request ?? empty
            body(&request)
            request.lastTurn = current.turn
            request.lastOffset = current.offset
            s.request = request
        } else {
            var response = s.response ?? empty
            body(&response)
            response.lastTurn = current.turn
            response.lastOffset = current.offset
            s.response = response
        }
    }

    private func settings(_ frame: HTTP2Frame, side: Int) {
        if frame.has(HTTP2Flags.ack) {
            line(side, "SETTINGS ack")
            return
        }
        guard frame.streamID == 0, frame.payload.count % 6 == 0 else {
            stop(side, turn: current.turn, "A SETTINGS frame of \(frame.payload.count) bytes on stream \(frame.streamID) is malformed (RFC 9113 §6.5: stream 0, a multiple of 6 bytes); this side cannot be read on.")
            return
        }
        var parts: [String] = []
        for index in stride(from: 0, to: frame.payload.count, by: 6) {
            let id = UInt16(frame.payload[index]) << 8 | UInt16(frame.payload[index + 1])
            let value = HTTP2FrameParser.uint32(frame.payload, at: index + 2)
            parts.append("\(HTTP2SettingName.name(id))=\(value)")
            // This side's decoder limit bounds what the other side's encoder may use.
            if id == 0x1 { inflaters[1 - side]?.setMaximumTableSize(Int(value)) }
        }
        line(side, parts.isEmpty ? "SETTINGS (no parameters)" : "SETTINGS " + parts.joined(separator: " "))
    }

    private func ping(_ frame: HTTP2Frame, side: Int) {
        let data = frame.payload.map { String(format: "%02x", $0) }.joined()
        line(side, "PING" + (frame.has(HTTP2Flags.ack) ? " ack " : " ") + data)
    }

    private func goaway(_ frame: HTTP2Frame, side: Int) {
        guard frame.payload.count >= 8 else {
            stop(side, turn: current.turn, "A GOAWAY frame of \(frame.payload.count) bytes is too short (RFC 9113 §6.8); this side cannot be read on.")
            return
        }
        let last = HTTP2FrameParser.streamID(frame.payload, at: 0)
        let code = HTTP2ErrorCode.name(HTTP2FrameParser.uint32(frame.payload, at: 4))
        let debug = frame.payload.dropFirst(8)
        var text = "GOAWAY last stream \(last), \(code)"
        if !debug.isEmpty {
            let printable = debug.allSatisfy { $0 >= 0x20 && $0 < 0x7f }
            text += printable ? ", debug '\(String(decoding: debug, as: UTF8.self))'" : ", \(debug.count) bytes of debug data"
        }
        line(side, text)
    }

    private func windowUpdate(_ frame: HTTP2Frame, side: Int) {
        guard frame.payload.count == 4 else {
            stop(side, turn: current.turn, "A WINDOW_UPDATE frame of \(frame.payload.count) bytes is malformed (RFC 9113 §6.9: 4 bytes); this side cannot be read on.")
            return
        }
        let increment = HTTP2FrameParser.streamID(frame.payload, at: 0)
        line(side, "WINDOW_UPDATE " + (frame.streamID == 0 ? "connection" : "stream \(frame.streamID)") + " +\(increment)")
    }

    private func rstStream(_ frame: HTTP2Frame, side: Int) {
        guard frame.payload.count == 4 else {
            stop(side, turn: current.turn, "A RST_STREAM frame of \(frame.payload.count) bytes is malformed (RFC 9113 §6.4: 4 bytes); this side cannot be read on.")
            return
        }
        let code = HTTP2ErrorCode.name(HTTP2FrameParser.uint32(frame.payload, at: 0))
        var s = stream(frame.streamID)
        s.resetBy = code
        streams[frame.streamID] = s
        line(side, "RST_STREAM stream \(frame.streamID) \(code)")
    }

    // MARK: the end

    /// The kept part of a DATA frame the recording stopped inside belongs to its stream's body.
    private func keepPartialData(side: Int) {
        guard let header = parsers[side].pendingHeader, header.type == HTTP2FrameType.data.rawValue, header.streamID != 0,
              let (flags, payload) = parsers[side].pendingPayload else { return }
        var data = payload
        if flags & HTTP2Flags.padded != 0 {
            guard let padLength = data.first.map(Int.init) else { return }
            data = data.dropFirst().prefix(max(0, header.length - 1 - padLength))
        }
        guard !data.isEmpty else { return }
        var s = stream(header.streamID)
        update(&s, side: side) { $0.body += data }
        streams[header.streamID] = s
    }

    private func finish() -> HTTPConversation {
        for side in 0...1 where !stopped[side] {
            keepPartialData(side: side)
            let pendingBytes = parsers[side].pending
            if let cut = cutAt[side] {
                var reason = "The recording budget stopped this side in turn \(cut)"
                if let header = parsers[side].pendingHeader {
                    reason += ", inside a \(HTTP2FrameType.name(of: header.type)) frame on stream \(header.streamID) (\(pendingBytes - 9) of \(header.length) payload bytes kept)"
                }
                conversation.problems.append(.init(direction: direction(side), turn: cut, reason: reason + "."))
            } else if side == 0 && !prefaceSeen && pendingBytes > 0 {
                conversation.problems.append(.init(direction: .clientToServer, turn: current.turn,
                    reason: "The recording ends inside the HTTP/2 connection preface."))
            } else if pendingBytes > 0 {
                let what = parsers[side].pendingHeader.map { "a \(HTTP2FrameType.name(of: $0.type)) frame on stream \($0.streamID) (\(pendingBytes - 9) of \($0.length) payload bytes)" }
                    ?? "a frame header (\(pendingBytes) of 9 bytes)"
                conversation.problems.append(.init(direction: direction(side), turn: current.turn,
                    reason: "The recording of this side ends inside \(what): the frame is truncated."))
            }
        }
        conversation.exchanges = order.compactMap { id -> HTTPExchange? in
            guard let s = streams[id] else { return nil }
            return HTTPExchange(streamID: id, request: s.request.map { message($0, side: 0, stream: s) },
                                interim: s.interim.map { message($0, side: 1, stream: s, interim: true) },
                                response: s.response.map { message($0, side: 1, stream: s) },
                                pushed: s.pushed, resetBy: s.resetBy)
        }
        return conversation
    }

    /// - Parameter interim: a 1xx response (RFC 9113 §8.1): HEADERS alone, never a body nor
    ///   END_STREAM, so complete as it is (a trial's 103 read "the recording ends before the body").
    private func message(_ b: Builder, side: Int, stream: Stream, interim: Bool = false) -> HTTPMessage {
        let startLine: String
        if side == 0 {
            let method = b.headers.first(":method") ?? "?"
            let target = method == "CONNECT" ? (b.headers.first(":authority") ?? "?") : (b.headers.first(":path") ?? "?")
            startLine = "\(method) \(target) HTTP/2"
        } else {
            startLine = "HTTP/2 \(b.headers.first(":status") ?? "?")"
        }
        var completeness = BodyCompleteness.complete
        if b.shortened {
            // The body limit kept its first bytes, however the stream went on.
            completeness = .cutByBudget(kept: b.body.count, expected: b.headers.first("content-length").flatMap(Int.init))
        } else if !b.ended && !interim {
            let expected = b.headers.first("content-length").flatMap(Int.init)
            if let reset = stream.resetBy {
                completeness = .reset(errorCode: reset)
            } else if cutAt[side] != nil {
                completeness = .cutByBudget(kept: b.body.count, expected: expected)
            } else if gapAt[side] != nil {
                completeness = .missingBytes(kept: b.body.count)
            } else {
                completeness = .endedEarly(kept: b.body.count, expected: expected)
            }
        }
        let body: HTTPBody
        if !b.sawData && completeness.isComplete {
            body = .none
        } else {
            let codings = ContentDecoding.codings(b.headers.all("content-encoding"))
            body = HTTPBody(framing: "DATA frames", transferred: b.body, encodings: codings, completeness: completeness)
        }
        var message = HTTPMessage(startLine: startLine, headers: b.headers, trailers: b.trailers, body: body, turn: b.turn,
                                  offset: b.offset, lastTurn: b.lastTurn, lastOffset: b.lastOffset, headSize: b.headSize)
        message.headersLeftOut = b.headersLeftOut
        message.trailersLeftOut = b.trailersLeftOut
        return message
    }

    /// Whether a decoded field name is `name` (HTTP/2 names are lowercase, RFC 9113 §8.2.1).
    private static func named(_ raw: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        raw.count == name.utf8CodeUnitCount && raw.elementsEqual(UnsafeRawBufferPointer(start: name.utf8Start, count: raw.count))
    }
}
