import CBrotli

/// br (RFC 7932) through libbrotli's streaming decoder (`BrotliDecoderDecompressStream`).
enum BrotliDecoding {
    static func decode(_ input: [UInt8], limit: Int) -> DecodedBytes {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else {
            return DecodedBytes(bytes: [], state: .failed("libbrotli could not start"))
        }
        defer { BrotliDecoderDestroyInstance(state) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        return input.withUnsafeBufferPointer { src -> DecodedBytes in
            var availableIn = src.count
            var nextIn = src.baseAddress
            while true {
                let (result, produced) = chunk.withUnsafeMutableBufferPointer { out -> (BrotliDecoderResult, Int) in
                    var availableOut = out.count
                    var nextOut = out.baseAddress
                    let result = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                    return (result, out.count - availableOut)
                }
                output += chunk[..<produced]
                if output.count >= limit { return DecodedBytes(bytes: Array(output.prefix(limit)), state: .limitReached) }
                switch result {
                case BROTLI_DECODER_RESULT_SUCCESS:
                    return DecodedBytes(bytes: output, state: .finished)
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
                    continue
                case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
                    return DecodedBytes(bytes: output, state: .needsMoreInput)
                default:
                    let code = BrotliDecoderGetErrorCode(state)
                    let name = BrotliDecoderErrorString(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
                    return DecodedBytes(bytes: output, state: .failed("brotli: " + name))
                }
            }
        }
    }
}
