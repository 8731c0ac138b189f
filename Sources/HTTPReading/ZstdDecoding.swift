import CZstd

/// zstd (RFC 8878) through libzstd's streaming decoder (`ZSTD_decompressStream`); several frames
/// in a row are all decoded.
enum ZstdDecoding {
    static func decode(_ input: [UInt8], limit: Int) -> DecodedBytes {
        guard let stream = ZSTD_createDStream() else {
            return DecodedBytes(bytes: [], state: .failed("libzstd could not start"))
        }
        defer { ZSTD_freeDStream(stream) }
        ZSTD_initDStream(stream)
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        return input.withUnsafeBufferPointer { src -> DecodedBytes in
            var inBuffer = ZSTD_inBuffer(src: src.baseAddress, size: src.count, pos: 0)
            var lastHint = 1
            while true {
                let (hint, produced) = chunk.withUnsafeMutableBufferPointer { out -> (Int, Int) in
                    var outBuffer = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                    let hint = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
                    return (hint, outBuffer.pos)
                }
                if ZSTD_isError(hint) != 0 {
                    return DecodedBytes(bytes: output, state: .failed("zstd: " + String(cString: ZSTD_getErrorName(hint))))
                }
                output += chunk[..<produced]
                if output.count >= limit { return DecodedBytes(bytes: Array(output.prefix(limit)), state: .limitReached) }
                lastHint = hint
                if inBuffer.pos == inBuffer.size && produced < chunk.count {
                    return DecodedBytes(bytes: output, state: lastHint == 0 ? .finished : .needsMoreInput)
                }
            }
        }
    }
}
