/// Incremental decoder of the chunked transfer coding (RFC 9112 §7.1): `chunk-size [chunk-ext]
/// CRLF chunk-data CRLF` … `0 [chunk-ext] CRLF trailer-section CRLF`. The one chunked decoder
/// of tv: the proxy asks it where a relayed body ends, HTTPReading collects the data of recorded
/// bodies with it.
///
/// It copies and buffers nothing: each `consume` call walks the bytes given, hands the chunk
/// data it finds to a closure as slices of them, and stops at the end of the coding or at the
/// first byte that breaks it (`failure` then says why). Bounds: a chunk size of at most 15 hex
/// digits, a size line (with extensions) of at most `maxSizeLineBytes`, a trailer section of at
/// most `maxTrailerBytes`. Extensions are skipped (§7.1.1); trailer lines are not read here
/// (`HTTP1HeadParser.parseTrailerFields` reads them). A bare LF ends a line as well as CRLF
/// (RFC 9112 §2.2); a bare CR is refused.
public struct HTTPChunkedDecoder: Sendable, Hashable {
    /// Longest chunk size line, extensions included: 1 KiB.
    public static let maxSizeLineBytes = 1_024
    /// Longest trailer section, final empty line included: 64 KiB.
    public static let maxTrailerBytes = 65_536

    private enum State: Sendable, Hashable {
        /// Before the size's first hex digit.
        case sizeStart
        case size(digits: Int)
        /// Whitespace after the size (BWS before `;`, RFC 9112 §7.1.1).
        case afterSize
        case extensions
        /// A CR ended the size line; the LF must follow.
        case sizeLF
        case data(remaining: Int)
        case dataCR
        case dataLF
        case trailerLineStart
        case trailerLine
        case trailerLF(empty: Bool)
        case done
    }

    /// Lenient: whitespace before a chunk size is skipped; strict: refused.
    public let leniency: HTTP1Leniency
    private var state = State.sizeStart
    private var chunkSize = 0
    /// Bytes of the current size line, or of the trailer section so far.
    private var lineBytes = 0
    /// Bytes consumed since the start of the body.
    public private(set) var consumedCount = 0
    /// Where the trailer section starts, counted from the start of the body; set once the last
    /// chunk's size line is read.
    public private(set) var trailerOffset: Int?
    /// Why the coding is broken (one sentence), once it is; the body cannot be delimited.
    public private(set) var failure: String?

    /// A decoder at the start of a chunked body.
    public init(leniency: HTTP1Leniency = .strict) {
        self.leniency = leniency
    }

    /// Whether the last chunk and the trailer section have been read.
    public var isDone: Bool { state == .done }

    /// Walks `bytes` from their start: returns how many belong to the chunked body (all of them
    /// unless the body ends or breaks inside them), handing each run of chunk data to `data`.
    public mutating func consume(_ bytes: UnsafeRawBufferPointer, data: (UnsafeRawBufferPointer) -> Void) -> Int {
        var i = 0
        let count = bytes.count
        while i < count && state != .done && failure == nil {
            if case .data(let left) = state {
                let n = min(left, count - i)
                data(UnsafeRawBufferPointer(rebasing: bytes[i ..< (i + n)]))
                i += n
                state = left == n ? .dataCR : .data(remaining: left - n)
                continue
            }
            guard step(bytes[i]) else { break }
            i += 1
            if trailerOffset == nil, state == .trailerLineStart { trailerOffset = consumedCount + i }
        }
        consumedCount += i
        return i
    }

    /// Walks `bytes` from their start and returns how many belong to the chunked body.
    public mutating func consume(_ bytes: UnsafeRawBufferPointer) -> Int {
        consume(bytes) { _ in }
    }

    /// Takes one framing byte; false (with `failure` set) when it breaks the coding.
    private mutating func step(_ c: UInt8) -> Bool {
        let cr: UInt8 = 0x0D, lf: UInt8 = 0x0A, space: UInt8 = 0x20, tab: UInt8 = 0x09
        switch state {
        case .sizeStart, .size, .afterSize, .extensions, .sizeLF:
            lineBytes += 1
            guard lineBytes <= Self.maxSizeLineBytes else {
                return fail("A chunk size line runs past \(Self.maxSizeLineBytes) bytes (RFC 9112 §7.1).")
            }
        case .trailerLineStart, .trailerLine, .trailerLF:
            lineBytes += 1
            guard lineBytes <= Self.maxTrailerBytes else {
                return fail("The trailer section runs past \(Self.maxTrailerBytes) bytes (RFC 9112 §7.1.2).")
            }
        case .data, .dataCR, .dataLF, .done:
            break
        }
        switch state {
        case .sizeStart:
            if let digit = Self.hex(c) {
                chunkSize = digit
                state = .size(digits: 1)
            } else if (c == space || c == tab) && leniency == .lenient {
                // whitespace before the size: read past it
            } else {
                return fail("A chunk size line starts with byte 0x\(String(c, radix: 16)), which is not a hexadecimal digit (RFC 9112 §7.1).")
            }
        case .size(let digits):
            if let digit = Self.hex(c) {
                guard digits < 15 else { return fail("A chunk size has more than 15 hexadecimal digits (RFC 9112 §7.1).") }
                chunkSize = chunkSize * 16 + digit
                state = .size(digits: digits + 1)
            } else {
                return afterSize(c)
            }
        case .afterSize:
            return afterSize(c)
        case .extensions:
            // chunk-ext: skipped up to the line end (RFC 9112 §7.1.1)
            if c == cr { state = .sizeLF } else if c == lf { sizeLineEnded() }
        case .sizeLF:
            guard c == lf else { return fail("A chunk size line has a CR not followed by LF (RFC 9112 §2.2).") }
            sizeLineEnded()
        case .dataCR:
            if c == cr { state = .dataLF } else if c == lf { state = .sizeStart } else {
                return fail("A chunk of \(chunkSize) bytes is not followed by CRLF (RFC 9112 §7.1).")
            }
        case .dataLF:
            guard c == lf else { return fail("A chunk of \(chunkSize) bytes is not followed by CRLF (RFC 9112 §7.1).") }
            state = .sizeStart
        case .trailerLineStart:
            if c == cr { state = .trailerLF(empty: true) } else if c == lf { state = .done } else { state = .trailerLine }
        case .trailerLine:
            if c == cr { state = .trailerLF(empty: false) } else if c == lf { state = .trailerLineStart }
        case .trailerLF(let empty):
            guard c == lf else { return fail("A trailer line has a CR not followed by LF (RFC 9112 §2.2).") }
            state = empty ? .done : .trailerLineStart
        case .data, .done:
            break
        }
        return true
    }

    /// After the size's digits: BWS, then `;` and extensions, or the line end.
    private mutating func afterSize(_ c: UInt8) -> Bool {
        switch c {
        case 0x20, 0x09: state = .afterSize
        case 0x3B: state = .extensions
        case 0x0D: state = .sizeLF
        case 0x0A: sizeLineEnded()
        default:
            return fail("A chunk size is followed by byte 0x\(String(c, radix: 16)) instead of a ';' or the line end (RFC 9112 §7.1).")
        }
        return true
    }

    private mutating func sizeLineEnded() {
        lineBytes = 0
        if chunkSize == 0 {
            state = .trailerLineStart
        } else {
            state = .data(remaining: chunkSize)
        }
    }

    private mutating func fail(_ reason: String) -> Bool {
        failure = reason
        return false
    }

    private static func hex(_ c: UInt8) -> Int? {
        switch c {
        case 0x30 ... 0x39: Int(c - 0x30)
        case 0x41 ... 0x46: Int(c - 0x41 + 10)
        case 0x61 ... 0x66: Int(c - 0x61 + 10)
        default: nil
        }
    }
}
