/// What the retention planner knows about one capture file (`captures/capture-NNNNNN.pcapng`).
public struct CaptureFileFacts: Sendable, Equatable {
    /// The file's sequence number (NNNNNN; lower is older).
    public var sequence: Int
    /// When its first packet was written (µs since the epoch).
    public var startedAt: Int64
    /// When it was closed (µs since the epoch); nil while open or when its end was never written.
    public var endedAt: Int64?
    /// The file's size on disk in bytes.
    public var bytes: Int64
    /// True for the file a live session is writing: never deleted, by retention or by
    /// delete-everything.
    public var isRecording: Bool
    /// False for a file on disk whose `captures` row a pass marked deleted before it was killed,
    /// the file not yet unlinked: it is unreferenced and goes at the next pass. (A file no row
    /// ever described is not given to the planner at all: not tv's to delete.)
    public var hasRow: Bool

    public init(sequence: Int, startedAt: Int64, endedAt: Int64? = nil, bytes: Int64, isRecording: Bool = false,
                hasRow: Bool = true) {
        self.sequence = sequence
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.bytes = bytes
        self.isRecording = isRecording
        self.hasRow = hasRow
    }

    /// The moment the file's age counts from: its end, else its start.
    public var lastWrite: Int64 { endedAt ?? startedAt }
}

/// Which stored things are evidence of an audit session, exempt from every limit until that
/// session is deleted (seed 000, Captures, "Audit evidence"). The audit issue fills it; until
/// then every caller passes `.none`.
public enum AuditEvidence: Sendable, Equatable {
    /// No audit session holds anything.
    case none
    /// These capture files and flows are evidence.
    case known(captures: Set<Int>, flows: Set<Int64>)
    /// The history cannot say which captures are evidence: nothing is deleted from the captures
    /// (any deletion could take evidence) and the history keeps its rows too.
    case unknown

    /// Capture sequences that are evidence (empty for `.none` and `.unknown`).
    public var captures: Set<Int> {
        if case let .known(captures, _) = self { return captures }
        return []
    }

    /// Flow ids that are evidence (empty for `.none` and `.unknown`).
    public var flows: Set<Int64> {
        if case let .known(_, flows) = self { return flows }
        return []
    }
}
