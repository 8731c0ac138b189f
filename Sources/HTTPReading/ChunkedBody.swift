import Wire

/// A recorded chunked body (RFC 9112 §7.1) decoded by Wire's `HTTPChunkedDecoder` (lenient), its
/// trailers read by `HTTP1HeadParser.parseTrailerFields`.
enum ChunkedBody {
    enum Outcome: Equatable {
        /// The last chunk and the trailer section were read; `end` is just past them.
        case complete(data: [UInt8], trailers: [HTTPHeader], end: Int)
        /// The bytes ran out inside the coding; `data` is what was decoded so far.
        case needsMore(data: [UInt8])
        /// The coding is broken at `position`; the reason is one sentence.
        case invalid(data: [UInt8], position: Int, reason: String)
    }

    /// Decodes the chunked body starting at `start` of `bytes`, reading no further than `end`
    /// (nil: their end).
    static func decode(_ bytes: [UInt8], from start: Int, to end: Int? = nil) -> Outcome {
        var decoder = HTTPChunkedDecoder(leniency: .lenient)
        var data: [UInt8] = []
        let consumed = bytes.withUnsafeBytes { all in
            decoder.consume(UnsafeRawBufferPointer(rebasing: all[start..<(end ?? all.count)])) { data.append(contentsOf: $0) }
        }
        if let failure = decoder.failure {
            return .invalid(data: data, position: start + consumed, reason: failure.sentence)
        }
        guard decoder.isDone, let trailerOffset = decoder.trailerOffset else { return .needsMore(data: data) }
        let trailers = bytes.withUnsafeBufferPointer { all in
            HTTP1HeadParser.parseTrailerFields(UnsafeBufferPointer(rebasing: all[(start + trailerOffset) ..< (start + consumed)]), leniency: .lenient)
        }
        switch trailers {
        case .success(let fields):
            return .complete(data: data, trailers: fields.map(HTTPHeader.init(recorded:)), end: start + consumed)
        case .failure(let error):
            return .invalid(data: data, position: start + trailerOffset, reason: error.reason)
        }
    }
}

extension HTTPHeader {
    /// A field read by Wire, its value's bytes shown as UTF-8 when they are UTF-8 (as recorded
    /// text is shown), else one ISO-8859-1 character a byte (RFC 9110 §5.5's historical
    /// charset), so no byte is lost: `caf\xE9` is "café", not "caf\u{FFFD}" (a trial's export).
    init(recorded field: HTTPHeaderField) {
        let bytes = field.latin1Bytes
        self.init(field.name, String(validating: bytes, as: UTF8.self) ?? field.value)
    }
}
