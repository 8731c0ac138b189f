/// How much of a flow's plaintext is kept: at most `turnLimit` bytes per turn and at most
/// `flowBudget` bytes per direction of the flow. The budget cuts before anything is written.
public struct RecordingBudget: Sendable, Equatable {
    /// The fixed per-turn limit: 65,536 bytes (64 KiB).
    public static let fixedTurnLimit = 65_536
    /// The default per-direction flow budget (`content.flowBudget`): 1,048,576 bytes (1 MiB).
    public static let defaultFlowBudget = 1_048_576
    /// The most bytes one turn can keep: an HTTP/2 turn is limited by its bodies
    /// (`HTTP2BodyLimit`) and the flow budget, not by `turnLimit`, so up to the largest flow
    /// budget a setting accepts (64 MiB). What a reader of the index checks rows against.
    public static let mostKeptByATurn = ContentPolicy.maximumFlowBudget

    /// Bytes one turn keeps at most.
    public var turnLimit: Int
    /// Bytes one direction of one flow keeps at most, over all its turns.
    public var flowBudget: Int

    /// A budget; negative values count as 0 (nothing kept).
    public init(turnLimit: Int = RecordingBudget.fixedTurnLimit, flowBudget: Int = RecordingBudget.defaultFlowBudget) {
        self.turnLimit = max(0, turnLimit)
        self.flowBudget = max(0, flowBudget)
    }
}
