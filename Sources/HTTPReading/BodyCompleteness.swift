/// Whether a message's body is all there, and if not, why.
public enum BodyCompleteness: Sendable, Equatable {
    /// Every byte the framing announced was recorded.
    case complete
    /// The recording budget stopped this side inside the body: `kept` bytes of it were recorded,
    /// of `expected` when the framing said (Content-Length), nil when it did not (chunked, until
    /// close, HTTP/2 DATA).
    case cutByBudget(kept: Int, expected: Int?)
    /// Bytes of this side were lost while recording (queue full), so the body stops at a gap.
    case missingBytes(kept: Int)
    /// The recording ended before the body did, without a cut: the connection was still open or
    /// closed early (`kept` of `expected` bytes).
    case endedEarly(kept: Int, expected: Int?)
    /// The stream was reset (RST_STREAM) before it ended (HTTP/2).
    case reset(errorCode: String)

    /// True when nothing is missing.
    public var isComplete: Bool { self == .complete }
}
