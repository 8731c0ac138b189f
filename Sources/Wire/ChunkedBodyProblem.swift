/// Why a chunked body (RFC 9112 §7.1) cannot be read on: `HTTPChunkedDecoder.failure`. Each kind
/// is either a break of the coding's grammar (`isLimit` false: the body is malformed) or a valid
/// coding past a bound of tv's (`isLimit` true); `sentence` says which, once, with its RFC section.
///
/// A valid body is never one of these for its length alone: leading zeros of a size, chunk
/// extensions and trailer sections of any length are read past without being kept (a hostile-input
/// trial's valid bodies with a 16-digit size `0000000000000002`, a 2 KB extension or 70 KB of
/// trailers made tv stop reading the connection while nginx served what followed).
public enum ChunkedBodyProblem: Sendable, Hashable {
    /// A chunk size line starts with this byte, which is not a hexadecimal digit (`-2`, a space
    /// when strict, an empty line).
    case sizeNotHex(UInt8)
    /// The size's digits are followed by this byte instead of whitespace, `;` or the line end
    /// (`2g`, `0x2`).
    case sizeFollowedBy(UInt8)
    /// The size has more significant hexadecimal digits than `HTTPChunkedDecoder.maxSizeDigits`
    /// (2^60 bytes or more): past what tv counts. RFC 9112 §7.1 asks recipients to guard against
    /// the overflow such sizes cause: a 64-bit reader wraps `10000000000000002` to 2, a
    /// request-smuggling shape.
    case sizeTooLarge
    /// A bare LF inside a chunk extension (strict): readers disagree whether it ends the line
    /// (RFC 9112 §7.1 ends a chunk size line with CRLF).
    case bareLFInExtension
    /// A CR not followed by LF in a chunk size line (RFC 9112 §2.2).
    case bareCRInSizeLine
    /// A CR not followed by LF in a trailer line (RFC 9112 §2.2).
    case bareCRInTrailer
    /// The chunk's data (this many bytes) is not followed by CRLF.
    case dataNotFollowedByCRLF(chunkSize: Int)

    /// Whether the body is valid and only past a bound of tv's (else it is malformed).
    public var isLimit: Bool { self == .sizeTooLarge }

    /// One sentence: what is wrong, with its RFC section.
    public var sentence: String {
        switch self {
        case .sizeNotHex(let byte):
            return "A chunk size line starts with byte 0x\(String(byte, radix: 16)), which is not a hexadecimal digit (RFC 9112 §7.1)."
        case .sizeFollowedBy(let byte):
            return "A chunk size is followed by byte 0x\(String(byte, radix: 16)) instead of a ';' or the line end (RFC 9112 §7.1)."
        case .sizeTooLarge:
            return "A chunk size has more than \(HTTPChunkedDecoder.maxSizeDigits) significant hexadecimal digits (2^60 bytes or more), more than tv counts; a 64-bit reader would wrap it around (RFC 9112 §7.1)."
        case .bareLFInExtension:
            return "A chunk extension contains a bare LF, which readers may take for the end of the line or not (RFC 9112 §7.1 ends it with CRLF)."
        case .bareCRInSizeLine:
            return "A chunk size line has a CR not followed by LF (RFC 9112 §2.2)."
        case .bareCRInTrailer:
            return "A trailer line has a CR not followed by LF (RFC 9112 §2.2)."
        case .dataNotFollowedByCRLF(let size):
            return "A chunk of \(size) bytes is not followed by CRLF (RFC 9112 §7.1)."
        }
    }
}
