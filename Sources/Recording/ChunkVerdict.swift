/// What `TurnRecorder.take` decided about one chunk.
public struct ChunkVerdict: Sendable, Equatable {
    /// The recorded turn the chunk belongs to, or nil when its side is no longer recorded.
    public var turn: Int?
    /// How many bytes from the front of the chunk to write (0…chunk size), or of the bytes
    /// `HTTP2BodyLimit` left of it on an HTTP/2 connection.
    public var keep: Int
    /// True when this chunk crossed a limit: it was cut to `keep` bytes and is the last chunk
    /// written of its turn (of its side, when the limit was the flow budget).
    public var cut: Bool
    /// The turn this chunk's change of side ended, with its final figures (nil when the chunk
    /// continued the open run, or the run that ended was not recorded).
    public var ended: Turn?

    public init(turn: Int?, keep: Int, cut: Bool = false, ended: Turn? = nil) {
        self.turn = turn
        self.keep = keep
        self.cut = cut
        self.ended = ended
    }
}
