import CZstd

/// zstd (RFC 8878) through libzstd's streaming decoder (`ZSTD_decompressStream`); several frames
/// in a row are all decoded.
final class ZstdDecoding: ContentStreamDecoder {
    private let stream: OpaquePointer
    private let piece = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: ContentStreamDecoders.pieceSize)
    /// libzstd's last hint: 0 when a frame has just ended.
    private var lastHint = 1

    init?() {
        guard let stream = ZSTD_createDStream() else {
            piece.deallocate()
            return nil
        }
        self.stream = stream
        ZSTD_initDStream(stream)
    }

    deinit {
        ZSTD_freeDStream(stream)
        piece.deallocate()
    }

    func take(_ input: UnsafeBufferPointer<UInt8>, emit: (UnsafeBufferPointer<UInt8>) -> Bool) -> DecodingState {
        var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        while true {
            var outBuffer = ZSTD_outBuffer(dst: piece.baseAddress, size: piece.count, pos: 0)
            let hint = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
            if ZSTD_isError(hint) != 0 {
                return .failed("zstd: " + String(cString: ZSTD_getErrorName(hint)))
            }
            let produced = outBuffer.pos
            if produced > 0 && !emit(UnsafeBufferPointer(rebasing: piece[..<produced])) { return .limitReached }
            lastHint = hint
            if inBuffer.pos == inBuffer.size && produced < piece.count {
                return lastHint == 0 ? .finished : .needsMoreInput
            }
        }
    }
}
