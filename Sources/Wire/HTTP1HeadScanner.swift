#if canImport(Glibc)
import Glibc
#endif

/// What an exchange row needs of an HTTP/1 request head (issue 16): its start line, its Host and
/// how its body is framed. Every other field is checked but never copied.
public struct HTTP1RequestSummary: Sendable, Hashable {
    /// The method as sent.
    public var method: String
    /// The request target as sent (bytes outside ASCII decoded as UTF-8, invalid ones replaced).
    public var target: String
    /// The request line's version (major 1).
    public var version: HTTPVersion
    /// The first Host field's value, if any.
    public var host: String?
    /// How the body is delimited (RFC 9112 §6.3, lenient).
    public var framing: HTTPBodyFraming
    /// Why a strict reading of the framing refuses what the lenient one read (Content-Length
    /// beside Transfer-Encoding, Transfer-Encoding on HTTP/1.0 or not ending in one `chunked`):
    /// servers may read such a body otherwise, the request-smuggling risk RFC 9112 §6.1 and §6.3
    /// describe. Nil for the usual head (looked at only when Transfer-Encoding is there).
    public var framingRefusal: String?
    /// The protocols the client asks to switch to (RFC 9110 §7.8): the Upgrade field lines'
    /// values joined by ", "; nil without one.
    public var upgrade: String?
    /// The first Sec-WebSocket-Key field's value (RFC 6455 §4.1), if any.
    public var webSocketKey: String?

    public init(method: String, target: String, version: HTTPVersion, host: String?, framing: HTTPBodyFraming,
                framingRefusal: String? = nil, upgrade: String? = nil, webSocketKey: String? = nil) {
        self.method = method
        self.target = target
        self.version = version
        self.host = host
        self.framing = framing
        self.framingRefusal = framingRefusal
        self.upgrade = upgrade
        self.webSocketKey = webSocketKey
    }
}

/// What an exchange row needs of an HTTP/1 response head: its status line, Content-Type,
/// Content-Encoding and how its body is framed.
public struct HTTP1ResponseSummary: Sendable, Hashable {
    /// The status line's version (major 1).
    public var version: HTTPVersion
    /// The three-digit status code (100…999).
    public var code: Int
    /// The reason phrase, nil when the line has none.
    public var reason: String?
    /// The first Content-Type field's value, if any.
    public var contentType: String?
    /// The first Content-Encoding field's value, if any.
    public var contentEncoding: String?
    /// How the body is delimited (RFC 9112 §6.3, lenient), given the request it answers.
    public var framing: HTTPBodyFraming
    /// Why the framing is an error though it was read: Content-Length beside Transfer-Encoding
    /// on a response that has a body (RFC 9112 §6.3: possibly response splitting, "ought to be
    /// handled as an error"; an intermediary that forwards it must first remove the
    /// Content-Length, which a relay cannot). Nil for the usual head.
    public var framingRefusal: String?
    /// The protocols a 101 switches to (RFC 9110 §7.8): the Upgrade field lines' values joined
    /// by ", "; nil without one (kept for every status, read for a 101).
    public var upgrade: String?
    /// The first Sec-WebSocket-Accept field's value (RFC 6455 §4.2.2), if any.
    public var webSocketAccept: String?

    public init(version: HTTPVersion, code: Int, reason: String?, contentType: String?, contentEncoding: String?,
                framing: HTTPBodyFraming, framingRefusal: String? = nil, upgrade: String? = nil, webSocketAccept: String? = nil) {
        self.version = version
        self.code = code
        self.reason = reason
        self.contentType = contentType
        self.contentEncoding = contentEncoding
        self.framing = framing
        self.framingRefusal = framingRefusal
        self.upgrade = upgrade
        self.webSocketAccept = webSocketAccept
    }

    /// The sentence of `framingRefusal`, also the proxy's plain path's for such a head.
    public static let lengthAndCoding = "The response has both Content-Length and Transfer-Encoding, which RFC 9112 §6.3 says may be an attempt at response splitting and ought to be handled as an error."
}

/// The exchange rows' lean reading of one HTTP/1 head (issue 16's cost: the full
/// `HTTP1HeadParser` made a `String` of every field and its framing compared every name):
/// incremental and bounded as that parser is, with the same rules as its lenient mode (RFC 9112
/// §2.2 line ends, §3 and §4 start lines, §5 field lines, §6.3 framing) but for obs-fold (§5.2),
/// which it refuses as the strict mode does, and the same failures, word for word — the start
/// lines and every field line are checked by the same functions — but it keeps only the fields
/// an exchange row stores, as bytes compared without case, and makes their strings once, at the
/// end. It reads heads on the proxy's relay, which forwards them as they came: an obs-fold it
/// unfolded reached the client folded while the row showed one field, and a request's
/// `Transfer-Encoding:` folded onto ` chunked` was forwarded to nginx (which refused it) while the
/// row read it as chunked (a hostile-input trial).
///
/// A head that arrives in one piece is read where it lies; one split across reads is gathered
/// (at most `maxHeadBytes`). A head that does not end within `maxHeadBytes` is `.tooLong`, as
/// the full parser says: the relay refuses it as the plain path does (431, or 414 for its
/// request line; 502 for a response). Read on past the bound, a 1.29 MB request head went
/// through an inspected tunnel to the server while the plain path answered 431 (a
/// hostile-input trial).
public struct HTTP1HeadScanner: Sendable {
    /// What the bytes fed so far amount to. Every answer but `.needMoreData` is final.
    public enum Result: Sendable, Hashable {
        /// The head is not complete yet; feed more bytes.
        case needMoreData
        /// The bytes are not a valid HTTP/1 head; one sentence naming the rule broken.
        case malformed(reason: String)
        /// The head did not end within `maxHeadBytes` bytes (`HTTP1HeadParser.Result.tooLong`, the
        /// same bound and the same answer: `HTTP1HeadParser.tooLongRequestRefusal` for a request,
        /// 502 for a response); `inStartLine`: its first line had not ended either.
        case tooLong(maxHeadBytes: Int, inStartLine: Bool)
        /// A complete request head.
        case request(HTTP1RequestSummary)
        /// A complete response head.
        case response(HTTP1ResponseSummary)
    }

    /// Request or response.
    public let kind: HTTP1HeadParser.Kind
    /// For a response, the method of the request it answers (HEAD and CONNECT frame it).
    public let requestMethod: String?
    /// The largest head accepted, in bytes.
    public let maxHeadBytes: Int

    /// The head's bytes gathered so far, when it did not arrive in one piece (at most
    /// `maxHeadBytes`; `compactGathered` keeps it so).
    var buffer: [UInt8] = []
    var end = LineEndScan()

    /// The head's bytes gathered by earlier `consumeHead` calls (empty while it is read from
    /// the caller's bytes in one piece): with the next call's bytes, where a refused head began,
    /// for a caller that salvages its request line (`MalformedRequestLine`).
    public var gathered: [UInt8] { buffer }
    private var result: Result = .needMoreData

    /// A scanner of one head of `kind`; `requestMethod` for a response.
    public init(_ kind: HTTP1HeadParser.Kind, answering requestMethod: String? = nil,
                maxHeadBytes: Int = HTTP1HeadParser.defaultMaxHeadBytes) {
        self.kind = kind
        self.requestMethod = requestMethod
        self.maxHeadBytes = maxHeadBytes
    }

    /// Feeds the next bytes of the stream: the answer, and how many of `bytes` the head took —
    /// all of them while the answer is `.needMoreData`; the body starts at `consumed` once the
    /// head is read. Once the answer is final, further bytes are ignored.
    public mutating func consumeHead(_ raw: UnsafeRawBufferPointer) -> (result: Result, consumed: Int) {
        guard case .needMoreData = result else { return (result, 0) }
        let consumed = consumeStep(raw)
        return (result, consumed)
    }

    /// `consumeHead`: at most the room left below `maxHeadBytes`; the bytes it took.
    private mutating func consumeStep(_ raw: UnsafeRawBufferPointer) -> Int {
        let bytes = raw.assumingMemoryBound(to: UInt8.self)
        let taken = min(bytes.count, maxHeadBytes - buffer.count)
        if buffer.isEmpty {
            let window = UnsafeBufferPointer(rebasing: bytes[0 ..< taken])
            switch end.scan(window, kind: kind) {
            case .end(let headEnd):
                result = read(UnsafeBufferPointer(rebasing: bytes[0 ..< headEnd]))
                return headEnd
            case .refused(let reason):
                result = .malformed(reason: reason)
                return taken
            case .needMoreData:
                buffer.append(contentsOf: window)
            }
        } else {
            let before = buffer.count
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[0 ..< taken]))
            var end = self.end
            let outcome = buffer.withUnsafeBufferPointer { end.scan($0, kind: kind) }
            self.end = end
            switch outcome {
            case .end(let headEnd):
                result = buffer.withUnsafeBufferPointer { read(UnsafeBufferPointer(rebasing: $0[0 ..< headEnd])) }
                buffer = []
                return headEnd - before
            case .refused(let reason):
                result = .malformed(reason: reason)
                return taken
            case .needMoreData:
                break
            }
        }
        if buffer.count >= maxHeadBytes {
            result = .tooLong(maxHeadBytes: maxHeadBytes, inStartLine: !end.sawStartLine)
            buffer = []
        }
        return taken
    }

    /// Whether the request head part way has a whole first line that reads as an HTTP/1 request
    /// line (RFC 9112 §3, lenient): the stream is HTTP, whatever tv knew of it before, so the
    /// relay may hold the head back until it is whole. False for a response, a head that ended,
    /// or one whose first line has not ended.
    public var startsWithRequestLine: Bool {
        guard kind == .request, case .needMoreData = result, end.sawStartLine else { return false }
        return buffer.withUnsafeBufferPointer { bytes in
            guard end.startLineOffset < bytes.count else { return false }
            let rest = UnsafeBufferPointer(rebasing: bytes[end.startLineOffset...])
            guard var lineEnd = rest.firstIndex(of: UInt8(ascii: "\n")) else { return false }
            if lineEnd > 0, rest[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            return (try? HTTP1HeadParser.parseRequestLine(UnsafeBufferPointer(rebasing: rest[..<lineEnd]), leniency: .lenient)) != nil
        }
    }

    /// Reads a complete head (`head` ends with its empty line).
    private func read(_ head: UnsafeBufferPointer<UInt8>) -> Result {
        do throws(WireFormatError) {
            return try HTTP1HeadScanner.read(head, startLineOffset: end.startLineOffset, kind: kind, answering: requestMethod)
        } catch {
            return .malformed(reason: error.reason)
        }
    }

    /// The fields kept, by name (ASCII case-insensitive).
    enum Kept {
        case host, contentType, contentEncoding, contentLength, transferEncoding, upgrade, webSocketKey, webSocketAccept
    }

    /// One kept field's value: where it lies in the head.
    private struct Value {
        var range: Range<Int>

        func text(_ head: UnsafeBufferPointer<UInt8>) -> String {
            HTTP1HeadParser.fieldText(UnsafeBufferPointer(rebasing: head[range]))
        }
    }

    /// The values of a field kept every time it appears (Content-Length, Transfer-Encoding): the
    /// first held inline, so a head with one or none (the usual) allocates nothing for them.
    private struct Repeated {
        var first: Value?
        var more: [Value] = []

        var isEmpty: Bool { first == nil }
        var count: Int { first == nil ? 0 : 1 + more.count }

        mutating func append(_ value: Value) {
            if first == nil { first = value } else { more.append(value) }
        }

        func texts(_ head: UnsafeBufferPointer<UInt8>) -> [String] {
            guard let first else { return [] }
            return [first.text(head)] + more.map { $0.text(head) }
        }
    }

    /// Why a field line that starts with whitespace is refused: the first one has nothing to
    /// continue (RFC 9112 §2.2); a later one is obs-fold (§5.2), which the relay refuses as the
    /// strict parser does, since it forwards the bytes as they came and cannot unfold them.
    static func whitespaceLineRefusal(first: Bool, kind: HTTP1HeadParser.Kind) -> String {
        first ? HTTP1HeadParser.firstLineWhitespaceSentence : HTTP1HeadParser.obsFoldSentence(kind)
    }

    static func read(_ head: UnsafeBufferPointer<UInt8>, startLineOffset: Int, kind: HTTP1HeadParser.Kind,
                     answering requestMethod: String?) throws(WireFormatError) -> Result {
        var lines = FastLines(head, start: startLineOffset)
        guard let first = lines.next() else {
            throw WireFormatError("The \(kind.noun) head has no start line.")
        }
        let startLine = UnsafeBufferPointer(rebasing: head[first])
        let start = kind == .request
            ? try HTTP1HeadParser.parseRequestLine(startLine, leniency: .lenient)
            : try HTTP1HeadParser.parseStatusLine(startLine)
        var host: Value?, contentType: Value?, contentEncoding: Value?, webSocketKey: Value?, webSocketAccept: Value?
        var lengths = Repeated(), codings = Repeated(), upgrades = Repeated()
        var firstField = true
        while let range = lines.next(), !range.isEmpty {
            let line = UnsafeBufferPointer(rebasing: head[range])
            if line[0] == UInt8(ascii: " ") || line[0] == UInt8(ascii: "\t") {
                throw WireFormatError(whitespaceLineRefusal(first: firstField, kind: kind))
            }
            firstField = false
            let (colon, valueRange) = try HTTP1HeadParser.fieldLineParts(line)
            let value = Value(range: (range.lowerBound + valueRange.lowerBound) ..< (range.lowerBound + valueRange.upperBound))
            switch keptField(UnsafeBufferPointer(rebasing: line[0 ..< colon]), kind: kind) {
            case .host?: if host == nil { host = value }
            case .contentType?: if contentType == nil { contentType = value }
            case .contentEncoding?: if contentEncoding == nil { contentEncoding = value }
            case .contentLength?: lengths.append(value)
            case .transferEncoding?: codings.append(value)
            case .upgrade?: upgrades.append(value)
            case .webSocketKey?: if webSocketKey == nil { webSocketKey = value }
            case .webSocketAccept?: if webSocketAccept == nil { webSocketAccept = value }
            case nil: break
            }
        }
        switch start {
        case let .request(method, target, version):
            let framing = try bodyFraming(status: nil, version: version, lengths, codings, head)
            // The strict rules only where they can differ: a Transfer-Encoding field is there.
            var refusal: String?
            if !codings.isEmpty {
                do throws(WireFormatError) {
                    _ = try HTTP1Head.framing(status: nil, version: version, contentLengths: lengths.texts(head),
                                              transferEncodings: codings.texts(head), leniency: .strict)
                } catch {
                    refusal = error.reason
                }
            }
            return .request(HTTP1RequestSummary(method: method, target: target, version: version,
                                                host: host?.text(head), framing: framing, framingRefusal: refusal,
                                                upgrade: upgrades.isEmpty ? nil : upgrades.texts(head).joined(separator: ", "),
                                                webSocketKey: webSocketKey?.text(head)))
        case let .status(version, code, reason):
            let hasBody = !HTTP1Head.responseHasNoBody(status: code, answering: requestMethod)
            let framing: HTTPBodyFraming = hasBody ? try bodyFraming(status: code, version: version, lengths, codings, head) : .none
            return .response(HTTP1ResponseSummary(version: version, code: code, reason: reason,
                                                  contentType: contentType?.text(head),
                                                  contentEncoding: contentEncoding?.text(head), framing: framing,
                                                  framingRefusal: hasBody && !codings.isEmpty && !lengths.isEmpty
                                                      ? HTTP1ResponseSummary.lengthAndCoding : nil,
                                                  upgrade: upgrades.isEmpty ? nil : upgrades.texts(head).joined(separator: ", "),
                                                  webSocketAccept: webSocketAccept?.text(head)))
        }
    }

    /// `HTTP1Head`'s framing rules over the kept values; one plain Content-Length of digits
    /// alone (the usual case) is read without making its string.
    private static func bodyFraming(status: Int?, version: HTTPVersion, _ lengths: Repeated, _ codings: Repeated,
                                    _ head: UnsafeBufferPointer<UInt8>) throws(WireFormatError) -> HTTPBodyFraming {
        if codings.isEmpty, lengths.more.isEmpty, let only = lengths.first, !only.range.isEmpty, only.range.count <= 18 {
            var length = 0
            var digitsOnly = true
            for index in only.range {
                let digit = head[index] &- UInt8(ascii: "0")
                if digit > 9 { digitsOnly = false; break }
                length = length * 10 + Int(digit)
            }
            if digitsOnly { return .contentLength(length) }
        }
        return try HTTP1Head.framing(status: status, version: version, contentLengths: lengths.texts(head),
                                     transferEncodings: codings.texts(head), leniency: .lenient)
    }

    /// Which kept field `name` is, compared without ASCII case (requests keep Host and
    /// Sec-WebSocket-Key, responses Content-Type, Content-Encoding and Sec-WebSocket-Accept, both
    /// the framing fields and Upgrade).
    static func keptField(_ name: UnsafeBufferPointer<UInt8>, kind: HTTP1HeadParser.Kind) -> Kept? {
        switch name.count {
        case 4: return kind == .request && equalsFolded(name, "host") ? .host : nil
        case 7: return equalsFolded(name, "upgrade") ? .upgrade : nil
        case 12: return kind == .response && equalsFolded(name, "content-type") ? .contentType : nil
        case 14: return equalsFolded(name, "content-length") ? .contentLength : nil
        case 16: return kind == .response && equalsFolded(name, "content-encoding") ? .contentEncoding : nil
        case 17:
            if equalsFolded(name, "transfer-encoding") { return .transferEncoding }
            return kind == .request && equalsFolded(name, "sec-websocket-key") ? .webSocketKey : nil
        case 20: return kind == .response && equalsFolded(name, "sec-websocket-accept") ? .webSocketAccept : nil
        default: return nil
        }
    }

    /// Whether `bytes` equal the lowercase `name` ignoring ASCII case (same length assumed).
    private static func equalsFolded(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        let lower = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        guard bytes.count == lower.count else { return false }
        for index in 0 ..< bytes.count where HTTPToken.lowercased(bytes[index]) != lower[index] { return false }
        return true
    }
}

/// `HTTP1HeadEndScanner`'s rules (the end of a head: the empty line after the start line and
/// field lines, RFC 9112 §2.1, §2.2; empty lines before the start line skipped; a request whose
/// first byte cannot start a method refused at once), finding line ends with `memchr`.
struct LineEndScan: Sendable {
    enum Outcome {
        case needMoreData
        case end(Int)
        case refused(String)
    }

    private var scanIndex = 0
    /// Where the line being scanned begins (after the last line end found).
    private(set) var lineStart = 0
    /// Whether the start line is complete.
    private(set) var sawStartLine = false
    /// Offset of the start line, past any empty lines before it.
    private(set) var startLineOffset = 0

    /// Scans the bytes of `buffer` not seen yet; `buffer` holds every byte scanned before, at the
    /// same offsets.
    mutating func scan(_ buffer: UnsafeBufferPointer<UInt8>, kind: HTTP1HeadParser.Kind) -> Outcome {
        guard let base = buffer.baseAddress else { return .needMoreData }
        while scanIndex < buffer.count {
            if kind == .request, !sawStartLine, scanIndex == lineStart {
                let byte = buffer[scanIndex]
                if byte != UInt8(ascii: "\r"), byte != UInt8(ascii: "\n"), !HTTPToken.isTokenByte(byte) {
                    return .refused("The stream starts with byte 0x\(String(byte, radix: 16)), which cannot begin an HTTP method (RFC 9112 §3).")
                }
            }
            guard let found = memchr(base + scanIndex, Int32(UInt8(ascii: "\n")), buffer.count - scanIndex) else {
                scanIndex = buffer.count
                return .needMoreData
            }
            let newline = UnsafeRawPointer(found) - UnsafeRawPointer(base)
            scanIndex = newline + 1
            var lineEnd = newline
            if lineEnd > lineStart, buffer[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            if lineEnd == lineStart {
                if sawStartLine { return .end(scanIndex) }
                startLineOffset = scanIndex
            } else {
                sawStartLine = true
            }
            lineStart = scanIndex
        }
        return .needMoreData
    }
}

/// `HTTPLines` with `memchr`: the lines of a complete head as ranges without their CRLF or LF.
struct FastLines {
    let bytes: UnsafeBufferPointer<UInt8>
    var position: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>, start: Int) {
        self.bytes = bytes
        position = start
    }

    mutating func next() -> Range<Int>? {
        guard position < bytes.count, let base = bytes.baseAddress,
              let found = memchr(base + position, Int32(UInt8(ascii: "\n")), bytes.count - position) else { return nil }
        let newline = UnsafeRawPointer(found) - UnsafeRawPointer(base)
        var end = newline
        if end > position, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        defer { position = newline + 1 }
        return position ..< end
    }
}
