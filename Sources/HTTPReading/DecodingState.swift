/// How one content decoder stands after it was handed input (`ContentStreamDecoder.take`).
enum DecodingState: Equatable {
    /// The encoded stream ended properly.
    case finished
    /// All input was taken and the stream has not ended: a cut or unfinished body, when no more
    /// input comes.
    case needsMoreInput
    /// The decoder refused the input; what came out before the error was handed on.
    case failed(String)
    /// The receiver of the output wanted no more (a `DecodingLimit` was reached).
    case limitReached
}

/// One content coding undone piece by piece, in bounded memory: each call hands out what the
/// input decodes to in pieces of at most `ContentStreamDecoder.pieceSize` bytes.
protocol ContentStreamDecoder: AnyObject {
    /// Decodes `input`, handing each decoded piece to `emit`; stops as soon as `emit` returns
    /// false (`.limitReached`). After `.finished`, further input is ignored unless the coding
    /// allows several streams in a row (gzip members, zstd frames).
    func take(_ input: UnsafeBufferPointer<UInt8>, emit: (UnsafeBufferPointer<UInt8>) -> Bool) -> DecodingState

    /// After `.limitReached`: bytes the decoder had already decoded but not handed out (work
    /// done that the command's budget is charged for), and lets them go.
    func dropUnreadOutput() -> Int
}

extension ContentStreamDecoder {
    /// zlib and zstd hand out what they decode as they go: at most a piece is left.
    func dropUnreadOutput() -> Int { 0 }
}

enum ContentStreamDecoders {
    /// Output is handed on in pieces of at most 64 KiB.
    static let pieceSize = 65_536

    /// A decoder for `coding` (lowercased), or nil when tv does not know it or the library could
    /// not start (`failedToStart`).
    static func make(_ coding: String) -> Result<ContentStreamDecoder, Refusal> {
        let decoder: ContentStreamDecoder?
        switch coding {
        case "gzip", "x-gzip": decoder = ZlibDecoding(format: .gzip)
        case "deflate": decoder = ZlibDecoding(format: .deflate)
        case "br": decoder = BrotliDecoding()
        case "zstd": decoder = ZstdDecoding()
        default: return .failure(.unknownCoding)
        }
        return decoder.map { .success($0) } ?? .failure(.failedToStart)
    }

    enum Refusal: Error {
        /// Not a coding tv decodes.
        case unknownCoding
        /// The library's decoder could not be created.
        case failedToStart
    }
}
