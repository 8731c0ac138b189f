#if canImport(Glibc)
import Glibc
#endif

/// The line grammar of an HTTP/1 head (RFC 9112 §3, §4, §5) for `HTTP1HeadParser`.
extension HTTP1HeadParser {
    /// Parses a complete head: `head[startLineOffset...]` is the start line, the field lines and
    /// the final empty line.
    static func parseHead(_ head: UnsafeBufferPointer<UInt8>, startLineOffset: Int, kind: Kind,
                          leniency: HTTP1Leniency) throws(WireFormatError) -> HTTP1Head {
        var lines = HTTPLines(head, start: startLineOffset)
        guard let first = lines.next() else {
            throw WireFormatError("The \(kind.noun) head has no start line.")
        }
        let line = UnsafeBufferPointer(rebasing: head[first])
        let startLine = kind == .request ? try parseRequestLine(line, leniency: leniency) : try parseStatusLine(line)
        var headers: [HTTPHeaderField] = []
        try parseFieldLines(&lines, into: &headers, leniency: leniency, of: kind)
        return HTTP1Head(startLine: startLine, headers: headers, byteCount: head.count)
    }

    /// Field lines up to the empty line (RFC 9112 §5); a line starting with whitespace is obs-fold
    /// (§5.2): refused when strict (`obsFoldSentence`), appended to the previous value after one
    /// space when lenient. `kind`: the message they belong to (nil: a trailer section).
    static func parseFieldLines(_ lines: inout HTTPLines, into headers: inout [HTTPHeaderField],
                                leniency: HTTP1Leniency, of kind: Kind?) throws(WireFormatError) {
        while let range = lines.next(), !range.isEmpty {
            let line = UnsafeBufferPointer(rebasing: lines.bytes[range])
            guard line[0] == UInt8(ascii: " ") || line[0] == UInt8(ascii: "\t") else {
                headers.append(try parseFieldLine(line))
                continue
            }
            guard let last = headers.indices.last else {
                throw WireFormatError(firstLineWhitespaceSentence)
            }
            guard leniency == .lenient else { throw WireFormatError(obsFoldSentence(kind)) }
            let continuation = try fieldValue(line, from: 0)
            if !continuation.isEmpty {
                headers[last].value = headers[last].value.isEmpty ? continuation : headers[last].value + " " + continuation
            }
        }
    }

    /// Why a first field line that starts with whitespace is refused (there is nothing to fold
    /// it onto).
    static let firstLineWhitespaceSentence = "The first header line starts with whitespace, which RFC 9112 §2.2 lets a recipient refuse."

    /// Why obs-fold is refused (RFC 9112 §5.2): a server answers a request's with 400, a proxy a
    /// response's with 502, unless each unfolds it, which a relay of the bytes cannot (a trial's
    /// client got `X-Fold: a` folded while tv showed it unfolded). `kind` nil: a trailer section.
    public static func obsFoldSentence(_ kind: Kind?) -> String {
        switch kind {
        case .request?: "A header line of the request starts with whitespace (obs-fold), which RFC 9112 §5.2 lets tv refuse with 400."
        case .response?: "A header line of the response starts with whitespace (obs-fold), which RFC 9112 §5.2 has a proxy refuse with 502."
        case nil: "A header line starts with whitespace (obs-fold), which RFC 9112 §5.2 lets a server refuse."
        }
    }

    /// `method SP request-target SP HTTP-version` (RFC 9112 §3).
    static func parseRequestLine(_ line: UnsafeBufferPointer<UInt8>, leniency: HTTP1Leniency) throws(WireFormatError) -> HTTP1Head.StartLine {
        let space = UInt8(ascii: " ")
        guard let firstSpace = line.firstIndex(of: space, from: 0),
              let secondSpace = line.firstIndex(of: space, from: firstSpace + 1) else {
            throw WireFormatError("The request line is not a method, a target and a version separated by single spaces (RFC 9112 §3).")
        }
        let method = UnsafeBufferPointer(rebasing: line[0 ..< firstSpace])
        for index in 0 ..< method.count where !HTTPToken.isTokenByte(method[index]) {
            throw WireFormatError("The request method contains byte 0x\(String(method[index], radix: 16)), which is not allowed in a token (RFC 9110 §9.1).")
        }
        let target = UnsafeBufferPointer(rebasing: line[(firstSpace + 1) ..< secondSpace])
        guard !target.isEmpty else {
            throw WireFormatError("The request target is empty (RFC 9112 §3.2).")
        }
        // Strict: visible ASCII only, except in the authority, where an international host name
        // may come as raw UTF-8 (HostPort.parse reads it; IDNA converts it). Lenient: non-ASCII
        // bytes (obs-text) are read anywhere.
        let authority = leniency == .strict ? authorityRange(target) : 0 ..< 0
        for index in 0 ..< target.count {
            let byte = target[index]
            guard byte < 0x21 || byte >= 0x7F else { continue }
            guard byte < 0x21 || byte == 0x7F || (leniency == .strict && !authority.contains(index)) else { continue }
            throw WireFormatError("The request target contains byte 0x\(String(byte, radix: 16)), which is not visible ASCII (RFC 9112 §3.2).")
        }
        if leniency == .strict, IDNA.utf8Text(target[authority]) == nil {
            throw WireFormatError("The request target's host is neither ASCII nor valid UTF-8.")
        }
        guard let version = parseVersion(UnsafeBufferPointer(rebasing: line[(secondSpace + 1)...])) else {
            throw WireFormatError("The request line does not end in an HTTP version of the form HTTP/1.1 (RFC 9112 §2.3).")
        }
        guard version.major == 1 else {
            throw WireFormatError("The request is \(version), but only HTTP/1.0 and HTTP/1.1 heads are read here.")
        }
        return .request(method: String(decoding: method, as: UTF8.self), target: String(decoding: target, as: UTF8.self), version: version)
    }

    /// Where a request target's authority lies (RFC 9112 §3.2): after `scheme://` up to the path
    /// or query in absolute-form, the whole target in authority-form; empty for origin-form and `*`.
    static func authorityRange(_ target: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        guard let first = target.first, first != UInt8(ascii: "/"), first != UInt8(ascii: "*") else { return 0 ..< 0 }
        var start = 0
        if let colon = target.firstIndex(of: UInt8(ascii: ":")), colon + 2 < target.count,
           target[colon + 1] == UInt8(ascii: "/"), target[colon + 2] == UInt8(ascii: "/") {
            start = colon + 3
        }
        var end = start
        while end < target.count, target[end] != UInt8(ascii: "/"), target[end] != UInt8(ascii: "?") { end += 1 }
        return start ..< end
    }

    /// `HTTP-version SP status-code [SP reason-phrase]` (RFC 9112 §4); the space before an absent
    /// reason may be missing too, as many servers send it.
    static func parseStatusLine(_ line: UnsafeBufferPointer<UInt8>) throws(WireFormatError) -> HTTP1Head.StartLine {
        guard line.count >= 12, let version = parseVersion(UnsafeBufferPointer(rebasing: line[0 ..< 8])), line[8] == UInt8(ascii: " "),
              let hundreds = decimalDigit(line[9]), let tens = decimalDigit(line[10]), let units = decimalDigit(line[11]),
              line.count == 12 || line[12] == UInt8(ascii: " ") else {
            throw WireFormatError("The status line is not an HTTP version, a space and a three-digit status code (RFC 9112 §4).")
        }
        guard version.major == 1 else {
            throw WireFormatError("The response is \(version), but only HTTP/1.0 and HTTP/1.1 heads are read here.")
        }
        let code = hundreds * 100 + tens * 10 + units
        guard code >= 100 else {
            throw WireFormatError("The status code \(code) is below 100, the lowest RFC 9110 §15 defines.")
        }
        guard line.count > 12 else { return .status(version: version, code: code, reason: nil) }
        let reason = UnsafeBufferPointer(rebasing: line[13...])
        for index in 0 ..< reason.count {
            let byte = reason[index]
            guard (byte < 0x20 && byte != UInt8(ascii: "\t")) || byte == 0x7F else { continue }
            throw WireFormatError("The reason phrase contains control byte 0x\(String(byte, radix: 16)) (RFC 9112 §4).")
        }
        // UTF-8 when it is; else one ISO-8859-1 character a byte (RFC 9112 §4: historically
        // ISO-8859-1), so a byte like 0xE9 is "é", not U+FFFD.
        return .status(version: version, code: code,
                       reason: String(validating: reason, as: UTF8.self) ?? String(String.UnicodeScalarView(reason.map { Unicode.Scalar($0) })))
    }

    /// `"HTTP/" DIGIT "." DIGIT` (RFC 9112 §2.3), nil otherwise.
    static func parseVersion(_ bytes: UnsafeBufferPointer<UInt8>) -> HTTPVersion? {
        guard bytes.count == 8, bytes[0] == UInt8(ascii: "H"), bytes[1] == UInt8(ascii: "T"), bytes[2] == UInt8(ascii: "T"),
              bytes[3] == UInt8(ascii: "P"), bytes[4] == UInt8(ascii: "/"), bytes[6] == UInt8(ascii: "."),
              let major = decimalDigit(bytes[5]), let minor = decimalDigit(bytes[7]) else { return nil }
        return HTTPVersion(major: major, minor: minor)
    }

    /// `field-name ":" OWS field-value OWS` (RFC 9112 §5).
    static func parseFieldLine(_ line: UnsafeBufferPointer<UInt8>) throws(WireFormatError) -> HTTPHeaderField {
        let (colon, value) = try fieldLineParts(line)
        let name = String(decoding: UnsafeBufferPointer(rebasing: line[0 ..< colon]), as: UTF8.self)
        return HTTPHeaderField(name: name, value: fieldText(UnsafeBufferPointer(rebasing: line[value])))
    }

    /// Where a field line's name ends (its colon) and its value lies (surrounding spaces and
    /// tabs excluded), with the line checked: a token name right before the colon, no NUL or CR
    /// in the value (RFC 9112 §5, RFC 9110 §5.1, §5.5). What `parseFieldLine` and the exchange
    /// rows' lean scan (`HTTP1HeadScanner`) both check, so they refuse the same lines.
    static func fieldLineParts(_ line: UnsafeBufferPointer<UInt8>) throws(WireFormatError) -> (colon: Int, value: Range<Int>) {
        // One pass over the name: token bytes up to the first colon. A byte that is neither
        // fails only when a colon follows somewhere (else the line has none, the first rule).
        var colon = 0
        while colon < line.count {
            let byte = line[colon]
            if HTTPToken.isTokenByte(byte) {
                colon += 1
                continue
            }
            if byte == UInt8(ascii: ":") { break }
            guard line.firstIndex(of: UInt8(ascii: ":"), from: colon + 1) != nil else { break }
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                throw WireFormatError("A header name is followed by whitespace before its colon, which RFC 9112 §5.1 forbids.")
            }
            throw WireFormatError("A header name contains byte 0x\(String(byte, radix: 16)), which is not allowed in a token (RFC 9110 §5.1).")
        }
        guard colon < line.count, line[colon] == UInt8(ascii: ":") else {
            throw WireFormatError("A header line has no colon (RFC 9112 §5).")
        }
        guard colon > 0 else {
            throw WireFormatError("A header line has an empty name (RFC 9110 §5.1).")
        }
        return (colon, try fieldValueRange(line, from: colon + 1))
    }

    /// The range of `line[start...]` without surrounding spaces and tabs, checked: NUL and CR
    /// are refused (RFC 9110 §5.5).
    static func fieldValueRange(_ line: UnsafeBufferPointer<UInt8>, from start: Int) throws(WireFormatError) -> Range<Int> {
        var valueStart = start
        var valueEnd = line.count
        while valueStart < valueEnd, line[valueStart] == UInt8(ascii: " ") || line[valueStart] == UInt8(ascii: "\t") { valueStart += 1 }
        while valueEnd > valueStart, line[valueEnd - 1] == UInt8(ascii: " ") || line[valueEnd - 1] == UInt8(ascii: "\t") { valueEnd -= 1 }
        // Both refused bytes are below 0x0E: eight bytes at a time pass when none is (the word
        // test below has no false negatives; a word it flags is looked at byte by byte). The
        // byte loop alone cost ~10 instructions a byte, ~160 a field line (callgrind, h1 row).
        var index = valueStart
        if let base = line.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= valueEnd {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if (word &- 0x0E0E_0E0E_0E0E_0E0E) & ~word & 0x8080_8080_8080_8080 != 0 { break }
                index += 8
            }
        }
        for index in index ..< valueEnd where line[index] < 0x0E {
            let byte = line[index]
            guard byte == 0 || byte == UInt8(ascii: "\r") else { continue }
            throw WireFormatError("A header value contains a \(byte == 0 ? "NUL" : "bare CR") byte, which RFC 9110 §5.5 forbids.")
        }
        return valueStart ..< valueEnd
    }

    /// A field value's text: each byte one ISO-8859-1 scalar (ASCII as is).
    static func fieldText(_ value: UnsafeBufferPointer<UInt8>) -> String {
        var ascii = true
        for byte in value where byte >= 0x80 { ascii = false; break }
        return ascii
            ? String(decoding: value, as: UTF8.self)
            : String(String.UnicodeScalarView(value.map { Unicode.Scalar($0) }))
    }

    /// The field value of `line[start...]` without surrounding spaces and tabs, each byte one
    /// ISO-8859-1 scalar; NUL and CR are refused.
    private static func fieldValue(_ line: UnsafeBufferPointer<UInt8>, from start: Int) throws(WireFormatError) -> String {
        fieldText(UnsafeBufferPointer(rebasing: line[try fieldValueRange(line, from: start)]))
    }

    static func decimalDigit(_ byte: UInt8) -> Int? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int(byte - UInt8(ascii: "0")) : nil
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// The first index of `byte` at or after `start` (`memchr(3)`), nil when there is none.
    func firstIndex(of byte: UInt8, from start: Int) -> Int? {
        guard start < count, let base = baseAddress,
              let found = memchr(base + start, Int32(byte), count - start) else { return nil }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }
}
