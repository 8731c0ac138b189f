import FlowTerms

/// One read from one leg of a flow: the unit the proxy hands to the recorder.
///
/// A chunk is not a turn: chunks show the rhythm of socket reads, turns the conversation's
/// (see `TurnRecorder`).
public struct Chunk: Sendable, Equatable {
    /// The leg the bytes were read from.
    public var direction: Direction
    /// When the read happened: µs since the flow's first byte.
    public var offset: Int64
    /// The plaintext bytes of the read.
    public var bytes: [UInt8]

    public init(_ direction: Direction, at offset: Int64, _ bytes: [UInt8]) {
        self.direction = direction
        self.offset = offset
        self.bytes = bytes
    }
}
