/// What one retention pass deletes, across the three stores: the history's old rows, capture
/// files (with the packet rows pointing into them marked), and decrypted content (the content
/// planner's own plan). A file being recorded is never in it.
public struct RetentionPlan: Sendable, Equatable {
    /// Why a capture file goes.
    public enum CaptureReason: String, Sendable, Equatable {
        /// Last written longer ago than `captures.maxAge`.
        case expired
        /// The files together are over `captures.maxBytes`; the oldest go first.
        case overLimit = "over_limit"
        /// No `captures` row describes it (a pass was interrupted after deleting the row).
        case unreferenced
        /// The user asked for everything to go (`tv storage delete-everything`).
        case requested
    }

    /// One capture file to delete.
    public struct CaptureDrop: Sendable, Equatable {
        public var sequence: Int
        public var reason: CaptureReason
        /// Bytes the file holds.
        public var bytes: Int64
        public init(sequence: Int, reason: CaptureReason, bytes: Int64) {
            self.sequence = sequence
            self.reason = reason
            self.bytes = bytes
        }
    }

    /// Why the captures stay over their size limit after the plan.
    public enum CapturesStillOver: String, Sendable, Equatable {
        /// Only the file being recorded is left over the limit (the way out: a new capture file).
        case recording
        /// What is left is audit evidence (the way out: deleting the audit session).
        case evidence
        /// Which captures are evidence is not known, so none was deleted.
        case evidenceUnknown = "evidence_unknown"
    }

    /// Flows that started before this moment (µs) go, with everything that hangs off them;
    /// nil: no flow is old enough (or the history has no age limit).
    public var deleteFlowsStartedBefore: Int64?
    /// Flows kept whatever their age (audit evidence).
    public var exemptFlows: Set<Int64>
    /// Capture files to delete, oldest first.
    public var captureDrops: [CaptureDrop]
    /// Bytes of capture files after the plan (the one being recorded and evidence included).
    public var capturesBytesAfter: Int64
    /// Set when the captures are still over `captures.maxBytes` after the plan, and why.
    public var capturesStillOver: CapturesStillOver?
    /// The capture file being recorded, spared whatever the limits (nil when none is).
    public var sparedRecording: Int?
    /// The content half: expired rows and segments to drop.
    public var content: ContentRetentionPlan
    /// True for delete-everything: every content row and segment goes (the one being written
    /// spared), not only what `content` names.
    public var deletesAllContent = false

    public init(deleteFlowsStartedBefore: Int64?, exemptFlows: Set<Int64> = [], captureDrops: [CaptureDrop],
                capturesBytesAfter: Int64, capturesStillOver: CapturesStillOver? = nil, sparedRecording: Int? = nil,
                content: ContentRetentionPlan) {
        self.deleteFlowsStartedBefore = deleteFlowsStartedBefore
        self.exemptFlows = exemptFlows
        self.captureDrops = captureDrops
        self.capturesBytesAfter = capturesBytesAfter
        self.capturesStillOver = capturesStillOver
        self.sparedRecording = sparedRecording
        self.content = content
    }

    /// Bytes of capture files the plan deletes.
    public var captureBytesFreed: Int64 { captureDrops.reduce(0) { $0 + $1.bytes } }
}
