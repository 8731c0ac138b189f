/// One turn of the turns index (`content_turn_runs`, packed in its flow's run): a turn of a flow and where its kept bytes are.
public struct IndexedTurn: Sendable, Equatable {
    /// The flow's id (the `flows` row, when there is one).
    public var flowID: Int64
    /// The turn's figures.
    public var turn: Turn
    /// The segment holding the bytes (`content-NNNNNNNN.seg`).
    public var segment: Int
    /// Where in the segment the `turn.keptBytes` bytes start.
    public var segmentOffset: Int64
    /// When the turn was written, µs since the epoch (expiry counts from here).
    public var recordedAt: Int64

    public init(flowID: Int64, turn: Turn, segment: Int, segmentOffset: Int64, recordedAt: Int64) {
        self.flowID = flowID
        self.turn = turn
        self.segment = segment
        self.segmentOffset = segmentOffset
        self.recordedAt = recordedAt
    }
}
