/// Incremental, bounded reader of one HTTP/1 head — a request line or a status line, the field
/// lines and the empty line that ends them (RFC 9112 §2.1): feed it the stream's bytes as they
/// arrive until it answers something other than `.needMoreData`. The one HTTP/1 head parser of
/// tv: the proxy reads requests with it (through `HTTPRequestHeadParser`) and responses, and
/// HTTPReading reads recorded messages and chunked trailers with it.
///
/// Follows RFC 9112 §2.2 (lines end in CRLF, a bare LF is accepted, a bare CR is refused, empty
/// lines before the start line are skipped), §3 (request line: method, target and `HTTP/1.x`
/// separated by single spaces), §4 (status line: `HTTP/1.x`, a three-digit code, an optional
/// reason) and §5 (field lines; whitespace before the colon is refused). obs-fold (§5.2) is
/// refused or unfolded as `leniency` says.
///
/// The parser buffers at most `maxHeadBytes`; a head that does not end within them is
/// `.tooLong`. For requests, a first byte that cannot start a method (a TLS record, for
/// instance) is refused at once. Bytes fed after the head are kept in `unconsumedBytes`. A head
/// that arrives in one piece is read where it lies, without being copied.
public struct HTTP1HeadParser: Sendable, IncrementalParser {
    /// Which start line the head begins with.
    public enum Kind: Sendable, Hashable {
        /// A request line (RFC 9112 §3).
        case request
        /// A status line (RFC 9112 §4).
        case response

        var noun: String { self == .request ? "request" : "response" }
    }

    /// What the bytes fed so far amount to. Every answer but `.needMoreData` is final.
    public enum Result: Sendable, Hashable {
        /// The head is not complete yet; feed more bytes.
        case needMoreData
        /// The bytes are not a valid HTTP/1 head; one sentence naming the rule broken.
        case malformed(reason: String)
        /// The head did not end within `maxHeadBytes` bytes; `inStartLine`: its first line had
        /// not ended either. What a server or proxy answers with 414 (a request line, RFC 9110
        /// §15.5.15) or 431 (its fields, RFC 6585 §5): the head may be well formed, only longer
        /// than tv reads.
        case tooLong(maxHeadBytes: Int, inStartLine: Bool)
        /// The complete head.
        case head(HTTP1Head)
    }

    /// "The request head exceeds 65536 bytes without ending in an empty line." (or, with
    /// `inStartLine`, "The request line exceeds 65536 bytes without ending.")
    public static func tooLongSentence(_ kind: Kind, _ limit: Int, inStartLine: Bool = false) -> String {
        inStartLine ? "The \(kind == .request ? "request" : "status") line exceeds \(limit) bytes without ending."
            : "The \(kind.noun) head exceeds \(limit) bytes without ending in an empty line."
    }

    /// What tv answers a request head that did not end within `limit` bytes, on every path
    /// (the plain proxy's, reverse mode's first head and the relay's reading alike): 414 URI Too
    /// Long when its request line had not ended (RFC 9110 §15.5.15), else 431 Request Header
    /// Fields Too Large (RFC 6585 §5), with `tooLongSentence`. A response head past it is
    /// answered with 502 (RFC 9110 §15.6.3), with the same sentence for a response.
    public static func tooLongRequestRefusal(_ limit: Int, inStartLine: Bool) -> (status: Int, reason: String) {
        (inStartLine ? 414 : 431, tooLongSentence(.request, limit, inStartLine: inStartLine))
    }

    /// Default bound on the head: 64 KiB (65,536 bytes). tv's one head limit: the plain proxy's
    /// parsers and the relay's reading (`HTTP1HeadScanner`) refuse a head past it alike.
    public static let defaultMaxHeadBytes = 65_536

    /// Request or response.
    public let kind: Kind
    /// What is refused and what is read (`HTTP1Leniency`).
    public let leniency: HTTP1Leniency
    /// The largest head accepted, in bytes.
    public let maxHeadBytes: Int

    private var buffer: [UInt8] = []
    private var scanner = HTTP1HeadEndScanner()
    private var result: Result = .needMoreData
    /// Bytes fed after the end of the head; empty until the answer is `.head`.
    public private(set) var unconsumedBytes: [UInt8] = []
    /// How many bytes of the latest feed the head took (all of them until it ends).
    private var takenOfLastFeed = 0

    /// Creates a parser for one head of `kind` that refuses a head longer than `maxHeadBytes` bytes.
    public init(_ kind: Kind, leniency: HTTP1Leniency = .strict, maxHeadBytes: Int = HTTP1HeadParser.defaultMaxHeadBytes) {
        self.kind = kind
        self.leniency = leniency
        self.maxHeadBytes = maxHeadBytes
    }

    /// Feeds the next bytes of the stream (any length, including zero) and returns the answer.
    /// Once the answer is final, further bytes are ignored.
    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) -> Result {
        read(bytes, keepingRest: true)
    }

    /// Feeds the next bytes without keeping those after the head (nothing is copied when the
    /// head arrives in one piece): the answer, and how many of `bytes` the head took — all of
    /// them while the answer is `.needMoreData`; the body starts at `consumed` once it is `.head`.
    public mutating func consumeHead(_ bytes: UnsafeRawBufferPointer) -> (result: Result, consumed: Int) {
        let result = read(bytes.assumingMemoryBound(to: UInt8.self), keepingRest: false)
        return (result, takenOfLastFeed)
    }

    /// `feed`; without `keepingRest`, the bytes after the head are not copied to `unconsumedBytes`.
    private mutating func read(_ bytes: UnsafeBufferPointer<UInt8>, keepingRest: Bool) -> Result {
        guard case .needMoreData = result else { return result }
        let taken = min(bytes.count, maxHeadBytes - buffer.count)
        takenOfLastFeed = taken
        var scanner = self.scanner
        defer { self.scanner = scanner }
        if buffer.isEmpty {
            // The usual case, a head in one read: scanned and parsed in place, never copied.
            let window = UnsafeBufferPointer(rebasing: bytes[0 ..< taken])
            switch scanner.scan(window, kind: kind) {
            case .end(let headEnd):
                takenOfLastFeed = headEnd
                if keepingRest { unconsumedBytes = Array(UnsafeBufferPointer(rebasing: bytes[headEnd...])) }
                result = parse(UnsafeBufferPointer(rebasing: bytes[0 ..< headEnd]), startLineOffset: scanner.startLineOffset)
                return result
            case .refused(let reason):
                result = .malformed(reason: reason)
                return result
            case .needMoreData:
                buffer.append(contentsOf: window)
            }
        } else {
            let before = buffer.count
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[0 ..< taken]))
            switch buffer.withUnsafeBufferPointer({ scanner.scan($0, kind: kind) }) {
            case .end(let headEnd):
                takenOfLastFeed = headEnd - before
                if keepingRest { unconsumedBytes = Array(buffer[headEnd...]) + Array(UnsafeBufferPointer(rebasing: bytes[taken...])) }
                let offset = scanner.startLineOffset
                result = buffer.withUnsafeBufferPointer { parse(UnsafeBufferPointer(rebasing: $0[0 ..< headEnd]), startLineOffset: offset) }
                buffer = []
                return result
            case .refused(let reason):
                result = .malformed(reason: reason)
                return result
            case .needMoreData:
                break
            }
        }
        if buffer.count >= maxHeadBytes {
            result = .tooLong(maxHeadBytes: maxHeadBytes, inStartLine: !scanner.sawStartLine)
            buffer = []
        }
        return result
    }



    /// Parses a buffer that should start with a whole head; `.needMoreData` means it is truncated
    /// (and shorter than `maxHeadBytes`). Nothing is copied but the head's own strings; the bytes
    /// after the head start at the head's `byteCount`.
    public static func parse<Bytes: Collection>(
        _ bytes: Bytes, kind: Kind, leniency: HTTP1Leniency = .strict, maxHeadBytes: Int = defaultMaxHeadBytes
    ) -> Result where Bytes.Element == UInt8 {
        var parser = HTTP1HeadParser(kind, leniency: leniency, maxHeadBytes: maxHeadBytes)
        if let answer = bytes.withContiguousStorageIfAvailable({ parser.read($0, keepingRest: false) }) { return answer }
        return Array(bytes).withUnsafeBufferPointer { parser.read($0, keepingRest: false) }
    }

    /// Parses the field lines of a chunked body's trailer section (RFC 9112 §7.1.2): every line of
    /// `bytes` up to the empty line, by the same rules as a head's field lines.
    public static func parseTrailerFields(_ bytes: UnsafeBufferPointer<UInt8>, leniency: HTTP1Leniency) -> Swift.Result<[HTTPHeaderField], WireFormatError> {
        var lines = HTTPLines(bytes, start: 0)
        var fields: [HTTPHeaderField] = []
        do throws(WireFormatError) {
            try parseFieldLines(&lines, into: &fields, leniency: leniency, of: nil)
        } catch {
            return .failure(error)
        }
        return .success(fields)
    }

    private func parse(_ head: UnsafeBufferPointer<UInt8>, startLineOffset: Int) -> Result {
        do throws(WireFormatError) {
            return .head(try Self.parseHead(head, startLineOffset: startLineOffset, kind: kind, leniency: leniency))
        } catch {
            return .malformed(reason: error.reason)
        }
    }
}

/// Finds the end of a head as bytes arrive: the offset just past the empty line that follows
/// the start line and field lines (RFC 9112 §2.1, §2.2).
struct HTTP1HeadEndScanner: Sendable {
    enum Outcome {
        case needMoreData
        case end(Int)
        case refused(String)
    }

    private var scanIndex = 0
    private var lineStart = 0
    /// Whether a non-empty line has ended (the start line is whole).
    private(set) var sawStartLine = false
    /// Offset of the start line, past any empty lines before it.
    private(set) var startLineOffset = 0

    /// Scans the bytes of `buffer` not seen yet; `buffer` holds every byte scanned before, at the
    /// same offsets. A request whose first byte cannot start a method is refused at once.
    mutating func scan(_ buffer: UnsafeBufferPointer<UInt8>, kind: HTTP1HeadParser.Kind) -> Outcome {
        while scanIndex < buffer.count {
            let byte = buffer[scanIndex]
            if kind == .request, !sawStartLine, scanIndex == lineStart, byte != UInt8(ascii: "\r"), byte != UInt8(ascii: "\n"),
               !HTTPToken.isTokenByte(byte) {
                return .refused("The stream starts with byte 0x\(String(byte, radix: 16)), which cannot begin an HTTP method (RFC 9112 §3).")
            }
            scanIndex += 1
            guard byte == UInt8(ascii: "\n") else { continue }
            var lineEnd = scanIndex - 1
            if lineEnd > lineStart, buffer[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            if lineEnd == lineStart {
                if sawStartLine { return .end(scanIndex) }
                startLineOffset = scanIndex // an empty line before the start line (RFC 9112 §2.2)
            } else {
                sawStartLine = true
            }
            lineStart = scanIndex
        }
        return .needMoreData
    }
}

/// Iterates the lines of a complete head as index ranges without their CRLF or LF.
struct HTTPLines: IteratorProtocol {
    let bytes: UnsafeBufferPointer<UInt8>
    var position: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>, start: Int) {
        self.bytes = bytes
        self.position = start
    }

    mutating func next() -> Range<Int>? {
        guard position < bytes.count,
              let newline = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        var end = newline
        if end > position, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        defer { position = newline + 1 }
        return position ..< end
    }
}
