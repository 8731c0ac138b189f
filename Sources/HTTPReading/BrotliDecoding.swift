import CBrotli

/// br (RFC 7932) through libbrotli's streaming decoder (`BrotliDecoderDecompressStream`).
///
/// libbrotli fills its ring buffer (up to the stream's window, 16 MiB at most) before it hands
/// anything out, so a small br bomb costs that much work even when only 64 KiB are taken;
/// `dropUnreadOutput` tells how much that was.
final class BrotliDecoding: ContentStreamDecoder {
    private let state: OpaquePointer
    private let piece = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: ContentStreamDecoders.pieceSize)
    private var ended = false

    init?() {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else {
            piece.deallocate()
            return nil
        }
        self.state = state
    }

    deinit {
        BrotliDecoderDestroyInstance(state)
        piece.deallocate()
    }

    func dropUnreadOutput() -> Int {
        // The ring buffer's output may come in two parts (it wraps); taking it decodes nothing more.
        var total = 0
        for _ in 0..<2 {
            var size = 0
            _ = BrotliDecoderTakeOutput(state, &size)
            total += size
        }
        return total
    }

    func take(_ input: UnsafeBufferPointer<UInt8>, emit: (UnsafeBufferPointer<UInt8>) -> Bool) -> DecodingState {
        if ended { return .finished }
        var availableIn = input.count
        var nextIn = input.baseAddress
        while true {
            var availableOut = piece.count
            var nextOut = piece.baseAddress
            let result = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
            let produced = piece.count - availableOut
            if produced > 0 && !emit(UnsafeBufferPointer(rebasing: piece[..<produced])) { return .limitReached }
            switch result {
            case BROTLI_DECODER_RESULT_SUCCESS:
                ended = true
                return .finished
            case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
                continue
            case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
                return .needsMoreInput
            default:
                let code = BrotliDecoderGetErrorCode(state)
                let name = BrotliDecoderErrorString(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
                return .failed("brotli: " + name)
            }
        }
    }
}
