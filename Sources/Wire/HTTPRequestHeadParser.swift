/// Incremental, bounded reader of an HTTP/1 request head for the explicit proxy front-end: feed
/// it the client's bytes as they arrive until it answers something other than `.needMoreData`.
/// The syntax is read by `HTTP1HeadParser` (strict); this adds what a forwarder must know and
/// refuse of a request.
///
/// Follows RFC 9112 §2.2 (lines end in CRLF, a bare LF is accepted, a bare CR is refused, empty
/// lines before the request line are skipped), §3 (request line of method, target and
/// `HTTP/1.x` separated by single spaces), §5 (field lines; whitespace before the colon and
/// obs-fold continuation lines are refused) and §6.3 (body framing; Content-Length together with
/// Transfer-Encoding is refused as a request-smuggling risk). An HTTP/1.1 request other than
/// CONNECT must carry exactly one Host header (§3.2); no request may carry two.
///
/// The parser buffers at most `maxHeadBytes`; a head that does not end within them is
/// `.tooLong`. A first byte that cannot start a request line (a TLS record, for instance) is
/// refused at once. Bytes fed after the head are kept in `unconsumedBytes` for the caller to
/// forward.
public struct HTTPRequestHeadParser: Sendable, IncrementalParser {
    /// What the bytes fed so far amount to. Every answer but `.needMoreData` is final.
    public enum Result: Sendable, Hashable {
        /// The head is not complete yet; feed more bytes.
        case needMoreData
        /// The bytes are not a valid HTTP/1 request head; one sentence.
        case malformed(reason: String)
        /// The head did not end within `maxHeadBytes` bytes (`HTTP1HeadParser.Result.tooLong`).
        case tooLong(maxHeadBytes: Int, inStartLine: Bool)
        /// The complete head.
        case head(HTTPRequestHead)

        /// What tv answers a request it will not read: 400 (`malformed`), 414 URI Too Long
        /// (`tooLong` in the request line, RFC 9110 §15.5.15) or 431 Request Header Fields Too
        /// Large (`tooLong` in the fields, RFC 6585 §5), with the sentence saying why; nil for
        /// `needMoreData` and `head`. (A head over 64 KiB was a 400 "not HTTP": a trial.)
        public var refusal: (status: Int, reason: String)? {
            switch self {
            case .needMoreData, .head: return nil
            case .malformed(let reason): return (400, reason)
            case let .tooLong(limit, inStartLine):
                return HTTP1HeadParser.tooLongRequestRefusal(limit, inStartLine: inStartLine)
            }
        }
    }

    /// Default bound on the head: 64 KiB (65,536 bytes).
    public static let defaultMaxHeadBytes = HTTP1HeadParser.defaultMaxHeadBytes

    /// The largest head accepted, in bytes.
    public var maxHeadBytes: Int { parser.maxHeadBytes }

    private var parser: HTTP1HeadParser
    private var result: Result = .needMoreData

    /// Bytes fed after the end of the head; empty until the answer is `.head`.
    public var unconsumedBytes: [UInt8] { parser.unconsumedBytes }

    /// Creates a parser that refuses a head longer than `maxHeadBytes` bytes.
    public init(maxHeadBytes: Int = HTTPRequestHeadParser.defaultMaxHeadBytes) {
        parser = HTTP1HeadParser(.request, leniency: .strict, maxHeadBytes: maxHeadBytes)
    }

    /// Feeds the next bytes of the stream (any length, including zero) and returns the answer.
    /// Once the answer is final, further bytes are ignored.
    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) -> Result {
        guard case .needMoreData = result else { return result }
        switch parser.feed(bytes) {
        case .needMoreData:
            return .needMoreData
        case .malformed(let reason):
            result = .malformed(reason: reason)
        case let .tooLong(limit, inStartLine):
            result = .tooLong(maxHeadBytes: limit, inStartLine: inStartLine)
        case .head(let head):
            do throws(WireFormatError) {
                result = .head(try Self.requestHead(head))
            } catch {
                result = .malformed(reason: error.reason)
            }
        }
        return result
    }



    /// Parses a buffer that should start with a whole head; `.needMoreData` means it is truncated.
    public static func parse<Bytes: Collection>(_ bytes: Bytes, maxHeadBytes: Int = defaultMaxHeadBytes) -> Result
    where Bytes.Element == UInt8 {
        var parser = HTTPRequestHeadParser(maxHeadBytes: maxHeadBytes)
        return parser.feed(bytes)
    }
}

extension HTTPRequestHeadParser {
    /// What a forwarder needs of a request head: the target by form (RFC 9112 §3.2), one Host
    /// header for HTTP/1.1 (§3.2), the body framing with smuggling risks refused (§6.3).
    static func requestHead(_ head: HTTP1Head) throws(WireFormatError) -> HTTPRequestHead {
        guard case .request(let method, var target, let version) = head.startLine else {
            throw WireFormatError("The head does not start with a request line (RFC 9112 §3).")
        }
        let requestTarget = try target.withUTF8 { bytes in
            Swift.Result { () throws(WireFormatError) in try classifyTarget(bytes, method: method) }
        }.get()
        var hostCount = 0
        for field in head.headers where field.hasName("Host") { hostCount += 1 }
        guard hostCount <= 1 else {
            throw WireFormatError("The request has \(hostCount) Host headers, but RFC 9112 §3.2 allows one.")
        }
        if hostCount == 0, version.minor >= 1, method != "CONNECT" {
            throw WireFormatError("The HTTP/1.1 request has no Host header, which RFC 9112 §3.2 requires.")
        }
        let framing = try head.framing(leniency: .strict, answering: nil)
        return HTTPRequestHead(
            method: method, target: target, requestTarget: requestTarget, version: version, headers: head.headers,
            byteCount: head.byteCount, bodyFraming: framing, connectionOptions: head.connectionOptions)
    }

    /// The form of `target` sent with `method` (RFC 9112 §3.2), as a whole head's would be read;
    /// for a caller that salvaged a request line from a head it could not read.
    /// - Throws: `WireFormatError` (an empty target, or one no form takes).
    public static func requestTarget(_ target: String, method: String) throws(WireFormatError) -> HTTPRequestTarget {
        var target = target
        guard !target.isEmpty else { throw WireFormatError("The request line has no target (RFC 9112 §3.2).") }
        return try target.withUTF8 { bytes in
            Swift.Result { () throws(WireFormatError) in try classifyTarget(bytes, method: method) }
        }.get()
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
            throw WireFormatError("The request target \"\(HTTPRequestTarget.quoted(text))\" is neither a path, an absolute URI nor (for CONNECT) host:port.")
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
}
