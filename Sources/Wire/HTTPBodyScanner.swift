/// Finds where an HTTP/1 message body ends without copying it (RFC 9112 §6, §7.1): a relay
/// passes bytes on as they come and asks this scanner how many of them are still body. The
/// proxy's one rule for a body's end, on both of its paths (the relay's exchange rows and the
/// plain HTTP forwarder), both directions: chunked bodies are walked by a strict
/// `HTTPChunkedDecoder` (two readings, lenient on the relay and strict on the plain path,
/// disagreed before).
public struct HTTPBodyScanner: Sendable, Hashable {
    /// How the body is delimited.
    public let framing: HTTPBodyFraming
    private var remaining = 0
    private var chunked = HTTPChunkedDecoder(leniency: .strict)

    /// A scanner at the start of a body framed by `framing`.
    public init(_ framing: HTTPBodyFraming) {
        self.framing = framing
        if case .contentLength(let length) = framing { remaining = length }
    }

    /// Whether the whole body has gone by (never, for `.untilClose`).
    public var isDone: Bool {
        switch framing {
        case .none: true
        case .contentLength: remaining == 0
        case .chunked: chunked.isDone
        case .untilClose: false
        }
    }

    /// Why the chunked framing cannot be read on, once it cannot: the message cannot be delimited.
    public var failure: ChunkedBodyProblem? { chunked.failure }

    /// How many of `bytes` (from their start) belong to the body, stopping at the body's end, and
    /// how many of those are content (the transfer coding removed: chunk framing not counted).
    public mutating func consumeCounting(_ bytes: UnsafeRawBufferPointer) -> (wire: Int, content: Int) {
        guard case .chunked = framing else {
            let n = consume(bytes)
            return (n, n)
        }
        var content = 0
        let n = chunked.consume(bytes) { content += $0.count }
        return (n, content)
    }

    /// How many of `bytes` (from their start) belong to the body; stops at the body's end.
    public mutating func consume(_ bytes: UnsafeRawBufferPointer) -> Int {
        switch framing {
        case .none: return 0
        case .untilClose: return bytes.count
        case .contentLength:
            let n = min(remaining, bytes.count)
            remaining -= n
            return n
        case .chunked:
            return chunked.consume(bytes)
        }
    }
}
