import Foundation

/// Undoes `Content-Encoding` (RFC 9110 §8.4): gzip, x-gzip, deflate, br, zstd and identity, in
/// the reverse of the order they were applied. Unknown codings are left alone and said.
public enum ContentDecoding {
    /// Decoded output stops here (16 MiB), so a small body cannot blow up into a large one.
    public static let outputLimit = 16 * 1_048_576

    /// The codings a `Content-Encoding` value lists, lowercased, in the order applied.
    public static func codings(_ headerValues: [String]) -> [String] {
        headerValues.flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
    }

    /// Decodes `bytes` encoded with `codings`.
    /// - Parameter complete: whether `bytes` is the whole body (else a stream that stops short
    ///   is expected and said as "decoded as far as it was recorded").
    /// - Returns: the decoded bytes (nil when nothing could be decoded) and a note when there is
    ///   something to say.
    public static func decode(_ bytes: [UInt8], codings: [String], complete: Bool) -> (decoded: [UInt8]?, note: String?) {
        guard !codings.isEmpty else { return (nil, nil) }
        var current = bytes
        var notes: [String] = []
        for coding in codings.reversed() {
            let result: DecodedBytes
            switch coding {
            case "gzip", "x-gzip": result = ZlibDecoding.gunzip(current, limit: outputLimit)
            case "deflate": result = ZlibDecoding.inflateDeflate(current, limit: outputLimit)
            case "br": result = BrotliDecoding.decode(current, limit: outputLimit)
            case "zstd": result = ZstdDecoding.decode(current, limit: outputLimit)
            default:
                return (nil, "Not decoded: tv does not know the content coding '\(coding)'; the body is shown as transferred.")
            }
            switch result.state {
            case .finished:
                break
            case .needsMoreInput:
                notes.append(complete
                    ? "The \(coding) stream ends early; \(result.bytes.count) bytes were decoded from it."
                    : "Decoded from \(coding) as far as it was recorded (\(result.bytes.count) bytes).")
            case let .failed(reason):
                if result.bytes.isEmpty {
                    return (nil, "Could not decode \(coding) (\(reason)); the body is shown as transferred.")
                }
                notes.append("Decoding \(coding) failed after \(result.bytes.count) bytes (\(reason)).")
            case .limitReached:
                notes.append("Decoding \(coding) stopped at \(outputLimit) bytes, the limit for one body.")
            }
            current = result.bytes
        }
        return (current, notes.isEmpty ? nil : notes.joined(separator: " "))
    }
}
