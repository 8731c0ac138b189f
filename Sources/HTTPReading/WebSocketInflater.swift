import CZlib

/// permessage-deflate undone for one direction (RFC 7692 §7.2.2): each compressed message's
/// payload, with 0x00 0x00 0xFF 0xFF appended, inflated as raw DEFLATE (RFC 1951) by zlib, the
/// LZ77 window carried from message to message (context takeover) unless the sender resets its
/// compressor per message (`*_no_context_takeover`, §7.1.1), when the inflater is reset too.
///
/// The window is always opened at 15 bits: a sender's negotiated `*_max_window_bits` only
/// narrows what it refers back to (§7.1.2), and a 15-bit window reads any narrower one.
final class WebSocketInflater {
    /// How inflating one message went.
    enum Outcome: Equatable {
        /// The whole message was inflated and is all in `data`.
        case complete
        /// The message inflated past `keep`: `data` holds the first `keep` bytes; the rest was
        /// inflated (for the window) and let go.
        case keptPart
        /// Inflating ran past `work` decoded bytes and stopped; the window is lost for any
        /// later message.
        case workSpent
        /// zlib refused the input (the reason); what came before is in `data`.
        case failed(String)
    }

    /// One message inflated: what is kept of it, how many bytes it decoded to in all (spent
    /// against the connection's budget), and how it went.
    struct Inflated: Equatable {
        var data: [UInt8]
        var decoded: Int
        var outcome: Outcome
    }

    /// The tail the sender removed from each message (§7.2.1).
    static let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]
    private static let pieceSize = 16_384

    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private let resetsPerMessage: Bool

    /// - Parameter resetsPerMessage: the sender negotiated no context takeover.
    init?(resetsPerMessage: Bool) {
        self.resetsPerMessage = resetsPerMessage
        stream.initialize(to: z_stream())
        guard tv_inflateInit2(stream, -15) == Z_OK else {
            stream.deallocate()
            return nil
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// Inflates one message's payload (all its frames' payloads joined).
    /// - Parameters:
    ///   - whole: the message is all there; a cut one is inflated as far as its bytes go,
    ///     without the tail.
    ///   - keep: the most decoded bytes kept in `data`.
    ///   - work: the most bytes decoded in all before stopping.
    func inflate(_ payload: [UInt8], whole: Bool, keep: Int, work: Int) -> Inflated {
        var input = payload
        if whole { input += Self.tail }
        var result = Inflated(data: [], decoded: 0, outcome: .complete)
        var piece = [UInt8](repeating: 0, count: Self.pieceSize)
        input.withUnsafeMutableBufferPointer { source in
            piece.withUnsafeMutableBufferPointer { out in
                stream.pointee.next_in = source.baseAddress
                stream.pointee.avail_in = uInt(source.count)
                while true {
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = uInt(out.count)
                    let rc = CZlib.inflate(stream, Z_SYNC_FLUSH)
                    let produced = out.count - Int(stream.pointee.avail_out)
                    if produced > 0 {
                        let room = max(0, keep - result.data.count)
                        result.data += out[..<min(produced, room)]
                        result.decoded += produced
                        if produced > room && result.outcome == .complete { result.outcome = .keptPart }
                        if result.decoded > work {
                            result.outcome = .workSpent
                            return
                        }
                    }
                    switch rc {
                    case Z_STREAM_END:
                        // A block with BFINAL set ends the DEFLATE stream (§7.2.3.4): the next
                        // message starts a new one.
                        inflateReset(stream)
                        return
                    case Z_OK:
                        if stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0 { return }
                    case Z_BUF_ERROR:
                        return
                    default:
                        let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(rc)"
                        result.outcome = .failed(reason)
                        return
                    }
                }
            }
        }
        if resetsPerMessage { inflateReset(stream) }
        return result
    }
}
