import FlowTerms
import Wire

/// The recording's limit on an HTTP/2 connection (RFC 9113): each stream's body keeps at most
/// `limit` bytes of DATA payload per direction; everything else is kept as it was said.
///
/// Why not the turn limit: a turn is a maximal run of chunks one way (DESIGN.md §5), and on
/// HTTP/2 one turn carries many streams' frames at once. A browser's page (trial 42: 35
/// requests on one connection) had its server side cut at 64 KiB of a 100 KB turn of ten small
/// interleaved images, 0.23 s in, and every later response of the page (cookies, API answers,
/// error bodies) was lost with it; the client side stopped at a 3 MB upload likewise. So on an
/// HTTP/2 connection the 64 KiB applies to each body, and the flow budget per direction
/// (`RecordingBudget.flowBudget`) still applies to all that is kept.
///
/// The kept bytes stay HTTP/2 that `HTTP2Reader` reads (frame boundaries, and the header
/// blocks' HPACK state, RFC 7541 §2.3.2, are never broken): a DATA frame (§6.1) that loses
/// payload is rewritten — its length says the bytes kept, its padding is left out with PADDED
/// cleared, and `shortened` (flag 0x80, which §6.1 leaves unused: "MUST be ignored on receipt")
/// marks it as tv's; a DATA frame that keeps nothing is left out whole, unless it ends its
/// stream (END_STREAM), which is kept with length 0. The preface (§3.4) and every other frame are
/// kept as they are.
///
/// A DATA frame whose 9-byte head was split between two reads (whose first part is already
/// kept), or whose pad length came in a later read than its head, cannot be rewritten and is
/// kept whole (at most one frame, `SETTINGS_MAX_FRAME_SIZE`; the flow budget still bounds it).
/// Pure; one per flow, fed each direction's bytes in order.
public struct HTTP2BodyLimit: Sendable {
    /// The flag tv sets on a DATA frame whose payload it shortened.
    public static let shortened: UInt8 = 0x80
    static let endStream: UInt8 = 0x01
    static let padded: UInt8 = 0x08
    static let dataType: UInt8 = 0x00
    static let headersType: UInt8 = 0x01
    static let rstStreamType: UInt8 = 0x03
    /// Open streams one direction counts body bytes for at most; a stream past them keeps no
    /// DATA (a hostile peer's endless new streams cost no memory). A peer allows 100 concurrent
    /// streams by default in nghttp2 and 128 in nginx (`http2_max_concurrent_streams`).
    public static let maxTrackedStreams = 4_096

    /// DATA payload bytes a stream's body keeps at most, per direction.
    public let limit: Int
    private var client: Side
    private var server: Side

    /// - Parameter limit: bytes of DATA payload kept per stream and direction (negative: 0).
    public init(limit: Int) {
        self.limit = max(0, limit)
        client = Side(prefaceLeft: HTTP2FrameScanner.clientPreface.count)
        server = Side(prefaceLeft: 0)
    }

    /// What to do with the payload of the frame being read.
    enum Payload: Sendable, Equatable {
        /// Keep it all.
        case keep
        /// Keep the next `keep` bytes, leave out the rest.
        case keepThenSkip(keep: Int)
        /// A padded DATA frame to shorten whose head is held until its pad length byte (the
        /// payload's first) says how much of it is data: `room` bytes of data may be kept.
        case awaitPadLength(room: Int)
    }

    struct Side: Sendable {
        var prefaceLeft: Int
        /// The head of the frame being read; `headFilled` of its 9 bytes are here.
        var head: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0)
        var headFilled = 0
        var payloadLeft = 0
        var payload = Payload.keep
        /// DATA payload bytes kept so far of each stream still open this way.
        var kept: [UInt32: Int] = [:]

        init(prefaceLeft: Int) { self.prefaceLeft = prefaceLeft }

        subscript(_ i: Int) -> UInt8 {
            withUnsafeBytes(of: head) { $0[i] }
        }

        mutating func setHead(_ i: Int, _ byte: UInt8) {
            withUnsafeMutableBytes(of: &head) { $0[i] = byte }
        }

        var length: Int { Int(self[0]) << 16 | Int(self[1]) << 8 | Int(self[2]) }
        var type: UInt8 { self[3] }
        var flags: UInt8 { self[4] }
        var streamID: UInt32 {
            (UInt32(self[5]) << 24 | UInt32(self[6]) << 16 | UInt32(self[7]) << 8 | UInt32(self[8])) & 0x7FFF_FFFF
        }

        /// Counts `bytes` more of `stream`'s body (a stream not counted yet only while fewer
        /// than `maxTrackedStreams` are).
        mutating func count(_ bytes: Int, stream: UInt32, ends: Bool) {
            if ends {
                kept.removeValue(forKey: stream)
            } else if kept[stream] != nil || (bytes > 0 && kept.count < maxTrackedStreams) {
                kept[stream, default: 0] += bytes
            }
        }
    }

    /// The bytes of one read that go `direction`, as the recording keeps them.
    /// - Returns: false when every byte is kept as it is (`out` untouched: the common case, no
    ///   copy); true when the kept bytes are in `out` (replacing what it held), fewer than the
    ///   read's.
    public mutating func cut(_ bytes: UnsafeRawBufferPointer, _ direction: Direction, into out: inout [UInt8]) -> Bool {
        if direction == .clientToServer {
            return Self.cut(bytes, side: &client, limit: limit, into: &out)
        }
        return Self.cut(bytes, side: &server, limit: limit, into: &out)
    }

    /// Copies lazily: until the first byte left out or rewritten, the kept bytes are a prefix of
    /// the read's own.
    private struct Output {
        var copying = false

        /// From here on the kept bytes go to `out`, starting with the read's first `end` bytes.
        mutating func begin(_ bytes: UnsafeRawBufferPointer, upTo end: Int, into out: inout [UInt8]) {
            guard !copying else { return }
            copying = true
            out.removeAll(keepingCapacity: true)
            out.append(contentsOf: bytes[0..<end])
        }

        /// Keeps `bytes[range]` as they are.
        func keep(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, into out: inout [UInt8]) {
            if copying { out.append(contentsOf: bytes[range]) }
        }
    }

    private static func cut(_ bytes: UnsafeRawBufferPointer, side s: inout Side, limit: Int, into out: inout [UInt8]) -> Bool {
        var output = Output()
        var i = 0
        let count = bytes.count
        while i < count {
            if s.prefaceLeft > 0 {
                let n = min(s.prefaceLeft, count - i)
                output.keep(bytes, i..<(i + n), into: &out)
                s.prefaceLeft -= n
                i += n
                continue
            }
            if s.payloadLeft > 0 {
                i = payload(bytes, from: i, side: &s, output: &output, into: &out)
                continue
            }
            // A frame head (9 bytes, §4.1), gathered as it comes.
            let headStart = i
            let split = s.headFilled > 0
            while s.headFilled < 9 && i < count {
                s.setHead(s.headFilled, bytes[i])
                s.headFilled += 1
                i += 1
            }
            guard s.headFilled == 9 else {
                // The rest comes in the next read; this part is kept as it is.
                output.keep(bytes, headStart..<i, into: &out)
                break
            }
            s.headFilled = 0
            s.payloadLeft = s.length
            s.payload = .keep
            let ends = s.flags & endStream != 0
            switch s.type {
            case dataType:
                let room = s.kept[s.streamID].map { max(0, limit - $0) } ?? (s.kept.count < maxTrackedStreams ? limit : 0)
                let isPadded = s.flags & padded != 0
                if s.length <= room || split || (isPadded && i == count) {
                    // Whole, or a head that cannot be rewritten: kept as it came.
                    s.count(s.length, stream: s.streamID, ends: ends)
                    output.keep(bytes, headStart..<i, into: &out)
                } else {
                    output.begin(bytes, upTo: headStart, into: &out)
                    if isPadded {
                        s.payload = .awaitPadLength(room: room)
                    } else {
                        s.count(room, stream: s.streamID, ends: ends)
                        emitHead(s, length: room, shortened: true, into: &out)
                        s.payload = .keepThenSkip(keep: room)
                    }
                }
            case headersType, rstStreamType:
                if s.type == rstStreamType || ends { s.kept.removeValue(forKey: s.streamID) }
                output.keep(bytes, headStart..<i, into: &out)
            default:
                output.keep(bytes, headStart..<i, into: &out)
            }
        }
        return output.copying
    }

    /// Writes the head of the DATA frame in `s` with a payload of `length` bytes of data:
    /// PADDED cleared, `shortened` set when data was left out; nothing when it keeps no byte
    /// and does not end its stream.
    private static func emitHead(_ s: Side, length: Int, shortened isShort: Bool, into out: inout [UInt8]) {
        guard length > 0 || s.flags & endStream != 0 else { return }
        out.append(contentsOf: [UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8),
                                UInt8(truncatingIfNeeded: length), dataType, (s.flags & ~padded) | (isShort ? shortened : 0),
                                s[5], s[6], s[7], s[8]])
    }

    /// Reads payload bytes of the frame in `s` from `start`; returns where it stopped.
    private static func payload(_ bytes: UnsafeRawBufferPointer, from start: Int, side s: inout Side,
                                output: inout Output, into out: inout [UInt8]) -> Int {
        var i = start
        let count = bytes.count
        switch s.payload {
        case .keep:
            let n = min(s.payloadLeft, count - i)
            output.keep(bytes, i..<(i + n), into: &out)
            s.payloadLeft -= n
            i += n
        case .keepThenSkip(let keep):
            let n = min(s.payloadLeft, count - i)
            let kept = min(keep, n)
            if kept == n {
                output.keep(bytes, i..<(i + n), into: &out)
            } else {
                output.begin(bytes, upTo: i, into: &out)
                out.append(contentsOf: bytes[i..<(i + kept)])
            }
            s.payload = .keepThenSkip(keep: keep - kept)
            s.payloadLeft -= n
            i += n
        case .awaitPadLength(let room):
            // The pad length (§6.1), the payload's first byte, always in the head's read: the
            // data is what the padding leaves (all of the rest when the pad length is past it).
            let padLength = Int(bytes[i])
            let data = padLength < s.length ? s.length - 1 - padLength : s.length - 1
            let keep = min(room, data)
            s.count(keep, stream: s.streamID, ends: s.flags & endStream != 0)
            emitHead(s, length: keep, shortened: keep < data, into: &out)
            i += 1
            s.payloadLeft -= 1
            s.payload = .keepThenSkip(keep: keep)
        }
        return i
    }
}
