import CBrotli

/// br (RFC 7932) through libbrotli's streaming decoder (`BrotliDecoderDecompressStream`).
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
