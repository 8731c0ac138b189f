/// What decrypted content occupies now: the index and the segment files.
public struct ContentUsage: Sendable, Equatable {
    /// Rows in the turns index.
    public var turns: Int
    /// Distinct flows with at least one turn.
    public var flows: Int
    /// Sum of kept bytes over the index.
    public var keptBytes: Int64
    /// Segment files in the content folder, oldest first.
    public var segments: [SegmentFile]
    /// The sequences of those that predate the flow database (it did not make them and has no
    /// row of them; see `SegmentRange`): sweeps leave them alone, `tv content delete` removes them.
    public var predating: [Int]
    /// Turns whose segment file is not in the content folder (deleted or moved by hand): counted
    /// in `turns` and `keptBytes`, their bytes gone (a trial's status counted them as kept).
    public var goneTurns = 0
    /// Of `flows`, those that are evidence of an audit session (`AuditEvidence`): `tv content
    /// delete` takes their content too, and says so first (it went unsaid: a trial).
    public var evidenceFlows = 0

    public init(turns: Int, flows: Int, keptBytes: Int64, segments: [SegmentFile], predating: [Int] = []) {
        self.turns = turns
        self.flows = flows
        self.keptBytes = keptBytes
        self.segments = segments
        self.predating = predating
    }

    /// Bytes on disk: the sum of the space the segment files take (holes not counted).
    public var fileBytes: Int64 { segments.reduce(0) { $0 + $1.diskBytes } }

    /// The segment a live session is writing, if any.
    public var beingWritten: SegmentFile? { segments.last { $0.isBeingWritten } }
}
