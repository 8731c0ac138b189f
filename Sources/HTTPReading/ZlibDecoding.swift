import CZlib

/// gzip (RFC 1952) and deflate (RFC 9110 §8.4.1.2: zlib, RFC 1950; raw RFC 1951 is accepted too)
/// through zlib's `inflate`, one piece at a time.
final class ZlibDecoding: ContentStreamDecoder {
    enum Format {
        /// windowBits 15 + 16; several gzip members in a row are all decoded (RFC 1952 §2.2).
        case gzip
        /// The zlib format, or raw deflate when the first two bytes are not a zlib header.
        case deflate
    }

    private let format: Format
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private let piece = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: ContentStreamDecoders.pieceSize)
    /// deflate: the first bytes, until two are there to tell zlib from raw deflate.
    private var header: [UInt8] = []
    private var started = false
    private var ended = false

    init?(format: Format) {
        self.format = format
        stream.initialize(to: z_stream())
        if format == .gzip {
            guard tv_inflateInit2(stream, 15 + 16) == Z_OK else {
                stream.deallocate()
                piece.deallocate()
                return nil
            }
            started = true
        }
    }

    deinit {
        if started { inflateEnd(stream) }
        stream.deallocate()
        piece.deallocate()
    }

    /// RFC 1950 §2.2: CM 8 and the check bits make CMF·256 + FLG a multiple of 31.
    static func isZlibHeader(_ first: UInt8, _ second: UInt8) -> Bool {
        first & 0x0F == 8 && (UInt16(first) << 8 | UInt16(second)) % 31 == 0
    }

    func take(_ input: UnsafeBufferPointer<UInt8>, emit: (UnsafeBufferPointer<UInt8>) -> Bool) -> DecodingState {
        if !started {
            // deflate: wait for two bytes, then start zlib or raw and feed them first.
            header += input
            guard header.count >= 2 else { return .needsMoreInput }
            let windowBits: Int32 = ZlibDecoding.isZlibHeader(header[0], header[1]) ? 15 : -15
            guard tv_inflateInit2(stream, windowBits) == Z_OK else { return .failed("zlib could not start") }
            started = true
            let all = header
            header = []
            return all.withUnsafeBufferPointer { inflate($0, emit: emit) }
        }
        return inflate(input, emit: emit)
    }

    private func inflate(_ input: UnsafeBufferPointer<UInt8>, emit: (UnsafeBufferPointer<UInt8>) -> Bool) -> DecodingState {
        if ended {
            guard format == .gzip, !input.isEmpty, inflateReset(stream) == Z_OK else { return .finished }
            ended = false
        }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        stream.pointee.avail_in = uInt(input.count)
        while true {
            stream.pointee.next_out = piece.baseAddress
            stream.pointee.avail_out = uInt(piece.count)
            let rc = CZlib.inflate(stream, Z_NO_FLUSH)
            let produced = piece.count - Int(stream.pointee.avail_out)
            if produced > 0 && !emit(UnsafeBufferPointer(rebasing: piece[..<produced])) { return .limitReached }
            switch rc {
            case Z_STREAM_END:
                if format == .gzip && stream.pointee.avail_in > 0 && inflateReset(stream) == Z_OK { continue }
                ended = true
                return .finished
            case Z_OK:
                if stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0 { return .needsMoreInput }
            case Z_BUF_ERROR:
                return .needsMoreInput
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(rc)"
                return .failed(reason)
            }
        }
    }
}
