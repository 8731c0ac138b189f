/// Incremental, bounded reader of an HTTP/1 request head for the explicit proxy front-end: feed
/// it the client's bytes as they arrive until it answers something other than `.needMoreData`.
///
/// Follows RFC 9112 §2.2 (lines end in CRLF, a bare LF is accepted, a bare CR is refused, empty
/// lines before the request line are skipped), §3 (request line of method, target and
/// `HTTP/1.x` separated by single spaces), §5 (field lines; whitespace before the colon and
/// obs-fold continuation lines are refused) and §6.3 (body framing; Content-Length together with
/// Transfer-Encoding is refused as a request-smuggling risk). An HTTP/1.1 request other than
/// CONNECT must carry exactly one Host header (§3.2); no request may carry two.
///
/// The parser buffers at most `maxHeadBytes`; a head that does not end within them is
/// `.malformed`. A first byte that cannot start a request line (a TLS record, for instance) is
/// refused at once. Bytes fed after the head are kept in `unconsumedBytes` for the caller to
/// forward.
public struct HTTPRequestHeadParser: Sendable {
    /// What the bytes fed so far amount to. Every answer but `.needMoreData` is final.
    public enum Result: Sendable, Hashable {
        /// The head is not complete yet; feed more bytes.
        case needMoreData
        /// The bytes are not a valid HTTP/1 request head; one sentence.
        case malformed(reason: String)
        /// The complete head.
        case head(HTTPRequestHead)
    }

    /// Default bound on the head: 64 KiB (65,536 bytes).
    public static let defaultMaxHeadBytes = 65_536

    /// The largest head accepted, in bytes.
    public let maxHeadBytes: Int

    private var buffer: [UInt8] = []
    private var scanIndex = 0
    private var lineStart = 0
    private var sawRequestLine = false
    /// Offset of the request line, past any empty lines before it.
    private var lineStartOfRequest = 0
    private var result: Result = .needMoreData
    /// Bytes fed after the end of the head; empty until the answer is `.head`.
    public private(set) var unconsumedBytes: [UInt8] = []

    /// Creates a parser that refuses a head longer than `maxHeadBytes` bytes.
    public init(maxHeadBytes: Int = HTTPRequestHeadParser.defaultMaxHeadBytes) {
        self.maxHeadBytes = maxHeadBytes
    }

    /// Feeds the next bytes of the stream (any length, including zero) and returns the answer.
    /// Once the answer is final, further bytes are ignored.
    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) -> Result {
        guard case .needMoreData = result else { return result }
        let taken = min(bytes.count, maxHeadBytes - buffer.count)
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[0 ..< taken]))
        guard let headEnd = scanForEnd() else {
            if case .needMoreData = result, buffer.count >= maxHeadBytes {
                result = .malformed(reason: "The request head exceeds \(maxHeadBytes) bytes without ending in an empty line.")
            }
            return result
        }
        unconsumedBytes = Array(buffer[headEnd...]) + Array(UnsafeBufferPointer(rebasing: bytes[taken...]))
        do {
            result = .head(try buffer.withUnsafeBufferPointer { buffer throws(WireFormatError) in
                try Self.parseHead(UnsafeBufferPointer(rebasing: buffer[0 ..< headEnd]), requestLineStart: lineStartOfRequest)
            })
        } catch {
            result = .malformed(reason: error.reason)
        }
        buffer = []
        return result
    }

    /// Feeds the next bytes of the stream (any length, including zero) and returns the answer.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Result {
        feed(bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// Feeds the next bytes of the stream (any collection of bytes) and returns the answer.
    public mutating func feed<Bytes: Collection>(_ bytes: Bytes) -> Result where Bytes.Element == UInt8 {
        if let answer = bytes.withContiguousStorageIfAvailable({ buffer in feed(buffer) }) { return answer }
        return Array(bytes).withUnsafeBufferPointer { feed($0) }
    }

    /// Parses a buffer that should start with a whole head; `.needMoreData` means it is truncated.
    public static func parse<Bytes: Collection>(_ bytes: Bytes, maxHeadBytes: Int = defaultMaxHeadBytes) -> Result
    where Bytes.Element == UInt8 {
        var parser = HTTPRequestHeadParser(maxHeadBytes: maxHeadBytes)
        return parser.feed(bytes)
    }

    /// Scans new bytes for line ends; returns the offset just past the empty line ending the head.
    /// Sets `result` to malformed when the first byte of the request line cannot start a method.
    private mutating func scanForEnd() -> Int? {
        while scanIndex < buffer.count {
            let byte = buffer[scanIndex]
            if !sawRequestLine, scanIndex == lineStart, byte != UInt8(ascii: "\r"), byte != UInt8(ascii: "\n"),
               !HTTPToken.isTokenByte(byte) {
                result = .malformed(reason: "The stream starts with byte 0x\(String(byte, radix: 16)), which cannot begin an HTTP method.")
                return nil
            }
            scanIndex += 1
            guard byte == UInt8(ascii: "\n") else { continue }
            var lineEnd = scanIndex - 1
            if lineEnd > lineStart, buffer[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            if lineEnd == lineStart {
                if sawRequestLine { return scanIndex }
                lineStartOfRequest = scanIndex // an empty line before the request line (RFC 9112 §2.2)
            } else {
                sawRequestLine = true
            }
            lineStart = scanIndex
        }
        return nil
    }
}

extension HTTPRequestHeadParser {
    /// Parses a complete head: `head[requestLineStart...]` is the request line, field lines and the
    /// final empty line.
    static func parseHead(_ head: UnsafeBufferPointer<UInt8>, requestLineStart: Int) throws(WireFormatError) -> HTTPRequestHead {
        var lines = HTTPLines(head, start: requestLineStart)
        guard let requestLine = lines.next() else {
            throw WireFormatError("The request head has no request line.")
        }
        let (methodBytes, target, version) = try parseRequestLine(UnsafeBufferPointer(rebasing: head[requestLine]))
        let method = String(decoding: UnsafeBufferPointer(rebasing: methodBytes), as: UTF8.self)

        var headers: [HTTPHeaderField] = []
        while let range = lines.next(), !range.isEmpty {
            headers.append(try parseFieldLine(UnsafeBufferPointer(rebasing: head[range])))
        }
        let requestTarget = try classifyTarget(target, method: method)
        let targetText = String(decoding: target, as: UTF8.self)

        var hostCount = 0
        var contentLengths: [String] = []
        var transferEncodings: [String] = []
        var connections: [String] = []
        for field in headers {
            if field.hasName("Host") { hostCount += 1 }
            else if field.hasName("Content-Length") { contentLengths.append(field.value) }
            else if field.hasName("Transfer-Encoding") { transferEncodings.append(field.value) }
            else if field.hasName("Connection") { connections.append(field.value) }
        }
        guard hostCount <= 1 else {
            throw WireFormatError("The request has \(hostCount) Host headers, but RFC 9112 §3.2 allows one.")
        }
        if hostCount == 0, version.minor >= 1, method != "CONNECT" {
            throw WireFormatError("The HTTP/1.1 request has no Host header, which RFC 9112 §3.2 requires.")
        }
        let framing = try bodyFraming(contentLengths: contentLengths, transferEncodings: transferEncodings, version: version)
        return HTTPRequestHead(
            method: method, target: targetText, requestTarget: requestTarget, version: version, headers: headers,
            byteCount: head.count, bodyFraming: framing, connectionOptions: HTTPToken.lowercasedList(connections))
    }

    /// `method SP request-target SP HTTP-version` (RFC 9112 §3).
    private static func parseRequestLine(_ line: UnsafeBufferPointer<UInt8>) throws(WireFormatError)
        -> (method: Slice<UnsafeBufferPointer<UInt8>>, target: UnsafeBufferPointer<UInt8>, version: HTTPVersion)
    {
        let space = UInt8(ascii: " ")
        guard let firstSpace = line.firstIndex(of: space),
              let secondSpace = line[(firstSpace + 1)...].firstIndex(of: space) else {
            throw WireFormatError("The request line is not a method, a target and a version separated by single spaces.")
        }
        let method = line[0 ..< firstSpace]
        for byte in method where !HTTPToken.isTokenByte(byte) {
            throw WireFormatError("The request method contains byte 0x\(String(byte, radix: 16)), which is not allowed in a token.")
        }
        let target = UnsafeBufferPointer(rebasing: line[(firstSpace + 1) ..< secondSpace])
        guard !target.isEmpty else {
            throw WireFormatError("The request target is empty.")
        }
        for byte in target where byte < 0x21 || byte > 0x7E {
            throw WireFormatError("The request target contains byte 0x\(String(byte, radix: 16)), which is not visible ASCII.")
        }
        let version = line[(secondSpace + 1)...]
        let digits = version.dropFirst(5)
        guard version.count == 8, version.starts(with: "HTTP/".utf8), digits[digits.startIndex + 1] == UInt8(ascii: "."),
              let major = decimalDigit(digits[digits.startIndex]), let minor = decimalDigit(digits[digits.startIndex + 2]) else {
            throw WireFormatError("The request line does not end in an HTTP version of the form HTTP/1.1.")
        }
        guard major == 1 else {
            throw WireFormatError("The request is HTTP/\(major).\(minor), but only HTTP/1.0 and HTTP/1.1 heads are read here.")
        }
        return (method, target, HTTPVersion(major: major, minor: minor))
    }

    /// `field-name ":" OWS field-value OWS` (RFC 9112 §5).
    private static func parseFieldLine(_ line: UnsafeBufferPointer<UInt8>) throws(WireFormatError) -> HTTPHeaderField {
        if line[0] == UInt8(ascii: " ") || line[0] == UInt8(ascii: "\t") {
            throw WireFormatError("A header line starts with whitespace (obs-fold), which RFC 9112 §5.2 lets a server refuse.")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw WireFormatError("A header line has no colon.")
        }
        for byte in line[0 ..< colon] where !HTTPToken.isTokenByte(byte) {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                throw WireFormatError("A header name is followed by whitespace before its colon, which RFC 9112 §5.1 forbids.")
            }
            throw WireFormatError("A header name contains byte 0x\(String(byte, radix: 16)), which is not allowed in a token.")
        }
        guard colon > 0 else {
            throw WireFormatError("A header line has an empty name.")
        }
        var valueStart = colon + 1
        var valueEnd = line.count
        while valueStart < valueEnd, line[valueStart] == UInt8(ascii: " ") || line[valueStart] == UInt8(ascii: "\t") { valueStart += 1 }
        while valueEnd > valueStart, line[valueEnd - 1] == UInt8(ascii: " ") || line[valueEnd - 1] == UInt8(ascii: "\t") { valueEnd -= 1 }
        let value = UnsafeBufferPointer(rebasing: line[valueStart ..< valueEnd])
        var ascii = true
        for byte in value {
            if byte == 0 || byte == UInt8(ascii: "\r") {
                throw WireFormatError("A header value contains a \(byte == 0 ? "NUL" : "bare CR") byte, which RFC 9110 §5.5 forbids.")
            }
            if byte >= 0x80 { ascii = false }
        }
        let name = String(decoding: UnsafeBufferPointer(rebasing: line[0 ..< colon]), as: UTF8.self)
        let text = ascii
            ? String(decoding: value, as: UTF8.self)
            : String(String.UnicodeScalarView(value.map { Unicode.Scalar($0) }))
        return HTTPHeaderField(name: name, value: text)
    }

    /// Classifies the request-target by form (RFC 9112 §3.2).
    private static func classifyTarget(_ target: UnsafeBufferPointer<UInt8>, method: String) throws(WireFormatError) -> HTTPRequestTarget {
        if method == "CONNECT" {
            return .authority(try HostPort.parse(target, defaultPort: nil, what: "The CONNECT target"))
        }
        if target.count == 1, target[0] == UInt8(ascii: "*") {
            guard method == "OPTIONS" else {
                throw WireFormatError("The request target * is only allowed with OPTIONS (RFC 9112 §3.2.4).")
            }
            return .asterisk
        }
        if target[0] == UInt8(ascii: "/") {
            guard !target.contains(UInt8(ascii: "#")) else {
                throw WireFormatError("The request target contains a fragment (#), which is never sent in a request.")
            }
            return .origin(String(decoding: target, as: UTF8.self))
        }
        return try absoluteForm(target)
    }

    /// `scheme "://" authority path-abempty [ "?" query ]` for http and https (RFC 9112 §3.2.2).
    private static func absoluteForm(_ target: UnsafeBufferPointer<UInt8>) throws(WireFormatError) -> HTTPRequestTarget {
        let text = String(decoding: target, as: UTF8.self)
        guard let colon = target.firstIndex(of: UInt8(ascii: ":")),
              target.count >= colon + 3, target[colon + 1] == UInt8(ascii: "/"), target[colon + 2] == UInt8(ascii: "/") else {
            throw WireFormatError("The request target \"\(text)\" is neither a path, an absolute URI nor (for CONNECT) host:port.")
        }
        let scheme = String(decoding: UnsafeBufferPointer(rebasing: target[0 ..< colon]), as: UTF8.self).lowercased()
        let defaultPort: UInt16
        switch scheme {
        case "http": defaultPort = 80
        case "https": defaultPort = 443
        default: throw WireFormatError("The request target uses scheme \"\(scheme)\", but only http and https can be proxied.")
        }
        guard !target.contains(UInt8(ascii: "#")) else {
            throw WireFormatError("The request target contains a fragment (#), which is never sent in a request.")
        }
        let authorityStart = colon + 3
        var authorityEnd = authorityStart
        while authorityEnd < target.count, target[authorityEnd] != UInt8(ascii: "/"), target[authorityEnd] != UInt8(ascii: "?") {
            authorityEnd += 1
        }
        let authority = UnsafeBufferPointer(rebasing: target[authorityStart ..< authorityEnd])
        guard !authority.contains(UInt8(ascii: "@")) else {
            throw WireFormatError("The request target carries userinfo (user@host), which RFC 9110 §4.2.4 tells recipients to treat as an error.")
        }
        guard !authority.isEmpty else {
            throw WireFormatError("The request target \"\(text)\" has no host.")
        }
        let destination = try HostPort.parse(authority, defaultPort: defaultPort, what: "The request target's authority")
        var originForm = String(decoding: UnsafeBufferPointer(rebasing: target[authorityEnd...]), as: UTF8.self)
        if !originForm.hasPrefix("/") { originForm = "/" + originForm }
        return .absolute(scheme: scheme, destination: destination, originForm: originForm)
    }

    /// Body framing from Content-Length and Transfer-Encoding (RFC 9112 §6.1, §6.3).
    private static func bodyFraming(contentLengths: [String], transferEncodings: [String], version: HTTPVersion) throws(WireFormatError) -> HTTPBodyFraming {
        if !transferEncodings.isEmpty {
            guard contentLengths.isEmpty else {
                throw WireFormatError("The request has both Content-Length and Transfer-Encoding, a request-smuggling risk RFC 9112 §6.3 lets a server refuse.")
            }
            guard version.minor >= 1 else {
                throw WireFormatError("The HTTP/1.0 request has a Transfer-Encoding header, which RFC 9112 §6.1 says to treat as faulty framing.")
            }
            let codings = HTTPToken.lowercasedList(transferEncodings)
            guard codings.last == "chunked", codings.filter({ $0 == "chunked" }).count == 1 else {
                throw WireFormatError("The request's Transfer-Encoding does not end in a single chunked coding, so its body length cannot be known (RFC 9112 §6.3).")
            }
            return .chunked
        }
        guard !contentLengths.isEmpty else { return .none }
        var length: Int?
        for element in contentLengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let digits = element.utf8.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
                .reversed().drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }.reversed()
            guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                throw WireFormatError("The Content-Length \"\(contentLengths.joined(separator: ", "))\" is not a decimal number of bytes.")
            }
            let value = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            if let length, length != value {
                throw WireFormatError("The request has Content-Length values that disagree (\(contentLengths.joined(separator: ", "))).")
            }
            length = value
        }
        return .contentLength(length ?? 0)
    }

    private static func decimalDigit(_ byte: UInt8) -> Int? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int(byte - UInt8(ascii: "0")) : nil
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
