/// What a flow's recorder hands the content writer. Chunk events carry bytes; turn ends carry
/// the final figures, so the writer learns exact `seenBytes` even when chunks were dropped.
enum ContentEvent: Sendable {
    /// Kept bytes of a chunk of `turn` (its figures so far).
    case chunk(flow: Int64, turn: Turn, bytes: [UInt8])
    /// `turn` ended (change of side, flow closed, recording switched off) with these figures.
    case turnEnded(flow: Int64, turn: Turn)
}
