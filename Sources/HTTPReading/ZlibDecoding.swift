import CZlib

/// gzip (RFC 1952) and deflate (RFC 9110 §8.4.1.2: zlib, RFC 1950; raw RFC 1951 is accepted too)
/// through zlib's `inflate`.
enum ZlibDecoding {
    /// gzip: windowBits 15 + 16. Several gzip members in a row are all decoded (RFC 1952 §2.2).
    static func gunzip(_ input: [UInt8], limit: Int) -> DecodedBytes {
        inflate(input, windowBits: 15 + 16, limit: limit, members: true)
    }

    /// deflate: the zlib format, falling back to raw deflate when the zlib header is absent.
    static func inflateDeflate(_ input: [UInt8], limit: Int) -> DecodedBytes {
        let zlib = inflate(input, windowBits: 15, limit: limit, members: false)
        if case .failed = zlib.state, zlib.bytes.isEmpty {
            return inflate(input, windowBits: -15, limit: limit, members: false)
        }
        return zlib
    }

    private static func inflate(_ input: [UInt8], windowBits: Int32, limit: Int, members: Bool) -> DecodedBytes {
        var stream = z_stream()
        guard tv_inflateInit2(&stream, windowBits) == Z_OK else {
            return DecodedBytes(bytes: [], state: .failed("zlib could not start"))
        }
        defer { inflateEnd(&stream) }
        var source = input
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        return source.withUnsafeMutableBufferPointer { src -> DecodedBytes in
            stream.next_in = src.baseAddress
            stream.avail_in = uInt(src.count)
            while true {
                let (rc, produced) = chunk.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    let rc = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return (rc, out.count - Int(stream.avail_out))
                }
                output += chunk[..<produced]
                if output.count >= limit { return DecodedBytes(bytes: Array(output.prefix(limit)), state: .limitReached) }
                switch rc {
                case Z_STREAM_END:
                    if members && stream.avail_in > 0 && inflateReset(&stream) == Z_OK { continue }
                    return DecodedBytes(bytes: output, state: .finished)
                case Z_OK:
                    if stream.avail_in == 0 && produced == 0 { return DecodedBytes(bytes: output, state: .needsMoreInput) }
                case Z_BUF_ERROR:
                    return DecodedBytes(bytes: output, state: .needsMoreInput)
                default:
                    let reason = stream.msg.map { String(cString: $0) } ?? "zlib error \(rc)"
                    return DecodedBytes(bytes: output, state: .failed(reason))
                }
            }
        }
    }
}
