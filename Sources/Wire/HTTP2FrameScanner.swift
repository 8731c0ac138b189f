/// Incremental, bounded reader of one direction of an HTTP/2 connection (RFC 9113 §4.1) for the
/// data path: it walks the bytes as they are relayed and tells what matters to an exchange —
/// complete header blocks (HEADERS or PUSH_PROMISE with their CONTINUATIONs, §6.2, §6.6, §6.10),
/// DATA payload sizes (§6.1), stream resets (§6.4) and the peer's header table size (§6.5.2).
///
/// DATA payloads are counted, never copied; only frame headers, header block fragments (at most
/// `maxHeaderBlockBytes` per block) and the payloads of SETTINGS and RST_STREAM are buffered.
/// The first violation of the framing ends the scan: `failure` says why, with its RFC section,
/// `failureCode` the error code an endpoint answers it with (RFC 9113 §5.4.1, §7), and
/// `failureStart` where the bytes it cannot read begin; every later byte is ignored.
///
/// Two checks are the reader's to turn on (the readers of kept turns read what was relayed and
/// leave them off): `maxFrameSize`, the receiver's SETTINGS_MAX_FRAME_SIZE (§4.2: a larger frame
/// is a FRAME_SIZE_ERROR), and `maxContinuations`, the CONTINUATION frames one header block may
/// take (a header block that never ends, CVE-2024-27316; nghttp2 1.61 takes 8: ENHANCE_YOUR_CALM).
public struct HTTP2FrameScanner {
    /// What one complete frame (or header block) meant.
    public enum Event {
        /// A complete header block on `streamID` (HEADERS, or PUSH_PROMISE when `promised` is
        /// set), padding and priority removed; `block` is valid during the call only.
        /// `endStream`: the HEADERS frame carried END_STREAM.
        case headerBlock(streamID: UInt32, endStream: Bool, promised: UInt32?, block: UnsafeRawBufferPointer)
        /// A DATA frame of `count` payload bytes (padding excluded) on `streamID`.
        case data(streamID: UInt32, count: Int, endStream: Bool)
        /// RST_STREAM on `streamID` with its error code (§6.4, §7: 0 is NO_ERROR); nil when the
        /// payload is not the four bytes it must be. `start`: where the frame began in the bytes
        /// of the `feed` that told it (nil: in an earlier one).
        case reset(streamID: UInt32, errorCode: UInt32?, start: Int?)
        /// A SETTINGS frame (not an ACK); `headerTableSize` when it set SETTINGS_HEADER_TABLE_SIZE,
        /// `maxFrameSize` when it set SETTINGS_MAX_FRAME_SIZE (§6.5.2).
        case settings(headerTableSize: Int?, maxFrameSize: Int?)
        /// A PING frame (§6.7) that is not an ACK.
        case ping
        /// A frame that carries nothing a peer must act on: PRIORITY (§6.3, deprecated by §5.3.2)
        /// or a frame of a type RFC 9113 does not define (§5.5: ignored). `type` is its type.
        case inert(type: UInt8)
        /// A GOAWAY frame (§6.8): the last stream the sender processed, its error code (§7: 0 is
        /// NO_ERROR, a graceful end), and the first `goawayDebugKept` bytes of its debug data
        /// (valid during the call only).
        case goaway(lastStreamID: UInt32, errorCode: UInt32, debug: UnsafeRawBufferPointer)
    }

    /// The client connection preface (RFC 9113 §3.4).
    public static let clientPreface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// Whether a client's first bytes open HTTP/2 (prior knowledge or after ALPN h2): at least
    /// four of them, matching the preface as far as they go ("PRI " begins no HTTP/1 request:
    /// §3.4 reserves the method). The exchange rows and the recording decide alike.
    public static func opensWithPreface(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let n = min(bytes.count, clientPreface.count)
        return n >= 4 && bytes.prefix(n).elementsEqual(clientPreface.prefix(n))
    }
    /// Largest header block accepted (its fragments together): 256 KiB.
    public static let maxHeaderBlockBytes = 262_144
    /// Largest SETTINGS payload accepted: 64 six-byte settings.
    static let maxSettingsBytes = 384
    /// A GOAWAY's debug data kept (the rest is skipped): nginx and nghttp2 send none or a
    /// sentence, and §6.8 lets a sender put anything there, up to a frame's length.
    public static let goawayDebugKept = 256

    private enum Stage {
        case preface(matched: Int)
        case frameHeader
        case payload
        case failed
    }

    private var stage: Stage
    /// The 9 header bytes of the frame being read, gathered as they come.
    private var header: [UInt8] = []
    private var type: UInt8 = 0
    private var flags: UInt8 = 0
    private var streamID: UInt32 = 0
    private var length = 0
    /// Payload bytes of the current frame still to come.
    private var remaining = 0
    /// The current frame's payload, for the frames that are read (header blocks, SETTINGS, RST_STREAM, GOAWAY).
    private var payload: [UInt8] = []
    /// The header block being gathered across CONTINUATION frames.
    private var block: [UInt8] = []
    /// The stream, END_STREAM flag and promised stream of the block being gathered (nil: none).
    private var open: (streamID: UInt32, endStream: Bool, promised: UInt32?)?
    /// DATA: the pad length byte has been read (or the frame is not padded).
    private var padKnown = true
    private var padLength = 0

    /// Why the stream cannot be read as HTTP/2 (one sentence with its RFC section), once it cannot.
    public private(set) var failure: String?
    /// The error code of `failure` (RFC 9113 §7): PROTOCOL_ERROR (0x1), FRAME_SIZE_ERROR (0x6)
    /// for a frame of the wrong size (§4.2), ENHANCE_YOUR_CALM (0xb) for a header block past
    /// tv's bounds (§10.5); 0 while there is none.
    public private(set) var failureCode: UInt32 = 0
    /// Where the bytes `failure` is about begin in the bytes of the `feed` that failed: the frame's
    /// start, or the start of the header block it is part of (the block's first frame); nil when
    /// they began in an earlier feed (some of them went on already), or the preface failed.
    /// Everything before it is whole frames, outside any header block, after the preface's first
    /// frame: a GOAWAY written there is read as one.
    public private(set) var failureStart: Int?

    /// The receiver's SETTINGS_MAX_FRAME_SIZE (RFC 9113 §4.2, §6.5.2: 16,384 until it says
    /// otherwise): a longer frame fails with FRAME_SIZE_ERROR. Nil: not checked.
    public var maxFrameSize: Int?
    /// Most CONTINUATION frames one header block may take: more fail with ENHANCE_YOUR_CALM (a
    /// header block that never ends, CVE-2024-27316: each frame may be empty, so the block's
    /// byte bound never comes). Nil: not checked.
    public var maxContinuations: Int?
    /// CONTINUATION frames of the header block being gathered.
    private var continuations = 0
    /// Where the header block being gathered began in the current feed (nil: in an earlier one).
    private var blockStart: Int?
    /// Frames read whole: the first is the sender's preface's SETTINGS (§3.4).
    private var framesRead = 0

    /// A scanner for the client's side (`expectingPreface`: the 24-byte preface comes first) or
    /// the server's.
    /// Where the frame being read began in the current `feed`'s bytes (nil: in an earlier one).
    private var frameStart: Int?

    public init(expectingPreface: Bool) {
        stage = expectingPreface ? .preface(matched: 0) : .frameHeader
        header.reserveCapacity(9)
    }

    /// Walks `bytes`, telling `event` each complete frame that matters, in order.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ event: (Event) -> Void) {
        feed(bytes) { told, _ in event(told) }
    }

    /// Walks `bytes`, telling `event` each complete frame that matters, in order, with where it
    /// began in `bytes` (a header block: its first frame; nil: in an earlier feed).
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ event: (Event, Int?) -> Void) {
        var i = 0
        let count = bytes.count
        frameStart = nil
        blockStart = nil
        while i < count {
            switch stage {
            case .failed:
                return
            case .preface(let matched):
                let preface = HTTP2FrameScanner.clientPreface
                var m = matched
                while m < preface.count && i < count {
                    guard bytes[i] == preface[m] else {
                        return fail("The client's bytes do not begin with the HTTP/2 connection preface (RFC 9113 §3.4).", preface: true)
                    }
                    m += 1
                    i += 1
                }
                stage = m == preface.count ? .frameHeader : .preface(matched: m)
            case .frameHeader:
                if header.isEmpty { frameStart = i }
                if header.isEmpty && count - i >= 9 {
                    // The whole frame header is in this burst: read in place.
                    startFrame(UnsafeRawBufferPointer(rebasing: bytes[i ..< (i + 9)]), event)
                    i += 9
                    continue
                }
                let n = min(9 - header.count, count - i)
                header.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i ..< (i + n)]))
                i += n
                if header.count == 9 {
                    var whole: [UInt8] = []
                    swap(&whole, &header)
                    whole.withUnsafeBytes { startFrame($0, event) }
                    whole.removeAll(keepingCapacity: true)
                    swap(&whole, &header)
                }
            case .payload:
                let n = min(remaining, count - i)
                if type == 0x0 {
                    if !padKnown, n > 0 {
                        padLength = Int(bytes[i])
                        padKnown = true
                    }
                } else if readsPayload {
                    if payload.isEmpty && n == length {
                        // The whole payload is in this burst: read in place, without a copy.
                        i += n
                        remaining = 0
                        endFrame(UnsafeRawBufferPointer(rebasing: bytes[(i - n) ..< i]), event)
                        continue
                    }
                    // A GOAWAY keeps its fixed part and the start of its debug data only.
                    let kept = type == 0x7 ? max(0, min(n, 8 + HTTP2FrameScanner.goawayDebugKept - payload.count)) : n
                    payload.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i ..< (i + kept)]))
                }
                i += n
                remaining -= n
                if remaining == 0 {
                    if readsPayload { endBufferedFrame(event) } else { endFrame(UnsafeRawBufferPointer(start: nil, count: 0), event) }
                }
            }
        }
    }

    /// Whether the current frame's payload is gathered (everything but DATA and ignored frames).
    private var readsPayload: Bool {
        switch type {
        case 0x1, 0x5, 0x9, 0x4, 0x3, 0x7: true
        default: false
        }
    }

    /// Fails with `reason` and `code` (PROTOCOL_ERROR unless said), at the current frame, or its
    /// header block's start (`failureStart`); `preface`: the preface itself failed.
    private mutating func fail(_ reason: String, code: UInt32 = 0x1, preface: Bool = false) {
        failure = reason
        failureCode = code
        failureStart = preface || framesRead == 0 ? nil : open != nil ? blockStart : frameStart
        stage = .failed
        payload = []
        block = []
    }

    /// Starts the frame whose 9-byte header is `header` (RFC 9113 §4.1).
    private mutating func startFrame(_ header: UnsafeRawBufferPointer, _ event: (Event, Int?) -> Void) {
        length = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
        type = header[3]
        flags = header[4]
        streamID = (UInt32(header[5]) << 24 | UInt32(header[6]) << 16 | UInt32(header[7]) << 8 | UInt32(header[8])) & 0x7fff_ffff
        if open != nil && type != 0x9 {
            return fail("A frame of type \(type) came in the middle of a header block, where only CONTINUATION may (RFC 9113 §6.10).")
        }
        if let maxFrameSize, length > maxFrameSize {
            return fail("A frame of \(length) bytes, longer than the receiver's SETTINGS_MAX_FRAME_SIZE of \(maxFrameSize) (RFC 9113 §4.2).",
                        code: 0x6)
        }
        switch type {
        case 0x0:
            guard streamID != 0 else { return fail("A DATA frame on stream 0 (RFC 9113 §6.1).") }
            padKnown = flags & 0x8 == 0
            padLength = 0
        case 0x1, 0x5:
            guard streamID != 0 else { return fail("A header block on stream 0 (RFC 9113 §6.2).") }
            blockStart = frameStart
            continuations = 0
        case 0x9:
            guard let open, open.streamID == streamID else {
                return fail("A CONTINUATION frame that does not continue a header block on its stream (RFC 9113 §6.10).")
            }
            continuations += 1
            if let maxContinuations, continuations > maxContinuations {
                return fail("A header block in more than \(maxContinuations) CONTINUATION frames, more than tv reads (RFC 9113 §6.10, §10.5).",
                            code: 0xb)
            }
        case 0x4:
            guard streamID == 0 else { return fail("A SETTINGS frame on stream \(streamID), not 0 (RFC 9113 §6.5).") }
            guard length % 6 == 0 else { return fail("A SETTINGS frame of \(length) bytes, not a multiple of 6 (RFC 9113 §6.5).", code: 0x6) }
            guard length <= HTTP2FrameScanner.maxSettingsBytes else {
                return fail("A SETTINGS frame of \(length) bytes, more than the \(HTTP2FrameScanner.maxSettingsBytes) tv reads (RFC 9113 §6.5, §10.5).",
                            code: 0xb)
            }
        case 0x6:
            guard streamID == 0 else { return fail("A PING frame on stream \(streamID), not 0 (RFC 9113 §6.7).") }
            guard length == 8 else { return fail("A PING frame of \(length) bytes instead of 8 (RFC 9113 §6.7).", code: 0x6) }
        case 0x8:
            guard length == 4 else { return fail("A WINDOW_UPDATE frame of \(length) bytes instead of 4 (RFC 9113 §6.9).", code: 0x6) }
        case 0x3:
            guard streamID != 0 else { return fail("An RST_STREAM frame on stream 0 (RFC 9113 §6.4).") }
            guard length == 4 else { return fail("An RST_STREAM frame of \(length) bytes instead of 4 (RFC 9113 §6.4).", code: 0x6) }
        case 0x7:
            guard streamID == 0 else { return fail("A GOAWAY frame on stream \(streamID), not 0 (RFC 9113 §6.8).") }
            guard length >= 8 else { return fail("A GOAWAY frame of \(length) bytes, shorter than its 8 (RFC 9113 §6.8).") }
        default:
            break
        }
        if readsPayload && type != 0x7 && block.count + length > HTTP2FrameScanner.maxHeaderBlockBytes {
            return fail("A header block larger than \(HTTP2FrameScanner.maxHeaderBlockBytes) bytes, more than tv reads (RFC 9113 §4.3, §10.5).",
                        code: 0xb)
        }
        remaining = length
        stage = .payload
        if remaining == 0 { endFrame(UnsafeRawBufferPointer(start: nil, count: 0), event) }
    }

    /// Ends the frame whose payload was gathered in `payload` (it came in several bursts).
    private mutating func endBufferedFrame(_ event: (Event, Int?) -> Void) {
        var gathered: [UInt8] = []
        swap(&gathered, &payload)
        gathered.withUnsafeBytes { endFrame($0, event) }
        gathered.removeAll(keepingCapacity: gathered.capacity <= 16_384)
        // The buffer is kept for the next frame, unless reading failed (which lets go of it).
        if failure == nil { swap(&gathered, &payload) }
    }

    /// Ends the frame whose payload (of the types read: `readsPayload`; empty for the others) is
    /// `payload`.
    private mutating func endFrame(_ payload: UnsafeRawBufferPointer, _ event: (Event, Int?) -> Void) {
        stage = .frameHeader
        framesRead &+= 1
        switch type {
        case 0x0:
            let padding = padKnown ? padLength : 0
            guard flags & 0x8 == 0 || (length >= 1 && padding <= length - 1) else {
                return fail("A DATA frame's padding is longer than its payload (RFC 9113 §6.1).")
            }
            let count = flags & 0x8 == 0 ? length : length - 1 - padding
            event(.data(streamID: streamID, count: count, endStream: flags & 0x1 != 0), frameStart)
        case 0x1, 0x5:
            var start = 0
            var end = payload.count
            if flags & 0x8 != 0 {
                guard let pad = payload.first, Int(pad) < payload.count else {
                    return fail("A header frame's padding is longer than its payload (RFC 9113 §6.2).")
                }
                start = 1
                end -= Int(pad)
            }
            var promised: UInt32?
            if type == 0x5 {
                guard end - start >= 4 else { return fail("A PUSH_PROMISE frame too short for its promised stream (RFC 9113 §6.6).") }
                promised = (UInt32(payload[start]) << 24 | UInt32(payload[start + 1]) << 16
                    | UInt32(payload[start + 2]) << 8 | UInt32(payload[start + 3])) & 0x7fff_ffff
                start += 4
            } else if flags & 0x20 != 0 {
                start += 5
            }
            guard start <= end else { return fail("A HEADERS frame too short for its padding and priority (RFC 9113 §6.2).") }
            if flags & 0x4 != 0 {
                // A whole header block in one frame: handed over where it lies.
                event(.headerBlock(streamID: streamID, endStream: flags & 0x1 != 0, promised: promised,
                                   block: UnsafeRawBufferPointer(rebasing: payload[start ..< end])), frameStart)
                return
            }
            block.append(contentsOf: UnsafeRawBufferPointer(rebasing: payload[start ..< end]))
            open = (streamID, flags & 0x1 != 0, promised)
        case 0x9:
            block.append(contentsOf: payload)
            if flags & 0x4 != 0 { endBlock(event) }
        case 0x4:
            guard flags & 0x1 == 0 else { return }
            var size: Int?
            var frameSize: Int?
            var index = 0
            while index + 6 <= payload.count {
                let id = Int(payload[index]) << 8 | Int(payload[index + 1])
                let value = Int(payload[index + 2]) << 24 | Int(payload[index + 3]) << 16 | Int(payload[index + 4]) << 8 | Int(payload[index + 5])
                if id == 0x1 { size = value }
                if id == 0x5 {
                    // 2^14 to 2^24-1 (§6.5.2): outside, a PROTOCOL_ERROR.
                    guard value >= 16_384 && value <= 16_777_215 else {
                        return fail("A SETTINGS_MAX_FRAME_SIZE of \(value), outside 16,384 to 16,777,215 (RFC 9113 §6.5.2).")
                    }
                    frameSize = value
                }
                index += 6
            }
            event(.settings(headerTableSize: size, maxFrameSize: frameSize), frameStart)
        case 0x3:
            let code = payload.count == 4
                ? UInt32(payload[0]) << 24 | UInt32(payload[1]) << 16 | UInt32(payload[2]) << 8 | UInt32(payload[3]) : nil
            event(.reset(streamID: streamID, errorCode: code, start: frameStart), frameStart)
        case 0x7:
            // At least 8 bytes (`startFrame`); the debug data as far as it was kept.
            let last = (UInt32(payload[0]) << 24 | UInt32(payload[1]) << 16 | UInt32(payload[2]) << 8 | UInt32(payload[3])) & 0x7fff_ffff
            let code = UInt32(payload[4]) << 24 | UInt32(payload[5]) << 16 | UInt32(payload[6]) << 8 | UInt32(payload[7])
            let end = min(payload.count, 8 + HTTP2FrameScanner.goawayDebugKept)
            event(.goaway(lastStreamID: last, errorCode: code, debug: UnsafeRawBufferPointer(rebasing: payload[8 ..< end])), frameStart)
        case 0x6:
            if flags & 0x1 == 0 { event(.ping, frameStart) }
        case 0x2:
            event(.inert(type: type), frameStart)
        case 0x8:
            break
        default:
            event(.inert(type: type), frameStart)
        }
    }

    private mutating func endBlock(_ event: (Event, Int?) -> Void) {
        guard let open else { return }
        self.open = nil
        let start = blockStart
        block.withUnsafeBytes { event(.headerBlock(streamID: open.streamID, endStream: open.endStream, promised: open.promised, block: $0), start) }
        block.removeAll(keepingCapacity: block.capacity <= 16_384)
    }
}
