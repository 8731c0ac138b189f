/// Incremental decoder of the chunked transfer coding (RFC 9112 §7.1): `chunk-size [chunk-ext]
/// CRLF chunk-data CRLF` … `0 [chunk-ext] CRLF trailer-section CRLF`. The one chunked decoder
/// of tv: the proxy asks it where a relayed body ends (through `HTTPBodyScanner`, on both the
/// relay and the plain path), HTTPReading collects the data of recorded bodies with it.
///
/// It copies and buffers nothing: each `consume` call walks the bytes given, hands the chunk
/// data it finds to a closure as slices of them, and stops at the end of the coding or at the
/// first byte that breaks it (`failure` then says why, typed). Leading zeros of a chunk size are
/// skipped (RFC 9112 §7.1: `chunk-size = 1*HEXDIG`), and a size of at most `maxSizeDigits`
/// significant hex digits is read; extensions (§7.1.1) and the trailer section (§7.1.2) are
/// read past at any length without being kept (a hostile-input trial: a valid 16-digit size, a
/// 2 KB extension and 70 KB of trailers each stopped the reading while nginx served what came
/// next); trailer lines are not read here (`HTTP1HeadParser.parseTrailerFields` reads them from
/// recorded bytes). A bare LF ends a line as well as CRLF (RFC 9112 §2.2), but inside an
/// extension only when lenient; a bare CR is refused.
public struct HTTPChunkedDecoder: Sendable, Hashable {
    /// Most significant hex digits in a chunk size: 15 (sizes below 2^60 bytes, so no count
    /// overflows a 64-bit integer).
    public static let maxSizeDigits = 15

    private enum State: Sendable, Hashable {
        /// Before the size's first hex digit.
        case sizeStart
        /// Inside the size: its significant digits so far (0 while only zeros came).
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

    /// Lenient: whitespace before a chunk size is skipped and a bare LF ends an extension;
    /// strict (the proxy's): both refused.
    public let leniency: HTTP1Leniency
    private var state = State.sizeStart
    private var chunkSize = 0
    /// Bytes consumed since the start of the body.
    public private(set) var consumedCount = 0
    /// Where the trailer section starts, counted from the start of the body; set once the last
    /// chunk's size line is read.
    public private(set) var trailerOffset: Int?
    /// Why the coding cannot be read on, once it cannot; the body cannot be delimited.
    public private(set) var failure: ChunkedBodyProblem?

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
            switch state {
            case .data(let left):
                let n = min(left, count - i)
                data(UnsafeRawBufferPointer(rebasing: bytes[i ..< (i + n)]))
                i += n
                state = left == n ? .dataCR : .data(remaining: left - n)
                continue
            case .extensions, .trailerLine:
                // Read past (nothing kept) up to the next CR or LF, which `step` takes.
                while i < count, bytes[i] != 0x0D, bytes[i] != 0x0A { i += 1 }
                guard i < count else { continue }
            default:
                break
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
        case .sizeStart:
            if let digit = Self.hex(c) {
                chunkSize = digit
                state = .size(digits: digit == 0 ? 0 : 1)
            } else if (c == space || c == tab) && leniency == .lenient {
                // whitespace before the size: read past it
            } else {
                return fail(.sizeNotHex(c))
            }
        case .size(let digits):
            guard let digit = Self.hex(c) else { return afterSize(c) }
            // Leading zeros are not counted: `0000000000000002` is a size of 2.
            if digits == 0 && digit == 0 { break }
            guard digits < Self.maxSizeDigits else { return fail(.sizeTooLarge) }
            chunkSize = chunkSize * 16 + digit
            state = .size(digits: digits + 1)
        case .afterSize:
            return afterSize(c)
        case .extensions:
            // chunk-ext: read past up to the line end (RFC 9112 §7.1.1); `consume` skips to here.
            if c == cr {
                state = .sizeLF
            } else if c == lf {
                guard leniency == .lenient else { return fail(.bareLFInExtension) }
                sizeLineEnded()
            }
        case .sizeLF:
            guard c == lf else { return fail(.bareCRInSizeLine) }
            sizeLineEnded()
        case .dataCR:
            if c == cr { state = .dataLF } else if c == lf { state = .sizeStart } else {
                return fail(.dataNotFollowedByCRLF(chunkSize: chunkSize))
            }
        case .dataLF:
            guard c == lf else { return fail(.dataNotFollowedByCRLF(chunkSize: chunkSize)) }
            state = .sizeStart
        case .trailerLineStart:
            if c == cr { state = .trailerLF(empty: true) } else if c == lf { state = .done } else { state = .trailerLine }
        case .trailerLine:
            if c == cr { state = .trailerLF(empty: false) } else if c == lf { state = .trailerLineStart }
        case .trailerLF(let empty):
            guard c == lf else { return fail(.bareCRInTrailer) }
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
        default: return fail(.sizeFollowedBy(c))
        }
        return true
    }

    private mutating func sizeLineEnded() {
        if chunkSize == 0 {
            state = .trailerLineStart
        } else {
            state = .data(remaining: chunkSize)
        }
    }

    private mutating func fail(_ problem: ChunkedBodyProblem) -> Bool {
        failure = problem
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
