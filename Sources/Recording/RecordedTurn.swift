/// A turn with the bytes that were kept of it (`bytes.count == turn.keptBytes`).
public struct RecordedTurn: Sendable, Equatable {
    /// The turn's figures.
    public var turn: Turn
    /// The kept bytes, in the order they were read.
    public var bytes: [UInt8]

    public init(turn: Turn, bytes: [UInt8]) {
        self.turn = turn
        self.bytes = bytes
    }
}
