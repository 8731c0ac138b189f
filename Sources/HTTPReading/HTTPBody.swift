/// A message body: the bytes as transferred (after chunked decoding, still content-encoded) and,
/// when a `Content-Encoding` was decoded, the decoded bytes.
public struct HTTPBody: Sendable, Equatable {
    /// How the body was delimited: `content-length`, `chunked`, `until close`, `none`, `DATA frames`.
    public var framing: String
    /// Payload bytes as transferred: chunk framing removed, content encoding still applied.
    public var transferred: [UInt8]
    /// The `Content-Encoding` codings, in the order they were applied (`["gzip"]`).
    public var encodings: [String]
    /// The bytes after undoing `encodings`, or nil when there were none or decoding failed.
    public var decoded: [UInt8]?
    /// One sentence about decoding when there is something to say (partial, failed, unknown).
    public var decodingNote: String?
    /// Whether every byte is there.
    public var completeness: BodyCompleteness

    public init(framing: String, transferred: [UInt8] = [], encodings: [String] = [], decoded: [UInt8]? = nil,
                decodingNote: String? = nil, completeness: BodyCompleteness = .complete) {
        self.framing = framing
        self.transferred = transferred
        self.encodings = encodings
        self.decoded = decoded
        self.decodingNote = decodingNote
        self.completeness = completeness
    }

    /// A body that is not there (`framing` `none`).
    public static let none = HTTPBody(framing: "none")

    /// What a reader wants to see: the decoded bytes when there are some, else as transferred.
    public var content: [UInt8] { decoded ?? transferred }
}
