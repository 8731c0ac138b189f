import Foundation

/// Chunked transfer coding (RFC 9112 §7.1): `size[;ext] CRLF data CRLF` … `0 CRLF trailers CRLF`.
enum ChunkedBody {
    enum Outcome: Equatable {
        /// The last chunk and the trailer section were read; `end` is just past them.
        case complete(data: [UInt8], trailers: [HTTPHeader], end: Int)
        /// The bytes ran out inside the coding; `data` is what was decoded so far.
        case needsMore(data: [UInt8])
        /// The coding is broken at `position`; the reason is one clause.
        case invalid(data: [UInt8], position: Int, reason: String)
    }

    /// Decodes the chunked body starting at `start` of `bytes`.
    static func decode(_ bytes: [UInt8], from start: Int) -> Outcome {
        var data: [UInt8] = []
        var position = start
        while true {
            guard let lf = bytes[position...].firstIndex(of: 0x0A) else {
                if bytes.count - position > 1_024 {
                    return .invalid(data: data, position: position, reason: "no chunk size line ends within 1 KiB")
                }
                return .needsMore(data: data)
            }
            var lineEnd = lf
            if lineEnd > position && bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
            let line = String(decoding: bytes[position..<lineEnd], as: UTF8.self)
            let sizeText = line.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .trimmingCharacters(in: .whitespaces)
            guard !sizeText.isEmpty, sizeText.count <= 15, sizeText.allSatisfy(\.isHexDigit),
                  let size = Int(sizeText, radix: 16) else {
                return .invalid(data: data, position: position,
                                reason: "the chunk size line '\(line.prefix(40))' is not a hexadecimal size")
            }
            position = lf + 1
            if size == 0 {
                // Trailer section: header lines until an empty line.
                switch HTTP1Head.parse(Array("x\r\n".utf8) + bytes[position...], from: 0) {
                case let .head(head):
                    return .complete(data: data, trailers: head.headers, end: position + head.size - 3)
                case .needsMore:
                    return .needsMore(data: data)
                case let .invalid(reason):
                    return .invalid(data: data, position: position, reason: "the trailer section is not valid (\(reason))")
                }
            }
            let available = min(size, bytes.count - position)
            data += bytes[position..<(position + available)]
            if available < size { return .needsMore(data: data) }
            position += size
            // The CRLF after the data.
            if position >= bytes.count { return .needsMore(data: data) }
            if bytes[position] == 0x0D {
                if position + 1 >= bytes.count { return .needsMore(data: data) }
                position += 1
            }
            guard bytes[position] == 0x0A else {
                return .invalid(data: data, position: position, reason: "a chunk of \(size) bytes is not followed by CRLF")
            }
            position += 1
        }
    }
}
