/// A message body: the bytes as transferred (after chunked decoding, still content-encoded) and
/// the content codings to undo. Decoding is left to the view, through `BoundedBodyReader`, so
/// that no decoded body is made before it is shown, nor more than one at a time.
public struct HTTPBody: Sendable, Equatable {
    /// How the body was delimited: `content-length`, `chunked`, `until close`, `none`, `DATA frames`.
    public var framing: String
    /// Payload bytes as transferred: chunk framing removed, content encoding still applied.
    public var transferred: [UInt8]
    /// The `Content-Encoding` codings, in the order they were applied (`["gzip"]`).
    public var encodings: [String]
    /// Whether every byte is there.
    public var completeness: BodyCompleteness

    /// A body delimited by `framing`, its `transferred` bytes still encoded with `encodings`.
    public init(framing: String, transferred: [UInt8] = [], encodings: [String] = [], completeness: BodyCompleteness = .complete) {
        self.framing = framing
        self.transferred = transferred
        self.encodings = encodings
        self.completeness = completeness
    }

    /// A body that is not there (`framing` `none`).
    public static let none = HTTPBody(framing: "none")
}
